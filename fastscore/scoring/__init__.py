"""Score one problem's batch of submissions: the reference side prepared once
(``reference``, with ``written`` for a formula evaluated as written), the pure
``score_task`` (``task``), the submission scorers and their registry (``scorers``), the
structure columns (``structure``) and ``fastscore validate`` (``validate``).

May import: every package below it (``support``, ``text``, ``kernels``, ``tapes``,
``algebra``, ``solve``, ``structure``, ``problems``, ``sweeps``, ``outputs``,
``benchmarks``) and ``fastscore.settings``.
"""
