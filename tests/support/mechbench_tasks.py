"""A small MechBench task written as a task file, shared by the tests of task files, run folders and the results layer."""
from __future__ import annotations

from pathlib import Path

import yaml

from fastscore.settings import Settings

SMALL = Settings(n_samples=64, n_points=64)


def orbit_task(name: str = "Toy Orbit - Variant 1-3") -> dict:
    """A small MechBench task: fixed coefficients, an expression left side, an
    auxiliary variable, probes answered by internal names and by formulas."""
    return {
        "task_name": name,
        "task_description": "Orbital period of a satellite.",
        "mutation": "",
        "mechanism_model": [
            {"formula": "G = 6.674e-11", "role": "auxiliary/regime constraints", "description": "gravitation"},
            {"formula": "two = 2", "role": "auxiliary/regime constraints", "description": "a fixed number"},
            {"formula": "g = G*M/r**2", "role": "governing/dynamical laws", "description": "gravity"},
            {"formula": "w**2*r = g", "role": "conservation/balance relations", "description": "balance"},
            {"formula": "T = two*pi/w + 0*k", "role": "kinematic/geometric constraints", "description": "period"},
        ],
        "phenomenal_model": "T = two*pi*sqrt(r**3/(G*M))",
        "variables": [
            {"name": "T", "description": "period", "unit": "s", "role": "target"},
            {"name": "M", "description": "mass", "unit": "kg", "role": "input",
             "sampling": {"min": 1e23, "max": 1e25, "ood_boundary": 5e24, "distribution": "log_uniform"}},
            {"name": "k", "description": "an auxiliary", "unit": 1, "role": "auxiliary",
             "sampling": {"min": 1.0, "max": 3.0, "ood_boundary": 2.0, "distribution": "uniform"}},
            {"name": "r", "description": "radius", "unit": "m", "role": "input",
             "sampling": {"min": 1e6, "max": 1e8, "ood_boundary": 5e7, "distribution": "log_uniform"}},
            {"name": "g", "description": "gravity", "unit": "m s^-2", "role": "internal"},
            {"name": "w", "description": "angular speed", "unit": "s^-1", "role": "internal"},
        ],
        "mechanism_probes": [
            {"probe": "w", "description": "angular speed", "answer": "w"},
            {"probe": "g", "description": "gravity", "answer": "g = G*M/r**2"},
        ],
    }


def write_task(folder: Path, task: dict, domain: str | None = "physics") -> Path:
    path = (folder / domain if domain else folder) / f"{task['task_name']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return path
