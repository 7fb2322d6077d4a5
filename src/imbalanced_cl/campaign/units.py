"""What a unit is: a kind, a name, its parameters and the code version it runs, with a stable key; the kind registry."""
from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..validate import RUN_OPTIONS


@dataclass(frozen=True)
class Unit:
    """One independent piece of a campaign: `kind` runs it, `name` says what it is, `params` and `code` define it."""

    kind: str
    name: str                                   # readable and unique within (profile, kind), e.g. 02_lucky_neurons
    profile: str
    params: dict = field(default_factory=dict, hash=False)
    code: str = ""                              # digest of the code that computes the unit's result
    seed: int | None = None                     # the base seed the unit runs under (provenance)

    @property
    def key(self) -> str:
        """Stable key: sha256 of kind, name, profile and the parameters that change what it measures (16 hex digits).

        The code is not in the key: a record made under other code is judged by the numbers that code computes
        (campaign/validity.py), and a unit run again under new code replaces its record in place."""
        params = {k: v for k, v in self.params.items() if measures(k)}
        blob = json.dumps({"kind": self.kind, "name": self.name, "profile": self.profile, "params": params},
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def version(self) -> str:
        """The key and the code digest together: what a unit's checkpointed points belong to (a point computed by
        other code is never resumed from)."""
        return f"{self.key}-{self.code[:8]}" if self.code else self.key

    @property
    def label(self) -> str:
        """kind/name, for messages."""
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True)
class Kind:
    """A kind of unit: `plan(profile, root, only)` lists its units (those named in `only`, when given), `run(unit,
    root)` computes one and returns its payload.

    The payload is a JSON-able dict; run raises on failure (nothing is recorded then). `threads` is how many torch
    threads one unit wants (1: one worker per core). Optional: `workload(params)`, a unit's (config, steps) trainings
    (campaign/projection.py counts them), and `size(unit, available, where)`, one line when the unit cannot fit the
    memory there ('' when it can; None for this machine's), said before any training.
    """

    name: str
    plan: Callable[[str, Path, list | None], list[Unit]]
    run: Callable[[Unit, Path], dict]
    threads: int = 1
    workload: Callable[[dict], list] | None = None
    size: Callable[..., str] | None = None


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add a kind to the registry (a test registers its own tiny kinds) and return it."""
    KINDS[kind.name] = kind
    return kind


def plain(x):
    """A value as it reads back from JSON (tuples become lists), so unit parameters compare equal after a round trip."""
    return json.loads(json.dumps(x, default=str))


# Settings that decide how or where a unit runs, not what it measures (validate.RUN_OPTIONS; a campaign worker pins
# one thread whatever the parameters say).
RUN_ONLY = RUN_OPTIONS

# Judging tolerances (the band a verdict row is held to, the smallest effect of interest): verdicts are computed again
# from a record's measurements at every build, so a record made under other tolerances answers for today's. Until the
# configs keep their judging part apart (issue 50), these are known by name.
JUDGING_PREFIXES = ("tol_", "sesoi", "trend_sesoi", "effect_tol")


def measures(name: str) -> bool:
    """Whether a parameter can change what a unit measures (not a run-only setting, not a judging tolerance)."""
    return name not in RUN_ONLY and not name.startswith(JUDGING_PREFIXES)


def differing(a: dict, b: dict) -> list[str]:
    """Names of the parameters whose values differ between two parameter dicts, run-only settings left out."""
    return sorted(k for k in set(a) | set(b) if measures(k) and a.get(k) != b.get(k))


# What a unit's child processes (a notebook's kernel) get in their environment on top of this process's: set by the
# engine and the checkpoint folder for the block that runs one unit, never written into os.environ, so that nothing
# leaks from one unit into the next one run by the same worker.
_CHILD_ENV: ContextVar[dict] = ContextVar("imbalanced_cl_child_env", default={})


@contextmanager
def child_env(**values: str):
    """Within the block, child_env_now() includes `values` (as strings); the previous values are back after it."""
    token = _CHILD_ENV.set({**_CHILD_ENV.get(), **{k: str(v) for k, v in values.items()}})
    try:
        yield
    finally:
        _CHILD_ENV.reset(token)


def child_env_now() -> dict[str, str]:
    """The variables a child process started now must get on top of this process's environment."""
    return dict(_CHILD_ENV.get())
