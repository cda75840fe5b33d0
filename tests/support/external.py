"""Where the tests find real files from other projects: MDBench's 72 problem files
(``tests/data/mdbench-problems``, or ``$FASTSCORE_MDBENCH``) and a sample of MechBench's
task files (``tests/data/mechbench-tasks``).  Both are copied into the repository, so
no test depends on anything outside the checkout (``tests/data/README.md``)."""
import os
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
MDBENCH = Path(os.environ.get("FASTSCORE_MDBENCH") or DATA / "mdbench-problems")
MECHBENCH = DATA / "mechbench-tasks"
requires_mdbench = pytest.mark.skipif(not MDBENCH.is_dir(),
                                      reason=f"MDBench problem files not found at {MDBENCH} (set FASTSCORE_MDBENCH)")
