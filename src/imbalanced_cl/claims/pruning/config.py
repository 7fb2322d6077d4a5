"""Notebook 04's configuration: the vanilla run, the branches over an alpha grid, the backward variants, the eps_min
sweep, the random-mask control and the tolerances."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig, Workers
from ...validate import check, check_float, check_grid, check_int

# The sweeps a campaign can measure as units of their own (kind pruning_sweep, issue 64), apart from the part of the
# protocol that decides claim 4's rows: the rest of alpha_grid (with its mask-control cells and threshold_alphas) and
# the other eps_min of eps_min_grid.
SWEEPS = ("alpha_grid", "eps_grid")


@dataclass(frozen=True)
class PruningProtocol:
    """Notebook 04's runs and measurements: vanilla_steps, prune_steps, alpha_grid, alpha_main, eps_min_grid, top_k,
    rate_window, mask_control, threshold_alphas, C_z, record_sweeps."""

    ROLE: ClassVar[str] = "protocol"
    vanilla_steps: int = 1500        # T_a: vanilla training before the branch (>= T4 = d^1.99/eta = 775 at d=20)
    prune_steps: int = 1000          # T_b - T_a: length of every branch
    alpha_grid: tuple = (0.02, 0.05, 0.1, 0.2, 0.4)  # pruning ratios of the branches
    alpha_main: float = 0.05          # ratio used for the backward, t = 0 and eps_min comparisons
    eps_min_grid: tuple = (0.3, 0.5, 0.7, 1.0)  # eps_min sweep for A_j*/A_maj and excess growth vs eps_j*
    top_k: int = 3                   # neurons per feature whose growth rate is measured (largest |<w_i,M_j>| at T_a)
    rate_window: int = 100           # steps after the branch over which growth rates are fitted
    mask_control: bool = True        # run the 2x2 random-mask control of Step 8 (beyond the paper); True or False
    threshold_alphas: tuple = (0.6, 0.8)  # Step 8's threshold curve only: ratios above alpha_grid, all four cells
    C_z: float = 1.0                 # App. F.4's free constant C_z in the paper's T (the book's value)
    record_sweeps: tuple = ()        # sweeps computed ahead by the campaign (kind pruning_sweep) and read back,
                                     # marked "recorded": "alpha_grid", "eps_grid"; () for none (trained here)

    def validate(self, cfg) -> None:
        """The grids and windows, and a model with minority and majority features."""
        check_int("vanilla_steps", self.vanilla_steps, 1)
        check_int("prune_steps", self.prune_steps, 2)
        def alpha(n, v):
            return check_float(n, v, 0.0, 1.0, lo_open=True, hi_open=True)
        check_grid("alpha_grid", self.alpha_grid, alpha)
        alpha("alpha_main", self.alpha_main)
        check_grid("eps_min_grid", self.eps_min_grid,
                   lambda n, v: check_float(n, v, 0.0, cfg.eps_max, lo_open=True))
        check("n_minority", cfg.n_minority, 1 <= cfg.n_minority < cfg.d,
              f"an integer in [1, d-1] (d={cfg.d}): the notebook needs minority and majority features")
        check_int("top_k", self.top_k, 1, cfg.m)
        check_int("rate_window", self.rate_window, 2 * cfg.record_every, self.prune_steps)
        check("mask_control", self.mask_control, isinstance(self.mask_control, bool), "True or False")
        top = max(self.alpha_grid)
        check("threshold_alphas", self.threshold_alphas, isinstance(self.threshold_alphas, (tuple, list)) and all(
            isinstance(a, (int, float)) and not isinstance(a, bool) and top < a < 1 for a in self.threshold_alphas),
              f"a list (may be empty) of ratios in ({top:g}, 1), above alpha_grid",
              given=f"alpha_grid={list(self.alpha_grid)}")
        check_float("C_z", self.C_z, 0.0, lo_open=True)
        check("record_sweeps", self.record_sweeps, isinstance(self.record_sweeps, (tuple, list))
              and set(self.record_sweeps) <= set(SWEEPS) and len(set(self.record_sweeps)) == len(self.record_sweeps),
              f"a list (may be empty) of {SWEEPS}, each once")
        # the part that stays here is the alpha_main branch of the grid: the sweep trains the grid's other ratios
        check("alpha_main", self.alpha_main, "alpha_grid" not in self.record_sweeps or any(
            float(a) == float(self.alpha_main) for a in self.alpha_grid),
              "a ratio of alpha_grid when alpha_grid is a sweep of its own (record_sweeps)",
              given=f"alpha_grid={list(self.alpha_grid)}")


@dataclass(frozen=True)
class PruningJudging:
    """Notebook 04's definitions and tolerances, fixed before the run (book/methods.md): cos_threshold, single_rel,
    dead_rel, lucky_gamma, degrade_tol, tol_slope, tol_factor, mask_share_min, effect_tol, and the convergence
    premise at the branch point (converge_loss_frac, converge_lp_c, converge_change, converge_window)."""

    ROLE: ClassVar[str] = "judging"
    cos_threshold: float = 0.3       # "aligned" means cos(w_i, M_j) >= this (App. A.2, Fig. 1)
    single_rel: float = 0.5          # the N_i threshold: N_i = {j : |<w_i,M_j>| >= single_rel * max_j' |<w_i,M_j'>|}
    dead_rel: float = 0.1            # a neuron is dead if ||w_i|| < dead_rel * median_i ||w_i||
    lucky_gamma: float = 0.1         # gamma of eq. (28) for the lucky-at-init census
    degrade_tol: float = 0.1         # majority features "degrade" when A_maj drops by more than this fraction
    tol_slope: float = 0.25   # band predicted ± tol_slope for the log-log slopes
    tol_factor: float = 3.0   # band [d / tol_factor, d × tol_factor] for the minority-excess ratio
    mask_share_min: float = 0.9      # "the mask removes minority-aligned neurons"
                                     # holds if the share's interval is ≥ this
    effect_tol: float = 0.02         # smallest effect of interest for Step 8's paired differences of A_j*/A_maj
    converge_loss_frac: float = 0.5  # convergence premise at the branch point: InfoNCE at most this times ln K
                                     # ("well below ln K", eq. (11))
    converge_lp_c: float = 0.5       # convergence premise: mean l'_p at least 1 - converge_lp_c / tau
                                     # (App. F: l'_p = 1 - Theta(1/tau))
    converge_change: float = 0.02    # convergence premise:
                                     # relative change of the loss over the last converge_window steps at most this
    converge_window: int = 100       # steps before the branch point over which the loss must be flat

    def validate(self, cfg) -> None:
        """The definitions' and tolerances' ranges."""
        check_float("cos_threshold", self.cos_threshold, 0.0, 1.0, lo_open=True)
        check_float("single_rel", self.single_rel, 0.0, 1.0, lo_open=True, hi_open=True)
        check_float("dead_rel", self.dead_rel, 0.0, 1.0)
        check_float("lucky_gamma", self.lucky_gamma, 0.0, 1.0, hi_open=True)
        check_float("degrade_tol", self.degrade_tol, 0.0, 1.0, lo_open=True, hi_open=True)
        check_float("effect_tol", self.effect_tol, 0.0, 1.0, lo_open=True, hi_open=True)
        check_float("mask_share_min", self.mask_share_min, 0.0, 1.0, lo_open=True)
        check_float("converge_loss_frac", self.converge_loss_frac, 0.0, 1.0, lo_open=True, hi_open=True)
        check_float("converge_lp_c", self.converge_lp_c, 0.0, lo_open=True)
        check_float("converge_change", self.converge_change, 0.0, 1.0, lo_open=True)
        check_int("converge_window", self.converge_window, 1)
        check_float("tol_slope", self.tol_slope, 0.0, lo_open=True)
        check_float("tol_factor", self.tol_factor, 1.0, lo_open=True)


class PruningConfig(ModelConfig):
    """Notebook 04: vanilla run, branches over an alpha grid, backward variants, and an eps_min sweep.

    The model's `steps`, `prune_alpha`, `prune_start` and `prune_backward` are set by the protocol (see `vanilla`,
    `branch`); `prune_unit` and `prune_every` are used as given.
    """

    PARTS = {**MODEL_PARTS, "protocol": PruningProtocol, "judging": PruningJudging, "pool": Workers}
    DEFAULTS = dict(
        progress=False,                  # no progress bar: the notebook prints its steps
    )

    # --- the runs of the protocol ---
    def vanilla(self, **changes) -> SimConfig:
        """Vanilla training to T_a (no mask)."""
        return self.sim(steps=self.vanilla_steps, prune_alpha=0.0, prune_start=0, **changes)

    def branch(self, alpha: float, backward: str = "faithful", **changes) -> SimConfig:
        """A branch from T_a to T_a + prune_steps with the mask on from T_a (alpha = 0: the control)."""
        return self.sim(steps=self.vanilla_steps + self.prune_steps, prune_alpha=alpha,
                        prune_start=self.vanilla_steps, prune_backward=backward, **changes)

    def from_start(self, alpha: float) -> SimConfig:
        """Algorithm 1 as written: the mask is on from t = 0, same total length as a branch."""
        return self.sim(steps=self.vanilla_steps + self.prune_steps, prune_alpha=alpha, prune_start=0,
                        prune_backward="faithful")

    def share(self, part: str = "main") -> Share:
        """What one part of the protocol trains (split.py): "main", this notebook's own run (the alpha_main branch
        when alpha_grid is a sweep of its own, else the whole grid and threshold_alphas; every other eps_min unless
        eps_grid is one), or a sweep of SWEEPS ("alpha_grid": the grid's other ratios and threshold_alphas;
        "eps_grid": the other eps_min)."""
        alphas = sorted(float(a) for a in self.alpha_grid)
        thresholds = sorted(float(a) for a in self.threshold_alphas)
        others = [e for e in sorted(float(e) for e in self.eps_min_grid) if e != self.eps_min]
        if part == "alpha_grid":
            return Share([a for a in alphas if a != float(self.alpha_main)], thresholds, [])
        if part == "eps_grid":
            return Share([], [], others)
        if part != "main":
            raise ValueError(f"part {part!r}: 'main' or one of {SWEEPS}")
        split = "alpha_grid" in self.record_sweeps
        return Share([float(self.alpha_main)] if split else alphas, [] if split else thresholds,
                     [] if "eps_grid" in self.record_sweeps else others)

    def part_workload(self, part: str = "main") -> list[tuple[SimConfig, int]]:
        """(config, steps) of one part's trainings (share), each branch counted as a training of its own: "main" the
        vanilla run, the control and its ratios, the literal backward, the two oracle arms and Algorithm 1 from t = 0;
        "alpha_grid" the vanilla run again (the branches' checkpoint, the same numbers), the control and its ratios;
        either, the mask control's cells at its ratios (four cells less the magnitude/dynamic branches it reuses);
        per eps_min of the share, a vanilla run and two branches."""
        sh, V, B = self.share(part), self.vanilla_steps, self.prune_steps
        out = [(self.vanilla(), V)] if part == "main" or sh.alphas else []
        if part == "main":
            out += [(self.sim(), B * (len(sh.alphas) + 1 + 1 + 2)), (self.sim(), V + B)]
        elif sh.alphas:
            out.append((self.sim(), B * (len(sh.alphas) + 1)))
        if self.mask_control and sh.alphas:
            out.append((self.sim(), B * (4 * (len(sh.alphas) + len(sh.thresholds)) - len(sh.alphas))))
        for e in sh.eps:
            out += [(self.vanilla(eps_min=e), V), (self.sim(eps_min=e), 2 * B)]
        return out

    def workload(self) -> list[tuple[SimConfig, int]]:
        """(config, steps) of notebook 04's own trainings, for the time estimate: its main part (part_workload), the
        sweeps of record_sweeps left out (campaign units of their own, kind pruning_sweep)."""
        return self.part_workload("main")


class Share(NamedTuple):
    """What one part of notebook 04's protocol trains: alpha ratios, threshold_alphas (mask control) and eps_min."""

    alphas: list
    thresholds: list
    eps: list
