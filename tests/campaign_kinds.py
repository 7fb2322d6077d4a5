"""Tiny unit kinds for tests/test_campaign.py, in a module of their own so that Dask's worker processes can import
them (spawned workers get the parent's sys.path, and kinds travel to them pickled by reference).

Every run appends `<name> <pid>` to the file in params["log"] (O_APPEND: one short write per line), so a test can
count how often each unit ran, whatever the order or the timing.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from imbalanced_cl.campaign.units import Kind, Unit, register


def _log(unit: Unit) -> None:
    """Append one line saying that this unit ran, in this process."""
    with open(unit.params["log"], "a") as fh:
        fh.write(f"{unit.name} {os.getpid()}\n")


def plan_tiny(profile: str, root: Path, only=None, n: int = 6, log: str = "", extra: dict | None = None,
              code: str = "v1") -> list[Unit]:
    """n units named u0..u{n-1}, parameters {i, log, **extra}."""
    return [Unit("tiny", f"u{i}", profile, {"i": i, "log": log, **(extra or {})}, code, seed=i)
            for i in range(n) if not only or f"u{i}" in only]


def run_tiny(unit: Unit, root: Path) -> dict:
    """Log the run, wait params['sleep'] seconds (so that two campaigns overlap), return i squared."""
    _log(unit)
    time.sleep(unit.params.get("sleep", 0))
    import torch
    return {"value": unit.params["i"] ** 2, "threads": torch.get_num_threads()}


def run_flaky(unit: Unit, root: Path) -> dict:
    """Fail the first time a unit runs (raise, or kill the worker process with params['how'] == 'exit')."""
    _log(unit)
    marker = Path(unit.params["log"]).with_name(f"{unit.name}.tried")
    if not marker.exists():
        marker.write_text("")
        if unit.params.get("how") == "exit":
            os._exit(1)          # the worker process dies mid-unit, as a killed worker would
        raise RuntimeError(f"{unit.name} fails on its first run")
    return {"value": unit.params["i"]}


TINY = register(Kind("tiny", plan_tiny, run_tiny))
FLAKY = register(Kind("flaky", plan_tiny, run_flaky))


def plan_sleepy(profile: str, root: Path, only=None) -> list[Unit]:
    """Two tiny units that sleep $CK_SLEEP seconds and log to $CK_LOG (none when $CK_LOG is unset): a campaign
    started from the command line, for stopping it by hand or by signal."""
    log = os.environ.get("CK_LOG")
    if not log:
        return []
    units = plan_tiny(profile, root, only, n=2, log=log, extra={"sleep": float(os.environ.get("CK_SLEEP", "60"))})
    return [Unit("sleepy", u.name, u.profile, u.params, u.code, u.seed) for u in units]


SLEEPY = register(Kind("sleepy", plan_sleepy, run_tiny))


def run_doomed(unit: Unit, root: Path) -> dict:
    """Kill the worker process every time: a unit no worker survives (out of memory on every node, say)."""
    _log(unit)
    os._exit(1)


DOOMED = register(Kind("doomed", plan_tiny, run_doomed))
