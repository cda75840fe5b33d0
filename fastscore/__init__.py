"""fastscore: bulk scorer for scientific-discovery benchmarks.

From Python, each command is one function call (heavy modules load on first use, so
``import fastscore`` and the CLI start fast):

- ``score_sweep(problems, sweep, out, ...)``: ``fastscore score`` (``fastscore.run.job``);
  ``sweep`` may be rows in memory (a DataFrame, a list of dicts) and, without ``out``,
  the tables come back in memory;
- ``load_problems(paths)``: the problem set (files and directories), in any registered format;
- ``read_sweep(path)``: a sweep as normalised Polars batches;
- ``write_splits`` / ``write_task_views``: ``fastscore data`` / ``fastscore prepare``;
- ``validate_problems(problems)``: ``fastscore validate``;
- ``write_report(directory)``: ``fastscore report``;
- ``Settings``: every tolerance, limit and budget of a run.
"""
from importlib import import_module

__version__ = "0.1.0"

_HOMES = {
    "score_sweep": "fastscore.run.job",
    "load_problems": "fastscore.problems.formats",
    "read_sweep": "fastscore.sweeps.read",
    "write_splits": "fastscore.export",
    "write_task_views": "fastscore.export",
    "validate_problems": "fastscore.scoring.validate",
    "write_report": "fastscore.report.document",
    "Settings": "fastscore.settings",
}
__all__ = list(_HOMES)


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'fastscore' has no attribute {name!r}")
