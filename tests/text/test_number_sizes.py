"""No work grows with the *value* of a number written in a submission, only with its
size.  Real agents write fitted decimals (``h = 1.4043639781269934`` is
``7021819890634967/5*10**15``): as exponents of integers, under roots, in powers of
powers.  Each such submission is scored by the local executor under a row limit far
below the minutes these used to take; a row past it would be a ``timeout``."""
from __future__ import annotations

import json

import polars as pl
import pytest

from fastscore.run.job import score_sweep
from fastscore.settings import Settings

ORBIT = "2*pi*r*sqrt(r/(G*M))"
H = "1.4043639781269934"

# (law, equivalent to the orbit's period exactly / within rtol / not)
LAWS = [
    (f"T = {ORBIT}*(1+(r/G)**{H})/(1+(r/G)**{H})", "proven"),
    (f"T = {ORBIT}*12**{H}/12**{H}", "proven"),
    (f"T = {ORBIT}*(8**{H})**(1/{H})/8", "proven"),  # (a**b)**c = a**(b*c) for a > 0
    (f"T = {ORBIT}*2**(999.9999999999999)/2**(999.9999999999999)", "proven"),
    (f"T = {ORBIT}*(123456789012345678901234567890**(1/123456789))", "numeric"),
    (f"T = {ORBIT}*10**(-4.7447)*10**4.7447", "proven"),
    (f"T = {ORBIT}*(r**0.1234567890123456 + M**0.9876543210987654)**2"
     f"/(r**0.1234567890123456 + M**0.9876543210987654)**2", "proven"),
    (f"T = ({ORBIT})**1.0000000000000001", "numeric"),
    (f"T = {ORBIT}*(4**0.1234567890123456)**2/2**0.2469135780246912", "different"),
    (f"T = {ORBIT}*(1+(r/G)**{H})/(1+(r/G)**1.4043639781269935)", "numeric"),
    (f"T = {ORBIT}*(1 + (r/G)**{H})**(1/{H})/(1 + (r/G)**{H})**(1/{H})", "proven"),
    (f"T = {ORBIT}*99999999999999999999999999999**(0.99999999999999999)/99999999999999999999999999999", "numeric"),
]


@pytest.fixture(scope="module")
def scored(tmp_path_factory, example_dir):
    folder = tmp_path_factory.mktemp("sizes")
    sweep = folder / "sweep.jsonl"
    sweep.write_text("".join(json.dumps({"config": "fitted", "run": i, "task": "circular-orbit-period",
                                         "phenomenal": law}) + "\n" for i, (law, _) in enumerate(LAWS)))
    score_sweep(example_dir, sweep, folder / "out", executor="local", progress=False,
                settings=Settings(row_timeout=20.0))
    scores = pl.read_parquet(folder / "out" / "scores.parquet")
    return {row["run"]: row for row in scores.filter(pl.col("task") == "circular-orbit-period").iter_rows(named=True)}


@pytest.mark.parametrize("run", range(len(LAWS)), ids=[law for law, _ in LAWS])
def test_a_fitted_decimal_costs_its_digits(scored, run):
    row = scored[run]
    assert row["status"] == "ok", row["error"]
    assert row["p_verdict"] == LAWS[run][1], row["p_reason"]
