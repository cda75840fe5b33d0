"""Problems: what a task is (``model``: variables, constants, equations, probes, sampling,
and the registry of problem formats), MechBench's task files and folders
(``mechbench``), MDBench's prepared folders (``prepared``), the deterministic data
splits (``splits``) and where the bundled problem sets live (``bundled``).

May import: ``fastscore.support``, ``fastscore.text``, ``fastscore.settings``.
"""
