"""Notebook kernels that end without a word: a stopped run kills the kernels it started before it says `[stopped]`.

A kernel runs in a session of its own (jupyter_client starts it so), so Ctrl-C never reaches it; it learns of a stop
only when its parent goes (it then logs "Parent appears to have exited" on the shared stderr, up to a second later) or
when papermill's clean-up asks it to shut down mid-cell (it then logs a 20-line ZMQError traceback). Both came after
or beside the one `[stopped]` line (issue 51). Killed here first, a kernel prints nothing: SIGKILL cannot be caught.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

import psutil   # here, once: imported inside the functions, two runner threads (book --jobs 2) raced on its import

# A kernel's own log is written for an interactive front end. ERROR keeps its real errors and drops the warning that
# every start printed ("Kernel is running over TCP without encryption": the kernel listens on localhost only).
QUIET = ["--IPKernelApp.log_level=ERROR"]


def kernels() -> list:
    """The notebook kernels started under this process (by it, or by its workers), each with the processes it started
    (a notebook's own worker pool): psutil processes, kernels first."""
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if "ipykernel_launcher" in " ".join(p.cmdline()):
                found.append(p)
        except psutil.Error:
            continue        # gone meanwhile, or not ours to read
    trees = list(found)
    for k in found:
        try:
            trees += [c for c in k.children(recursive=True) if c not in trees]
        except psutil.Error:
            continue
    return trees


def _signal(procs: list, signum: int) -> None:
    """Send `signum` to each process; one that is already gone is skipped."""
    for p in procs:
        try:
            p.send_signal(signum)
        except psutil.Error:
            continue


def kill(procs: list | None = None, wait_s: float = 10.0) -> None:
    """Kill the kernels (default: every one under this process) and wait until they are gone."""
    procs = kernels() if procs is None else procs
    _signal(procs, signal.SIGKILL)
    psutil.wait_procs(procs, timeout=wait_s)


@contextmanager
def frozen():
    """Within the block the kernels under this process are stopped (SIGSTOP: a stopped process prints nothing, even
    when its parent dies); after it they are killed. A campaign closes its workers inside this block: a kernel that
    lost its worker never gets to say so."""
    procs = kernels()
    _signal(procs, signal.SIGSTOP)
    try:
        yield procs
    finally:
        kill(procs)


@contextmanager
def stops_kill_kernels():
    """Within the block, Ctrl-C and SIGTERM kill the kernels under this process first, then raise KeyboardInterrupt:
    papermill's clean-up then finds them gone, instead of asking a kernel to shut down in the middle of a cell (which
    logs a ZMQError traceback). A signal this process ignores (Ctrl-C in a job started in the background) stays
    ignored; outside the main thread (signals cannot be caught there) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        kill()
        raise KeyboardInterrupt

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) != signal.SIG_IGN}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
