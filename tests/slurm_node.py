"""A private single-node Slurm for tests: munged, slurmctld and slurmd from Debian's packages (slurm-wlm, munge),
with their key, sockets, state, logs and ports under one folder, so nothing system-wide is touched or needed.

    python tests/slurm_node.py start DIR     # prints the SLURM_CONF to export; sinfo then lists partition "ci"
    python tests/slurm_node.py stop DIR

`start` returns once `sinfo` shows the node idle (or raises, naming the daemon's log). Each command is run with
SLURM_CONF=<DIR>/slurm.conf; the daemons run as the current user.
"""
from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

NEEDED = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scancel")
PARTITION = "ci"


def missing() -> list[str]:
    """The programs a single-node Slurm needs that are not installed (sbin included)."""
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    return [p for p in NEEDED if shutil.which(p, path=path) is None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sbin(name: str) -> str:
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def conf_text(d: Path, host: str, user: str, cpus: int, memory_mb: int) -> str:
    """A minimal slurm.conf: one node, one partition (ci), munge over a private socket, no accounting, no cgroups."""
    return f"""ClusterName=imbalancedci
SlurmctldHost={host}
SlurmUser={user}
SlurmdUser={user}
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={d}/munge.socket
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
KillWait=5
OverTimeLimit=0
MinJobAge=300
InactiveLimit=0
SlurmdTimeout=30
NodeName={host} CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def env(d: Path) -> dict:
    """This environment with SLURM_CONF pointing at the private Slurm."""
    return {**os.environ, "SLURM_CONF": str(Path(d) / "slurm.conf")}


def start(d: Path, timeout: float = 60) -> dict:
    """Start munged, slurmctld and slurmd under `d`; the environment to run Slurm commands in."""
    d = Path(d).resolve()
    for sub in ("state", "spool"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    key = d / "munge.key"
    if not key.exists():
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
    host = socket.gethostname().split(".")[0]
    user = pwd.getpwuid(os.getuid()).pw_name
    mem_mb = max(1024, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2 ** 20 // 2)
    (d / "slurm.conf").write_text(conf_text(d, host, user, os.cpu_count() or 1, mem_mb))
    e = env(d)
    subprocess.run([_sbin("munged"), "--force", f"--socket={d}/munge.socket", f"--key-file={key}",
                    f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed"],
                   check=True, env=e, capture_output=True)
    subprocess.run([_sbin("slurmctld"), "-f", str(d / "slurm.conf")], check=True, env=e, capture_output=True)
    subprocess.run([_sbin("slurmd"), "-f", str(d / "slurm.conf"), "-N", host], check=True, env=e,
                   capture_output=True)
    t0 = time.time()
    while time.time() - t0 < timeout:
        res = subprocess.run(["sinfo", "--noheader", "--format=%t"], env=e, capture_output=True, text=True)
        if res.returncode == 0 and res.stdout.strip() in ("idle", "mix", "alloc"):
            return e
        time.sleep(1)
    stop(d)
    logs = " | ".join((d / f).read_text()[-300:] for f in ("slurmctld.log", "slurmd.log") if (d / f).exists())
    raise RuntimeError(f"the single-node Slurm did not come up within {timeout:.0f} s: {logs}")


def stop(d: Path) -> None:
    """Stop the daemons started under `d` (by their pid files), cancelling every job first."""
    d = Path(d).resolve()
    subprocess.run(["scancel", "--partition", PARTITION], env=env(d), capture_output=True)
    for name in ("slurmd", "slurmctld", "munged"):
        pid_file = d / f"{name}.pid"
        try:
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
        except (OSError, ValueError):
            pass


if __name__ == "__main__":
    cmd, folder = sys.argv[1], Path(sys.argv[2])
    if cmd == "start":
        start(folder)
        print(f"export SLURM_CONF={folder.resolve() / 'slurm.conf'}")
    else:
        stop(folder)
