"""The interactive explorer: a small model trained on the fly at one slider setting, and a static gallery.

A *point* is one setting of the five sliders (eps_min, NSR, pruning ratio alpha, d, m). `ExplorerConfig`
holds everything else (a small SimConfig: short training, few pairs) plus the gallery grids and the slider
ranges. `result(cfg, point)` trains once and measures the neuron x feature alignment
|cos(w_i, M_j)| (App. A.2, Experiments 1-2) and, per feature, how many neurons are aligned above the
threshold. The live notebook (`live(cfg)`) and the static gallery of the published book (`gallery(cfg)`)
call the same functions, so the HTML shows exactly what the sliders would show at those settings.
"""
from __future__ import annotations

import functools
import itertools
import math
import time
from dataclasses import dataclass

import torch

from ..sim.config import SimConfig
from ..validate import ParameterError, check, check_float, check_grid, check_int
from ..sim.metrics import cosine_matrix
from ..sim.train import train


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class Point:
    """One setting of the sliders. Validated against the explorer's ranges by `ExplorerConfig.check_point`."""

    eps_min: float
    nsr: float          # noise-to-signal ratio sigma_xi^2 * d1 (App. A.2)
    prune_alpha: float  # fraction of neurons pruned in the forward pass (Algorithm 1)
    d: int
    m: int

    def label(self) -> str:
        """Short text for panel titles."""
        return f"eps_min={self.eps_min:g}, NSR={self.nsr:g}, alpha={self.prune_alpha:g}, d={self.d}, m={self.m}"


@dataclass(frozen=True)
class ExplorerConfig(SimConfig):
    """Notebook 07: defaults of a small, fast model (seconds per point on 2 CPU cores) and the gallery."""

    # small model (overrides of SimConfig defaults): the workshop's d = 9 with 4 minority features, m = 30
    d: int = 9
    d1: int = 50
    m: int = 30
    n_minority: int = 4
    eps_min: float = 0.3
    n_pairs: int = 256
    steps: int = 150
    R: int = 1
    record_every: int = 50
    progress: bool = False
    # the NSR slider sets sigma_xi = sqrt(nsr / d1); this is its starting value
    nsr: float = 0.45
    threshold: float = 0.3              # App. A.2: a neuron is aligned with M_j when |cos(w_i, M_j)| >= 0.3
    # static gallery for the published book: every combination of these values (d, m at the defaults)
    gallery_eps_min: tuple = (0.1, 0.3, 1.0)
    gallery_nsr: tuple = (0.45,)
    gallery_alpha: tuple = (0.0, 0.5)
    # slider ranges (inclusive)
    eps_min_range: tuple = (0.05, 1.0)
    nsr_range: tuple = (0.0, 3.0)
    alpha_range: tuple = (0.0, 0.8)
    d_range: tuple = (5, 20)
    m_range: tuple = (8, 60)

    def validate(self) -> None:
        """SimConfig's checks, the slider ranges, and every gallery point inside them."""
        super().validate()
        check_float("nsr", self.nsr, 0.0)
        check_float("threshold", self.threshold, 0.0, 1.0, lo_open=True, hi_open=True)
        for name, lo, hi in (("eps_min_range", 0.0, self.eps_max), ("nsr_range", 0.0, math.inf),
                             ("alpha_range", 0.0, 0.99), ("d_range", 3, self.d1), ("m_range", 1, math.inf)):
            v = getattr(self, name)
            check(name, v, isinstance(v, (tuple, list)) and len(v) == 2 and all(map(_num, v))
                  and lo <= v[0] < v[1] <= hi, f"a pair (low, high) with {lo} <= low < high <= {hi}")
        check("eps_min_range", self.eps_min_range, self.eps_min_range[0] > 0, "a low end above 0")
        check_grid("gallery_eps_min", self.gallery_eps_min,
                   lambda n, v: check_float(n, v, self.eps_min_range[0], self.eps_min_range[1]))
        check_grid("gallery_nsr", self.gallery_nsr,
                   lambda n, v: check_float(n, v, self.nsr_range[0], self.nsr_range[1]))
        check_grid("gallery_alpha", self.gallery_alpha,
                   lambda n, v: check_float(n, v, self.alpha_range[0], self.alpha_range[1]))
        self.check_point(self.start())

    # --- points ---
    def start(self) -> Point:
        """The sliders' starting position: this config's own eps_min, nsr, prune_alpha, d, m."""
        return Point(self.eps_min, self.nsr, self.prune_alpha, self.d, self.m)

    def check_point(self, p: Point) -> None:
        """Raise ParameterError naming the slider that is out of its range."""
        check_float("eps_min", p.eps_min, *self.eps_min_range)
        check_float("nsr", p.nsr, *self.nsr_range)
        check_float("prune_alpha", p.prune_alpha, *self.alpha_range)
        check_int("d", p.d, *self.d_range)
        check_int("m", p.m, *self.m_range)
        check("d", p.d, p.d > self.n_minority, f"an integer > n_minority ({self.n_minority})")

    def gallery_points(self) -> list[Point]:
        """Every combination of the gallery grids, at the default d and m."""
        return [Point(e, n, a, self.d, self.m)
                for n, a, e in itertools.product(self.gallery_nsr, self.gallery_alpha, self.gallery_eps_min)]

    def at(self, p: Point) -> SimConfig:
        """The SimConfig trained at point p (validated again)."""
        self.check_point(p)
        return self.sim(eps_min=min(p.eps_min, self.eps_max), sigma_xi=math.sqrt(p.nsr / self.d1),
                        prune_alpha=p.prune_alpha, d=p.d, m=p.m)


@dataclass
class Result:
    """What one point shows: the alignment matrix of replicate 0 and per-feature aligned-neuron counts."""

    point: Point
    cos: torch.Tensor          # (m, d) |cos(w_i, M_j)| of replicate 0
    counts: torch.Tensor       # (d,) neurons with |cos| >= threshold, mean over replicates
    minority: torch.Tensor     # (d,) bool: feature j is one of the n_minority features (eps_j = eps_min)
    threshold: float
    seconds: float

    @property
    def minority_count(self) -> float:
        """Mean, over minority features, of the number of neurons aligned with that feature."""
        return float(self.counts[self.minority].mean()) if bool(self.minority.any()) else float("nan")

    @property
    def majority_count(self) -> float:
        """Mean, over majority features, of the number of neurons aligned with that feature."""
        return float(self.counts[~self.minority].mean()) if bool((~self.minority).any()) else float("nan")


@functools.lru_cache(maxsize=256)
def _result_cached(cfg: ExplorerConfig, p: Point) -> Result:
    sim = cfg.at(p)
    t0 = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small runs fastest on one thread, and others keep the rest
    try:
        run = train(sim)
    finally:
        torch.set_num_threads(threads)
    cos = cosine_matrix(run.W, run.M)          # (R, m, d)
    counts = (cos >= cfg.threshold).sum(1).to(torch.float64).mean(0)
    minority = torch.arange(sim.d) >= sim.d - sim.n_minority  # the last n_minority features (data.eps_vector)
    return Result(p, cos[0].float(), counts, minority, cfg.threshold, time.perf_counter() - t0)


def result(cfg: ExplorerConfig, p: Point | None = None) -> Result:
    """Train the small model at point p (default: the config's own) and measure the alignment. Cached."""
    return _result_cached(cfg, p or cfg.start())


def neuron_order(cos: torch.Tensor) -> torch.Tensor:
    """Neurons sorted by their best-aligned feature, then by how strongly: the heatmap becomes block-diagonal."""
    best, arg = cos.max(1)
    return torch.tensor(sorted(range(cos.shape[0]), key=lambda i: (int(arg[i]), -float(best[i]))))


def draw(res: Result, axes=None):
    """Heatmap of |cos(w_i, M_j)|^2 (neurons sorted) and per-feature aligned-neuron counts. Returns the figure."""
    import matplotlib.pyplot as plt
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), gridspec_kw={"width_ratios": [1.25, 1]})
    ax_h, ax_c = axes
    fig = ax_h.figure
    C = res.cos[neuron_order(res.cos)].pow(2).numpy()
    im = ax_h.imshow(C, aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
    d = C.shape[1]
    ax_h.set_xticks(range(d))
    ax_h.set_xticklabels([("min " if bool(res.minority[j]) else "") + str(j) for j in range(d)],
                         rotation=90, fontsize=7)
    for j in range(d):
        if bool(res.minority[j]):
            ax_h.get_xticklabels()[j].set_color("#cf222e")
    ax_h.set_xlabel("feature j (red: minority)")
    ax_h.set_ylabel("neuron i (sorted)")
    ax_h.set_title("cos²(w_i, M_j)", fontsize=9)
    fig.colorbar(im, ax=ax_h, fraction=0.05, pad=0.02)
    colours = ["#cf222e" if bool(mn) else "#0969da" for mn in res.minority]
    ax_c.bar(range(d), res.counts.numpy(), color=colours)
    ax_c.set_xticks(range(d))
    ax_c.tick_params(axis="x", labelsize=7)
    ax_c.set_xlabel("feature j")
    ax_c.set_ylabel(f"neurons with |cos| ≥ {res.threshold:g}")
    ax_c.set_title(f"minority {res.minority_count:.1f} vs majority {res.majority_count:.1f} per feature",
                   fontsize=9)
    fig.suptitle(res.point.label(), fontsize=9)
    fig.tight_layout()
    return fig


def gallery(cfg: ExplorerConfig) -> list[Result]:
    """Results at every gallery point (the published book's static version of the sliders)."""
    return [result(cfg, p) for p in cfg.gallery_points()]


def gallery_grid(cfg: ExplorerConfig, results: list[Result]):
    """Heatmaps of every gallery point: one row per (NSR, alpha), one column per eps_min. Returns the figure."""
    import matplotlib.pyplot as plt
    rows = sorted({(r.point.nsr, r.point.prune_alpha) for r in results})
    cols = sorted({r.point.eps_min for r in results})
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(2.6 * len(cols) + 0.6, 2.5 * len(rows) + 0.4),
                             squeeze=False, sharey=True)
    im = None
    for r in results:
        ax = axes[rows.index((r.point.nsr, r.point.prune_alpha))][cols.index(r.point.eps_min)]
        C = r.cos[neuron_order(r.cos)].pow(2).numpy()
        im = ax.imshow(C, aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
        d = C.shape[1]
        ax.set_xticks(range(d))
        ax.set_xticklabels([str(j) for j in range(d)], fontsize=6)
        for j, lab in enumerate(ax.get_xticklabels()):
            if bool(r.minority[j]):
                lab.set_color("#cf222e")
        ax.set_title(f"eps_min={r.point.eps_min:g}, NSR={r.point.nsr:g}, α={r.point.prune_alpha:g}\n"
                     f"aligned: min {r.minority_count:.1f} / maj {r.majority_count:.1f}", fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("feature j (red: minority)", fontsize=7)
    for row in axes:
        row[0].set_ylabel("neuron (sorted)", fontsize=7)
    fig.tight_layout()
    if im is not None:
        fig.colorbar(im, ax=axes.ravel().tolist(), fraction=0.02, pad=0.01, label="cos²(w_i, M_j)")
    return fig


def gallery_table(results: list[Result]) -> str:
    """Markdown table of the gallery's aligned-neuron counts and training times."""
    lines = ["| eps_min | NSR | α | d | m | minority (per feature) | majority (per feature) | seconds |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        p = r.point
        lines.append(f"| {p.eps_min:g} | {p.nsr:g} | {p.prune_alpha:g} | {p.d} | {p.m} | "
                     f"{r.minority_count:.2f} | {r.majority_count:.2f} | {r.seconds:.2f} |")
    return "\n".join(lines)


def gallery_summary(cfg: ExplorerConfig, results: list[Result]):
    """Minority and majority aligned-neuron counts against eps_min, one line per (NSR, alpha). Returns the figure."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    groups = sorted({(r.point.nsr, r.point.prune_alpha) for r in results})
    for k, (nsr, alpha) in enumerate(groups):
        rs = sorted((r for r in results if (r.point.nsr, r.point.prune_alpha) == (nsr, alpha)),
                    key=lambda r: r.point.eps_min)
        x = [r.point.eps_min for r in rs]
        c = f"C{k}"
        ax.plot(x, [r.minority_count for r in rs], "o-", color=c, label=f"minority, NSR={nsr:g}, α={alpha:g}")
        ax.plot(x, [r.majority_count for r in rs], "s--", color=c, alpha=0.6,
                label=f"majority, NSR={nsr:g}, α={alpha:g}")
    ax.set_xlabel("eps_min (eps_max = %g)" % cfg.eps_max)
    ax.set_ylabel(f"neurons with |cos| ≥ {cfg.threshold:g}\n(mean per feature)")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def live(cfg: ExplorerConfig):
    """The ipywidgets explorer: five sliders; the figure redraws when a slider is released. Returns the widget."""
    import ipywidgets as W
    import matplotlib.pyplot as plt
    from IPython.display import display

    style = {"description_width": "90px"}
    lay = W.Layout(width="420px")
    sliders = {
        "eps_min": W.FloatSlider(value=cfg.eps_min, min=cfg.eps_min_range[0], max=cfg.eps_min_range[1], step=0.05,
                                 description="eps_min", continuous_update=False, style=style, layout=lay),
        "nsr": W.FloatSlider(value=cfg.nsr, min=cfg.nsr_range[0], max=cfg.nsr_range[1], step=0.05,
                             description="NSR", continuous_update=False, style=style, layout=lay),
        "prune_alpha": W.FloatSlider(value=cfg.prune_alpha, min=cfg.alpha_range[0], max=cfg.alpha_range[1],
                                     step=0.05, description="pruning α", continuous_update=False, style=style,
                                     layout=lay),
        "d": W.IntSlider(value=cfg.d, min=cfg.d_range[0], max=cfg.d_range[1], description="d (features)",
                         continuous_update=False, style=style, layout=lay),
        "m": W.IntSlider(value=cfg.m, min=cfg.m_range[0], max=cfg.m_range[1], description="m (neurons)",
                         continuous_update=False, style=style, layout=lay),
    }
    out = W.Output()
    status = W.HTML()

    def redraw(**kw):
        p = Point(round(kw["eps_min"], 4), round(kw["nsr"], 4), round(kw["prune_alpha"], 4), kw["d"], kw["m"])
        try:
            res = result(cfg, p)
        except ParameterError as e:
            status.value = f"<span style='color:#cf222e'>{e}</span>"
            return
        with out:
            out.clear_output(wait=True)
            fig = draw(res)
            display(fig)
            plt.close(fig)
        status.value = f"trained in {res.seconds:.2f} s ({cfg.steps} steps, {cfg.n_pairs} pairs, R={cfg.R})"

    W.interactive_output(redraw, sliders)
    col = list(sliders.values())
    return W.VBox([W.HBox([W.VBox(col[:3]), W.VBox(col[3:] + [status])]), out])
