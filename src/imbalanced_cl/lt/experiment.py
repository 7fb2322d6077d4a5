"""Notebook 06's experiment: pre-train, probe and score every (rho, seed, method); summaries, Table 2, verdicts."""
from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from . import datasets as D
from . import speed
from .augment import Normalize
from .config import LTConfig
from .probe import evaluate, extract_features, linear_probe
from .simclr import SimCLRNet, dist_info, pick_device, pretrain, stem_for
from ..workers import cores as workers_cores
from ..workers import map_in_processes

# Table 2 of the paper (L342-352): (acc w/o, acc w/, Δ20 w/o, Δ20 w/), each (mean, std); std None when unreported.
TABLE2 = {
    ("cifar10", 10): ((79.25, 1.03), (84.92, 0.67), (3.42, 1.02), (2.99, 0.92)),
    ("cifar10", 50): ((75.58, 0.84), (83.60, 1.02), (3.92, 1.21), (3.35, 0.76)),
    ("cifar10", 100): ((74.24, 0.82), (81.31, 0.94), (5.69, 1.35), (5.62, 0.99)),
    ("cifar100", 10): ((51.21, 1.21), (56.33, 1.51), (2.45, 0.57), (1.37, 0.46)),
    ("cifar100", 50): ((49.32, 0.45), (56.12, 0.32), (4.95, 1.02), (2.57, 0.92)),
    ("cifar100", 100): ((47.12, 0.51), (54.93, 0.50), (7.11, 0.45), (4.38, 0.22)),
    ("imagenet-lt", 256): ((63.21, None), (65.12, None), (8.47, None), (7.21, None)),
}
LABELS = {"random": "random init (no pre-training)", "simclr": "SimCLR (no pruning)",
          "sdclr": "SDCLR-style pruning", "alg1": "Algorithm 1 (masked features)",
          "alg1_dense": "Algorithm 1 (dense weights)"}
_DATA: dict = {}


def load_data(cfg: LTConfig) -> D.ImageData:
    """The dataset of cfg (kept in memory across calls with the same location settings)."""
    key = (cfg.dataset, cfg.data_dir, cfg.download, cfg.cifar10_source, cfg.imagenet_root, cfg.imagenet_lists,
           cfg.image_size)
    if key not in _DATA:
        _DATA[key] = D.load(cfg.dataset, cfg.data_dir, cfg.download, cfg.cifar10_source, cfg.imagenet_root,
                            cfg.imagenet_lists, cfg.image_size or 224)
    return _DATA[key]


def effective_n_max(cfg: LTConfig, data: D.ImageData) -> int:
    """cfg.n_max, or the smallest class size of the train split when it is 0."""
    return cfg.n_max or int(np.bincount(data.train.labels).min())


def run_key(cfg: LTConfig, rho: float, method: str, seed: int, precision: str = "fp32") -> str:
    """A short hash of everything that determines one run's result (not the paths, device or progress bar).

    compile and channels_last change only float32 rounding, so they are left out; `precision` is what the run
    actually used (speed.effective_precision) and enters the key only when it is bf16, so CPU runs keep their keys."""
    skip = {"rhos", "seeds", "methods", "data_dir", "download", "device", "threads", "workers", "ckpt_dir",
            "ckpt_every", "results_dir", "progress", "imagenet_root", "imagenet_lists", "compile", "channels_last",
            "precision"}
    if method != "sdclr":    # only SDCLR's pruned branch uses the second BatchNorm
        skip.add("dual_bn")
    if method == "random":   # an untrained backbone ignores the pre-training settings
        skip |= {"epochs", "batch_size", "lr", "momentum", "weight_decay", "warmup_epochs", "temperature",
                 "proj_dim", "crop_scale_lo", "prune_ratio", "mask_every"}
    blob = {k: v for k, v in cfg.to_dict().items() if k not in skip}
    blob.update(rho=float(rho), method=method, seed=seed)
    if precision != "fp32":
        blob["precision"] = precision
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_one(cfg: LTConfig, rho: float, method: str, seed: int, data: D.ImageData | None = None) -> list[dict]:
    """Pre-train (unless method='random'), probe and score one run; Algorithm 1 gives a masked and a dense row."""
    data = data or load_data(cfg)
    rank, world, local_rank = dist_info()
    dev = pick_device(cfg.device, local_rank)
    opts = cfg.step_options(dev)
    key = run_key(cfg, rho, method, seed, speed.effective_precision(dev, opts))
    cache = Path(cfg.results_dir) / f"{cfg.dataset}_rho{rho:g}_{method}_seed{seed}_{key}.json" \
        if cfg.results_dir else None
    if cache is not None and cache.exists():
        return json.loads(cache.read_text())
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t0 = time.time()
    ytr = data.train.labels
    C = data.num_classes
    if cfg.dataset == "imagenet-lt":       # the split list is the LT subset
        lt = data.train
        probe_set = D.imagenet_balanced_probe(data, cfg.probe_per_class or 50, seed)
    else:
        lt = data.train.subset(D.long_tailed_indices(ytr, effective_n_max(cfg, data), rho, seed))
        probe_set = data.train.subset(D.balanced_indices(ytr, cfg.probe_per_class, seed))
    test = data.test.subset(D.balanced_indices(data.test.labels, cfg.test_per_class, 0))
    counts = np.bincount(lt.labels, minlength=C)
    info: dict = {"epochs": 0, "losses": [], "kept": [], "pretrain_s": 0.0, "views_per_s": 0.0, "aug_share": 0.0,
                  "precision": speed.effective_precision(dev, opts), "compiled": False, "setup_s": 0.0}
    if method == "random":
        torch.manual_seed(seed)
        net = SimCLRNet(cfg.width, lt.channels, cfg.proj_dim, stem_for(cfg.image_size or lt.image_size)).to(dev)
        opts = speed.safe(net, opts, dev)
        net = speed.prepare(net, opts)
    else:
        ckpt = None
        if cfg.ckpt_dir:
            ckpt = Path(cfg.ckpt_dir) / f"{cfg.dataset}_rho{rho:g}_{method}_seed{seed}_{key}.pt"
        r = pretrain(lt, cfg, method, seed, (data.mean, data.std), opts=opts, ckpt_path=ckpt,
                     desc=f"{method} rho={rho:g} seed={seed}")
        net = r.net
        opts = speed.safe(net, opts, dev)      # the layout pretrain ran in, for the features
        info["setup_s"] = round(time.time() - t0 - r.seconds, 2)
        info.update(epochs=cfg.epochs, losses=r.losses, kept=r.kept, pretrain_s=round(r.seconds, 1),
                    views_per_s=round(r.views_per_s, 1), aug_share=round(r.aug_seconds / max(r.seconds, 1e-9), 3),
                    precision=r.precision, compiled=r.compiled)
    info["channels_last"] = opts.channels_last  # the layout that ran (speed.safe keeps narrow nets contiguous)
    if rank != 0:                            # under torchrun only rank 0 probes and writes
        return []
    norm = Normalize(data.mean, data.std).to(dev)
    variants = [(method, "dense")] if method != "alg1" else [("alg1", "masked"), ("alg1_dense", "dense")]
    rows = []
    if method == "random":
        info["setup_s"] = round(time.time() - t0, 2)
    for k, (name, conv) in enumerate(variants):
        t_embed = time.time()
        ftr = extract_features(net.backbone, probe_set, norm, conv=conv, device=dev, opts=opts)
        fte = extract_features(net.backbone, test, norm, conv=conv, device=dev, opts=opts)
        t_probe = time.time()
        pred = linear_probe(ftr, probe_set.labels, fte, cfg.probe_l2, cfg.probe_iters, C, seed)
        t_eval = time.time()
        m = evaluate(pred, test.labels, counts, cfg.scheme)
        phases = {"embed_s": round(t_probe - t_embed, 2), "probe_s": round(t_eval - t_probe, 2),
                  "eval_s": round(time.time() - t_eval, 3), "shares_pretrain": k > 0}   # alg1_dense reuses alg1's net
        rows.append({"dataset": cfg.dataset, "rho": float(rho), "method": name, "seed": seed, **m,
                     "train_counts": counts.tolist(), "n_train": int(counts.sum()), "n_probe": len(probe_set),
                     "n_test": len(test), **info, **phases, "seconds": round(time.time() - t0, 1), "key": key})
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(rows))
        os.replace(tmp, cache)
    return rows


def plan_workers(cfg: LTConfig, n_runs: int) -> tuple[int, int]:
    """(processes, torch threads per process) for n_runs runs: cfg.workers (0: one per CPU core on the CPU, one on
    CUDA), at most n_runs; threads = cfg.threads, or the cores shared out evenly when several processes run."""
    cores = workers_cores()
    on_cuda = pick_device(cfg.device).type == "cuda"
    procs = cfg.workers or (1 if on_cuda else cores)
    procs = max(1, min(procs, n_runs))
    threads = cfg.threads or (max(1, cores // procs) if procs > 1 else 0)
    return procs, threads


def run_grid(cfg: LTConfig, data: D.ImageData | None = None, log=print, memo=None) -> list[dict]:
    """Every (rho, seed, method) of cfg, in that order; returns the flat list of result rows.

    Runs are independent (each seeds its own LT draw, init, order and views), so with several workers they go to
    separate processes, one thread each on a 2-core machine: small convolutions use one core far better than
    two threads share one step (benchmarks/lt_step.py). The rows are the same as in one process, to float rounding.
    `memo(name, fn)` (campaign.checkpoint.memo in a campaign unit) keeps each finished run's rows on disk, so a
    stopped unit resumes with the runs it finished (a run takes minutes to an hour); by default it just calls fn."""
    jobs = [(rho, seed, method) for rho in cfg.rhos for seed in cfg.seeds for method in cfg.methods]
    keep = memo or (lambda name, fn: fn())
    names = [f"run-{run_key(cfg, rho, method, seed)}" for rho, seed, method in jobs]
    done = {n for n in names if getattr(keep, "saved", lambda _: False)(n)}     # kept by an interrupted run
    todo = [k for k, n in enumerate(names) if n not in done]
    procs, threads = plan_workers(cfg, len(todo))
    rows_of = {}

    def report(rows, rho, seed):
        for r in rows:
            log(f"rho={rho:g} seed={seed} {r['method']:<10} acc={r['acc']:.2f}% Δ20={r['delta20']:+.2f} "
                f"({r['seconds']:.0f} s)")

    if procs <= 1:
        for k, (rho, seed, method) in enumerate(jobs):
            if k in todo:
                data = data or load_data(cfg)
            rows_of[k] = keep(names[k], lambda: run_one(cfg, rho, method, seed, data))
            report(rows_of[k], rho, seed)
    else:
        for k, rows in _in_workers(cfg, data, jobs, todo, procs, threads, log):
            rows_of[k] = keep(names[k], lambda rows=rows: rows)          # kept as each run arrives
            report(rows, jobs[k][0], jobs[k][1])
        for k in sorted(set(range(len(jobs))) - set(todo)):
            rows_of[k] = keep(names[k], lambda: None)                    # read back, never computed
    return [r for k in range(len(jobs)) for r in rows_of[k]]


def _in_workers(cfg: LTConfig, data, jobs: list[tuple], todo: list[int], procs: int, threads: int, log):
    """Start the runs `todo` (indices into jobs) on `procs` worker processes; (index, rows) of each as it arrives."""
    if data is None:
        load_data(cfg)                         # decode (and cache) once here, not in every worker
    wcfg = cfg.replace(threads=threads, workers=1, progress=False)
    log(f"{len(todo)} runs on {procs} worker processes, {threads} thread(s) each")
    labels = [f"rho={jobs[k][0]:g} seed={jobs[k][1]} method={jobs[k][2]}" for k in todo]
    settings = f"dataset {cfg.dataset}, width {cfg.width}, batch {cfg.batch_size}, {threads} thread(s) per worker"
    units = [(wcfg, jobs[k][0], jobs[k][2], jobs[k][1]) for k in todo]
    return zip(todo, map_in_processes(run_one, units, labels, procs, settings), strict=True)


@dataclass
class LTRuns:
    """What notebook 06 measures: run_grid's rows (accuracies, per-class accuracies, the loss and kept fraction per
    epoch as arrays, the run's sizes and timings), never a network or an image; seconds is the grid's wall time."""

    rows: list
    seconds: float


def measure_runs(cfg: LTConfig, data: D.ImageData | None = None, log=print, memo=None) -> LTRuns:
    """Notebook 06's costly work (every (rho, seed, method) pre-trained, probed and scored), kept as its measurements:
    the per-epoch series as float64 arrays (the very floats run_one wrote, a tenth of their JSON text). `memo` keeps
    each finished run (run_grid)."""
    t0 = time.time()
    rows = run_grid(cfg, data, log, memo)
    series = ("losses", "kept")
    rows = [{k: np.asarray(v, dtype=np.float64) if k in series else v for k, v in r.items()} for r in rows]
    return LTRuns(rows, time.time() - t0)


def _ms(x) -> tuple[float, float]:
    x = np.asarray(x, dtype=float)
    return float(np.mean(x)), (float(np.std(x, ddof=1)) if len(x) > 1 else math.nan)


def summarize(results: list[dict]) -> list[dict]:
    """Mean and seed-to-seed std (ddof=1) of acc, Δ20, many/medium/few per (dataset, rho, method)."""
    groups: dict = {}
    for r in results:
        groups.setdefault((r["dataset"], r["rho"], r["method"]), []).append(r)
    out = []
    for (ds, rho, method), rs in groups.items():
        row = {"dataset": ds, "rho": rho, "method": method, "n_seeds": len(rs)}
        for k in ("acc", "delta20", "many", "medium", "few"):
            row[k], row[k + "_std"] = _ms([r[k] for r in rs])
        out.append(row)
    return out


def paired(results: list[dict], rho: float, method: str, metric: str, base: str = "simclr") -> np.ndarray:
    """Per-seed differences metric(method) - metric(base) at one rho (seeds present in both)."""
    a = {r["seed"]: r[metric] for r in results if r["rho"] == rho and r["method"] == method}
    b = {r["seed"]: r[metric] for r in results if r["rho"] == rho and r["method"] == base}
    return np.array([a[s] - b[s] for s in sorted(set(a) & set(b))], dtype=float)


def load_or_fallback(cfg: LTConfig):
    """(data, cfg): the configured dataset, or, where it cannot be had, digits-LT with a printed note saying so."""
    try:
        return load_data(cfg), cfg
    except D.DatasetMissing as err:
        print(f"NOTE: {cfg.dataset} is not available here:\n  {err}\n"
              "Falling back to scikit-learn's 8x8 digits made long-tailed (digits-LT), which runs everywhere. "
              "The numbers below are then NOT comparable with Table 2.")
        cfg = cfg.replace(dataset="digits", n_max=0, image_size=0)
        return load_data(cfg), cfg


def describe(cfg: LTConfig, data) -> str:
    """Markdown: the data, the long-tailed profile and the runs, generated from the parameters (never typed in)."""
    n_head = effective_n_max(cfg, data)
    text = (f"**Data:** {data.source}. {len(data.train):,} train / {len(data.test):,} test images, "
            f"{data.num_classes} classes. **LT profile:** $n_c=\\lfloor {n_head}\\,\\rho^{{-c/(C-1)}}\\rfloor$, "
            f"$\\rho \\in$ {list(cfg.rhos)}. **Runs:** {len(cfg.rhos)} ρ × {len(cfg.seeds)} seeds × "
            f"{sum(m != 'random' for m in cfg.methods)} pre-training methods, {cfg.epochs} epochs each, "
            f"ResNet-18 of width {cfg.width}, batch {cfg.batch_size}.")
    if cfg.dataset != "imagenet-lt":
        for rho in cfg.rhos:
            c = D.long_tailed_counts(n_head, rho, data.num_classes)
            text += f"\n\nρ={rho:g}: class sizes {c} (total {sum(c):,})"
    return text


def _pm(m, s) -> str:
    return f"{m:.2f}" + ("" if np.isnan(s) else f" ± {s:.2f}")


def _ref_cell(ref, which) -> str:
    if ref is None:
        return "–"
    m, s = ref[which]
    return f"{m:.2f}" + ("" if s is None else f" ± {s:.2f}")


def summary_table(summary: list[dict]) -> str:
    """Markdown: every (rho, method) with the paper's Table 2 number beside ours (accuracy and Δ20)."""
    lines = ["| ρ | method | seeds | accuracy | Table 2 acc. | Δ20 | Table 2 Δ20 | many | medium | few |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary:
        ref = TABLE2.get((s["dataset"], int(s["rho"])))
        col = {"simclr": (0, 2), "sdclr": (1, 3), "alg1": (1, 3), "alg1_dense": (1, 3)}.get(s["method"])
        lines.append(f"| {s['rho']:g} | {LABELS[s['method']]} | {s['n_seeds']} | {_pm(s['acc'], s['acc_std'])} | "
                     f"{_ref_cell(ref, col[0]) if col else '–'} | {_pm(s['delta20'], s['delta20_std'])} | "
                     f"{_ref_cell(ref, col[1]) if col else '–'} | {s['many']:.1f} | {s['medium']:.1f} | "
                     f"{s['few']:.1f} |")
    return "\n".join(lines)


def pretraining_rows(results: list[dict]) -> list[dict]:
    """The result rows that own a pre-training run: not random (none), not alg1_dense (it reuses alg1's network)."""
    return [r for r in results if r["method"] in ("simclr", "sdclr", "alg1")]


def speed_line(results: list[dict]) -> str:
    """One line: mean pre-training views/s, the augmentation's share of a step, total pre-training time."""
    pre = pretraining_rows(results)
    if not pre:
        return "no pre-training runs"
    return (f"pre-training speed: {np.mean([r['views_per_s'] for r in pre]):.0f} views/s on average, augmentation "
            f"{np.mean([r['aug_share'] for r in pre]):.0%} of the step time; total pre-training "
            f"{sum(r['pretrain_s'] for r in pre):.0f} s")
