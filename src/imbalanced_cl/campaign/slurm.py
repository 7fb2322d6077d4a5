"""What a campaign asks of Slurm itself: its settings checked before the budget starts (sbatch on the PATH, the
partition known to `sinfo`, at least one job), and whether a job still exists (`squeue`), for reclaiming the lock of
a unit whose job is gone."""
from __future__ import annotations

import os
import shutil
import subprocess

from ..validate import ParameterError, check_int, nearest

# Seconds a Slurm query may take before it counts as unanswered (a busy controller answers in well under one).
QUERY_S = 30


def _run(*cmd: str) -> subprocess.CompletedProcess | None:
    """A Slurm command's result, or None when it is not installed or did not answer within QUERY_S."""
    if shutil.which(cmd[0]) is None:
        return None
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=QUERY_S)
    except (OSError, subprocess.TimeoutExpired):
        return None


def partitions() -> list[str] | None:
    """The partitions `sinfo` lists (the default one without its '*'), or None when sinfo cannot be asked."""
    res = _run("sinfo", "--noheader", "--format=%P")
    if res is None or res.returncode != 0:
        return None
    return sorted({line.strip().rstrip("*") for line in res.stdout.splitlines() if line.strip()})


def check_slurm(partition: str | None, jobs: int) -> None:
    """Refuse, in one line, Slurm settings that cannot start a job: no --partition, --jobs below 1, no sbatch on the
    PATH, or a partition that sinfo does not list. Checked before the budget starts, so a typo does not idle it."""
    if not partition:
        raise ParameterError("--slurm needs --partition NAME")
    check_int("jobs", jobs, 1)
    if shutil.which("sbatch") is None:
        raise ParameterError("--slurm: sbatch is not on the PATH (load Slurm, e.g. `module load slurm`, or run on a "
                             "login node)")
    known = partitions()
    if known is None:
        raise ParameterError("--slurm: `sinfo` does not answer, so the partition cannot be checked (is slurmctld up?)")
    if partition not in known:
        near = nearest(partition, known)
        raise ParameterError(f"parameter partition={partition!r} is invalid: sinfo knows {', '.join(known) or 'none'}"
                             + (f" (did you mean {near}?)" if near else ""))


def job_id() -> str | None:
    """The Slurm job this process runs in ($SLURM_JOB_ID), or None outside one."""
    return os.environ.get("SLURM_JOB_ID") or None


def job_gone(job: str) -> bool:
    """Whether Slurm says the job no longer exists or has ended; False when squeue cannot be asked (not known)."""
    res = _run("squeue", "--noheader", "--jobs", str(job), "--format=%T")
    if res is None:
        return False
    if res.returncode != 0:        # "Invalid job id specified": gone from the controller's memory
        return "invalid job id" in (res.stderr + res.stdout).lower()
    state = res.stdout.strip().upper()
    return state in ("", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                     "BOOT_FAIL", "DEADLINE")
