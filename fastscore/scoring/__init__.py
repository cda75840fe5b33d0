"""Score one problem's batch of submissions: the reference side prepared once
(``reference``, with ``written`` for a formula evaluated as written), the pure
``score_task`` (``task``) and its steps, one module each: what is not scored twice
(``memo``), the candidate laws (``candidates``), the batch's values (``values``), the
laws' verdicts (``judge``), the probe answers (``probes``) and the rows (``rows``); the
submission scorers (``scorers``: the built-in structure columns of ``structure``, then
the registered ones) and ``fastscore validate`` (``validate``).

May import: every package below it (``support``, ``text``, ``kernels``, ``tapes``,
``algebra``, ``solve``, ``structure``, ``problems``, ``sweeps``, ``outputs``,
``benchmarks``) and ``fastscore.settings``.
"""
