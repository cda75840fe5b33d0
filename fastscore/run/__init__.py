"""The main job: score a sweep against a problem set and write the tables (``job``), the
result parts on disk and their atomic writes (``parts``), sweeps and tables held in
memory for the Python API (``in_memory``) and the executors that run ``score_task``
(``executors``: local, Ray).

May import: ``fastscore.support``, ``fastscore.problems``, ``fastscore.sweeps``,
``fastscore.outputs``, ``fastscore.scoring``, ``fastscore.benchmarks``,
``fastscore.kernels`` and ``fastscore.settings``.
"""
