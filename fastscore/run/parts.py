"""The result parts of a run on disk (``OUT/.parts/``), and the atomic writes of the
output directory's files.

Parts are numbered Parquet files of score and probe rows, written as results arrive
(``part_rows`` score rows a part), beside ``state.json``: the inputs they were scored
under.  A store opened under other inputs starts empty; one opened under the same
inputs knows the cells already scored (``done``: cell -> submission hash), which a
resumed run skips.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Mapping

import polars as pl

from fastscore.outputs import tables


class WriteError(OSError):
    """A file that could not be written (a full disk, a read-only folder): one line."""


def _written(temporary: Path, path: Path, write) -> None:
    """``write(temporary)`` then rename it to ``path``; on any failure the temporary is
    removed and a ``WriteError`` names ``path`` and the reason in one line (Polars
    reports an I/O error as its own ComputeError, with its Rust context)."""
    try:
        write(temporary)
        os.replace(temporary, path)
    except (OSError, pl.exceptions.PolarsError) as error:
        reason = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
        reason = reason.rpartition("underlying IO error: ")[2] if "underlying IO error: " in reason else reason
        raise WriteError(f"cannot write {path}: {reason}") from None
    finally:
        Path(temporary).unlink(missing_ok=True)


def atomically(path: Path, write) -> None:
    """``write(temporary)`` then rename it to ``path``: readers see the old file or the
    new one, never part of one (a failure is a one-line ``WriteError``)."""
    _written(path.with_name(f".{path.name}.tmp"), path, write)


class PartStore:
    """Result parts on disk: written atomically as numbered Parquet files, read back
    newest-wins per cell.  A run that resumed from earlier parts compacts them into
    one part at its end; a fresh run's parts hold each cell once and stay as written."""

    STATE = "state.json"

    def __init__(self, folder: Path, state: Mapping, *, part_rows: int):
        self.folder, self.part_rows = folder, part_rows
        state_file = folder / self.STATE
        if folder.exists() and _read_state(state_file) != dict(state):
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(dict(state), sort_keys=True)
        atomically(state_file, lambda path: Path(path).write_text(text))
        self.buffers = {"scores": [], "probes": []}
        existing = sorted(folder.glob("scores-*.parquet"))
        self.resumed = bool(existing)
        self.count = 1 + max((int(p.stem.split("-")[1]) for p in existing), default=-1)
        self.done = {}
        for path in existing:
            for config, run, task, sha in pl.read_parquet(
                    path, columns=["config", "run", "task", "submission_sha"]).iter_rows():
                self.done[(config, run, task)] = sha

    def add(self, score_rows, probe_rows) -> None:
        """Buffer result rows; a full buffer (``part_rows`` score rows) is written as a part."""
        self.buffers["scores"].extend(score_rows)
        self.buffers["probes"].extend(probe_rows)
        if len(self.buffers["scores"]) >= self.part_rows:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows as the next part (probes first), if there are any."""
        if not self.buffers["scores"]:
            return
        schemas = {"scores": tables.SCORE_SCHEMA, "probes": tables.PROBE_SCHEMA}
        # probes first: a scores part present on disk means its probes are there too
        for kind in ("probes", "scores"):
            self._write(tables.frame(self.buffers[kind], schemas[kind]), f"{kind}-{self.count:06d}")
            self.buffers[kind].clear()
        self.count += 1

    def _write(self, frame: pl.DataFrame, stem: str) -> None:
        _written(self.folder / f"{stem}.tmp", self.folder / f"{stem}.parquet", frame.write_parquet)

    def scan(self, kind: str, cells: Mapping[tuple, str], *, extra: pl.DataFrame | None = None) -> pl.LazyFrame:
        """All rows of the current sweep's cells (the newest part winning per cell after
        a resume), plus ``extra``, sorted by cell."""
        frames = [pl.scan_parquet(f) for f in sorted(self.folder.glob(f"{kind}-*.parquet"))]
        keys = ["config", "run", "task"] + (["probe"] if kind == "probes" else [])
        schema = tables.SCORE_SCHEMA if kind == "scores" else tables.PROBE_SCHEMA
        frame = pl.concat(frames, how="diagonal_relaxed") if frames else tables.frame([], schema).lazy()
        if self.resumed:  # older parts may hold stale rows, or cells no longer in the sweep
            current = pl.DataFrame([{"config": c, "run": r, "task": t} for c, r, t in cells],
                                   schema={"config": pl.Utf8, "run": pl.Int64, "task": pl.Utf8})
            frame = frame.unique(subset=keys, keep="last", maintain_order=True)
            frame = frame.join(current.lazy(), on=["config", "run", "task"], how="semi")
        if extra is not None and extra.height:
            frame = pl.concat([frame, extra.lazy()], how="diagonal_relaxed")
        return frame.sort(keys)

    def compact(self, scores: Path, probes: Path) -> None:
        """After a resumed run, replace every part by one holding the final rows."""
        if not self.resumed:
            return
        stale = sorted(self.folder.glob("*-*.parquet"))
        for kind, path in (("probes", probes), ("scores", scores)):
            frame = pl.scan_parquet(path)
            if kind == "scores":
                frame = frame.filter(pl.col("status") != "missing")
            _written(self.folder / f"{kind}-{self.count:06d}.tmp", self.folder / f"{kind}-{self.count:06d}.parquet",
                     frame.sink_parquet)
        for path in stale:
            path.unlink()


def _read_state(path: Path) -> dict | None:
    """The inputs the parts were scored under; None when absent or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
