"""Notebook 05's configuration: the grids of App. A.2's four figures , the metrics' settings and the verdict's."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig, Workers
from ...validate import check, check_choice, check_float, check_grid, check_int

FIGURES = (1, 2, 3, 4)


METRICS = {1: "align_count", 2: "align_max", 3: "test_cos", 4: "test_mse"}


# Direction in which each metric "improves" as App. A.2 claims: counts, max cosine and test cosine
# grow with eps_min (Figs. 1-3), the regression test MSE falls (Fig. 4).
IMPROVES = {1: +1, 2: +1, 3: +1, 4: -1}


def _grid(lo: float, hi: float, step: float) -> tuple:
    return tuple(round(lo + k * step, 6) for k in range(int(round((hi - lo) / step)) + 1))


@dataclass(frozen=True)
class AppendixProtocol:
    """App. A.2's grids (NSR = sigma^2 d1), the metrics' settings and the bootstrap: sigmas_12, eps_12, sigmas_3,
    sigmas_4, eps_34, repeats, pruning, n_test, test_seed, n_probe_train, reg_target, ridge, boot, boot_seed."""

    ROLE: ClassVar[str] = "protocol"
    sigmas_12: tuple = (0.01, 0.03, 0.05)             # Figs. 1-2
    eps_12: tuple = _grid(0.1, 1.0, 0.1)               # Figs. 1-2: 0.1 .. 1.0
    sigmas_3: tuple = (0.05, 0.075, 0.1)              # Fig. 3
    sigmas_4: tuple = (0.03, 0.05, 0.075)             # Fig. 4
    eps_34: tuple = _grid(0.05, 0.5, 0.05)             # Figs. 3-4: 0.05 .. 0.5 step 0.05
    repeats: int = 3                                  # repeats per grid point (App. A.2 uses 100: the paper profile)
    pruning: bool = True                              # also train the Algorithm 1 arm (not in the paper)
    n_test: int = 5000                                # Figs. 3-4: test pairs, fixed test seed
    test_seed: int = 2024                             # the fixed test seed
    n_probe_train: int = 1000                         # Fig. 4: pairs the regression head is trained on
    reg_target: str = "latent"                        # Fig. 4 target: "latent" (token-summed z of X, all d)
                                                      # or "minority"
    ridge: float = 1e-6                               # ridge penalty, relative to tr(F^T F)/m
    boot: int = 2000                                  # bootstrap resamples of the repeats
    boot_seed: int = 0

    def validate(self, cfg) -> None:
        """The grids and sizes, on a two-level model with a minority feature; a pruned arm needs prune_alpha > 0."""
        check_int("n_minority", cfg.n_minority, 1, cfg.d)
        check_choice("eps_profile", cfg.eps_profile, ("two_level",))
        def eps_ok(name, v):
            return check_float(name, v, 0.0, min(1.0, cfg.eps_max), lo_open=True)
        def sig_ok(name, v):
            return check_float(name, v, 0.0)
        for name in ("eps_12", "eps_34"):
            check_grid(name, getattr(self, name), eps_ok)
        for name in ("sigmas_12", "sigmas_3", "sigmas_4"):
            check_grid(name, getattr(self, name), sig_ok)
        check_int("repeats", self.repeats, 1)
        check("pruning", self.pruning, isinstance(self.pruning, bool), "True or False")
        if self.pruning:
            check("prune_alpha", cfg.prune_alpha, cfg.prune_alpha > 0,
                  "a number in (0, 1) when pruning=True")
        check_int("n_test", self.n_test, 2)
        check_int("test_seed", self.test_seed, 0, 2**31 - 1)
        check_int("n_probe_train", self.n_probe_train, 2)
        check_choice("reg_target", self.reg_target, ("latent", "minority"))
        check_float("ridge", self.ridge, 0.0)
        check_int("boot", self.boot, 1)
        check_int("boot_seed", self.boot_seed, 0, 2**31 - 1)


@dataclass(frozen=True)
class AppendixJudging:
    """What counts as aligned, and when a trend holds: align_threshold, rho_holds."""

    ROLE: ClassVar[str] = "judging"
    align_threshold: float = 0.3                      # Fig. 1: |cos(w_i, M_minority)| >= 0.3
    rho_holds: float = 0.8                            # holds if the interval of the rank correlation lies beyond this

    def validate(self, cfg) -> None:
        """The threshold and the correlation bound."""
        check_float("align_threshold", self.align_threshold, 0.0, 1.0)
        check_float("rho_holds", self.rho_holds, 0.0, 1.0, lo_open=True)


class AppendixConfig(ModelConfig):
    """App. A.2 grids, evaluation sizes and verdict settings, composed with the shared model's parts."""

    PARTS = {**MODEL_PARTS, "protocol": AppendixProtocol, "judging": AppendixJudging, "pool": Workers}
    DEFAULTS = dict(
        d1=500,                                       # App. A.2: d1 = 500
        m=30,                                         # neurons (workshop experiment, workshop version, §4: m = 30)
        progress=False,                               # tqdm progress bar
        n_pairs=256,                                  # K, full batch (unstated in A.2)
        steps=300,                                    # unstated in A.2
        prune_alpha=0.1,                              # ratio of the pruned arm (Alg. 1); control arm uses 0
        chunk=40,                                     # replicates (points x repeats) per batched training call
    )

    # --- derived ---
    @property
    def arms(self) -> tuple:
        """Pruning ratios trained: 0 (vanilla) and, with pruning=True, prune_alpha (Alg. 1)."""
        return (0.0, float(self.prune_alpha)) if self.pruning else (0.0,)

    def figure_grid(self, fig: int) -> tuple[tuple, tuple]:
        """(sigmas, eps_min values) of one figure of App. A.2."""
        check_choice("fig", fig, FIGURES)
        sig = {1: self.sigmas_12, 2: self.sigmas_12, 3: self.sigmas_3, 4: self.sigmas_4}[fig]
        return tuple(_key(s) for s in sig), tuple(_key(e) for e in (self.eps_12 if fig <= 2 else self.eps_34))

    def point_cfg(self, eps: float, sigma: float, alpha: float = 0.0) -> SimConfig:
        """The SimConfig of one grid point and pruning arm (only eps_min, sigma_xi, prune_alpha vary)."""
        return self.sim(eps_min=eps, sigma_xi=sigma, prune_alpha=alpha, chunk=0)

    def nsr_of(self, sigma: float) -> float:
        """NSR = sigma^2 d1 (App. A.2)."""
        return sigma ** 2 * self.d1

    def workload(self) -> list[tuple[SimConfig, int]]:
        """Notebook 05's trainings, for the time estimate: every (grid point, repeat, arm) as one batch of steps."""
        return [(self.sim(R=len(grid_points(self)) * self.repeats * len(self.arms)), self.steps)]


def _key(x: float) -> float:
    return round(float(x), 6)


def grid_points(cfg: "AppendixConfig") -> list[tuple[float, float]]:
    """The union of the four figures' (eps_min, sigma) points, sorted: each is trained once per repeat."""
    pts = set()
    for fig in FIGURES:
        sig, eps = cfg.figure_grid(fig)
        pts.update((e, s) for s in sig for e in eps)
    return sorted(pts, key=lambda p: (p[1], p[0]))
