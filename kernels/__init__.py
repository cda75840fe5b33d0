"""Numba kernels: postfix tapes, batch evaluation, root finding, split metrics.

Installed as ``fastscore.kernels`` (see README).  Kernels know nothing of problems
or files: arrays in, arrays out."""
