"""A notebook's measurement stages: what it computes at cost, kept apart from what it judges (issue 47, item 1).

A notebook wraps each costly computation: `cen = measured("census", lambda: lucky.run_census(ccfg))`. Outside a
campaign that is a plain call. In a campaign unit (STAGES_ENV names the unit's folder) the value is also written
there (campaign/typed.py: JSON and .npz), and the unit's record keeps those files beside it: the measurements, not
only the verdict rows. A unit stopped before its end keeps the stages it finished in its checkpoint folder, and its
next run reads them back instead of measuring them again. Replayed (STAGES_MODE_ENV = "replay"), the stage is read
back and never computed, so the notebook judges a recorded unit with today's verdict code; a stage the record lacks,
or a field its files lack, stops the run with "needs re-measuring (...)", never a crash and never a silent default.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, TypeVar

from ..book.records.provenance import RECORDED_ENV
from . import typed

STAGES_ENV = "IMBALANCED_CL_STAGES"            # the folder of this run's stages (set by a campaign unit)
STAGES_MODE_ENV = "IMBALANCED_CL_STAGES_MODE"  # "record" (compute and keep, the default) or "replay" (read back)
T = TypeVar("T")


class NeedsRemeasuring(RuntimeError):
    """A replayed record lacks a stage or a field that today's notebook reads."""


def folder() -> Path | None:
    """The folder of this run's stages, or None outside a campaign unit."""
    where = os.environ.get(STAGES_ENV, "")
    return Path(where) if where else None


def measured(name: str, compute: Callable[[], T], optional: bool = False) -> T | None:
    """compute(), kept as a stage of this run's record in a campaign unit, or read back from it when replayed.

    An optional stage is one a notebook added after some of its records were made (notebook 02's push): replayed
    from a record that lacks it, it is None, with one line, and the notebook judges without it, so adding a stage
    does not throw away a record. Measured whenever the notebook runs."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise ValueError(f"stage name {name!r}: letters, digits and _ only")
    where = folder()
    if where is None:
        return compute()
    path = where / name
    if os.environ.get(STAGES_MODE_ENV, "record") == "replay":
        if not path.with_suffix(".json").exists():
            if optional:
                print(f"stage {name}: not in this record (made before the stage existed); judged without it",
                      flush=True)
                return None
            raise NeedsRemeasuring(f"needs re-measuring (stage {name}: not in the record)")
        try:
            value = typed.load(path)
        except KeyError as e:
            raise NeedsRemeasuring(f"needs re-measuring (field {e.args[0]})") from None
        if os.environ.get(RECORDED_ENV):       # a book page built from a record says where each stage came from
            print(f"{name}: read from the campaign record made by {os.environ[RECORDED_ENV]}", flush=True)
        return value
    if path.with_suffix(".json").exists():    # kept by an earlier, interrupted run of this unit (same code)
        try:
            value = typed.load(path)
            print(f"stage {name}: read back (measured by an earlier, interrupted run of this unit)", flush=True)
            return value
        except (ValueError, KeyError):
            pass                               # damaged or of another shape: measured again below
    value = compute()
    typed.save(value, path)
    return value


def origin() -> str:
    """Where this run's stages come from, in words for a page: read from a campaign record (naming who made it), or
    measured in this run."""
    if folder() is not None and os.environ.get(STAGES_MODE_ENV, "record") == "replay":
        by = os.environ.get(RECORDED_ENV, "")
        return f"read from the campaign record made by {by}" if by else "read from its campaign record"
    return "measured in this run"


def names(where: Path) -> list[str]:
    """The stages kept in a folder, sorted."""
    return sorted(p.stem for p in Path(where).glob("*.json")) if Path(where).is_dir() else []


def clean(where: Path) -> list[str]:
    """Remove the half-written files an interrupted run left among its stages; the names of the finished stages."""
    for p in Path(where).glob(".*tmp*") if Path(where).is_dir() else []:
        p.unlink(missing_ok=True)
    return names(where)
