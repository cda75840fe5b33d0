"""Data splits: deterministic train / ID test / OOD test draws, MDBench's file layouts.

A split is a float64 array of shape (n_variables, n_samples): the target first, then the
inputs, then the auxiliary inputs. The splits are drawn as MDBench 0.7's ``mdbench
synthetic`` draws them (`make_splits`), from a generator of the seed alone, so the order
problems are processed in, or the process they run in, never changes the arrays, and
the same seed gives MDBench's arrays (docs/mdbench.md). Other draws (equivalence points)
use `problem_rng`, a generator of the seed, the task id and a stream.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from fastscore.problems.model import Problem, Sampling
from fastscore.settings import DEFAULT_SETTINGS

__all__ = [
    "SPLITS", "Split", "REGIONS", "Region", "Layout", "Splits", "sample_inputs", "problem_rng",
    "make_splits", "write_npz", "read_npz", "read_prepared", "write_prepared",
]

Split = Literal["train", "id_test", "ood_test"]
SPLITS: tuple[Split, ...] = get_args(Split)
Region = Literal["id", "ood", "domain"]
REGIONS: tuple[Region, ...] = get_args(Region)
_SPLIT_REGION = {"train": "id", "id_test": "id", "ood_test": "ood"}
_ANSWER_FILES = ("answer.json", "data_id_test.npy", "data_ood_test.npy")
Layout = Literal["mdbench", "mechbench"]
"""Task-view layouts: MDBench's prepared folders, MechBench's harness export."""


@dataclass(frozen=True)
class Splits:
    """The three splits of one problem; rows follow `variables`."""
    variables: tuple[str, ...]
    train: np.ndarray
    id_test: np.ndarray
    ood_test: np.ndarray
    seed: int | None

    def __post_init__(self):
        for split in SPLITS:
            array = getattr(self, split)
            if array.ndim != 2 or array.shape[0] != len(self.variables):
                raise ValueError(f"split {split} has shape {array.shape}; "
                                 f"expected ({len(self.variables)}, n_samples)")

    def columns(self, split: Split) -> dict[str, np.ndarray]:
        """One split as {variable name: row of samples}."""
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
        array = getattr(self, split)
        return {name: array[i] for i, name in enumerate(self.variables)}


def _bounds(sampling: Sampling, region: Region) -> tuple[float, float]:
    if region == "id":
        return sampling.min, sampling.ood_boundary
    if region == "ood":
        return sampling.ood_boundary, sampling.max
    if region == "domain":
        return sampling.min, sampling.max
    raise ValueError(f"unknown region {region!r}; expected one of {', '.join(REGIONS)}")


def _draw(sampling: Sampling, region: Region, n: int, rng: np.random.Generator, clip: bool) -> np.ndarray:
    low, high = _bounds(sampling, region)
    if sampling.distribution == "log_uniform":
        values = np.exp(rng.uniform(np.log(low), np.log(high), n))
    else:
        values = rng.uniform(low, high, n)
    # rounding (of exp, or of low + (high - low) * u) may land on or just past an edge
    return np.clip(values, low, np.nextafter(high, low)) if clip else values


def _sample(problem: Problem, region: Region, n: int, rng: np.random.Generator, *, clip: bool) -> dict[str, np.ndarray]:
    return {v.name: _draw(v.sampling, region, n, rng, clip) for v in problem.observed}


def sample_inputs(problem: Problem, *, region: Region, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Draw `n` values of every input and auxiliary input over `region` ('id', 'ood' or 'domain').

    'id' is [min, ood_boundary), 'ood' is [ood_boundary, max), 'domain' is [min, max);
    each variable is drawn independently, uniform or log-uniform as its sampling says
    (a value rounded onto or past the upper edge is moved just below it; the splits,
    drawn as MDBench draws them, keep such a value).
    """
    return _sample(problem, region, n, rng, clip=True)


def _task_hash(task_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(task_id.encode("utf-8"), digest_size=8).digest(), "little")


def problem_rng(problem_or_task_id: Problem | str, seed: int, *stream: int) -> np.random.Generator:
    """A generator determined by the seed and the task id only; distinct `stream` tuples
    (non-negative ints) give independent generators for the same task and seed."""
    task_id = problem_or_task_id if isinstance(problem_or_task_id, str) else problem_or_task_id.task_id
    # the stream length enters the entropy: SeedSequence ignores trailing zero words, so
    # without it the streams (1,) and (1, 0) would coincide
    return np.random.default_rng([seed, _task_hash(task_id), len(stream), *stream])


def _evaluate(target: Callable, points: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        values = np.asarray(target(points))
    if np.iscomplexobj(values):
        values = np.where(values.imag == 0, values.real, np.nan)
    try:
        return np.broadcast_to(values.astype(np.float64, copy=False), (n,))
    except ValueError:
        raise ValueError(f"target returned shape {values.shape}; expected ({n},)") from None


PILOT_SAMPLES = 10_000
"""Draws over the whole domain before the splits, as MDBench's ``synthetic`` makes them
(they advance the generator, and too few valid ones mean a useless sampling range)."""
_MIN_BATCH = 1024


def _valid_target(target: Callable, points: Mapping[str, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    values = _evaluate(target, points, n)
    return values, np.isfinite(values)


def _draw_split(problem: Problem, target: Callable, region: Region, n: int,
                rng: np.random.Generator, max_rounds: int) -> np.ndarray:
    """Draw n valid samples by rejection, as MDBench does: each round draws a batch of
    max(1024, 2 * missing) points of every observed variable (in declaration order, one
    variable's whole batch after the other) and keeps the first valid ones (finite target)."""
    names = [v.name for v in problem.observed]
    kept: list[np.ndarray] = []
    accepted = 0
    for _ in range(max_rounds):
        if accepted >= n:
            break
        batch = max(_MIN_BATCH, 2 * (n - accepted))
        points = _sample(problem, region, batch, rng, clip=False)
        values, valid = _valid_target(target, points, batch)
        chosen = np.flatnonzero(valid)[:n - accepted]
        if chosen.size:
            kept.append(np.vstack([values[chosen], *(points[name][chosen] for name in names)]))
            accepted += chosen.size
    if accepted < n:
        raise ValueError(f"{problem.task_id}: only {accepted} of {n} samples in the '{region}' region have "
                         f"a finite target after {max_rounds} rounds of drawing; check the sampling ranges")
    return np.ascontiguousarray(np.concatenate(kept, axis=1))


def make_splits(problem: Problem, target: Callable[[Mapping[str, np.ndarray]], np.ndarray], *,
                n: int = DEFAULT_SETTINGS.n_samples, seed: int = DEFAULT_SETTINGS.data_seed,
                max_rounds: int = 50, pilot: int = PILOT_SAMPLES) -> Splits:
    """Draw train and id_test from the ID region and ood_test from the OOD region, the
    way MDBench 0.7's ``mdbench synthetic --seed SEED`` does, so the arrays are MDBench's.

    `target(points)` maps {input name: values} to the target per sample, NaN or inf
    where any derived quantity is non-real or non-finite; such samples are rejected.
    One generator, ``numpy.random.default_rng(seed)``, serves the problem: first
    `pilot` draws over the whole domain (fewer than max(10, n_observed + 1) valid ones
    is an error), then train, id_test and ood_test in turn (`_draw_split`).  The arrays
    depend on the seed and the problem's variables, sampling and target, never on the
    task id or on other problems.
    """
    if n <= 0 or pilot <= 0:
        raise ValueError(f"n and pilot must be positive, got n={n}, pilot={pilot}")
    rng = np.random.default_rng(seed)
    _, valid = _valid_target(target, _sample(problem, "domain", pilot, rng, clip=False), pilot)
    if (found := int(np.count_nonzero(valid))) < max(10, len(problem.observed) + 1):
        raise ValueError(f"{problem.task_id}: only {found} of {pilot} draws over the whole domain have a "
                         f"finite target; check the sampling ranges")
    arrays = {split: _draw_split(problem, target, _SPLIT_REGION[split], n, rng, max_rounds) for split in SPLITS}
    return Splits(variables=problem.data_variables, seed=seed, **arrays)


# --- MDBench's synthetic .npz ------------------------------------------------------------

def write_npz(splits: Splits, path: str | Path, *, generation_config: Mapping) -> None:
    """Write MDBench's synthetic-data layout: train, id_test, ood_test, variables, generation_config.

    generation_config is stored as JSON text in a 0-d array; the seed and sample counts
    of `splits` are recorded in it and take precedence over same-named keys.
    """
    config = dict(generation_config) | {
        "seed": splits.seed,
        **{f"{split}_samples": getattr(splits, split).shape[1] for split in SPLITS},
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:  # an open handle keeps numpy from appending '.npz'
        np.savez_compressed(
            handle,
            **{split: np.asarray(getattr(splits, split), dtype=np.float64) for split in SPLITS},
            variables=np.asarray(splits.variables, dtype=str),
            generation_config=np.asarray(json.dumps(config, sort_keys=True)),
        )


def read_npz(path: str | Path) -> Splits:
    """Read a synthetic-data .npz (MDBench's or ours); the seed comes from generation_config if present."""
    with np.load(path, allow_pickle=False) as archive:
        if missing := [key for key in (*SPLITS, "variables") if key not in archive.files]:
            raise ValueError(f"{path}: missing array(s) {', '.join(missing)}")
        config = json.loads(str(archive["generation_config"].item())) if "generation_config" in archive.files else {}
        return Splits(
            variables=tuple(str(name) for name in archive["variables"]),
            seed=config.get("seed"),
            **{split: np.asarray(archive[split], dtype=np.float64) for split in SPLITS},
        )


# --- MDBench's prepared task folders -----------------------------------------------------

def read_prepared(folder: str | Path) -> tuple[dict, np.ndarray]:
    """Read a prepared task folder: (problem.json as a dict, data_train.npy)."""
    folder = Path(folder)
    problem_path, data_path = folder / "problem.json", folder / "data_train.npy"
    for path in (problem_path, data_path):
        if not path.is_file():
            raise ValueError(f"{folder}: prepared task folder lacks {path.name}")
    problem = json.loads(problem_path.read_text(encoding="utf-8"))
    return problem, np.load(data_path, allow_pickle=False)


def _variable_view(variable) -> dict:
    from fastscore.problems.prepared import unit_mapping
    return {"name": variable.name, "description": variable.description, "unit": unit_mapping(variable.unit)}


def _constant_view(constant) -> dict:
    from fastscore.problems.prepared import unit_mapping
    return {"name": constant.name, "value": constant.value,
            "description": constant.description, "unit": unit_mapping(constant.unit)}


def _write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def write_prepared(problem: Problem, splits: Splits, folder: str | Path, *, save_answer: bool = False) -> None:
    """Write the public view of a task as MDBench 0.7's ``mdbench prepare --task
    mechanism_discovery --reveal-auxiliary`` does (``fastscore.problems.prepared``): problem.json
    and data_train.npy, so MDBench's ``evaluate`` reads the folder.

    The public view holds the name, description, target, inputs, auxiliary inputs and
    constants with their descriptions and units - never the law, mechanism, probes,
    intermediates or mutations. With `save_answer`, answer.json (MDBench's fields: law,
    mechanism, intermediates, source and data variables, constants; and fastscore's:
    probes, family, domain, mutations, seed) and the test splits are written too; without
    it, answer files left by an earlier run are removed.
    """
    from fastscore.problems.prepared import TASK, answer_law
    if tuple(splits.variables) != problem.data_variables:
        raise ValueError(f"{problem.task_id}: splits have variables {list(splits.variables)}; "
                         f"expected {list(problem.data_variables)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    constants = [_constant_view(c) for c in problem.constants]
    _write_json(folder / "problem.json", {
        "task_id": problem.task_id,
        "problem_name": problem.name,
        "problem_description": problem.description,
        "task": TASK,
        "input": "data",
        "expected_output": "mechanisms",
        "target_variable": problem.target.name,
        "variables": [_variable_view(v) for v in (problem.target, *problem.inputs)],
        "auxiliary_input_variables": [_variable_view(v) for v in problem.auxiliary_inputs],
        "constants": constants,
    })
    np.save(folder / "data_train.npy", splits.train)
    if not save_answer:
        for name in _ANSWER_FILES:
            (folder / name).unlink(missing_ok=True)
        return
    _write_json(folder / "answer.json", {
        "task": TASK,
        "task_id": problem.task_id,
        "target_variable": problem.target.name,
        "source_variables": [*(v.name for v in problem.observed), *(c.name for c in problem.constants)],
        "phenomenological_formula": answer_law(problem.law),
        "constants": constants,
        "data_variables": list(splits.variables),
        "mechanisms": [{"formula": e.text, "formula_description": e.description} for e in problem.mechanism],
        "intermediate_variables": [_variable_view(v) for v in problem.intermediates],
        "probes": [{"name": p.name, "description": p.description, "formula": p.formula} for p in problem.probes],
        "family": problem.family,
        "domain": problem.domain,
        "mutations": None if problem.mutations is None else list(problem.mutations),
        "seed": splits.seed,
    })
    np.save(folder / "data_id_test.npy", splits.id_test)
    np.save(folder / "data_ood_test.npy", splits.ood_test)
