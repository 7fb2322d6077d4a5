"""A real Slurm: a private single-node cluster (tests/slurm_node.py: munged, slurmctld, slurmd from Debian's
packages), two units run through the documented command `campaign run --slurm`, one job killed by Slurm at its wall
time while its unit runs: the unit is redone once, in the job that replaces it, and both units are recorded.

Skips, with one line, where the packages are not installed (`.ci/run` installs them where it can:
apt-get install slurm-wlm munge)."""
from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import slurm_node

from imbalanced_cl.campaign import record

pytestmark = [pytest.mark.slow, pytest.mark.slurm]
ROOT = Path(__file__).resolve().parents[1]

# `python -m imbalanced_cl campaign run ...` with the tests' kinds registered (the `sleepy` units: they sleep, so
# Slurm's wall-time kill lands while one runs, whatever the machine's speed)
ENTRY = """
import sys
sys.path.insert(0, {tests!r})
import campaign_kinds  # noqa: F401
from imbalanced_cl.__main__ import main
if __name__ == "__main__":
    sys.exit(main(["campaign", "run"] + sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """The private Slurm's environment (SLURM_CONF), or a skip naming what is missing."""
    gone = slurm_node.missing()
    if gone:
        pytest.skip(f"no Slurm here ({', '.join(gone)} not installed; apt-get install slurm-wlm munge)")
    where = tmp_path_factory.mktemp("slurm")
    try:
        env = slurm_node.start(where)
    except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
        pytest.skip(f"Slurm is installed but would not start here: {str(e)[:300]}")
    yield env
    slurm_node.stop(where)


def _jobs(env: dict) -> list[tuple[str, str]]:
    """(job id, state) of the jobs squeue lists, oldest first."""
    out = subprocess.run(["squeue", "--noheader", "--format=%i %T"], env=env, capture_output=True, text=True).stdout
    return sorted((tuple(line.split()) for line in out.splitlines() if line.strip()), key=lambda j: int(j[0]))


def test_a_job_killed_at_its_wall_time_is_replaced_and_its_unit_redone_once(slurm, tmp_path):
    log, results = tmp_path / "runs.log", tmp_path / "results"
    entry = tmp_path / "campaign.py"
    entry.write_text(ENTRY.format(tests=str(Path(__file__).parent)))
    env = {**slurm, "OMP_NUM_THREADS": "1", "CK_LOG": str(log), "CK_SLEEP": "100",
           "PYTHONPATH": str(Path(__file__).parent)}     # the workers, in Slurm jobs, import the tests' kinds
    cmd = [sys.executable, str(entry), "--profile", "ci", "--kind", "sleepy", "--slurm", "--partition",
           slurm_node.PARTITION, "--jobs", "2", "--time", "0:10:00", "--memory", "2GB", "--budget", "9m",
           "--join-timeout", "3m", "--results", str(results), "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.time()
        while not (log.exists() and len(log.read_text().splitlines()) >= 2) and time.time() - t0 < 240:
            assert proc.poll() is None, proc.communicate()
            time.sleep(1)
        assert len(log.read_text().splitlines()) == 2, "the two units did not start within 240 s"
        first = _jobs(env)[0][0]
        # its wall time, cut to one minute: Slurm itself kills it (TIMEOUT) while its unit, 100 s long, runs
        subprocess.run(["scontrol", "update", f"JobId={first}", "TimeLimit=1"], env=env, check=True)
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (out, err)
    runs = Counter(line.split()[0] for line in log.read_text().splitlines())
    assert sorted(runs.values()) == [1, 2], runs                  # the killed job's unit ran twice, the other once
    recorded = record.scan(results / "ci").records
    assert sorted(r["name"] for r in recorded.values()) == ["u0", "u1"]
    assert "2 recorded" in out and "0 failed" in out, out
    logs = sorted(p.name for p in (results / "ci" / "slurm-logs").iterdir())
    assert len(logs) >= 6, logs                                    # three jobs' .out and .err, under the results
    assert not list(ROOT.glob("slurm-*.out"))
    assert not list((results / "ci" / ".locks").glob("*.lock"))   # the killed job's lock was reclaimed and released
