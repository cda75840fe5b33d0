"""Which rows a worker process is solving, and since when, written to a small file of
its machine's memory (``/dev/shm``, else the temporary directory) that another process
of the same machine reads: the Ray executor's way to time each solve from outside the
worker, whose interpreter a long call into SymEngine's C++ holds (no thread of the
worker could see it).  A write costs microseconds, so every solve is told.

A record is ``(seq, token, since, n)``, ``n`` row indices, and ``seq`` again (a read
torn by a write is skipped); ``n = 0``: no solve running.  ``since`` is
``time.monotonic()``, one clock for every process of a machine.
"""
from __future__ import annotations

import os
import struct
import tempfile
import time
from pathlib import Path

_HEAD = struct.Struct("<qqdq")
_SEQ = struct.Struct("<q")


def board_directory() -> Path:
    """Where the records of this machine's workers are written."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


class SolveRecord:
    """A worker's record (its file: ``<prefix>-<pid>`` in ``board_directory()``)."""

    def __init__(self, prefix: str):
        self.path = board_directory() / f"{prefix}-{os.getpid()}"
        self._fd = os.open(self.path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o600)
        self._seq = 0

    def write(self, token: int, indices: list[int] | None) -> None:
        """Solving the rows ``indices`` of batch ``token`` from now (None or empty: none)."""
        self._seq += 1
        rows = indices or []
        data = _HEAD.pack(self._seq, token, time.monotonic(), len(rows)) + \
            struct.pack(f"<{len(rows)}q", *rows) + _SEQ.pack(self._seq)
        os.pwrite(self._fd, data, 0)


def overrunning(prefix: str, tokens: list[int], seconds: float) -> dict[int, list[int]]:
    """{token: row indices} of the records of ``prefix`` on this machine whose batch is
    among ``tokens`` and whose solve has run ``seconds`` or more."""
    now, live, found = time.monotonic(), set(tokens), {}
    for path in board_directory().glob(f"{prefix}-*"):
        try:
            data = path.read_bytes()
        except OSError:  # removed meanwhile
            continue
        if len(data) < _HEAD.size:
            continue
        seq, token, since, n = _HEAD.unpack_from(data)
        end = _HEAD.size + 8 * n
        if n <= 0 or token not in live or len(data) < end + _SEQ.size or _SEQ.unpack_from(data, end)[0] != seq:
            continue
        if now - since >= seconds:
            found[token] = list(struct.unpack_from(f"<{n}q", data, _HEAD.size))
    return found


def remove_records(prefix: str) -> None:
    """Remove the records of ``prefix`` on this machine."""
    for path in board_directory().glob(f"{prefix}-*"):
        path.unlink(missing_ok=True)
