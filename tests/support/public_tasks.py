"""Tiny public MechBench tasks (problem.json + train.npy) and hostile submissions for
the feedback tests."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROLE_OF = {"x": "input", "z": "auxiliary", "y": "target"}


def problem_json(roles: dict[str, str], *, description: str | None = None) -> dict:
    """A public problem.json value with these variables (name -> role), in order."""
    problem = {
        "data_layout": "variables_by_samples",
        "variables": [{"name": n, "description": f"the {n}", "unit": "1", "role": r} for n, r in roles.items()],
        "data_columns": list(roles),
    }
    if description is not None:
        problem["task_description"] = description
    return problem


def write_task(folder: Path, roles: dict[str, str], data: np.ndarray, **kwargs) -> Path:
    """Write ``folder/problem.json`` and ``folder/train.npy``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "problem.json").write_text(json.dumps(problem_json(roles, **kwargs)))
    np.save(folder / "train.npy", data)
    return folder


def demo_data(n: int = 400, seed: int = 3) -> np.ndarray:
    """Rows x (input), z (auxiliary), y = 3 x**2 / z (target)."""
    rng = np.random.default_rng(seed)
    x, z = rng.uniform(1, 2, n), rng.uniform(0.5, 1, n)
    return np.array([x, z, 3 * x**2 / z])


def implicit_data(n: int = 300, seed: int = 4) -> np.ndarray:
    """Rows x (input), y (target) with y + exp(y) = x: no closed form."""
    y = np.random.default_rng(seed).uniform(0.1, 2, n)
    return np.array([y + np.exp(y), y])


def runaway_mechanism(k: int = 16) -> str:
    """A cyclic block of ``k`` transcendental equations (no closed form for any
    unknown): Newton on a k-dimensional system at every sample, seconds of work in
    one uninterruptible kernel call."""
    lines = [f"u{i} + exp(u{i}) + u{(i + 1) % k}**3 + exp(u{(i + 1) % k}) = x + {i + 2}" for i in range(k)]
    return "\n".join(lines + ["y = " + " + ".join(f"u{i}" for i in range(k))])


HOSTILE = [
    "__import__('os').system('x')",
    "y = __import__('os').system('touch /tmp/fastscore-pwned')",
    "y = exec('import os')",
    "y = eval('x')",
    "y = x.__class__.__bases__",
    "y = lambda: x",
    "import os",
    "y = [x][0]",
    "y = 'x'",
    "y = x if x else z",
    "y = x**10**10",
    "y = 9**9**9**9",
    "y = " + "(" * 401 + "x" + ")" * 401,  # past the nesting limit
    "y = " + "sin(" * 401 + "x" + ")" * 401,
    "y = " + "-" * 3000 + "x",
    "y = x" + " + x" * 260_000,  # over 1 MB of text
    "y = x\x00",
    "\x00",
    b"y = \xff\xfe x",  # not UTF-8
    b"y = x\xc3",
    "",
    "# nothing but a comment",
    "y == x",
    "y = x = z",
    "y = @x",
    "y = x; " * 101,  # more equations than the limit
]
"""Texts (and bytes) that must be answered ``ok: false`` without harm."""


def multipart(fields: list[tuple[str, bytes]], boundary: str = "fastscore-test-boundary") -> tuple[bytes, str]:
    """A multipart/form-data body of file fields, in order (repeats allowed, for tests)."""
    body = b""
    for name, data in fields:
        body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}.bin\"\r\n"
                 "Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"
