"""Independent runs in worker processes, and what a reader is told when one of them dies.

Used where a notebook's work splits into independent pieces that each fill one core better than two threads share
one piece: the real-image runs of notebook 06 (lt.experiment), the training batches of notebook 05
(claims.appendix) and the grid points of notebook 03 (campaign.checkpoint.grid). `plan` says how many processes,
`map_in_processes` runs them, and `pieces` adds what a notebook needs around it: pieces kept by an interrupted
campaign unit are read back, and what a worker prints is shown in order.

A worker killed by a signal (a native crash: SIGSEGV, SIGABRT) breaks concurrent.futures' pool, which then says
only "A process in the process pool was terminated abruptly". Here each run leaves a marker file (its worker's pid
and label) while it runs, so the crash names the run that died, its settings and its exit signal, in one line.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Iterator, Sequence

WHERE = "book/reproducing.md, 'Troubleshooting'"


class WorkerCrash(RuntimeError):
    """A worker process died while running a unit; the message names the unit, its settings and the signal."""

    def _render_traceback_(self) -> list[str]:
        # IPython (and so papermill) shows this one line instead of the pool's traceback.
        return [f"WorkerCrash: {self}"]


def describe_exit(code: int | None) -> str:
    """'signal SIGSEGV' for a negative exit code, 'exit code N' otherwise, 'no exit code' when unknown."""
    if code is None:
        return "no exit code"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _run_marked(marks: str, label: str, fn: Callable, args: bytes) -> bytes:
    """In the worker: leave a marker naming `label` while fn(*args) runs, remove it when it returns.

    Arguments and result cross the process boundary as plain pickles (bytes). The pool's own pickler sends each
    tensor through a shared-memory file, one open file per tensor storage: a batch of runs with their recorded
    histories holds thousands, and notebook 04 at its default size stopped at "Too many open files"."""
    mark = Path(marks) / f"{os.getpid()}.run"
    mark.write_text(label)
    out = pickle.dumps(fn(*pickle.loads(args)), protocol=pickle.HIGHEST_PROTOCOL)
    mark.unlink()
    return out


def crash_message(marks: Path, exits: dict[int, int | None], settings: str) -> str:
    """One line naming the unit(s) whose worker died (a signal other than the pool's own SIGTERM comes first)."""
    died = []
    for mark in sorted(marks.glob("*.run")):
        pid = int(mark.stem)
        code = exits.get(pid)
        crashed = code is not None and code < 0 and code != -signal.SIGTERM    # not the pool's own SIGTERM
        died.append((0 if crashed else 1, mark.read_text(), pid, code))
    if not died:
        return (f"a worker process died outside any run ({settings}); rerun with workers=1 to see its error here; "
                f"see {WHERE}")
    died.sort()
    _, label, pid, code = died[0]
    others = "" if len(died) == 1 else f" (also stopped: {', '.join(d[1] for d in died[1:])})"
    return (f"run {label} died in worker {pid} with {describe_exit(code)} ({settings}){others}; a native crash "
            f"(rerun with workers=1 to see it in this process); see {WHERE}")


def cores() -> int:
    """The CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def plan(workers: int, jobs: int, on_cuda: bool = False) -> int:
    """How many worker processes for `jobs` independent pieces: `workers`, or with 0 one per torch thread this
    process may use on the CPU (so a campaign unit pinned to one thread stays one process) and one on CUDA; at most
    `jobs`, at least 1."""
    import torch
    procs = workers or (1 if on_cuda else min(cores(), torch.get_num_threads()))
    return max(1, min(procs, jobs))


def map_in_processes(fn: Callable, jobs: Sequence[tuple], labels: Sequence[str], procs: int,
                     settings: str = "") -> Iterator:
    """fn(*job) for every job on `procs` spawned worker processes, yielded in job order.

    A worker that dies raises WorkerCrash naming the job (its label), `settings` and the exit signal."""
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="imbalanced-cl-runs-") as marks, \
            ProcessPoolExecutor(procs, mp_context=ctx) as ex:
        futures = [ex.submit(_run_marked, marks, label, fn, pickle.dumps(tuple(job), protocol=pickle.HIGHEST_PROTOCOL))
                   for job, label in zip(jobs, labels, strict=True)]
        # the pool's Process objects, kept so that their exit codes can be read after the pool breaks
        # (concurrent.futures has no public accessor for them)
        workers = dict(getattr(ex, "_processes", None) or {})
        try:
            for f in futures:
                yield pickle.loads(f.result())
        except BrokenProcessPool:
            for p in workers.values():          # the pool reaps its workers in its own thread: wait for it
                p.join(timeout=30)
                # Both threads wait on the same child: the one whose waitpid loses the race (ECHILD) reads no exit
                # code, and the winner stores it a moment later. Read again until it is there (CI once read None).
                deadline = time.monotonic() + 5
                while p.exitcode is None and time.monotonic() < deadline:
                    time.sleep(0.05)
            exits = {pid: p.exitcode for pid, p in workers.items()}
            raise WorkerCrash(crash_message(Path(marks), exits, settings)) from None


def _piece(fn: Callable, args: tuple):
    """In a worker: fn(*args) on one torch thread, and what it printed (the parent prints it, in order)."""
    import contextlib
    import io

    import torch
    torch.set_num_threads(1)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        out = fn(*args)
    return out, text.getvalue()


def pieces(fn: Callable, jobs: Sequence[tuple], names: Sequence[str], workers: int = 0, keep=None,
           on_cuda: bool = False, settings: str = "") -> tuple[int, Iterator]:
    """(processes used, an iterator of fn(*job) for every job, in job order).

    Each result passes through keep(name, compute) (a campaign unit's checkpoint.Memo: it reads back what an
    interrupted run kept, and keeps what is new; None just computes). Jobs that `keep.saved(name)` says are kept are
    not computed; the rest run here when `plan(workers, ...)` gives one process, else in worker processes of one
    torch thread each (fn must be picklable), what they print shown here in job order."""
    keep = keep or (lambda name, compute: compute())
    saved = getattr(keep, "saved", lambda name: False)
    todo = [k for k, name in enumerate(names) if not saved(name)]
    procs = plan(workers, len(todo), on_cuda)
    if procs > 1:
        done = map_in_processes(_piece, [(fn, jobs[k]) for k in todo], [names[k] for k in todo], procs, settings)

        def compute(k):
            out, text = next(done)          # results come back in todo's order, the order they are asked for
            print(text, end="", flush=True)
            return out
    else:
        def compute(k):
            return fn(*jobs[k])
    return procs, (keep(name, lambda: compute(k)) for k, name in enumerate(names))
