"""Notebook 04's configuration: the vanilla run, the branches over an alpha grid, the backward variants, the eps_min
sweep, the random-mask control and the tolerances."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig, Workers
from ...validate import check, check_float, check_grid, check_int


@dataclass(frozen=True)
class PruningProtocol:
    """Notebook 04's runs and measurements: vanilla_steps, prune_steps, alpha_grid, alpha_main, eps_min_grid, top_k,
    rate_window, mask_control, threshold_alphas, C_z."""

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

    def workload(self) -> list[tuple[SimConfig, int]]:
        """(config, steps) of notebook 04's trainings, for the time estimate: the vanilla run, its branches (the
        control, each alpha, the literal backward), Algorithm 1 from t = 0, and a vanilla run and two branches per
        other eps_min."""
        n_branch = len(self.alpha_grid) + 1 + 1
        out = [(self.vanilla(), self.vanilla_steps), (self.sim(), self.prune_steps * n_branch),
               (self.sim(), self.vanilla_steps + self.prune_steps)]
        for e in self.eps_min_grid:
            if e != self.eps_min:
                out += [(self.vanilla(eps_min=e), self.vanilla_steps), (self.sim(eps_min=e), 2 * self.prune_steps)]
        return out
