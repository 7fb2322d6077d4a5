"""Draw book/figures/model.png: the paper's model in one figure (run from the repo root; output committed)."""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch


def box(ax, x, y, w, h, title, body, colour, dy=0.0):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.04",
                                fc=colour, ec="#444", lw=1.0))
    ax.text(x + w / 2, y + h - 0.07, title, ha="center", va="top", fontsize=10, weight="bold")
    ax.text(x + w / 2, y + h / 2 - 0.08 + dy, body, ha="center", va="center", fontsize=8.2, linespacing=1.45)


def arrow(ax, x0, y0, x1, y1, text="", dy=0.05):
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=14, lw=1.3, color="#333"))
    if text:
        ax.text((x0 + x1) / 2, (y0 + y1) / 2 + dy, text, ha="center", va="bottom", fontsize=7.5, color="#333")


def main(out: Path = Path(__file__).with_name("model.png")) -> None:
    fig, ax = plt.subplots(figsize=(11, 4.2))
    ax.set_xlim(0, 11)
    ax.set_ylim(0, 4.2)
    ax.axis("off")
    box(ax, 0.1, 1.6, 2.3, 2.4, "data (Asm. 3.1-3.4)",
        "token  x⁽ˡ⁾ = M z⁽ˡ⁾ + ξ⁽ˡ⁾   (eq. 6)\nM: d orthonormal features\n"
        "Pr(z_j ≠ 0) ∝ ε_j loglog d / d\nmajority ε_max, minority ε_min\n"
        "positive pair (X, Y): same\nsupport and signs", "#e8f0fe", dy=0.28)
    # frequency bars inside the data box
    for k, h in enumerate([0.5, 0.5, 0.5, 0.5, 0.14, 0.14]):
        ax.add_patch(plt.Rectangle((0.45 + 0.27 * k, 1.72), 0.18, h, color="#0969da" if h > 0.2 else "#cf222e"))
    ax.text(2.25, 1.78, "ε_j", fontsize=7.5, ha="right")
    box(ax, 2.9, 1.6, 1.9, 2.4, "attention (frozen)",
        "W_Q = W_K = W_V = I\nu⁽ʳ⁾ = Σ_l softmax(s⟨x⁽ˡ⁾, x⁽ʳ⁾⟩) x⁽ˡ⁾\n≈ token average", "#f3f3f3")
    box(ax, 5.3, 1.6, 2.4, 2.4, "MLP: m neurons (eq. 4)",
        r"$h_i(X)=\sum_r \mathrm{BReLU}_{b_i}(\langle w_i,u^{(r)}\rangle)$"
        "\nonly w_i are trained\nb_i = 0 in Stage 1,\nthen ∝ ‖w_i‖", "#fff4e5")
    box(ax, 8.2, 1.6, 2.6, 2.4, "InfoNCE (eqs. 1-3)",
        "sim = ⟨f(X_n), StopGrad f(Y_n)⟩\nnegatives: other pairs' views\n"
        "θ ← (1-ηλ)θ - η g   (Alg. 1)\ng: eq. (21); with pruning eq. (5)", "#eafbea")
    arrow(ax, 2.4, 2.8, 2.9, 2.8)
    arrow(ax, 4.8, 2.8, 5.3, 2.8, "u⁽¹⁾..u⁽ᴸ⁾")
    arrow(ax, 7.7, 2.8, 8.2, 2.8, "f ∈ ℝᵐ")
    # pruning mask
    ax.add_patch(FancyBboxPatch((5.3, 0.25), 2.4, 0.95, boxstyle="round,pad=0.02,rounding_size=0.04",
                                fc="#fdeaea", ec="#cf222e", lw=1.0, ls="--"))
    ax.text(6.5, 0.98, "Algorithm 1: magnitude pruning", ha="center", va="top", fontsize=9, weight="bold",
            color="#a40e26")
    ax.text(6.5, 0.55, "forward: mask the α m smallest ‖w_i‖\nbackward: update all w_i (mask released)",
            ha="center", va="center", fontsize=7.8)
    arrow(ax, 6.5, 1.2, 6.5, 1.6)
    # what the theory says
    ax.text(0.1, 0.95, "What the paper proves (Lemmas 3.1-3.2, Thms 3.1-3.2):", fontsize=8.5, weight="bold")
    ax.text(0.1, 0.25, "Stage 1: w_i grows along features at rate ∝ ε_j\n"
            "Stage 2-3: lucky neurons specialise; minority\nfeatures get fewer, weaker neurons\n"
            "Pruning: extra growth for minority features", fontsize=7.8, va="bottom", linespacing=1.35)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
