"""Provenance: the commit, package version, parameters, seeds, wall time, torch version, device and training chunks
of a run."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from datetime import datetime, timezone

import torch

from ... import __version__
from ...sim.train import chunks_used

_T0 = time.time()
COMMIT_ENV = "IMBALANCED_CL_COMMIT"   # the commit of a copy that has no .git folder
# Set by the book runner when a notebook's measurements are read from a campaign record ("commit 1aea087 on cpu,
# 2026-11-27"): the page then says that nothing was trained in this build, and which record measured it.
RECORDED_ENV = "IMBALANCED_CL_RECORDED"


def _git(*args: str, root=None) -> str:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception:
        return ""


def tree_state(root=None, exclude: tuple[str, ...] = ()) -> tuple[str, bool]:
    """(commit, dirty) of the tree at `root`: the commit it is, and whether its tracked files (less `exclude`) differ.

    A copy sent to another machine (a lent GPU, a cluster's scratch copy) names its commit in $IMBALANCED_CL_COMMIT,
    and that name wins over the copy's own .git: a lease's copy carries the .git of the session's first commit, so
    its HEAD is older than the code it runs (a record made on 2026-11-28 said 040c24e, dirty, for code at 3470338).
    The copy is compared with the named commit where its git holds that commit; where it does not, the copy is taken
    to be that commit, as the caller says.
    """
    named = os.environ.get(COMMIT_ENV, "").strip()
    commit = named or _git("rev-parse", "HEAD", root=root)
    if not commit:
        return "unknown (not a git checkout)", False
    if named and not _git("rev-parse", "--verify", "--quiet", f"{named}^{{commit}}", root=root):
        return commit, False
    spec = ["--", ".", *(f":(exclude){x}" for x in exclude)] if exclude else []
    return commit, bool(_git("diff", "--name-only", commit, *spec, root=root))


def commit_label() -> str:
    """The checked-out commit, short, marked when the working tree has uncommitted changes."""
    commit, dirty = tree_state()
    if commit.startswith("unknown"):
        return commit
    return commit[:12] + (" with uncommitted changes" if dirty else "")


def profile() -> str:
    """The profile the book runner executes this notebook at ($IMBALANCED_CL_PROFILE), or say there is none."""
    return os.environ.get("IMBALANCED_CL_PROFILE") or "none (run outside the book runner)"


def cpu_kernels() -> str:
    """The CPU kernel path torch dispatches to on this machine (ATen's capability: 'AVX512', 'AVX2', 'DEFAULT'):
    records made on different paths can differ in their last digits."""
    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except Exception:   # a torch without the query
        return "unknown"


def environment() -> dict:
    """The versions of Python and of the packages that compute results, and the CPU kernel path: where a result was
    made (provenance), never part of a record's code version."""
    from ..build.cache import dependency_versions
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return {"versions": dependency_versions(), "cpu_kernels": cpu_kernels(), "cpu": cpu_model(), "gpu": gpu,
            "mkl_cbwr": os.environ.get("MKL_CBWR", "unset (MKL picks by CPU)")}


def record(params: dict, started: float | None = None) -> dict:
    """A provenance record for the current process (wall time counted from `started` or import)."""
    # A copy without its .git folder (a lent GPU machine, a cluster's scratch copy) names its commit in the environment.
    commit, dirty = tree_state()
    version = __version__     # the source's own version: an editable install's metadata can lag behind it
    return {
        "commit": commit, "dirty": dirty, "package": version, "profile": profile(),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "params": params, "seed": params.get("seed"),
        "wall_time_s": round(time.time() - (started or _T0), 1),
        "torch": torch.__version__, "device": "cuda" if torch.cuda.is_available() else "cpu",
        # replicates per training chunk: another chunking draws the same pairs, but its weights agree only to rounding
        "chunks": chunks_used(),
        "threads": torch.get_num_threads(), "python": platform.python_version(), **environment(),
        **({"measured by": f"the campaign record made by {os.environ[RECORDED_ENV]} (its measurement stages read "
                           "back; nothing trained in this build; `make book FRESH=1` measures again)"}
           if os.environ.get(RECORDED_ENV) else {}),
    }


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown" where there is none)."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def show(params: dict, started: float | None = None) -> None:
    """Display the provenance record as a small table (the last cell of every notebook).

    Returns None on purpose: a returned record would be echoed by Jupyter as a second copy on the page.
    Use record() for the values.
    """
    rec = record(params, started)
    from IPython.display import Markdown, display
    lines = ["| field | value |", "|---|---|"]
    for k, v in rec.items():
        if k in ("torch", "python"):     # shown once, in the versions row
            continue
        v = json.dumps(v, default=str) if isinstance(v, dict) else v
        lines.append(f"| {k} | `{v}` |")
    display(Markdown("**Provenance**\n\n" + "\n".join(lines)))
