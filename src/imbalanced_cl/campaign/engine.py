"""The fan-out: pending units submitted to a Dask cluster (LocalCluster here, SLURMCluster on a cluster), each run
under its lock and recorded atomically as it finishes, within a time budget, with progress and a clean Ctrl-C.

Dask only launches; which units are done is read from the records (record.scan), and the lock (lock.py) keeps two
campaigns on one folder from running the same unit. A unit whose worker dies or which raises leaves no record: the
next run redoes it.
"""
from __future__ import annotations

import logging
import math
import re
import sys
import time
import uuid
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from ..book.build import kernels
from ..validate import check, check_int
from . import checkpoint, probe, record
from .clusters import WORKER_DEATHS, local_cluster, slurm_cluster
from .lock import acquire
from .units import Kind, Unit, child_env

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600}


def parse_budget(text, name: str = "budget") -> float:
    """Seconds of a duration written 540, 540s, 9m or 2h; 0 or below is a ParameterError (one line) naming `name`."""
    m = re.fullmatch(r"\s*(-?[0-9]*\.?[0-9]+)\s*(s|m|min|h)?\s*", str(text))
    check(name, text, m is not None, "a duration such as 540s, 30m or 2h")
    seconds = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    check(name, text, seconds > 0 and math.isfinite(seconds), "a duration above 0, such as 540s, 30m or 2h")
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
    join_s: float = 600.0                # the campaign ends (exit 1) when no worker is connected for this long

    def __post_init__(self):
        """Validate on construction: a bad option never reaches a worker."""
        check_int("workers", self.workers, 1)
        if self.threads is not None:
            check_int("threads", self.threads, 1)
        check("budget", self.budget_s, isinstance(self.budget_s, (int, float)) and self.budget_s > 0,
              "a duration above 0, such as 540s, 30m or 2h")
        check("join_timeout", self.join_s, isinstance(self.join_s, (int, float)) and self.join_s > 0,
              "a duration above 0, such as 600s or 10m")


@contextmanager
def torch_threads(n: int):
    """Within the block torch uses `n` threads in this process; the previous count is back after it, however it
    ends (a worker runs many units, each with its own count)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_unit(kind: Kind, unit: Unit, results: str, root: str, deadline: float, threads: int | None = None,
             campaign: str = "") -> dict:
    """In a worker: take the unit's lock, skip it if recorded or past the deadline, else run and record it with
    `threads` torch threads (None: the kind's own), naming the `campaign` run that recorded it in its provenance."""
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
        t0 = time.time()
        points = checkpoint.unit_folder(results, unit)
        adopted = checkpoint.adopt(results, unit, lambda rec: probe.same_numbers(
            probe.probe_for(unit.kind, unit.name) or unit.kind, rec, unit.params, unit.code, root))
        checkpoint.write_origin(points, record.provenance(root, unit, 0.0, 0), unit)
        # two workers on two cores: one thread each, or they fight; the kernels a unit starts get the same count in
        # their environment, and the worker's own thread count is back after the unit
        with torch_threads(n), child_env(OMP_NUM_THREADS=n, MKL_NUM_THREADS=n), checkpoint.kept(points):
            payload = kind.run(unit, root)    # a unit stopped before resumes from the points it finished
        wall = time.time() - t0
        prov = {**record.provenance(root, unit, wall, n), "campaign": campaign,
                **({"adopted": adopted} if adopted else {})}
        path = record.write(results, unit, payload, prov)
        checkpoint.remove(points)                # only now: the record answers for the unit
        return {"unit": unit.label, "status": "ran", "wall_s": wall, "path": str(path)}
    finally:
        lk.release()


@dataclass
class Outcome:
    """What a campaign run did: units recorded, skipped (already done or locked), failed, and not started."""

    ran: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    failed: list = field(default_factory=list)      # [(unit label, message)]
    not_started: list = field(default_factory=list)
    interrupted: bool = False
    no_workers: str = ""                            # why the campaign ended early without workers ("" if it did not)


def pending(units: list[Unit], results: Path, root: Path | None = None) -> list[Unit]:
    """The units without a valid record (validity.find: today's code, or other code that computes the same numbers), and
    those whose valid record kept no measurements (validity.to_rerecord)."""
    from .validity import find, to_rerecord
    sc = record.scan(results)
    return [u for u in units if not ((j := find(results, u, root, sc)) and j.valid) or to_rerecord(j)]


@contextmanager
def deferred_signals():
    """Within the block, Ctrl-C and SIGTERM are noted (the yielded list), not raised: a cluster interrupted half-way
    through starting cannot be closed cleanly and fills the screen with Dask's tracebacks at exit. Outside the main
    thread (signals cannot be caught there) it does nothing."""
    import signal
    import threading
    got: list = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return
    old = {s: signal.signal(s, lambda signum, frame: got.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield got
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextmanager
def silenced(logger: str = "distributed"):
    """Within the block, a logger (Dask's) prints nothing: while a stopped campaign closes its cluster, the workers'
    and nannies' complaints about being stopped are expected, and the one `[stopped]` line says it all."""
    log = logging.getLogger(logger)
    before = log.level
    log.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        log.setLevel(before)


def _close(client, cluster, quiet: bool) -> None:
    """Close the client and (when given) the cluster; after a stop, quietly and whatever they raise."""
    from contextlib import nullcontext, suppress
    with silenced() if quiet else nullcontext(), suppress(Exception) if quiet else nullcontext():
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def _start(opts: Options):
    """The campaign's own cluster (SLURMCluster with opts.slurm, else a LocalCluster); KeyboardInterrupt, after
    closing what was started, when Ctrl-C or SIGTERM came while it started."""
    with deferred_signals() as got:
        try:
            cluster = (slurm_cluster(**opts.slurm, cores=opts.threads or 1) if opts.slurm
                       else local_cluster(opts.workers, opts.threads or 1))
        except Exception:
            if not got:
                raise
            cluster = None
    if got:
        _close(None, cluster, quiet=True)
        raise KeyboardInterrupt
    return cluster


def _workers(opts: Options) -> str:
    """'2 local workers' or '3 Slurm jobs on long', for the start-up line."""
    if opts.slurm:
        n = opts.slurm.get("jobs", 1)
        return f"{n} Slurm job{'s' if n != 1 else ''} on {opts.slurm.get('partition', '?')}"
    return f"{opts.workers} local worker{'s' if opts.workers != 1 else ''}"


def _ours(res: dict, unit: Unit, results: Path, campaign: str) -> dict:
    """A unit found 'done' is this campaign's when its record names this campaign run (its worker recorded it, then
    died before Dask heard back, and the unit's retry found the record): then it counts as recorded. One recorded by
    another campaign on the same folder stays 'done' (skipped)."""
    if res["status"] != "done" or not record.has(results, unit):
        return res
    path = record.path_of(results, unit)
    prov = record.read(path).get("provenance") or {}
    if not campaign or prov.get("campaign") != campaign:
        return res
    return {"unit": unit.label, "status": "ran", "wall_s": prov.get("wall_s") or 0.0, "path": str(path)}


def _collect(done, futures: dict, out: Outcome, results: Path, campaign: str) -> None:
    """Sort finished futures into the outcome: recorded, skipped or not started, or failed (with why)."""
    for f in done:
        u = futures[f]
        if f.status == "error":
            exc = f.exception()
            why = (f"its worker died {WORKER_DEATHS} times (a job's wall time or memory limit, or a crash): "
                   "given up for this run" if type(exc).__name__ == "KilledWorker" else f"{type(exc).__name__}: {exc}")
            out.failed.append((u.label, why))
            print(f"[failed]  {u.label}: {why}", file=sys.stderr, flush=True)
        else:
            res = _ours(f.result(), u, results, campaign)
            (out.ran if res["status"] == "ran" else out.not_started if res["status"] == "budget"
             else out.skipped).append(res)


def _deaths(client, futures: dict) -> dict:
    """{unit: how many of its workers died so far}, as the scheduler counts them (a unit is redone after each death,
    and fails after WORKER_DEATHS)."""
    def read(dask_scheduler, keys=tuple(f.key for f in futures)):
        return {k: dask_scheduler.tasks[k].suspicious for k in keys if k in dask_scheduler.tasks}
    by_key = client.run_on_scheduler(read)
    return {u: by_key.get(f.key, 0) for f, u in futures.items()}


def _say_redone(deaths: dict, said: dict) -> None:
    """One stderr line for each worker death not yet told of, while the unit is redone (the last death fails it:
    _collect says that)."""
    for u, n in deaths.items():
        for i in range(said.get(u, 0) + 1, min(n, WORKER_DEATHS - 1) + 1):
            print(f"[redone]  {u.label}: worker died; unit redone ({i} of {WORKER_DEATHS})", file=sys.stderr,
                  flush=True)
        said[u] = max(said.get(u, 0), n)


def _settle(left, futures: dict, results: Path, out: Outcome, campaign: str = "", drop: bool = True) -> None:
    """After the stop: a unit this campaign's worker recorded meanwhile (at the deadline, or between Ctrl-C and the
    close) counts as recorded, not as "not run"; the record, not Dask's future, says so. One that another campaign
    recorded meanwhile counts as skipped. With `drop`, the partial notebook of a unit stopped unrecorded is removed."""
    for f in left:
        u = futures[f]
        if record.has(results, u):
            res = _ours({"unit": u.label, "status": "done"}, u, results, campaign)
            (out.ran if res["status"] == "ran" else out.skipped).append(res)
        else:
            if drop:    # its worker was stopped mid-unit (the cluster closed), before its own clean-up
                checkpoint.drop_partials(results, u)
            out.not_started.append({"unit": u.label, "status": "stopped"})


class Watch:
    """Whether the cluster has had no worker for longer than `join_s` (none ever joined, or all left and none
    came back): a campaign waiting for jobs that never start must end, not idle until its budget is spent."""

    def __init__(self, client, join_s: float):
        """Watch `client`'s workers, from now."""
        self.client, self.join_s, self.since, self.ever = client, join_s, time.time(), False

    def lost(self) -> str:
        """'' while workers are connected or the wait is shorter than join_s; else one line that says what happened."""
        if self.client.nthreads():
            self.since, self.ever = time.time(), True
            return ""
        waited = time.time() - self.since
        if waited < self.join_s:
            return ""
        what = "every worker left and none came back" if self.ever else "no worker joined"
        return f"{what} within {waited:.0f} s (--join-timeout); the cluster's jobs are not starting"


def run(kinds: dict[str, Kind], units: list[Unit], opts: Options, root: Path, cluster=None,
        estimate=None, say=lambda line: None) -> Outcome:
    """Run the pending units on a cluster (a LocalCluster of opts.workers unless given) within the budget.

    Progress (units done, projected time left) goes to stderr. At the deadline, or on Ctrl-C, queued units are
    cancelled and the cluster is closed, which stops the running ones: they leave no record and run next time.
    When no worker is connected for opts.join_s seconds the campaign stops too, and says why (Outcome.no_workers).
    `estimate(unit)` gives a unit's expected seconds (from recorded wall times) for the time left; `say(line)`
    receives the phases of the campaign's own cluster ("[workers] starting ...", "[workers] ready").
    """
    from distributed import Client, wait
    from tqdm import tqdm
    out = Outcome()
    results = Path(opts.results)
    for p in record.remove_orphans(results):
        print(f"[cleanup] removed {p.name} (a unit interrupted mid-write)", file=sys.stderr)
    todo = pending(units, results, root)
    if not todo:
        return out
    deadline = time.time() + opts.budget_s
    campaign = uuid.uuid4().hex[:12]      # names this run in the records it writes
    own = cluster is None
    if own:     # explicit phases, said where the caller asks (the command line: stdout), for a person or a test
        say(f"[workers] starting {_workers(opts)}")
        cluster = _start(opts)
        say("[workers] ready")
    client = Client(cluster)
    bar = tqdm(total=len(todo), unit="unit", file=sys.stderr, disable=not opts.progress, dynamic_ncols=True)
    futures = {client.submit(run_unit, kinds[u.kind], u, str(results), str(root), deadline, opts.threads, campaign,
                             key=f"unit-{u.key}", pure=False, retries=0): u for u in todo}
    left, watch, said = set(futures), Watch(client, opts.join_s), {}
    try:
        while left and time.time() < deadline and not out.no_workers:
            try:
                done, left = wait(list(left), timeout=min(deadline - time.time(), 2.0), return_when="FIRST_COMPLETED")
            except TimeoutError:    # distributed.wait raises when nothing finished in time; check the clock again
                out.no_workers = watch.lost()
                _say_redone(_deaths(client, futures), said)
                continue
            left = set(left)
            _say_redone(_deaths(client, futures), said)     # a unit redone after a worker died is never silent
            _collect(done, futures, out, results, campaign)
            bar.update(len(done))
            _show_time_left(bar, estimate, futures, left, opts.workers)
    except KeyboardInterrupt:
        out.interrupted = True
    finally:
        bar.close()
        _wind_down(client, cluster, own, left, futures, results, out, campaign)
    return out


def _show_time_left(bar, estimate, futures: dict, left: set, workers: int) -> None:
    """The progress bar's projection, when units have estimates: the units left's expected time over the workers."""
    if estimate is not None:
        secs = sum(estimate(futures[f]) or 0 for f in left) / max(workers, 1)
        bar.set_postfix_str(f"~{secs / 60:.0f} min of units left" if secs else "time left unknown")


def _wind_down(client, cluster, own: bool, left: set, futures: dict, results: Path, out: Outcome,
               campaign: str) -> None:
    """Cancel the units left, close the client (and the cluster when it is ours) and record what became of each."""
    quiet = bool(left or out.interrupted or out.no_workers)
    with deferred_signals() as again:       # a second Ctrl-C must not break the close half-way
        for f in left:
            f.cancel()
        # units stopped mid-run make the workers and nannies complain as they close: expected, so silenced; their
        # notebook kernels are frozen meanwhile and killed after (a kernel that lost its worker says so); a cluster
        # not ours is left running, and so are its kernels
        with kernels.frozen() if quiet and own else nullcontext():
            _close(client, cluster if own else None, quiet=quiet)
    out.interrupted = out.interrupted or bool(again)
    _settle(left, futures, results, out, campaign, drop=own)     # a cluster not ours may still run them
