"""The Michaelis-Menten example's mechanism and a row builder, shared by the scoring tests."""
from __future__ import annotations

MM_MECHANISM = ("r_on = k1*E_free*S; r_off = k2*C; r_cat = k3*C; r_on = r_off + r_cat; "
                "E_T = E_free + C; v = r_cat")


def mm_row(run: int, **fields) -> dict:
    return {"config": "c", "run": run, "task": "michaelis-menten-rate", **fields}
