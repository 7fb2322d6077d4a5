"""One unit's record: JSON under <results>/<kind>/<name>-<key>.json, written atomically, and the scan of a folder.

A record holds the unit (kind, name, key, profile, parameters, code version), its provenance (git commit, host,
device, the versions of Python and of the result packages, the CPU kernel path, threads, seed, wall time) and the
kind's payload. It is written to a temporary name in the same folder and renamed into place (os.replace), so a
reader never sees half a unit. A file that does not parse, or
lacks the fields, is corrupt: reported by name and skipped.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
from dataclasses import dataclass, field
from pathlib import Path

from .units import Unit

REQUIRED = ("kind", "name", "key", "profile", "params", "code", "provenance", "payload")


def path_of(folder: Path, unit: Unit) -> Path:
    """Where the record of `unit` lives under the campaign folder of its profile."""
    return Path(folder) / unit.kind / f"{unit.name}-{unit.key}.json"


def provenance(root: Path, unit: Unit, wall_s: float, threads: int) -> dict:
    """Where and how the unit ran: commit (and whether the tree was dirty), host, device, versions, seed, wall time."""
    import torch

    from ..book.records.provenance import environment, tree_state    # here: it imports torch
    # results/ holds records and the probe cache, which a campaign itself writes: only code makes a tree dirty (a
    # campaign run from a clean worktree marked its records dirty once its probes had filled probes.json there)
    commit, dirty = tree_state(root, exclude=("results",))
    return {"commit": commit, "dirty": dirty,
            "host": socket.gethostname(), "cpu": platform.processor() or platform.machine(),
            "device": "cuda" if torch.cuda.is_available() else "cpu",
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "torch": torch.__version__, "python": platform.python_version(), **environment(), "threads": threads,
            "seed": unit.seed, "wall_s": round(wall_s, 2),
            "recorded": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}


def write(folder: Path, unit: Unit, payload: dict, prov: dict) -> Path:
    """Write the unit's record atomically (a temporary name in the same folder, then os.replace); its path."""
    target = path_of(folder, unit)
    target.parent.mkdir(parents=True, exist_ok=True)
    rec = {"kind": unit.kind, "name": unit.name, "key": unit.key, "profile": unit.profile, "params": unit.params,
           "code": unit.code, "provenance": prov, "payload": payload}
    tmp = target.with_name(f".{target.name}.tmp-{socket.gethostname()}-{os.getpid()}")
    try:
        with open(tmp, "w") as fh:
            fh.write(json.dumps(rec, indent=1, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())   # the bytes are on disk before the name points at them
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


@dataclass
class Scan:
    """Everything in a campaign folder: records by key, and corrupt files with the reason."""

    records: dict = field(default_factory=dict)     # {key: record}
    paths: dict = field(default_factory=dict)       # {key: path}
    corrupt: list = field(default_factory=list)     # [(path, why)]


def read(path: Path) -> dict:
    """One record; ValueError (with the reason) when the file is not a complete record."""
    try:
        rec = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(rec, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in REQUIRED if k not in rec]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    return rec


def scan(folder: Path) -> Scan:
    """Read every record under the folder (temporary files and locks are not records); corrupt ones are listed."""
    out = Scan()
    folder = Path(folder)
    if not folder.is_dir():
        return out
    for p in sorted(folder.glob("*/*.json")):
        if p.name.startswith("."):
            continue
        try:
            rec = read(p)
        except (ValueError, OSError) as e:
            out.corrupt.append((p, str(e)))
            continue
        out.records[rec["key"]] = rec
        out.paths[rec["key"]] = p
    return out


def has(folder: Path, unit: Unit) -> bool:
    """Whether a complete record of exactly this unit made under today's code exists (same key and code digest): a
    worker's quick check that another campaign has just recorded it. Records under other code are judged by
    campaign/validity.py, before any unit is handed out."""
    try:
        rec = read(path_of(folder, unit))
    except (ValueError, OSError):
        return False
    return rec["key"] == unit.key and rec["code"] == unit.code


def remove_orphans(folder: Path) -> list[Path]:
    """Delete temporary files whose writer on this host is dead (a worker killed mid-write); return them."""
    from .lock import alive
    gone = []
    for p in Path(folder).glob("*/.*.tmp-*"):
        host, _, pid = p.name.split(".tmp-", 1)[1].rpartition("-")
        if host == socket.gethostname() and pid.isdigit() and not alive(int(pid)):
            p.unlink(missing_ok=True)
            gone.append(p)
    return gone
