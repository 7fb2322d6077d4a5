"""The clusters a campaign runs on: a LocalCluster of forked worker processes here, a SLURMCluster of single-worker
jobs on a cluster, both with Dask's housekeeping made quiet and a unit given up after WORKER_DEATHS worker deaths."""
from __future__ import annotations

import logging


# Dask's housekeeping, made quiet. By default each worker samples its thread's stack every 10 ms (the statistical
# profiler) and the event loops tick every 20 ms: about 4% of a core per process while a unit runs, on cores the
# units need (measured on this machine, one idle worker for 20 s: worker 3.8% -> 0.8%, scheduler 3.4% -> 1.1%).
# Units last minutes to hours, so none of it helps here.
QUIET = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
         "distributed.admin.system-monitor.interval": "10s", "distributed.worker.memory.monitor-interval": "5s"}


def quiet_env() -> dict:
    """QUIET as environment variables, for worker processes (Dask reads DASK_A__B__C as a.b.c)."""
    return {"DASK_" + k.upper().replace(".", "__").replace("-", "_"): str(v) for k, v in QUIET.items()}


def deaf_forkserver() -> None:
    """Start multiprocessing's fork server with Ctrl-C ignored, so the worker processes forked from it ignore it too.

    Ctrl-C in a terminal reaches every process of its group: workers that took it died printing tracebacks (while
    importing, or as their nannies closed). Ignored there, it reaches only the campaign, which closes the cluster
    and so stops them, with its one `[stopped]` line. (An ignored signal stays ignored across exec, and the fork
    server hands its own disposition to each child; notebook kernels ignore it anyway.)
    """
    import multiprocessing
    import signal
    import threading
    from multiprocessing import forkserver
    # deaf: the workers' own start-up ignores Ctrl-C even when the main module re-arms it at import (campaign/deaf.py)
    multiprocessing.get_context("forkserver").set_forkserver_preload(["distributed", "imbalanced_cl.campaign.deaf"])
    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, old)


def local_cluster(workers: int, threads: int = 1):
    """A LocalCluster of `workers` processes that run one unit at a time, OMP/MKL pinned to `threads` in their
    environment (the unit itself sets torch's thread count), forked from a server that ignores Ctrl-C."""
    import dask
    from distributed import LocalCluster
    dask.config.set({**scheduler_config(), "distributed.worker.multiprocessing-method": "forkserver"})
    deaf_forkserver()      # the scheduler and nannies run in this process; the workers are forked from the server
    one = {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), **quiet_env()}
    # dashboard on any free port: two campaigns on one machine never clash over 8787
    # silence_logs=CRITICAL: what a worker would log as an error (a unit that raised, a worker that died, the
    # scheduler gone while a stopped campaign closes) reaches the campaign through its futures, said in one line
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                        env=one, silence_logs=logging.CRITICAL)


# A unit whose worker dies this many times (a job's wall time, memory, a crash) fails, with that said, rather than
# being handed to worker after worker until the budget ends: 3 leaves room for one wall-time kill and one bad node.
WORKER_DEATHS = 3


def scheduler_config() -> dict:
    """The scheduler's settings for a campaign: QUIET, and a unit fails after WORKER_DEATHS worker deaths."""
    return {**QUIET, "distributed.scheduler.allowed-failures": WORKER_DEATHS - 1}


def slurm_cluster(jobs: int, partition: str, walltime: str, memory: str = "8GB", cores: int = 1,
                  log_directory: str | None = None):
    """A SLURMCluster that keeps `jobs` single-worker jobs on `partition` (dask-jobqueue): adaptive with a floor and a
    ceiling of `jobs`, so a job that ends (its wall time, say) is replaced; the jobs' logs go to `log_directory`."""
    import dask
    from dask_jobqueue import SLURMCluster
    dask.config.set(scheduler_config())    # the scheduler runs in this process
    cluster = SLURMCluster(queue=partition, walltime=walltime, cores=cores, processes=1, memory=memory,
                           log_directory=log_directory,
                           job_script_prologue=[f"export OMP_NUM_THREADS={cores} MKL_NUM_THREADS={cores}"]
                           + [f"export {k}={v}" for k, v in quiet_env().items()])
    cluster.adapt(minimum_jobs=jobs, maximum_jobs=jobs)
    return cluster
