"""Figures, table and sliders of notebook 07 (the explorer): heatmaps of cos²(w_i, M_j), the gallery, the live
widget."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ...claims.explorer import ExplorerConfig, Point, Result, literal_contrast, mask_effect, result
from ...validate import ParameterError


def draw(res: Result, axes=None):
    """Heatmap of |cos(w_i, M_j)|^2 (neurons sorted) and per-feature aligned-neuron counts. Returns the figure."""
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), gridspec_kw={"width_ratios": [1.25, 1]})
    ax_h, ax_c = axes
    fig = ax_h.figure
    C = res.panel().numpy()
    im = ax_h.imshow(C, aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
    d = C.shape[1]
    ax_h.set_xticks(range(d))
    ax_h.set_xticklabels([("min " if bool(res.minority[j]) else "") + str(j) for j in range(d)],
                         rotation=90, fontsize="x-small")
    for j in range(d):
        if bool(res.minority[j]):
            ax_h.get_xticklabels()[j].set_color("#cf222e")
    ax_h.set_xlabel("feature j (red: minority)")
    ax_h.set_ylabel("neuron i (sorted)")
    ax_h.set_title("cos²(w_i, M_j)", fontsize="small")
    fig.colorbar(im, ax=ax_h, fraction=0.05, pad=0.02)
    colours = ["#cf222e" if bool(mn) else "#0969da" for mn in res.minority]
    ax_c.bar(range(d), res.counts.numpy(), color=colours)
    ax_c.set_xticks(range(d))
    ax_c.tick_params(axis="x", labelsize="small")
    ax_c.set_xlabel("feature j")
    ax_c.set_ylabel(f"neurons with |cos| ≥ {res.threshold:g}")
    ax_c.set_title(f"minority {res.minority_count:.1f} vs majority {res.majority_count:.1f} per feature",
                   fontsize="small")
    fig.suptitle(res.point.label(), fontsize="small")
    fig.tight_layout()
    return fig


def gallery_grid(cfg: ExplorerConfig, results: list[Result]):
    """Heatmaps of every gallery point: one row per (NSR, alpha), one column per eps_min. Returns the figure."""
    rows = sorted({(r.point.nsr, r.point.prune_alpha) for r in results})
    cols = sorted({r.point.eps_min for r in results})
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(2.6 * len(cols) + 0.6, 2.5 * len(rows) + 0.4),
                             squeeze=False, sharey=True)
    im = None
    for r in results:
        ax = axes[rows.index((r.point.nsr, r.point.prune_alpha))][cols.index(r.point.eps_min)]
        C = r.panel().numpy()
        im = ax.imshow(C, aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
        d = C.shape[1]
        ax.set_xticks(range(d))
        ax.set_xticklabels([str(j) for j in range(d)], fontsize="x-small")
        for j, lab in enumerate(ax.get_xticklabels()):
            if bool(r.minority[j]):
                lab.set_color("#cf222e")
        ax.set_title(f"eps_min={r.point.eps_min:g}, NSR={r.point.nsr:g}, α={r.point.prune_alpha:g}\n"
                     f"aligned: min {r.minority_count:.1f} / maj {r.majority_count:.1f}", fontsize="x-small")
    for ax in axes[-1]:
        ax.set_xlabel("feature j (red: minority)", fontsize="x-small")
    for row in axes:
        row[0].set_ylabel("neuron (sorted)", fontsize="x-small")
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
    ax.legend(loc="best")
    fig.tight_layout()
    return fig


def front_end() -> bool:
    """Whether the cell now running was sent by a live front end (Jupyter, or the book's Binder and Colab buttons),
    which shows widgets; False under papermill or nbclient (the book's runner, `nbconvert --execute`) and outside a
    kernel.

    A widget opens a comm to the front end, and with none there nbclient sometimes waits on the idle kernel until the
    cell's time limit (nbclient issue 312). The kernel cannot see a screen, but it can read the request it is running:
    nbclient always sends allow_stdin = False (its NotebookClient answers no input request), while Jupyter's front
    ends, which can put up a box for input(), send True (the messaging protocol: "some frontends do not support stdin
    requests"). The request says what its sender is; no guess from the environment."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None:          # plain Python, or a terminal IPython: no front end to show a widget
        return False
    # ipykernel >= 6 has get_parent(); older ones (some hosted runtimes) keep the request in _parent_header
    parent = kernel.get_parent() if hasattr(kernel, "get_parent") else getattr(kernel, "_parent_header", {})
    return bool((parent or {}).get("content", {}).get("allow_stdin", False))


def live(cfg: ExplorerConfig):
    """The ipywidgets explorer: five sliders; the figure redraws when a slider is released. Returns the widget, or,
    with no front end to show it (front_end), the static figure at the sliders' starting point."""
    if not front_end():
        fig = draw(result(cfg))     # trained once: result is cached, and the static figure below is the same point
        plt.close(fig)              # shown once, by the display() of the notebook's cell
        return fig
    import ipywidgets as W
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


def mask_effect_text(cfg: ExplorerConfig, results: list[Result]) -> str:
    """Markdown: how much the pruned gallery rows differ from the unpruned ones, and the same under the literal
    backward."""
    eff = mask_effect(results)
    if not eff:
        return "The gallery has no pruned point with an unpruned twin (gallery_alpha needs 0 and a value above 0)."
    big = max(eff, key=lambda e: e["max_dcos2"])
    dmin = max(abs(e["d_minority"]) for e in eff)
    dmaj = max(abs(e["d_majority"]) for e in eff)
    probe = next((e["point"] for e in eff if e["point"].eps_min == cfg.eps_min), eff[0]["point"])
    lit = literal_contrast(cfg, probe)
    return (
        f"**How much the mask changed the panels.** Over the {len(eff)} pruned panels, the largest change of "
        f"cos²(w_i, M_j), one neuron and one feature against the same neuron of the unpruned twin (same seed, same "
        f"data), is {big['max_dcos2']:.3f} "
        f"(at {big['point'].label()}), and the mean aligned count per feature moves by at most {dmin:.2f} "
        f"(minority) and {dmaj:.2f} (majority) neurons. This run uses prune_backward = \"{cfg.prune_backward}\". "
        f"Under the faithful backward (the default, eq. (5)) a pruned neuron still receives the gradient of the full "
        f"model, and the mask enters the update only through the softmax weights of the logits. "
        f"Trained again with prune_backward = \"literal\" (pruned neurons get no gradient), the point "
        f"{probe.label()} changes by {lit['max_dcos2']:.3f} in cos² and by {lit['d_minority']:+.2f} (minority) and "
        f"{lit['d_majority']:+.2f} (majority) aligned neurons per feature. " + (
            "The mask moves the panels much more once it also removes the gradient: where the pruned rows look like "
            "the unpruned ones, that is the faithful backward, not a drawing error."
            if lit["max_dcos2"] > 2 * big["max_dcos2"]
            else "The literal backward does not move them much more: at these settings the mask itself changes "
            "little."))
