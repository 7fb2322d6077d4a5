"""How a campaign ends on a real cluster and at a terminal: Slurm settings checked before the budget starts, locks
that name their host and job and are reclaimed when these are gone, a unit given up after WORKER_DEATHS worker
deaths, a campaign without workers that ends, a unit recorded while stopping that counts, and Ctrl-C's one line.

Slurm's commands are stood in for by small scripts on the PATH (tests/test_slurm.py runs a real one where it can)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from imbalanced_cl.campaign import clusters, engine, lock, record, slurm, status
from imbalanced_cl.campaign.units import Unit
from imbalanced_cl.validate import ParameterError

sys.path.insert(0, str(Path(__file__).parent))
import campaign_kinds as CK

ROOT = Path(__file__).resolve().parents[1]


def fake_slurm(tmp_path: Path, monkeypatch, sinfo: str = "debug*\nlong\n", squeue: str = "", squeue_rc: int = 0,
               sbatch: bool = True) -> Path:
    """A bin folder with stand-ins for sinfo (prints `sinfo`), squeue (prints `squeue`, exits `squeue_rc`) and
    sbatch, put first on the PATH (and the real ones, if any, hidden)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    scripts = {"sinfo": f"printf '{sinfo}'", "squeue": f"printf '{squeue}'; exit {squeue_rc}"}
    if sbatch:
        scripts["sbatch"] = "echo 'Submitted batch job 1'"
    for name, body in scripts.items():
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_))                         # the scripts' #!/bin/sh needs no PATH
    return bin_


def test_slurm_settings_are_checked_before_the_budget_starts(tmp_path, monkeypatch):
    fake_slurm(tmp_path, monkeypatch)
    slurm.check_slurm("long", 2)                                   # known partition: fine
    assert slurm.partitions() == ["debug", "long"]                 # the default's '*' dropped
    with pytest.raises(ParameterError,
                       match=r"partition='debg' is invalid: sinfo knows debug, long \(did you mean debug\?\)"):
        slurm.check_slurm("debg", 1)
    with pytest.raises(ParameterError, match="jobs=0 is invalid"):
        slurm.check_slurm("long", 0)
    with pytest.raises(ParameterError, match="needs --partition"):
        slurm.check_slurm(None, 1)


def test_no_sbatch_on_the_path_is_one_line(tmp_path, monkeypatch):
    fake_slurm(tmp_path, monkeypatch, sbatch=False)
    with pytest.raises(ParameterError, match="sbatch is not on the PATH"):
        slurm.check_slurm("long", 1)


def test_the_command_line_refuses_bad_slurm_settings_in_one_line_with_exit_2(tmp_path, monkeypatch, capsys):
    from imbalanced_cl.__main__ import main
    fake_slurm(tmp_path, monkeypatch)
    for extra in (["--partition", "nosuch"], ["--partition", "long", "--jobs", "0"], ["--join-timeout", "0s"]):
        argv = ["campaign", "run", "--profile", "ci", "--slurm", "--results", str(tmp_path / "r")] + extra
        if "--partition" not in extra:
            argv += ["--partition", "long"]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: "), err
    assert not (tmp_path / "r").exists()                            # nothing started


def _other_host_lock(path: Path, age_s: float, job: str | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": 1, "host": "some-other-node", "job": job, "since": 0}))
    then = time.time() - age_s
    os.utime(path, (then, then))


def test_a_lock_from_another_host_is_reclaimed_once_it_is_no_longer_refreshed(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    path = tmp_path / ".locks" / "a.lock"
    _other_host_lock(path, age_s=lock.STALE_S / 2)
    assert lock.acquire(path) is None                               # refreshed recently: its holder may live
    assert lock.why_stale(lock.holder(path)) == ""
    _other_host_lock(path, age_s=lock.STALE_S + 60)
    assert "not refreshed by some-other-node" in lock.why_stale(lock.holder(path))
    got = lock.acquire(path)
    assert got is not None and json.loads(path.read_text())["host"] == socket.gethostname()
    got.release()


@pytest.mark.parametrize("squeue, rc, gone", [("", 0, True), ("RUNNING", 0, False), ("PENDING", 0, False),
                                               ("TIMEOUT", 0, True),
                                               ("slurm_load_jobs error: Invalid job id specified", 1, True)])
def test_a_lock_whose_slurm_job_is_gone_is_reclaimed(tmp_path, monkeypatch, squeue, rc, gone):
    fake_slurm(tmp_path, monkeypatch, squeue=squeue, squeue_rc=rc)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    path = tmp_path / ".locks" / "a.lock"
    _other_host_lock(path, age_s=1, job="4711")                     # fresh, so only the job can make it stale
    assert slurm.job_gone("4711") is gone
    assert (lock.why_stale(lock.holder(path)) == "Slurm job 4711 is gone") is gone
    got = lock.acquire(path)
    assert (got is not None) is gone
    if got:
        got.release()


def test_a_lock_names_its_job_and_is_refreshed_while_held(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "99")
    path = tmp_path / "a.lock"
    held = lock.acquire(path)
    try:
        assert json.loads(path.read_text())["job"] == "99"
        then = time.time() - 500
        os.utime(path, (then, then))
        fresh = lock.Lock(path, held.token, refresh_s=0.05)         # a second refresher at a test's pace
        time.sleep(0.5)
        assert lock.holder(path)["age"] < 5                         # touched again
        fresh.release()
    finally:
        held.release()
    assert not path.exists()


def test_status_shows_the_holder_host_job_and_age(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    (unit,) = CK.plan_tiny("ci", ROOT, n=1)
    _other_host_lock(tmp_path / ".locks" / f"{unit.kind}-{unit.name}-{unit.key}.lock", age_s=70, job="12")
    fake_slurm(tmp_path, monkeypatch, squeue="RUNNING")
    text = "\n".join(status.report(status.coverage([unit], tmp_path), "ci", tmp_path))
    assert "[running: pid 1 on some-other-node, Slurm job 12, refreshed 1 min ago]" in text


def test_a_unit_recorded_while_the_campaign_stops_counts_as_recorded(tmp_path):
    """engine._settle: the budget ended while three units ran; during the shutdown this campaign's worker recorded
    one, another campaign on the folder recorded another, the third left nothing."""
    a, b, c = CK.plan_tiny("ci", ROOT, n=3)
    record.write(tmp_path, a, {"value": 0}, {"wall_s": 12.5, "campaign": "mine"})
    record.write(tmp_path, b, {"value": 1}, {"wall_s": 3.0, "campaign": "theirs"})
    out = engine.Outcome()
    engine._settle(["fa", "fb", "fc"], {"fa": a, "fb": b, "fc": c}, tmp_path, out, "mine")
    assert [(r["unit"], r["status"], r["wall_s"]) for r in out.ran] == [(a.label, "ran", 12.5)]
    assert [(r["unit"], r["status"]) for r in out.skipped] == [(b.label, "done")]
    assert out.not_started == [{"unit": c.label, "status": "stopped"}]


def test_a_unit_its_own_dead_worker_recorded_counts_as_recorded(tmp_path):
    """A worker records the unit and dies before Dask hears back; the retry finds the record ('done'). Written by
    this campaign run, it counts as recorded; written by another campaign, it stays skipped."""
    (a,) = CK.plan_tiny("ci", ROOT, n=1)
    record.write(tmp_path, a, {"value": 0}, {"wall_s": 7.0, "campaign": "other"})
    assert engine._ours({"unit": a.label, "status": "done"}, a, tmp_path, "mine")["status"] == "done"
    record.write(tmp_path, a, {"value": 0}, {"wall_s": 7.0, "campaign": "mine"})
    got = engine._ours({"unit": a.label, "status": "done"}, a, tmp_path, "mine")
    assert got["status"] == "ran" and got["wall_s"] == 7.0


@pytest.mark.slow
def test_a_campaign_without_workers_ends_and_says_why(tmp_path):
    from distributed import LocalCluster
    units = CK.plan_tiny("ci", ROOT, n=1, log=str(tmp_path / "log"))
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        t0 = time.time()
        out = engine.run({"tiny": CK.TINY}, units, engine.Options(tmp_path / "r", budget_s=600, progress=False,
                                                                  join_s=3), ROOT, cluster=empty)
    assert out.no_workers.startswith("no worker joined within") and time.time() - t0 < 60
    assert [r["status"] for r in out.not_started] == ["stopped"] and not out.ran


@pytest.mark.slow
def test_a_unit_whose_worker_always_dies_fails_after_a_bounded_number_of_deaths(tmp_path, capsys):
    log = tmp_path / "runs.log"
    units = CK.plan_tiny("ci", ROOT, n=1, log=str(log))
    doomed = [Unit("doomed", u.name, u.profile, u.params, u.code) for u in units]
    cluster = clusters.local_cluster(1)
    try:
        out = engine.run({"doomed": CK.DOOMED}, doomed, engine.Options(tmp_path / "r", budget_s=300,
                                                                        progress=False), ROOT, cluster=cluster)
    finally:
        cluster.close()
    assert [label for label, _ in out.failed] == [doomed[0].label]
    assert f"its worker died {clusters.WORKER_DEATHS} times" in out.failed[0][1]
    assert Counter(ln.split()[0] for ln in log.read_text().splitlines()) == {"u0": clusters.WORKER_DEATHS}
    # each death but the last is told as it happens, the last one by the failure (issue 51)
    err = capsys.readouterr().err.strip().splitlines()
    assert err[:-1] == [f"[redone]  doomed/u0: worker died; unit redone ({i} of {clusters.WORKER_DEATHS})"
                        for i in range(1, clusters.WORKER_DEATHS)], err
    assert err[-1].startswith("[failed]  doomed/u0: its worker died"), err


STOP = """
import os, signal, sys, time
sys.path.insert(0, {tests!r})
# A background job starts with Ctrl-C ignored: re-armed here at import, as a user's script would. Every worker
# re-imports this module as __mp_main__ while it starts, so this line re-arms Ctrl-C in the workers too.
signal.signal(signal.SIGINT, signal.default_int_handler)
if __name__ == "__mp_main__" and os.environ.get("CK_START_LOG"):
    # a worker starting: hold it at the start of its run, after this import, before Dask's start-up (where a
    # re-armed Ctrl-C printed a worker's traceback), and say so, so that the stop lands inside start-up for certain
    from multiprocessing import process
    _run = process.BaseProcess.run

    def held_run(self):
        with open(os.environ["CK_START_LOG"], "a") as fh:
            fh.write(f"starting {{os.getpid()}}\\n")
        time.sleep(10)           # longer than the test takes to see both lines and stop the campaign
        _run(self)

    process.BaseProcess.run = held_run
import campaign_kinds  # noqa: F401  (registers the sleepy kind)
from imbalanced_cl.__main__ import main
if __name__ == "__main__":
    sys.exit(main(["campaign", "run", "--profile", "ci", "--kind", "sleepy", "--results", {res!r}, "--workers", "2",
                   "--budget", "5m", "--no-progress"]))
"""


def _wait_for(proc, marker: str, deadline: float, seen: list) -> None:
    """Read the campaign's stdout into `seen` until a line starts with `marker` (the phase the test stops it in)."""
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(marker):
            return
    raise AssertionError(f"no {marker!r} line on stdout: {seen}")


def _wait_lines(path: Path, n: int, deadline: float) -> None:
    """Wait until the file has n lines (each worker, or each unit, has said it got there)."""
    while not (path.exists() and len(path.read_text().splitlines()) >= n) and time.time() < deadline:
        time.sleep(0.1)
    assert path.exists() and len(path.read_text().splitlines()) >= n, f"{path.name}: fewer than {n} lines"


@pytest.mark.slow
@pytest.mark.parametrize("when", ["starting", "running"])
def test_ctrl_c_prints_one_line(tmp_path, when):
    """Ctrl-C in a terminal reaches the whole process group (the campaign, its workers, their kernels): the only
    thing printed on stderr is the one `[stopped]` line, whether it comes while the workers start or while units run.

    Both phases are forced by markers, not timed: while starting, both workers are held inside their import of the
    main script, which has re-armed Ctrl-C (the race that failed CI now and then, made certain), and have said so;
    while running, the campaign has printed `[workers] ready` and both units have logged their start."""
    log, started, script = tmp_path / "runs.log", tmp_path / "start.log", tmp_path / "stop.py"
    script.write_text(STOP.format(tests=str(Path(__file__).parent), res=str(tmp_path / "r")))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CK_LOG": str(log), "CK_SLEEP": "120"}
    if when == "starting":
        env["CK_START_LOG"] = str(started)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    deadline, seen = time.time() + 120, []
    if when == "starting":
        _wait_for(proc, "[workers] starting", deadline, seen)
        _wait_lines(started, 2, deadline)          # both workers are inside their start-up, Ctrl-C re-armed there
    else:
        _wait_for(proc, "[workers] ready", deadline, seen)
        _wait_lines(log, 2, deadline)              # both units are running
    os.killpg(proc.pid, signal.SIGINT)
    rest, err = proc.communicate(timeout=120)
    out = "".join(seen) + rest
    lines = err.strip().splitlines()
    assert proc.returncode == 130 and len(lines) == 1 and lines[0].startswith("[stopped]"), err
    # the stop came in the phase the test names: before the workers were ready, or after both units started
    assert ("[workers] ready" in out) == (when == "running"), out
    assert ("before the workers started" in lines[0]) == (when == "starting"), lines
    assert not record.scan(tmp_path / "r" / "ci").records
