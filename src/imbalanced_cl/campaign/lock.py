"""A per-unit lock file (O_CREAT | O_EXCL, holding pid and host), so two campaigns on one folder never run one unit.

A lock whose process is dead on this host is stale and reclaimed; a lock held on another host is respected (we
cannot see its process), and `campaign status` names it.
"""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path


def _alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # exists, owned by someone else
        return True
    return True


def holder(path: Path) -> dict | None:
    """The lock's content ({pid, host, since}), or None when there is no lock (an unreadable lock reads as {})."""
    try:
        return json.loads(path.read_text() or "{}")
    except FileNotFoundError:
        return None
    except (ValueError, OSError):
        return {}


def is_stale(info: dict | None) -> bool:
    """A lock of a dead process on this host (or an empty one, left by a crash between create and write)."""
    if info is None:
        return False
    if not info:
        return True
    return info.get("host") == socket.gethostname() and not _alive(int(info.get("pid", -1)))


class Lock:
    """A held lock; release() removes it (only if it is still ours)."""

    def __init__(self, path: Path, token: str):
        """Wrap the lock file at `path` created with content `token`."""
        self.path, self.token = path, token

    def release(self) -> None:
        """Remove the lock file if it still holds our token."""
        try:
            if self.path.read_text() == self.token:
                self.path.unlink()
        except FileNotFoundError:
            pass


def acquire(path: Path) -> Lock | None:
    """Take the lock at `path`, reclaiming a stale one; None when a live process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    token = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()})
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


def _reclaim(path: Path, info: dict) -> None:
    """Move a stale lock aside; if what we moved is not the stale lock we judged (a race), put it back."""
    aside = path.with_name(f"{path.name}.reclaim-{os.getpid()}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    if holder(aside) != info:       # another process took the lock between our read and our rename
        try:
            os.link(aside, path)     # fails if yet another lock exists; then ours was already replaced
        except FileExistsError:
            pass
    aside.unlink(missing_ok=True)
