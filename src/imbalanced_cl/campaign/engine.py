"""The fan-out: pending units submitted to a Dask cluster (LocalCluster here, SLURMCluster on a cluster), each run
under its lock and recorded atomically as it finishes, within a time budget, with progress and a clean Ctrl-C.

Dask only launches; which units are done is read from the records (record.scan), and the lock (lock.py) keeps two
campaigns on one folder from running the same unit. A unit whose worker dies or which raises leaves no record: the
next run redoes it.
"""
from __future__ import annotations

import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..validate import check, check_int
from . import checkpoint, record
from .lock import acquire
from .units import Kind, Unit

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600}


def parse_budget(text) -> float:
    """Seconds of a budget written 540, 540s, 9m or 2h; 0 or below is a ParameterError (one line)."""
    m = re.fullmatch(r"\s*(-?[0-9]*\.?[0-9]+)\s*(s|m|min|h)?\s*", str(text))
    check("budget", text, m is not None, "a duration such as 540s, 30m or 2h")
    seconds = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    check("budget", text, seconds > 0 and math.isfinite(seconds), "a duration above 0, such as 540s, 30m or 2h")
    return seconds


@dataclass(frozen=True)
class Options:
    """How one campaign runs: where it records, how many workers, how long, and on which cluster."""

    results: Path                        # the campaign folder of one profile: results/campaign/<profile>
    workers: int = 1                     # local worker processes, one thread each (or Slurm jobs with slurm=True)
    budget_s: float = 540.0              # no unit starts after this many seconds; units still running are stopped
    progress: bool = True                # a tqdm bar on stderr
    slurm: dict = field(default_factory=dict, hash=False)   # SLURMCluster settings (partition, time, ...), or {}
    threads: int | None = None           # torch threads per unit; None: the kind's own (1: one worker per core)

    def __post_init__(self):
        """Validate on construction: a bad option never reaches a worker."""
        check_int("workers", self.workers, 1)
        if self.threads is not None:
            check_int("threads", self.threads, 1)
        check("budget", self.budget_s, isinstance(self.budget_s, (int, float)) and self.budget_s > 0,
              "a duration above 0, such as 540s, 30m or 2h")


def run_unit(kind: Kind, unit: Unit, results: str, root: str, deadline: float, threads: int | None = None) -> dict:
    """In a worker: take the unit's lock, skip it if recorded or past the deadline, else run and record it with
    `threads` torch threads (None: the kind's own)."""
    results, root = Path(results), Path(root)
    if time.time() > deadline:
        return {"unit": unit.label, "status": "budget"}
    lk = acquire(results / ".locks" / f"{unit.kind}-{unit.name}-{unit.key}.lock")
    if lk is None:
        return {"unit": unit.label, "status": "locked"}     # another campaign is running it
    try:
        if record.has(results, unit):
            return {"unit": unit.label, "status": "done"}   # finished by another campaign before we got the lock
        n = threads or kind.threads
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(n)
        import torch
        torch.set_num_threads(n)   # two workers on two cores: one thread each, or they fight
        t0 = time.time()
        points = checkpoint.unit_folder(results, unit)
        with checkpoint.kept(points):            # a unit stopped before resumes from the points it finished
            payload = kind.run(unit, root)
        wall = time.time() - t0
        path = record.write(results, unit, payload, record.provenance(root, unit, wall, n))
        checkpoint.remove(points)                # only now: the record answers for the unit
        return {"unit": unit.label, "status": "ran", "wall_s": wall, "path": str(path)}
    finally:
        lk.release()


# Dask's housekeeping, made quiet. By default each worker samples its thread's stack every 10 ms (the statistical
# profiler) and the event loops tick every 20 ms: about 4% of a core per process while a unit runs, on cores the
# units need (measured on this machine, one idle worker for 20 s: worker 3.8% -> 0.8%, scheduler 3.4% -> 1.1%).
# Units last minutes to hours, so none of it helps here.
QUIET = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
         "distributed.admin.system-monitor.interval": "10s", "distributed.worker.memory.monitor-interval": "5s"}


def quiet_env() -> dict:
    """QUIET as environment variables, for worker processes (Dask reads DASK_A__B__C as a.b.c)."""
    return {"DASK_" + k.upper().replace(".", "__").replace("-", "_"): str(v) for k, v in QUIET.items()}


def local_cluster(workers: int, threads: int = 1):
    """A LocalCluster of `workers` processes that run one unit at a time, OMP/MKL pinned to `threads` in their
    environment (the unit itself sets torch's thread count)."""
    import dask
    from distributed import LocalCluster
    dask.config.set(QUIET)                 # the scheduler runs in this process
    one = {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), **quiet_env()}
    # dashboard on any free port: two campaigns on one machine never clash over 8787
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                        env=one, silence_logs=40)


def slurm_cluster(jobs: int, partition: str, walltime: str, memory: str = "8GB", cores: int = 1):
    """A SLURMCluster of `jobs` single-worker jobs on `partition` (dask-jobqueue); not testable on this machine."""
    from dask_jobqueue import SLURMCluster
    cluster = SLURMCluster(queue=partition, walltime=walltime, cores=cores, processes=1, memory=memory,
                           job_script_prologue=[f"export OMP_NUM_THREADS={cores} MKL_NUM_THREADS={cores}"]
                           + [f"export {k}={v}" for k, v in quiet_env().items()])
    cluster.scale(jobs=jobs)
    return cluster


@dataclass
class Outcome:
    """What a campaign run did: units recorded, skipped (already done or locked), failed, and not started."""

    ran: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    failed: list = field(default_factory=list)      # [(unit label, message)]
    not_started: list = field(default_factory=list)
    interrupted: bool = False


def pending(units: list[Unit], results: Path) -> list[Unit]:
    """The units without a record of their exact key."""
    have = set(record.scan(results).records)
    return [u for u in units if u.key not in have]


def run(kinds: dict[str, Kind], units: list[Unit], opts: Options, root: Path, cluster=None,
        estimate=None) -> Outcome:
    """Run the pending units on a cluster (a LocalCluster of opts.workers unless given) within the budget.

    Progress (units done, projected time left) goes to stderr. At the deadline, or on Ctrl-C, queued units are
    cancelled and the cluster is closed, which stops the running ones: they leave no record and run next time.
    `estimate(unit)` gives a unit's expected seconds (from recorded wall times) for the time left.
    """
    from distributed import Client, wait
    from tqdm import tqdm
    out = Outcome()
    results = Path(opts.results)
    for p in record.remove_orphans(results):
        print(f"[cleanup] removed {p.name} (a unit interrupted mid-write)", file=sys.stderr)
    todo = pending(units, results)
    if not todo:
        return out
    t_start = time.time()
    deadline = t_start + opts.budget_s
    own = cluster is None
    cluster = cluster or (slurm_cluster(**opts.slurm, cores=opts.threads or 1) if opts.slurm
                          else local_cluster(opts.workers, opts.threads or 1))
    client = Client(cluster)
    bar = tqdm(total=len(todo), unit="unit", file=sys.stderr, disable=not opts.progress, dynamic_ncols=True)
    futures = {client.submit(run_unit, kinds[u.kind], u, str(results), str(root), deadline, opts.threads,
                             key=f"unit-{u.key}", pure=False, retries=0): u for u in todo}
    left = {f for f in futures}
    try:
        while left:
            remaining = deadline - time.time()
            if remaining <= 0:
                break
            try:
                done, left = wait(list(left), timeout=min(remaining, 2.0), return_when="FIRST_COMPLETED")
            except TimeoutError:    # distributed.wait raises when nothing finished in time; check the clock again
                continue
            left = set(left)
            for f in done:
                u = futures[f]
                if f.status == "error":
                    exc = f.exception()
                    out.failed.append((u.label, f"{type(exc).__name__}: {exc}"))
                    print(f"[failed]  {u.label}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                else:
                    res = f.result()
                    (out.ran if res["status"] == "ran" else out.not_started if res["status"] == "budget"
                     else out.skipped).append(res)
                bar.update(1)
            if estimate is not None:
                secs = sum(estimate(futures[f]) or 0 for f in left) / max(opts.workers, 1)
                bar.set_postfix_str(f"~{secs / 60:.0f} min of units left" if secs else "time left unknown")
    except KeyboardInterrupt:
        out.interrupted = True
    finally:
        bar.close()
        stopped = [futures[f].label for f in left]
        out.not_started += [{"unit": s, "status": "stopped"} for s in stopped]
        for f in left:
            f.cancel()
        client.close()
        if own:
            cluster.close()
    return out
