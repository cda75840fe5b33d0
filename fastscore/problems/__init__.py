"""Problems: what a task is (``model``: variables, constants, equations, probes, sampling,
and the schema of a problem document), the registry of problem formats and the loading
of problem files (``formats``), MechBench's task files and folders
(``mechbench``), MDBench's prepared folders (``prepared``), the deterministic data
splits (``splits``) and where the bundled problem sets live (``bundled``).

May import: ``fastscore.support``, ``fastscore.text``, ``fastscore.settings``.
"""
