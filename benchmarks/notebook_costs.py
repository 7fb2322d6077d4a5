"""Each notebook end to end beside its training, and its three largest costs outside training (issue 48, item 3).

benchmarks/paper_projection.py times the training loop; a notebook is more (02 at paper took 204 s end to end on an
H200 against 5 s of training). For each notebook, at a profile, on the device its parameters pick (`device: auto`:
CUDA where there is one), in one run:
1. end to end: papermill runs it in a fresh kernel as the book's runner does (book.build.execution.run_papermill: kernel
   start, imports, every cell, the executed copy written): its wall seconds;
2. in this process: its cells again (benchmarks/book_profile.py's run_notebook: the same code, no kernel), with
   train()'s loop timed exactly (sim.train._train_chunks; each chunk ends by moving its run to the host, so a GPU has
   finished) and book_profile's sampler attributing every other sample to the function it was in (its innermost
   frame of the package, a cell or this script, '> library' when deeper);
3. one line per notebook: end to end, training, their ratio, and the three largest costs outside training among
   "kernel start and papermill" (end to end minus the in-process run) and the sampled functions.
On a GPU the host waits where it reads a result, so a sampled function's time includes the device work queued before
it; the training column is exact on any device. Times taken while other jobs run are noisy: compare within one run.
Run: .venv/bin/python benchmarks/notebook_costs.py [--profile ci|default|paper] [--only NAME ...] [--quick]
                                                   [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import book_profile as BP

SIMULATION = ("01_stage1_growth", "02_lucky_neurons", "03_Ni_scaling", "04_pruning_gains", "05_appendix_figures")
QUICK = ("02_lucky_neurons",)          # --quick (python -m benchmarks --quick): the notebook issue 48 measured
KERNEL = "kernel start and papermill"


@contextmanager
def training_clock():
    """Sum the wall seconds spent in train()'s loop (sim.train._train_chunks) while inside; yields a dict whose
    "s" holds the sum (a call inside another is not counted twice)."""
    from imbalanced_cl.sim import train as TR
    real, total, depth = TR._train_chunks, {"s": 0.0}, [0]

    def timed(*args, **kwargs):
        depth[0] += 1
        t = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                total["s"] += time.perf_counter() - t

    TR._train_chunks = timed
    try:
        yield total
    finally:
        TR._train_chunks = real


def end_to_end(path: Path, params: dict, profile: str) -> float:
    """Wall seconds of papermill running the notebook in a fresh kernel (the executed copy goes to a temporary file)."""
    from imbalanced_cl.book.build.execution import run_papermill
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        run_papermill(path, Path(tmp) / path.name, params, path.parent, env={"IMBALANCED_CL_PROFILE": profile})
        return time.perf_counter() - t


FIGURES = "figures rendered to PNG"     # book_profile.flush_figures: what the inline backend does after each cell


def label(where: str) -> str:
    """A sampled place as a reader names it: the package function, cell or figure rendering, without the library
    below it ('sim.data:_fill', 'cell 6', FIGURES)."""
    where = where.split(" > ")[0]
    if where == "benchmarks.book_profile:flush_figures":
        return FIGURES
    return where.removeprefix("__main__:<").removesuffix(">") if where.startswith("__main__:<cell") else where


def top_costs(e2e: float, res: dict, top: int = 3) -> list[tuple[str, float]]:
    """The `top` largest costs outside training: the kernel's (end to end minus the in-process run) and each sampled
    place's share of the in-process wall time outside train()'s loop (places merged by their label)."""
    n = sum(res["counts"].values()) or 1
    merged: dict = {}
    for where, c in res["outside"].items():
        merged[label(where)] = merged.get(label(where), 0.0) + c / n * res["wall"]
    costs = [(KERNEL, max(0.0, e2e - res["wall"])), *merged.items()]
    return sorted(costs, key=lambda wc: -wc[1])[:top]


def measure(path: Path, params: dict, profile: str, interval: float) -> dict:
    """One notebook: end to end, the in-process run with its training clock, and its top three costs."""
    e2e = end_to_end(path, params, profile)
    with training_clock() as clock:
        res = BP.run_notebook(path, params, interval)
    return {"name": path.stem, "end_to_end_s": e2e, "in_process_s": res["wall"], "training_s": clock["s"],
            "top_outside": top_costs(e2e, res), "error": res["error"]}


def line(m: dict) -> str:
    """One notebook's row: end to end, training, their ratio, the three largest costs outside training."""
    ratio = m["end_to_end_s"] / m["training_s"] if m["training_s"] > 0 else float("inf")
    costs = "; ".join(f"{where} {s:.1f} s" for where, s in m["top_outside"])
    return (f"{m['name']:20s} {m['end_to_end_s']:9.1f} {m['training_s']:9.1f} {ratio:8.1f}x  {costs}"
            + ("  [FAILED in process]" if m["error"] else ""))


def main(argv=None) -> int:
    """Measure the chosen notebooks one after another and print a row for each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="ci", choices=("ci", "default", "paper"))
    ap.add_argument("--only", nargs="+", metavar="NAME", help=f"notebook names (default: {', '.join(SIMULATION)})")
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)} (unless --only)")
    ap.add_argument("--interval-ms", type=float, default=5.0, help="the sampler's interval")
    ap.add_argument("--json", metavar="PATH", help="also write the measurements here, after every notebook")
    args = ap.parse_args(argv)
    os.environ["MPLBACKEND"] = "Agg"
    import matplotlib
    matplotlib.use("Agg")
    BP.preimport()
    import torch

    from imbalanced_cl.book.build.profiles import params
    names = args.only or (list(QUICK) if args.quick else list(SIMULATION))
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "the CPU"
    print(f"profile {args.profile} on {device}, {torch.get_num_threads()} torch thread(s) in this process")
    print(f"{'notebook':20s} {'end to end':>9s} {'training':>9s} {'e2e/train':>9s}  three largest costs outside "
          f"training (seconds)")
    out, rc = [], 0
    for name in names:
        path = BP.NOTEBOOKS / f"{name}.ipynb"
        if not path.exists():
            ap.error(f"no notebook {name} in {BP.NOTEBOOKS}")
        m = measure(path, params(args.profile, name), args.profile, args.interval_ms / 1000)
        rc |= bool(m["error"])
        out.append(m)
        print(line(m), flush=True)
        if args.json:                             # after every notebook: a run cut short keeps what it measured
            Path(args.json).write_text(json.dumps({"profile": args.profile, "device": device, "notebooks": out},
                                                  indent=1))
    return rc


if __name__ == "__main__":
    sys.exit(main())
