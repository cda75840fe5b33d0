"""Where the tests find MDBench's 72 problem files: ``shared/external/mdbench-problems``
beside the checkout (as on the project's machines and CI), or ``$FASTSCORE_MDBENCH``.
Tests that need them are skipped, with the reason, where they are absent."""
import os
from pathlib import Path

import pytest

MDBENCH = Path(os.environ.get("FASTSCORE_MDBENCH")
               or Path(__file__).resolve().parents[2] / "shared" / "external" / "mdbench-problems")
requires_mdbench = pytest.mark.skipif(not MDBENCH.is_dir(),
                                      reason=f"MDBench problem files not found at {MDBENCH} (set FASTSCORE_MDBENCH)")
