"""`make gpu-check`: on a CUDA machine, in one call under 9 minutes: the CUDA tests, the paper-size benchmark, then
`paper` campaign units one at a time, each with the whole GPU. Without CUDA: one line, exit 0.

The tests and the benchmark run only where this code has no passing result of them on this kind of GPU
(results/gpu/checks/, records of their own, committed): a second call in the same lease, or a later lease on the
same code, spends its minutes on units.

Each step prints its exit code and the next still runs, so one call on a lent GPU records as much as it can. A unit
cut by the budget keeps its finished points (checkpoints of GPU points live apart from the CPU's) and resumes from
them in the next call or the next lease. The units go cheapest first, by the benchmark's projection, so that a short
lease records whole units before it starts a long one.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone

from ..paths import repo_root

TOTAL_S = 540            # the whole call: under the device tool's 10-minute limit, with margin
TESTS_S = 90             # the CUDA tests
BENCH_S = 120            # benchmarks/paper_projection.py at every notebook's paper size
CUDA_TEST_FILES = ["tests/test_core.py", "tests/test_train_loop.py", "tests/test_lt_speed.py"]
# The notebooks whose paper units the benchmark projects (cheapest first once measured), then what a lease adds:
# notebook 03 under a second base seed (seed stability at paper), the premise map's large-d cells, and notebook 04,
# the longest, last.
PROJECTED = ["02_lucky_neurons", "03_Ni_scaling", "01_stage1_growth", "05_appendix_figures"]
THREADS = 8              # torch threads of the one unit at a time (its CPU-side work: measurements, census)


# The checks a lease runs before its units, each with the files whose code it checks: a passing result for this code
# on this kind of GPU is a record of its own (results/gpu/checks/), so a second call, or a second lease on the same
# code, goes straight to the units.
CHECKS = {"CUDA tests": ("src", *CUDA_TEST_FILES), "paper-size benchmark": ("src", "benchmarks")}


def gpu_kind(name: str) -> str:
    """The kind of GPU a device name says: its model ('NVIDIA H100 80GB HBM3' -> 'h100'), else the name as a slug."""
    import re
    model = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Za-z]?)\b", name)
    return model.group(1).lower() if model else re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def check_code(root, paths) -> str:
    """sha256 (16 hex digits) over the bytes of the .py files under `paths` (files or folders), with their names."""
    from pathlib import Path
    h = hashlib.sha256()
    files = []
    for p in (Path(root) / q for q in paths):
        files += sorted(p.rglob("*.py")) if p.is_dir() else [p] if p.exists() else []
    for f in sorted(set(files)):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def check_record(root, name: str, device: str):
    """Where the result of check `name` on GPU kind `device` under today's code is recorded."""
    slug = name.lower().replace(" ", "-")
    return root / "results" / "gpu" / "checks" / device / f"{slug}-{check_code(root, CHECKS[name])}.json"


def passed_before(root, name: str, device: str) -> dict | None:
    """The passing record of check `name` for today's code on `device`, or None (absent, failed or unreadable)."""
    try:
        rec = json.loads(check_record(root, name, device).read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("rc") == 0 else None


def checked(root, name: str, device: str, cmd: list[str], timeout: float) -> int:
    """Run check `name` unless it passed before for today's code on this GPU kind; record its result either way."""
    done = passed_before(root, name, device)
    if done is not None:
        print(f"== gpu-check: {name}: passed on {done['recorded']} for this code on this kind of GPU "
              f"({done['gpu']}); not run again", flush=True)
        return 0
    t0 = time.time()
    rc = _step(name, cmd, timeout)
    target = check_record(root, name, device)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"check": name, "rc": rc, "gpu": device, "wall_s": round(time.time() - t0, 1),
                                  "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")}) + "\n")
    return rc


def _step(name: str, cmd: list[str], timeout: float) -> int:
    """Run one step with a time limit; print its exit code (124 when it ran out of time)."""
    print(f"== gpu-check: {name} ({timeout:.0f} s at most)", flush=True)
    try:
        rc = subprocess.call(cmd, cwd=repo_root(), timeout=max(timeout, 1))
    except subprocess.TimeoutExpired:
        rc = 124
    print(f"== gpu-check: {name}: exit {rc}", flush=True)
    return rc


def order(projection: dict | None) -> list[str]:
    """PROJECTED sorted by the benchmark's projected seconds (its own order where there is no projection)."""
    if not projection:
        return list(PROJECTED)
    secs = {nb: v["projected_s"] for nb, v in projection.get("notebooks", {}).items()}
    return sorted(PROJECTED, key=lambda nb: (secs.get(nb, float("inf")), PROJECTED.index(nb)))


def plan(projection: dict | None) -> list[tuple[str, str, str, int | None]]:
    """(profile, kind, unit name, base seed or None) in the order a lease runs them: the projected paper notebooks,
    notebook 03 under a second seed, the premise map's paper cells, the default profile's recorded units (the d = 160
    scale point and the premise cells, hours on a 2-core CPU), notebook 04 at paper (the part that decides claim 4's
    rows), then its sweeps (pruning_sweep: the alpha and eps_min grids, the longest units) last."""
    from .kinds import plan_scale
    from .premise_cells import plan as cells
    from .pruning_sweeps import plan as sweeps
    root = repo_root()
    units = [("paper", "notebook", nb, None) for nb in order(projection)] + [("paper", "notebook", "03_Ni_scaling", 1)]
    units += [("paper", "premise_cell", u.name, None) for u in cells("paper", root)]
    units += [("default", "scale_point", u.name, None) for u in plan_scale("default", root)]
    units += [("default", "premise_cell", u.name, None) for u in cells("default", root)]
    units.append(("paper", "notebook", "04_pruning_gains", None))
    return units + [("paper", "pruning_sweep", u.name, None) for u in sweeps("paper", root)]


def main(argv=None) -> int:
    """Skip without CUDA; else tests, benchmark and campaign units within the budget (seconds)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=TOTAL_S, help="seconds for the whole call")
    ap.add_argument("--skip-tests", action="store_true", help="no CUDA tests (a second call in one lease)")
    ap.add_argument("--only", nargs="*", help="these unit names only, in the plan's order")
    ap.add_argument("--no-status", action="store_true", help="no `campaign status` at the end (saves the lease's time)")
    args = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print(f"gpu-check: no CUDA device on this machine (torch {torch.__version__}); skipped")
        return 0
    t0 = time.time()
    left = lambda: args.budget - (time.time() - t0)  # noqa: E731
    name = torch.cuda.get_device_name(0)
    print(f"gpu-check on {name} (torch {torch.__version__}, {os.cpu_count()} cores)", flush=True)
    rc, root, device = 0, repo_root(), gpu_kind(name)
    if not args.skip_tests:
        rc |= checked(root, "CUDA tests", device, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                                   "-m", "cuda", *CUDA_TEST_FILES], min(TESTS_S, left()))
    out = root / "results" / "gpu" / f"{check_code(root, CHECKS['paper-size benchmark'])}-{device}-projection.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    rc |= checked(root, "paper-size benchmark", device,
                  [sys.executable, "benchmarks/paper_projection.py", "--json", str(out), "--compare-draws"],
                  min(BENCH_S, left()))
    projection = json.loads(out.read_text()) if out.exists() else None
    for profile, kind, unit, seed in plan(projection):
        if args.only and unit not in args.only:
            continue
        budget = int(left() - 20)      # 20 s for the cluster to start and stop
        label = f"{profile} {kind}/{unit}" + (f" (seed {seed})" if seed is not None else "")
        if budget < 30:
            print(f"== gpu-check: {label}: not started ({max(budget, 0)} s left); the next call resumes here")
            continue
        cmd = [sys.executable, "-m", "imbalanced_cl", "campaign", "run", "--profile", profile, "--kind", kind,
               "--only", unit, "--workers", "1", "--threads", str(THREADS), "--budget", f"{budget}s", "--no-progress"]
        rc |= _step(label, cmd + (["--seed", str(seed)] if seed is not None else []), left())
    for profile in () if args.no_status else ("paper", "default"):
        subprocess.call([sys.executable, "-m", "imbalanced_cl", "campaign", "status", "--profile", profile],
                        cwd=repo_root(), timeout=60)
    return rc


if __name__ == "__main__":
    sys.exit(main())
