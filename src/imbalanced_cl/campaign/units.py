"""What a unit is: a kind, a name, its parameters and the code version it runs, with a stable key; the kind registry."""
from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


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
        """Stable key: sha256 of kind, name, profile, parameters and code version (16 hex digits)."""
        blob = json.dumps({"kind": self.kind, "name": self.name, "profile": self.profile, "params": self.params,
                           "code": self.code}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def label(self) -> str:
        """kind/name, for messages."""
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True)
class Kind:
    """A kind of unit: `plan(profile, root, only)` lists its units (those named in `only`, when given), `run(unit,
    root)` computes one and returns its payload.

    The payload is a JSON-able dict; run raises on failure (nothing is recorded then). `threads` is how many torch
    threads one unit wants (1: one worker per core).
    """

    name: str
    plan: Callable[[str, Path, list | None], list[Unit]]
    run: Callable[[Unit, Path], dict]
    threads: int = 1


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add a kind to the registry (a test registers its own tiny kinds) and return it."""
    KINDS[kind.name] = kind
    return kind


def plain(x):
    """A value as it reads back from JSON (tuples become lists), so unit parameters compare equal after a round trip."""
    return json.loads(json.dumps(x, default=str))


# Settings that decide how a unit runs, not what it computes (a campaign worker pins one thread whatever the
# parameters say): a record made under other values of these still answers for today's parameters.
RUN_ONLY = ("threads", "progress", "workers")


def differing(a: dict, b: dict) -> list[str]:
    """Names of the parameters whose values differ between two parameter dicts, run-only settings left out."""
    return sorted(k for k in set(a) | set(b) if k not in RUN_ONLY and a.get(k) != b.get(k))


def refusal(rec: dict, params: dict, want: dict, code: str) -> str:
    """Why a record does not answer for parameters `want` under code version `code` ("" when it does), with its commit."""
    commit = str(rec.get("provenance", {}).get("commit", "?"))[:7]
    diff = differing(params, want)
    if diff:
        return f"record from commit {commit}, parameters differ in {', '.join(diff)}: not used"
    if rec.get("code") != code:
        return f"record from commit {commit} under other code: stale, not used"
    return ""


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
