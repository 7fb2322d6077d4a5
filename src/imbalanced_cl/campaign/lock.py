"""A per-unit lock file (O_CREAT | O_EXCL, holding pid, host and Slurm job id), so two campaigns on one folder never
run one unit.

A lock is stale, and reclaimed, when its process is dead on this host, when its Slurm job is gone (`squeue`), or when
it was written on another host and not refreshed for STALE_S: the holder refreshes its lock's modification time every
REFRESH_S while the unit runs, so a job killed at its wall time on another node stops refreshing it. (The age compares
the file's time on a shared filesystem with this host's clock: hosts whose clocks differ by minutes need a longer
STALE_S.) `campaign status` names the holder and how long ago it refreshed.
"""
from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

from .slurm import job_gone, job_id

REFRESH_S = 60.0       # the holder touches its lock this often
STALE_S = 900.0        # a lock from another host untouched this long belongs to a job that is gone


def alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # exists, owned by someone else
        return True
    return True


def holder(path: Path) -> dict | None:
    """The lock's content ({pid, host, job, since}) and its age in seconds since its holder last refreshed it
    ("age"), or None when there is no lock (an unreadable lock reads as {})."""
    try:
        info = json.loads(path.read_text() or "{}")
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return None
    except (ValueError, OSError):
        return {}
    return {**info, "age": age} if isinstance(info, dict) and info else {}


def why_stale(info: dict | None) -> str:
    """Why a lock no longer protects a running unit ("" while it may): empty (a crash between create and write), its
    process dead on this host, its Slurm job gone, or not refreshed by another host for STALE_S."""
    if info is None:
        return ""
    if not info:
        return "empty"
    here = info.get("host") == socket.gethostname()
    if here and not alive(int(info.get("pid", -1))):
        return f"process {info.get('pid')} on this host is dead"
    job = info.get("job")
    if job and job != job_id() and job_gone(job):
        return f"Slurm job {job} is gone"
    if not here and info.get("age", 0.0) > STALE_S:
        return f"not refreshed by {info.get('host')} for {info['age']:.0f} s (over {STALE_S:.0f} s)"
    return ""


def is_stale(info: dict | None) -> bool:
    """Whether a lock no longer protects a running unit (why_stale)."""
    return bool(why_stale(info))


class Lock:
    """A held lock, refreshed every REFRESH_S by a daemon thread while held; release() stops that and removes the
    lock (only if it is still ours)."""

    def __init__(self, path: Path, token: str, refresh_s: float = REFRESH_S):
        """Wrap the lock file at `path` created with content `token`, and start refreshing it."""
        self.path, self.token = path, token
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._refresh, args=(refresh_s,), daemon=True)
        self._thread.start()

    def _refresh(self, every: float) -> None:
        """Touch the lock every `every` seconds while it is ours (its modification time says the holder lives)."""
        while not self._stop.wait(every):
            try:
                if self.path.read_text() != self.token:
                    return
                os.utime(self.path)
            except OSError:
                return

    def release(self) -> None:
        """Stop refreshing; remove the lock file if it still holds our token."""
        self._stop.set()
        try:
            if self.path.read_text() == self.token:
                self.path.unlink()
        except FileNotFoundError:
            pass


def acquire(path: Path) -> Lock | None:
    """Take the lock at `path`, reclaiming a stale one; None when a live process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    token = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "job": job_id(), "since": time.time()})
    for _ in range(3):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            info = holder(path)
            if not is_stale(info):
                return None
            _reclaim(path, info)
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(token)
        return Lock(path, token)
    return None


def _content(info: dict | None) -> dict | None:
    """A lock's content without its age (which moves between two reads of one file)."""
    return None if info is None else {k: v for k, v in info.items() if k != "age"}


def _reclaim(path: Path, info: dict) -> None:
    """Move a stale lock aside; if what we moved is not the stale lock we judged (a race), put it back."""
    aside = path.with_name(f"{path.name}.reclaim-{os.getpid()}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    if _content(holder(aside)) != _content(info):    # another process took the lock between our read and rename
        try:
            os.link(aside, path)     # fails if yet another lock exists; then ours was already replaced
        except FileExistsError:
            pass
    aside.unlink(missing_ok=True)
