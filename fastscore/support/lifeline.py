"""Child processes that die with their parent, and the run lock that dies with its owner.

``tie_to_parent`` is called first thing in a forked worker: on Linux the kernel sends
it SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``), and on any system a
watchdog thread ends it within a second of finding it adopted (its parent process id
changed).  A worker blocked in a long SymEngine call or on its pipe is so never left
behind by a ``kill -9`` of the process that started it.

``RunLock`` holds an exclusive ``flock`` on an open file: the kernel releases it when
its owner dies, however it dies.  Forked children share the parent's open file (and
so its lock); a fork handler drops their copy, so a child that outlived its parent
could still not keep the lock.  The file names the process holding it; a name left
behind by a process that died (a ``kill -9``) is taken over with a line saying so.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import os
import signal
import sys
import threading
from pathlib import Path

__all__ = ["LockBusy", "RunLock", "pid_alive", "tie_to_parent"]

_PR_SET_PDEATHSIG = 1
_WATCH_SECONDS = 1.0


def tie_to_parent(parent: int) -> None:
    """End this process when ``parent`` (the process that forked it) dies."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watchdog alone
            pass
    if os.getppid() != parent:  # died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while True:
            threading.Event().wait(_WATCH_SECONDS)
            if os.getppid() != parent:
                os._exit(1)
    threading.Thread(target=watch, daemon=True, name="fastscore-lifeline").start()


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a zombie counts as ended)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie: ended, not yet reaped
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class LockBusy(ValueError):
    """Another live process holds the lock."""


_HELD: set[int] = set()  # file descriptors of locks held by this process


def _drop_in_child() -> None:
    """After a fork, the child lets go of the parent's locks (the parent keeps them)."""
    if not _HELD:
        return
    null = os.open(os.devnull, os.O_RDONLY)
    for fd in _HELD:
        os.dup2(null, fd)  # the lock's file closes here; the number stays taken
    os.close(null)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_in_child)


class RunLock:
    """An exclusive lock on ``path`` for a ``with`` block (see module doc).  ``what``
    names the holder in the message of a busy lock; ``taken_over`` is the process id
    of a dead holder whose name was left in the file, when there was one."""

    def __init__(self, path: Path, what: str):
        self.path, self.what = Path(path), what
        self.taken_over: int | None = None
        self._handle = None

    def __enter__(self) -> RunLock:
        handle = open(self.path, "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(handle)
            handle.close()
            alive = holder is not None and pid_alive(holder)
            who = (f"process {holder}" if alive else
                   f"a process started by process {holder}, which has ended" if holder else "another process")
            raise LockBusy(f"{self.path.parent} is in use by {self.what} ({who})") from None
        previous = _holder(handle)
        if previous is not None and previous != os.getpid() and not pid_alive(previous):
            self.taken_over = previous
        handle.seek(0)
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        self._handle = handle
        _HELD.add(handle.fileno())
        return self

    def __exit__(self, *exc) -> None:
        handle, self._handle = self._handle, None
        _HELD.discard(handle.fileno())
        try:
            handle.seek(0)
            handle.truncate(0)  # released cleanly: no holder named
        except OSError:
            pass
        handle.close()


def _holder(handle) -> int | None:
    handle.seek(0)
    text = handle.read().strip()
    return int(text) if text.isdigit() else None
