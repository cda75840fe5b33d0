"""The output vocabulary (``fastscore.tables``): names kept in step with the kernels,
and light enough to load without Numba."""
from __future__ import annotations

import subprocess
import sys

from fastscore import tables
from fastscore.kernels import METRICS


def test_the_metric_names_are_the_kernels_metrics():
    assert tables.METRICS == METRICS


def _loads_numba(module: str) -> bool:
    code = f"import sys, {module}; print('numba' in sys.modules)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "True"


def test_the_tables_load_without_numba():
    assert not _loads_numba("fastscore.tables")
