"""Write the two-world DiscoverPhysics example (problems/discoverphysics/): held-out
positions of a known law, V_w the variance of the held-out positions about their mean.

- springs: three particles in a plane, each pulled to the origin (a = -k x / m, k = 2):
  the exact solution x(t) = x0 cos(w t) + v0 / w sin(w t), w = sqrt(k / m);
- charges: four charged particles repelling (Coulomb, C = 1), integrated by fastscore's
  RK4 kernel with 2,000 steps per held-out interval.
Run from the repository: ``.venv/bin/python scripts/make_discoverphysics_example.py``."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from fastscore.benchmarks.trajectories import compile_law, simulate
from fastscore.settings import Settings

OUT = Path(__file__).resolve().parents[1] / "problems" / "discoverphysics"
TIMES = np.round(np.linspace(0.1, 2.0, 20), 10)


def variance(positions: np.ndarray) -> float:
    flat = positions.reshape(-1, positions.shape[-1])
    return float(np.mean(np.sum((flat - flat.mean(axis=0)) ** 2, axis=1)))


def write(name: str, world: dict, heldout: np.ndarray, comment: str) -> None:
    world = {**world, "times": TIMES.tolist(), "variance": round(variance(heldout), 12),
             "heldout": np.round(heldout, 12).tolist()}
    text = "# " + comment + "\n" + "\n".join(f"{key}: {json.dumps(value)}" for key, value in world.items()) + "\n"
    (OUT / f"{name}.yaml").write_text(text)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    mass = np.array([1.0, 2.0, 0.5])
    pos = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5]])
    vel = np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.3]])
    w = np.sqrt(2.0 / mass)[:, None, None]
    exact = pos[:, None, :] * np.cos(w * TIMES[None, :, None]) + vel[:, None, :] / w * np.sin(w * TIMES[None, :, None])
    write("springs", {"benchmark": "discoverphysics", "name": "Particles on springs to the origin", "world": "springs",
                      "difficulty": "easy", "dim": 2,
                      "particles": {"mass": mass.tolist(), "charge": [0.0, 0.0, 0.0]},
                      "initial": {"time": 0.0, "positions": pos.tolist(), "velocities": vel.tolist()}}, exact,
          "DiscoverPhysics-style world (docs/benchmarks.md); held-out positions of a = -2 x / m, exact.")
    mass = np.array([1.0, 1.0, 2.0, 1.5])
    charge = np.array([1.0, -0.5, 1.0, 0.8])
    pos = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [-2.0, -1.0]])
    vel = np.array([[0.1, 0.0], [0.0, 0.3], [-0.2, 0.0], [0.0, -0.1]])
    law = compile_law({"pair_x": "-C*q*q_j*dx/(m*r**3)", "pair_y": "-C*q*q_j*dy/(m*r**3)"}, {"C": 1.0}, 2,
                      Settings().limits)
    task = {"heldout": np.zeros((4, TIMES.size, 2)), "times": TIMES, "t0": 0.0, "positions": pos,
            "velocities": vel, "mass": mass, "charge": charge}
    heldout, _ = simulate(task, law, Settings(dp_substeps=2000))
    write("charges", {"benchmark": "discoverphysics", "name": "Charged particles (Coulomb)", "world": "charges",
                      "difficulty": "medium", "dim": 2,
                      "particles": {"mass": mass.tolist(), "charge": charge.tolist()},
                      "initial": {"time": 0.0, "positions": pos.tolist(), "velocities": vel.tolist()}}, heldout,
          "DiscoverPhysics-style world (docs/benchmarks.md); held-out positions of Coulomb forces (C = 1), "
          "RK4 with 2,000 steps per interval.")


if __name__ == "__main__":
    main()
