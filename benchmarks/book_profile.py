"""Where each notebook's wall time goes: its workload run in-process under a sampling profiler (issue 30, item 1).

Run: .venv/bin/python benchmarks/book_profile.py [--profile ci|default] [--only NAME ...] [--interval-ms 5] [--markdown]
                                                 [--threads N] [--ceiling SAMPLER_OVER_FLOOR STEP_OF_MATMUL]
                                                 [--json PATH | --from PATH]
`make bench` (python -m benchmarks) runs it at the ci profile on every notebook in notebooks/; with --quick (as
`python -m benchmarks --quick` passes it) on 01_stage1_growth and 04_pruning_gains only.

Sampling. A daemon thread reads the main thread's stack (sys._current_frames()) every --interval-ms and counts the
sample in one category: a category's share of the samples is its share of the notebook's wall time (torch releases
the GIL inside its kernels, so the sampler runs while the main thread computes). The process CPU time between two
samples is credited to the later sample's category too (the CPU column: on a shared machine wall time also counts
the time other jobs took the cores).

Attribution rule. Walk the sampled stack from the outermost frame inward: the first frame that belongs to "regime
rows" or "measurements" decides (so held-out pairs drawn for a measurement count as measurement); otherwise the
innermost frame that belongs to "drawing pairs", "training step" or "real images" decides; otherwise "other".
Which frames belong where (`membership`):
- regime rows: imbalanced_cl.sim.regime (the population gradient of Lemma B.1, the held-out loss, the rows);
- measurements: imbalanced_cl.claims.census.*, imbalanced_cl.claims.<claim>.metrics (their probes included),
  imbalanced_cl.sim.metrics, Run.heldout, Run.features, theory.kappa_mc (a Monte-Carlo estimate), a
  sim.data.make_pairs call that draws from any stream but the train stream, and the protocols' own held-out
  samplers (MEASURE_HELPERS). One exception: a measurement frame called directly from sim/train.py is part of the
  training step (the loop's T1 check calls sim.metrics.feature_share every step);
- drawing pairs: imbalanced_cl.sim.data and imbalanced_cl.sim.views (make_pairs and what it calls, the dictionary
  draw too): by the two rules above, the training pairs;
- training step: imbalanced_cl.sim.train (step, gradient and the rest of the loop);
- real images: imbalanced_cl.lt.* (pre-training, augmentation and linear probe alike);
- other: everything else: the notebooks' own Python, plotting (matplotlib, book.plots, the PNG rendering),
  verdict tables, provenance, imports a cell makes, and the protocols' glue between the calls above.

How a notebook runs. Its code cells in order, in one namespace {"__name__": "__main__"}, with the working directory
notebooks/ and matplotlib's Agg backend; the cell tagged `parameters` is followed by one assignment per profile
parameter (as papermill injects them). After each cell its figures are rendered to PNG and closed, as the inline
backend does (flush_figures); a cell's last expression is not displayed. Independent pieces that a notebook would
send to worker processes (workers.pieces: 03's points, 05's batches) run in this process, where the sampler sees
them, so the wall times are those of one process. torch's thread count is restored after
each notebook, and torch, matplotlib and the package (preimport) are imported before the first clock starts, so a
notebook's figures do not depend on which ran first. Cell output goes to a buffer, whose tail is printed if the
notebook fails.

What faster simulation code could buy (--ceiling R S, with R = "sampler / RNG floor" as sampling_speed.py prints it
and S = the step's share of the matmul rate as train_speed.py prints it). Amdahl's law over the sampled shares:
`amdahl` scales the drawing-pairs share by 1/a and the training-step share by 1/b and keeps the rest. Two columns:
"at the goals" (issue 30's targets met: sampler / floor 1.3, step 60% of matmul, so a = R / 1.3, b = 0.60 / S) and
"at the floors" (the sampler as fast as its random numbers, a = R, and the step at the full matmul rate, b = 1 / S).
The draws inside measurements (held-out pairs) keep their time, so the floors column is a bound on what faster
training pairs and steps can give, not on the notebook.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import re
import sys
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

DRAW, TRAIN, MEASURE, REGIME, LT, OTHER = ("drawing pairs", "training step", "measurements", "regime rows",
                                           "real images", "other")
CATEGORIES = (DRAW, TRAIN, MEASURE, REGIME, LT, OTHER)
OUTER_WINS = (REGIME, MEASURE)          # the outermost of these decides
QUICK = ("01_stage1_growth", "04_pruning_gains")   # --quick (python -m benchmarks --quick): two small notebooks

DATA, TRAIN_MODULE = "imbalanced_cl.sim.data", "imbalanced_cl.sim.train"
TRAINING_LOOP = (TRAIN_MODULE, "_train_chunks")   # train()'s loop over its chunks: a sample under it is training
STREAM_TRAIN = 2                        # sim.data.STREAM_TRAIN (kept here so the categoriser imports nothing)
HELDOUT_DRAW = "make_pairs[not the train stream]"   # frame_key's name for such a make_pairs frame
MEASURE_HELPERS = {                     # functions outside the metrics modules that measure or draw held-out data
    (TRAIN_MODULE, "Run.heldout"), (TRAIN_MODULE, "Run.features"), (DATA, HELDOUT_DRAW),
    ("imbalanced_cl.sim.theory", "kappa_mc"),
    ("imbalanced_cl.claims.appendix.protocol", "_fixed_test"),
    ("imbalanced_cl.claims.decoupling.protocol", "raw_samples"),
    ("imbalanced_cl.claims.decoupling.protocol", "latent_energy"),
}
_METRICS = re.compile(r"imbalanced_cl\.claims\.\w+\.metrics")


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def membership(module: str, function: str) -> str | None:
    """The category one frame belongs to on its own (None: it decides nothing)."""
    if module == "imbalanced_cl.sim.regime":
        return REGIME
    if (module, function) in MEASURE_HELPERS or module == "imbalanced_cl.sim.metrics" or _METRICS.fullmatch(module) \
            or _under(module, "imbalanced_cl.claims.census"):
        return MEASURE
    if module in (DATA, "imbalanced_cl.sim.views"):
        return DRAW
    if module == TRAIN_MODULE:
        return TRAIN
    if _under(module, "imbalanced_cl.lt"):
        return LT
    return None


def categorise(stack: list[tuple[str, str]]) -> str:
    """Category of one sample; `stack` is its (module, function) frames from the outermost inward."""
    inner, caller = OTHER, None
    for module, function in stack:
        cat = membership(module, function)
        if cat == MEASURE and caller == TRAIN:      # the training loop's own check (T1: sim.metrics.feature_share)
            cat = TRAIN
        if cat in OUTER_WINS:
            return cat
        if cat is not None:
            inner = cat
        caller = cat
    return inner


def frame_key(frame) -> tuple[str, str]:
    """(module, qualified name) of a frame: '<cell N>' for a notebook cell, HELDOUT_DRAW for a non-train make_pairs."""
    module = frame.f_globals.get("__name__", "?")
    code = frame.f_code
    name = getattr(code, "co_qualname", code.co_name)
    if module == "__main__" and name == "<module>":
        name = code.co_filename
    elif module == DATA and name == "make_pairs" and frame.f_locals.get("purpose", STREAM_TRAIN) != STREAM_TRAIN:
        name = HELDOUT_DRAW
    return module, name


def stack_of(frame) -> list[tuple[str, str]]:
    """The frame keys of a frame and its callers, from the outermost inward."""
    out = []
    while frame is not None:
        out.append(frame_key(frame))
        frame = frame.f_back
    return out[::-1]


def _own(module: str) -> bool:
    return module.startswith("imbalanced_cl") or module in ("__main__", __name__)


def own_frame(stack: list[tuple[str, str]]) -> str:
    """An 'other' sample's innermost package, cell or script frame ('module:function'), '> library' if deeper."""
    for module, function in reversed(stack):
        if _own(module):
            where = f"{module.removeprefix('imbalanced_cl.')}:{function}"
            inner = stack[-1][0]
            return where if _own(inner) else f"{where} > {inner.split('.')[0]}"
    return "(outside the package, the cells and this script)"


class Sampler:
    """Context manager: a daemon thread samples the main thread's stack every `interval` seconds."""

    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self.counts: collections.Counter = collections.Counter()
        self.other: collections.Counter = collections.Counter()   # 'other' samples by own_frame
        self.cpu: collections.Counter = collections.Counter()     # process CPU seconds since the previous sample
        self.outside: collections.Counter = collections.Counter() # samples outside train()'s loop, by own_frame
        self._stop = threading.Event()
        self._target = threading.main_thread().ident
        self._thread = threading.Thread(target=self._loop, name="book_profile-sampler", daemon=True)

    def _loop(self) -> None:
        last = time.process_time()
        while not self._stop.wait(self.interval):
            frame = sys._current_frames().get(self._target)
            if frame is None:
                continue
            stack = stack_of(frame)
            del frame
            cat = categorise(stack)
            self.counts[cat] += 1
            now = time.process_time()
            self.cpu[cat] += now - last
            last = now
            if cat == OTHER:
                self.other[own_frame(stack)] += 1
            if TRAINING_LOOP not in stack:
                self.outside[own_frame(stack)] += 1

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def notebook_cells(nb, params: dict) -> list[str]:
    """A notebook's code-cell sources in order, one assignment per parameter after the `parameters` cell."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        out.append(cell.source)
        if "parameters" in cell.metadata.get("tags", []):
            out.append("\n".join(f"{name} = {value!r}" for name, value in params.items()))
    return out


def flush_figures(plt) -> None:
    """Render every open figure to PNG and close it, as the inline backend does at the end of a cell."""
    for num in plt.get_fignums():
        plt.figure(num).savefig(io.BytesIO(), format="png", bbox_inches="tight")
    plt.close("all")


def run_notebook(path: Path, params: dict, interval: float) -> dict:
    """Execute one notebook in this process under a Sampler; its wall time, counts and error (None if it ran)."""
    import matplotlib.pyplot as plt
    import nbformat
    import torch
    cells = notebook_cells(nbformat.read(path, as_version=4), params)
    # display() and myst_nb.glue work outside IPython (display prints the object's repr), so nothing is stubbed.
    ns, buf, error = {"__name__": "__main__"}, io.StringIO(), None
    from imbalanced_cl import workers
    cwd, threads, plan = os.getcwd(), torch.get_num_threads(), workers.plan
    workers.plan = lambda *args, **kwargs: 1   # pieces run here, where the sampler sees them, not in worker processes
    os.chdir(path.parent)
    t0 = time.perf_counter()
    try:
        with Sampler(interval) as sampler, contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            for k, source in enumerate(cells):
                try:
                    exec(compile(source, f"<cell {k}>", "exec"), ns)
                except Exception:
                    error = f"cell {k}: " + traceback.format_exc(limit=-3)
                    break
                finally:
                    flush_figures(plt)
    finally:
        wall = time.perf_counter() - t0
        os.chdir(cwd)
        torch.set_num_threads(threads)
        workers.plan = plan
    return {"name": path.stem, "wall": wall, "counts": sampler.counts, "other": sampler.other, "cpu": sampler.cpu,
            "outside": sampler.outside, "error": error, "output_tail": buf.getvalue()[-3000:]}


def shares(counts: collections.Counter) -> dict[str, float]:
    """Each category's share of the counts (samples, or CPU seconds); 0 for all when there are none."""
    n = sum(counts.values())
    return {c: counts.get(c, 0) / n if n else 0.0 for c in CATEGORIES}


def text_table(res: dict, profile: str, interval_ms: float, top: int = 3) -> str:
    """One notebook's table: wall share, seconds and CPU share per category, and the largest parts of other."""
    n, cpu = sum(res["counts"].values()), shares(res["cpu"])
    lines = [f"{res['name']} (profile {profile}): wall {res['wall']:.2f} s, {n} samples every {interval_ms:g} ms, "
             f"CPU {sum(res['cpu'].values()):.2f} s" + (" [FAILED]" if res["error"] else "")]
    lines.append(f"  {'category':<28}{'wall':>7}{'~s':>8}{'CPU':>8}")
    for cat, s in shares(res["counts"]).items():
        label = "other (glue, plots, tables)" if cat == OTHER else cat
        lines.append(f"  {label:<28}{s:>7.1%}{s * res['wall']:>8.2f}{cpu[cat]:>8.1%}")
    if res["other"]:
        parts = ", ".join(f"{where} {c / n:.1%}" for where, c in res["other"].most_common(top))
        lines.append(f"  largest parts of other (wall): {parts}")
    return "\n".join(lines)


GOAL_SAMPLER_OVER_FLOOR, GOAL_STEP_OF_MATMUL = 1.3, 0.60     # issue 30's targets


def amdahl(res: dict, draw_speedup: float, train_speedup: float) -> float:
    """A notebook's wall time had its pair draws run draw_speedup times and its steps train_speedup times faster."""
    s = shares(res["counts"])
    return res["wall"] * (1.0 - s[DRAW] - s[TRAIN] + s[DRAW] / draw_speedup + s[TRAIN] / train_speedup)


def ceilings(sampler_over_floor: float, step_of_matmul: float) -> dict[str, tuple[float, float]]:
    """{column: (draw speed-up, step speed-up)}: issue 30's goals met, and the floors reached (module docstring)."""
    return {"at the goals s": (max(1.0, sampler_over_floor / GOAL_SAMPLER_OVER_FLOOR),
                               max(1.0, GOAL_STEP_OF_MATMUL / step_of_matmul)),
            "at the floors s": (max(1.0, sampler_over_floor), 1.0 / step_of_matmul)}


def markdown_table(results: list[dict], ceiling: tuple[float, float] | None = None) -> str:
    """All notebooks in one markdown table: wall seconds, the percentage per category, and with `ceiling`
    ((sampler / floor, step / matmul)) the wall seconds at the goals and at the floors, with a total row."""
    cols = ceilings(*ceiling) if ceiling else {}
    head = "| notebook | wall s | " + " | ".join(CATEGORIES) + "".join(f" | {c}" for c in cols) + " |"
    rows = [head, "|" + "---|" * (len(CATEGORIES) + 2 + len(cols))]
    for res in results:
        cells = [f"{100 * s:.0f}%" for s in shares(res["counts"]).values()]
        cells += [f"{amdahl(res, *speed):.0f}" for speed in cols.values()]
        name = res["name"] + (" (failed)" if res["error"] else "")
        rows.append(f"| {name} | {res['wall']:.1f} | " + " | ".join(cells) + " |")
    if cols:
        total = [f"{sum(amdahl(r, *speed) for r in results):.0f}" for speed in cols.values()]
        rows.append(f"| all | {sum(r['wall'] for r in results):.1f} | " + " | ".join([""] * len(CATEGORIES))
                    + " | " + " | ".join(total) + " |")
    return "\n".join(rows)


COUNTERS = ("counts", "other", "cpu", "outside")      # the Counter fields of a run_notebook result


def save(path: Path, results: list[dict]) -> None:
    """Write the results (wall time, counts, error, output tail) as JSON, for --from."""
    path.write_text(json.dumps([{**r, **{k: dict(r[k]) for k in COUNTERS if k in r}} for r in results], indent=1))


def load(path: Path) -> list[dict]:
    """The results a --json file holds, their counts as Counters again."""
    return [{**r, **{k: collections.Counter(r[k]) for k in COUNTERS if k in r}} for r in json.loads(path.read_text())]


PREIMPORT = ("matplotlib.pyplot", "torch", "scipy.stats", "imbalanced_cl.stats", "imbalanced_cl.sim.train",
             "imbalanced_cl.sim.regime", "imbalanced_cl.sim.theory", "imbalanced_cl.book.plots.common",
             "imbalanced_cl.book.pages.tables", "imbalanced_cl.book.records.provenance")


def preimport() -> None:
    """Import PREIMPORT and every imbalanced_cl.claims sub-package (one that fails is left for its notebook to hit)."""
    import importlib
    import pkgutil
    for name in PREIMPORT:
        importlib.import_module(name)
    import imbalanced_cl.claims as claims
    for info in pkgutil.iter_modules(claims.__path__):
        with contextlib.suppress(Exception):
            importlib.import_module(f"imbalanced_cl.claims.{info.name}")


def main(argv=None) -> int:
    """Profile the chosen notebooks one after another; print a table per notebook (or one markdown table)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="ci", choices=("ci", "default"))
    ap.add_argument("--only", nargs="+", metavar="NAME", help="notebook names (default: all in notebooks/)")
    ap.add_argument("--interval-ms", type=float, default=5.0, help="sampling interval")
    ap.add_argument("--markdown", action="store_true", help="one markdown table for book/reproducing.md")
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)} (unless --only)")
    ap.add_argument("--ceiling", nargs=2, type=float, metavar=("SAMPLER_OVER_FLOOR", "STEP_OF_MATMUL"),
                    help="with --markdown: add the wall times at issue 30's goals and at the floors, from the ratios "
                         "sampling_speed.py and train_speed.py print (e.g. 2.89 0.46)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads for every notebook (0: torch's default); "
                    "1 profiles the work of one core, as the book's worker processes run it, and leaves a core to "
                    "other work without the slowdown two threads on one busy core suffer")
    ap.add_argument("--json", metavar="PATH", help="also write every notebook's wall time and sample counts here "
                                                    "(--from PATH prints the tables again from it)")
    ap.add_argument("--from", dest="source", metavar="PATH", help="print the tables of a --json file; runs nothing")
    args = ap.parse_args(argv)
    ceiling = tuple(args.ceiling) if args.ceiling else None
    if args.source:                               # before the imports below: --from runs no notebook
        results = load(Path(args.source))
        print(markdown_table(results, ceiling) if args.markdown else
              "\n\n".join(text_table(r, args.profile, args.interval_ms) for r in results))
        return 0
    os.environ["MPLBACKEND"] = "Agg"
    if args.threads:
        import torch
        torch.set_num_threads(args.threads)       # run_notebook restores this count after every notebook
    import matplotlib
    matplotlib.use("Agg")
    preimport()
    from imbalanced_cl.book.build.profiles import params
    from imbalanced_cl.book.build.runner import select
    from imbalanced_cl.validate import ParameterError

    try:
        paths = select(sorted(NOTEBOOKS.glob("*.ipynb")), args.only or (list(QUICK) if args.quick else None))
    except ParameterError as e:
        ap.error(str(e))
    results = []
    for k, path in enumerate(paths, 1):
        print(f"[{k}/{len(paths)}] {path.stem} ({args.profile}) ...", file=sys.stderr, flush=True)
        res = run_notebook(path, params(args.profile, path.stem), args.interval_ms / 1000)
        results.append(res)
        status = "FAILED " + res["error"].strip().splitlines()[-1] if res["error"] else "ok"
        print(f"[{k}/{len(paths)}] {path.stem}: {res['wall']:.1f} s, {sum(res['counts'].values())} samples, {status}",
              file=sys.stderr, flush=True)
        if res["error"]:
            print(res["error"] + "\n--- output tail ---\n" + res["output_tail"], file=sys.stderr, flush=True)
        if not args.markdown:
            print(text_table(res, args.profile, args.interval_ms) + "\n", flush=True)
        if args.json:                             # after every notebook: a long run keeps what it finished
            save(Path(args.json), results)
    if args.markdown:
        print(markdown_table(results, ceiling))
    return 1 if any(r["error"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
