"""Provenance: the commit, package version, parameters, seeds, wall time, torch version and device of a run."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from datetime import datetime, timezone

import torch

from .. import __version__

_T0 = time.time()


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception:
        return ""


def commit_label() -> str:
    """The checked-out commit, short, marked when the working tree has uncommitted changes."""
    commit = _git("rev-parse", "--short=12", "HEAD")
    if not commit:
        return "unknown (not a git checkout)"
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    return commit + (" with uncommitted changes" if dirty else "")


def profile() -> str:
    """The profile the book runner executes this notebook at ($IMBALANCED_CL_PROFILE), or say there is none."""
    return os.environ.get("IMBALANCED_CL_PROFILE") or "none (run outside the book runner)"


def record(params: dict, started: float | None = None) -> dict:
    """A provenance record for the current process (wall time counted from `started` or import)."""
    commit = _git("rev-parse", "HEAD") or "unknown (not a git checkout)"
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    version = __version__     # the source's own version: an editable install's metadata can lag behind it
    return {
        "commit": commit, "dirty": dirty, "package": version, "profile": profile(),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "params": params, "seed": params.get("seed"),
        "wall_time_s": round(time.time() - (started or _T0), 1),
        "torch": torch.__version__, "device": "cuda" if torch.cuda.is_available() else "cpu",
        "threads": torch.get_num_threads(), "python": platform.python_version(),
        **cpu_kernels(),
    }


def cpu_kernels() -> dict:
    """The CPU kernel path that decides float rounding: the same seed gives the same bits only on the same path.

    Intel and AMD hosts take different MKL kernels (bmm and baddbmm round differently on one and agree on the other),
    and ATen picks its vector width from the CPU; both can be pinned by MKL_CBWR and ATEN_CPU_CAPABILITY set in the
    environment before torch loads (book/reproducing.md says why the project does not pin them).
    """
    return {"cpu": platform.processor() or _cpu_model(), "aten_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "mkl_cbwr": os.environ.get("MKL_CBWR", "unset (MKL picks by CPU)")}


def _cpu_model() -> str:
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
        v = json.dumps(v, default=str) if isinstance(v, dict) else v
        lines.append(f"| {k} | `{v}` |")
    display(Markdown("**Provenance**\n\n" + "\n".join(lines)))
