"""Stops of runs whose units execute a real notebook kernel (issue 51): `book` and `campaign`, stopped by Ctrl-C or
by the budget, print one `[stopped]` line on stderr and nothing else (no kernel warning, no "Parent appears to have
exited", no ZMQError traceback), and leave no partial notebook where `git add results/campaign` would find it.

Every phase is forced by a marker, never a sleep: the kernel runs an IPython startup file (IPYTHONDIR, set for the
test only) that writes a line and holds the kernel, either in its start-up (before it answers papermill) or inside a
cell of the real notebook. The notebook is 01_stage1_growth at the ci profile (the first claim notebook; held, its
own run time does not count).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from imbalanced_cl.campaign import record

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "01_stage1_growth"

# The startup file: 'starting' holds the kernel before it answers kernel_info; 'running' holds it inside its third
# cell (after the notebook's imports), as a long cell would. Each hold writes '<phase> <pid>' first.
HOLD = '''
import os, time
_phase, _log = os.environ.get("CK_KERNEL_HOLD"), os.environ.get("CK_KERNEL_LOG")
_cells = []


def _hold():
    with open(_log, "a") as fh:
        fh.write(f"{_phase} {os.getpid()}\\n")
    time.sleep(600)


def _cell(info):
    _cells.append(info)
    if len(_cells) == 3:
        _hold()


if _phase == "starting":
    _hold()
elif _phase == "running":
    get_ipython().events.register("pre_run_cell", _cell)
'''

# The campaign as a user's background script starts it (Ctrl-C re-armed at import); with CK_START_LOG, each worker is
# held at the start of its run, after this import (as in test_campaign_ends.py), so that a stop lands in start-up.
CAMPAIGN = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
if __name__ == "__mp_main__" and os.environ.get("CK_START_LOG"):
    from multiprocessing import process
    _run = process.BaseProcess.run

    def held_run(self):
        with open(os.environ["CK_START_LOG"], "a") as fh:
            fh.write(f"starting {{os.getpid()}}\\n")
        time.sleep(10)
        _run(self)

    process.BaseProcess.run = held_run
from imbalanced_cl.__main__ import main
if __name__ == "__main__":
    sys.exit(main(["campaign", "run", "--profile", "ci", "--kind", "notebook", "--only", {nb!r}, "--results", {res!r},
                   "--workers", "1", "--budget", {budget!r}, "--no-progress"]))
"""


@pytest.fixture(autouse=True)
def _leave_nothing_running(tmp_path):
    """After each test, kill what a failed one may leave: the run's process group, and the held kernels (which sit
    in a session of their own, for ten minutes)."""
    started: list = []
    yield started
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    for pid in _kernel_pids(tmp_path / "kernel.log"):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _env(tmp_path: Path, phase: str) -> dict:
    """The environment of a run whose kernels hold in `phase` and log to tmp_path/kernel.log."""
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-hold.py").write_text(HOLD)
    return {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "IPYTHONDIR": str(tmp_path / "ipython"),
            "CK_KERNEL_HOLD": phase, "CK_KERNEL_LOG": str(tmp_path / "kernel.log")}


def _wait_for(path: Path, word: str, deadline: float, proc) -> None:
    """Wait until `path` has a line that starts with `word` (a kernel, or a worker, got there)."""
    while time.time() < deadline and proc.poll() is None:
        if path.exists() and any(ln.startswith(word) for ln in path.read_text().splitlines()):
            return
        time.sleep(0.1)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)       # the test failed: leave nothing running
    out, err = proc.communicate(timeout=60)
    raise AssertionError(f"no {word!r} line in {path.name}; the run said: {out}{err}")


def _gone(pids: list[int]) -> bool:
    """Whether every process in `pids` had ended (or was a zombie, dead and unreaped) when the run returned: a
    kernel must be stopped before `[stopped]` is printed, not a second later."""
    return not any(Path(f"/proc/{p}").exists() and "zombie" not in _state(p) for p in pids)


def _state(pid: int) -> str:
    """The process's state word from /proc (or '' when gone)."""
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0].lower()
    except (OSError, IndexError):
        return ""


def _kernel_pids(log: Path) -> list[int]:
    """The kernels that reached their hold."""
    return [int(ln.split()[1]) for ln in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.slow
@pytest.mark.parametrize("phase, how", [("starting", "ctrl-c"), ("running", "ctrl-c"), ("running", "kill")])
def test_book_stopped_by_ctrl_c_prints_one_line(tmp_path, phase, how, _leave_nothing_running):
    """Ctrl-C (SIGINT to the process group) while the kernel starts or inside a cell, or `kill PID` (SIGTERM to the
    book alone) inside a cell: rc 130, one `[stopped]` line, the kernel gone."""
    env = _env(tmp_path, phase)
    # Ctrl-C re-armed in the child: a suite started in the background inherits it ignored (and so would the book)
    proc = subprocess.Popen([sys.executable, "-m", "imbalanced_cl", "book", "--profile", "ci", "--only", NOTEBOOK,
                             "--no-build", "--out", str(tmp_path / "out")], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _leave_nothing_running.append(proc)
    log = tmp_path / "kernel.log"
    _wait_for(log, phase, time.time() + 180, proc)
    if how == "kill":
        os.kill(proc.pid, signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    lines = err.strip().splitlines()
    assert proc.returncode == 130 and len(lines) == 1 and lines[0].startswith("[stopped]"), err
    assert _gone(_kernel_pids(log)), "the kernel outlived the book"
    assert not list((tmp_path / "out").rglob("*.partial.ipynb"))


def _campaign(tmp_path: Path, phase: str, budget: str, results: Path):
    """A campaign of the notebook unit, its kernel held in `phase` ('starting': its worker held in start-up)."""
    env = _env(tmp_path, phase if phase != "starting" else "running")
    if phase == "starting":
        env["CK_START_LOG"] = str(tmp_path / "start.log")
    script = tmp_path / "campaign.py"
    script.write_text(CAMPAIGN.format(nb=NOTEBOOK, res=str(results), budget=budget))
    return subprocess.Popen([sys.executable, str(script)], cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["starting", "running"])
def test_campaign_of_a_notebook_stopped_by_ctrl_c_prints_one_line(tmp_path, phase, _leave_nothing_running):
    """Ctrl-C while the worker starts, or while the notebook's kernel is inside a cell: rc 130, one `[stopped]`
    line, the kernel gone, nothing recorded, no partial notebook left."""
    results = tmp_path / "r"
    proc = _campaign(tmp_path, phase, "10m", results)
    _leave_nothing_running.append(proc)
    log = tmp_path / ("start.log" if phase == "starting" else "kernel.log")
    _wait_for(log, phase, time.time() + 180, proc)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=180)
    lines = err.strip().splitlines()
    assert proc.returncode == 130 and len(lines) == 1 and lines[0].startswith("[stopped]"), err
    assert ("before the workers started" in lines[0]) == (phase == "starting"), lines
    assert _gone(_kernel_pids(tmp_path / "kernel.log")), "a kernel outlived the campaign"
    assert not record.scan(results / "ci").records
    assert not list(results.rglob("*.partial.ipynb"))


@pytest.mark.slow
def test_campaign_stopped_by_its_budget_prints_one_line_and_leaves_nothing_for_git(tmp_path, _leave_nothing_running):
    """The budget runs out while the notebook's kernel is inside a cell: one `[stopped]` line naming the budget, the
    kernel gone, and in a git repository that has the project's .gitignore, `git add -n results/campaign` stages
    nothing (the partial notebook named this machine's directories and was committed by the documented command)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
    results = repo / "results" / "campaign"
    t0 = time.time()
    proc = _campaign(tmp_path, "running", "45s", results)
    _leave_nothing_running.append(proc)
    log = tmp_path / "kernel.log"
    _wait_for(log, "running", t0 + 45, proc)            # inside a cell before the budget ends: the stop lands there
    out, err = proc.communicate(timeout=240)
    lines = err.strip().splitlines()
    assert proc.returncode == 0 and len(lines) == 1 and lines[0].startswith("[stopped] budget 45s spent"), err
    assert _gone(_kernel_pids(log)), "a kernel outlived the campaign"
    assert not record.scan(results / "ci").records
    assert not list(results.rglob("*.partial.ipynb"))
    staged = subprocess.run(["git", "-C", str(repo), "add", "-n", "results/campaign"], capture_output=True, text=True)
    assert staged.stdout.strip() == "", staged.stdout
