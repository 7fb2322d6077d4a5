"""PremiseMapConfig: the grid of settings that decide the premises of Theorems 3.1 and 3.2 (notebook 10)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig, Workers, lambda_at
from ...validate import check, check_choice, check_float, check_grid, check_int
from ..pruning.config import PruningConfig

# The weight decays of the map, by name: the book's own (the config's weight_decay) and the bottom, geometric
# middle and top of the proof's range [d^-1.49, d^-1.01] (App. E.3).
LAMBDAS = ("book", "bottom", "mid", "top")
STAR_AXES = ("m/d", "K", "alpha", "n_minority", "bias_onset", "bias_coef")
# When the bias b_i switches on (the paper fixes b = 0 up to T1, Lemma F.3, and sizes T1 only up to Theta): at the
# eq. (34) crossing measured per run, at eq. (33)'s T1 = d1 ln d / (eta lnln d) or at the workshop's d ln d /
# (eta lnln d) with unit constants, or never ("none": bias = "none").
BIAS_ONSETS = ("crossing", "eq33", "workshop", "none")
# The star's axes, in the map's order: each with the PremiseMapConfig.cell keyword it varies and the field of values.
STAR_AXES = ("m/d", "K", "alpha", "n_minority", "bias_onset", "bias_coef")
STAR_KEYWORDS = {"m/d": "m_over_d", "K": "K", "alpha": "alpha", "n_minority": "n_minority",
                 "bias_onset": "bias_onset", "bias_coef": "bias_coef"}
STAR_FIELDS = {"m/d": "star_m_over_d", "K": "star_K", "alpha": "star_alpha", "n_minority": "star_n_minority",
               "bias_onset": "star_bias_onset", "bias_coef": "star_bias_coef"}


def eq33_t1(d: int, d1: int, lr: float) -> int:
    """Eq. (33)'s T1 with unit constants: ceil(d1 ln d / (eta lnln d)) (the workshop's has d for d1)."""
    return math.ceil(d1 * math.log(d) / (lr * math.log(math.log(d))))


def bias_fields(onset: str, coef: float) -> dict:
    """The SimConfig fields of a bias onset and constant: bias = "none" for "none", else the schedule with
    bias_onset (SimConfig's field: "crossing", "eq33" or "workshop") and bias_coef."""
    if onset == "none":
        return {"bias": "none", "bias_coef": coef, "bias_onset": "crossing"}
    return {"bias": "schedule", "bias_coef": coef, "bias_onset": onset}


def lambda_value(name: str, d: int, book: float) -> float:
    """The weight decay named `name` at d: the book's value, or d^-1.49, d^-1.25, d^-1.01 (App. E.3)."""
    return book if name == "book" else lambda_at(name, d)


def window(d: int, lr: float) -> tuple[float, float]:
    """Theorem 3.1's window [T3, T4] = [d^1.01/eta, d^1.99/eta] (Theorem 3.1)."""
    return d ** 1.01 / lr, d ** 1.99 / lr


@dataclass(frozen=True)
class Cell:
    """One point of the map: where it sits on the grid, and its full training configuration."""

    axis: str            # "plane" (the d x lambda x ratio plane) or the star axis it varies ("m/d", "K", ...)
    d: int
    lam_name: str        # one of LAMBDAS
    ratio: float         # eps_min / eps_max
    m: int
    K: int
    alpha: float
    n_minority: int
    cfg: PruningConfig       # the cell's runs: vanilla_steps and prune_steps are the caps (vanilla_max, prune_max)
    kappa_pairs: int = 4000  # Monte-Carlo pairs for kappa_j
    require_sigma: bool = False
    bias_onset: str = "crossing"   # one of BIAS_ONSETS
    bias_coef: float = 1.0
    vanilla_block: int = 100       # the vanilla run trains in blocks of this many steps until its loss plateaus
    C_z: float = 1.0               # App. F.4's constant in the paper's T
    converge: tuple = (0.5, 0.5, 0.02)  # the convergence tolerances:
                                        # (loss fraction of ln K, l'_p constant c in 1 - c/tau, change)
    star: tuple = ()               # a star cell's variation: (PremiseMapConfig.cell's keyword, value); () on the plane

    @property
    def label(self) -> str:
        """A short name for tables: d, lambda, ratio, and the star variation if any."""
        base = f"d={self.d} λ={self.lam_name} ρ={self.ratio:g}"
        extra = {"m/d": f" m={self.m}", "K": f" K={self.K}", "alpha": f" α={self.alpha:g}",
                 "n_minority": f" minority={self.n_minority}", "bias_onset": f" bias onset={self.bias_onset}",
                 "bias_coef": f" bias const={self.bias_coef:g}"}.get(self.axis, "")
        return base + extra


@dataclass(frozen=True)
class PremiseMapProtocol:
    """Notebook 10's grid, star, step rules and records: ds, lambdas, ratios, d1_over_d, m_over_d, alpha,
    star_m_over_d, star_K, star_alpha, star_n_minority, star_bias_onset, star_bias_coef, vanilla_block, vanilla_max,
    prune_max, C_z, record_ds, record_star, estimate_ds, kappa_pairs, require_sigma."""

    ROLE: ClassVar[str] = "protocol"
    ds: tuple = (10,)                 # numbers of features d of the plane trained here (d1 = d1_over_d * d)
    lambdas: tuple = LAMBDAS          # weight decays of the plane: book | bottom | mid | top of [d^-1.49, d^-1.01]
    ratios: tuple = (0.3, 0.8)        # eps_min / eps_max of the plane (eps_max stays at its value)
    d1_over_d: int = 5                # ambient dimension per feature (d1 = 5d, as notebook 08)
    m_over_d: float = 5.0             # neurons per feature at the centre (m = round(m_over_d * d))
    alpha: float = 0.1                # pruning ratio of every cell's pruned branch (neurons, by ||w_i||)
    star_m_over_d: tuple = (500.0,)   # star cells: other m/d at the centre (d = ds[0], lambda mid, ratio max);
                                      # 500: E|M*_j*| >= 1 at d=10, rho=0.8
    star_K: tuple = (2048,)           # star cells: other K (pairs per step)
    star_alpha: tuple = (0.3,)        # star cells: other pruning ratios
    star_n_minority: tuple = (3,)     # star cells: other numbers of minority features
    star_bias_onset: tuple = ("eq33", "workshop", "none")  # star cells: other bias onsets
                                                           # (the centre's is "crossing", the eq. (34) crossing)
    star_bias_coef: tuple = (0.5, 2.0)  # star cells: other bias constants (the centre's is bias_coef)
    vanilla_block: int = 100          # the vanilla run trains in blocks of this many steps until the loss plateaus
                                      # (converge_change over one block)
    vanilla_max: int = 400            # most vanilla steps: T4, the branch point, is the first block end
                                      # where the convergence premise holds, or this
    prune_max: int = 100              # cap on the branch length;
                                      # where App. F.4's T is longer, "pruned for the paper's T" fails
    C_z: float = 1.0                  # App. F.4's constant C_z in T
                                      # (the paper leaves it free; the book's value, as notebook 04)
    record_ds: tuple = (20, 40)       # d's of the plane computed ahead by the campaign (kind premise_cell)
                                      # and read back, marked "recorded"; () for none
    record_star: tuple = ("m/d",)     # star axes computed ahead by the campaign and read back, marked "recorded"
                                      # (the m/d = 500 cell is most of the notebook's time); () for none
    estimate_ds: tuple = (10, 20, 40, 80, 160, 320, 640)  # d of the closed-form estimates (no training)
    kappa_pairs: int = 4000           # Monte-Carlo pairs per replicate for kappa_j (sim/theory.kappa_mc)
    require_sigma: bool = False       # count Assumption 3.3's noise scale as a required premise
                                      # (the book follows App. A.2's sigma)

    def validate(self, cfg) -> None:
        """The grid's checks (a grid with no cell or a lambda name outside LAMBDAS stops here), and the model's
        fields the map needs: a positive "book" lambda, minority and majority features, two replicates."""
        check_float("weight_decay", cfg.weight_decay, 0.0, lo_open=True)   # the "book" lambda of the map
        check("n_minority", cfg.n_minority, 1 <= cfg.n_minority < min(self.ds) if self.ds else False,
              "an integer in [1, min(ds) - 1]: the map needs minority and majority features", given=f"ds={self.ds}")
        check_grid("ds", self.ds, lambda n, v: check_int(n, v, 4, 4096))
        check_grid("lambdas", self.lambdas, lambda n, v: check_choice(n, v, LAMBDAS))
        check_grid("ratios", self.ratios, lambda n, v: check_float(n, v, 0.0, 1.0, lo_open=True))
        check_int("d1_over_d", self.d1_over_d, 1, 100)
        check_float("m_over_d", self.m_over_d, 0.0, 1000.0, lo_open=True)
        check_float("alpha", self.alpha, 0.0, 1.0, lo_open=True, hi_open=True)
        check("star_m_over_d", self.star_m_over_d, _numbers(self.star_m_over_d, 0.0, 1000.0),
              "a list (may be empty) of numbers in (0, 1000]")
        check("star_K", self.star_K, _numbers(self.star_K, 2, 10 ** 6, integer=True),
              "a list (may be empty) of integers in [2, 1e6]")
        check("star_alpha", self.star_alpha, _numbers(self.star_alpha, 0.0, 1.0),
              "a list (may be empty) of numbers in (0, 1)")
        check("star_n_minority", self.star_n_minority,
              _numbers(self.star_n_minority, 1, min(self.ds) - 1, integer=True),
              f"a list (may be empty) of integers in [1, min(ds) - 1 = {min(self.ds) - 1}]",
              given=f"ds={list(self.ds)}")
        check("star_bias_onset", self.star_bias_onset, isinstance(self.star_bias_onset, (tuple, list)) and all(
            v in BIAS_ONSETS for v in self.star_bias_onset), f"a list (may be empty) of {BIAS_ONSETS}")
        check("star_bias_coef", self.star_bias_coef, _numbers(self.star_bias_coef, 0.0, 100.0),
              "a list (may be empty) of numbers in (0, 100]")
        check_int("vanilla_block", self.vanilla_block, 2, 10 ** 6)
        check_int("vanilla_max", self.vanilla_max, self.vanilla_block, 10 ** 7,
                  given=f"vanilla_block={self.vanilla_block}")
        check_int("prune_max", self.prune_max, 2 * max(1, self.vanilla_block // 10), 10 ** 7,
                  given=f"vanilla_block={self.vanilla_block}: two snapshots of a branch")
        check_float("C_z", self.C_z, 0.0, lo_open=True)
        check("record_ds", self.record_ds, _numbers(self.record_ds, 4, 4096, integer=True)
              and not set(self.record_ds) & set(self.ds), "a list (may be empty) of integers in [4, 4096], none in ds",
              given=f"ds={list(self.ds)}")
        check("record_star", self.record_star, isinstance(self.record_star, (tuple, list))
              and set(self.record_star) <= set(STAR_AXES), f"a list (may be empty) of {STAR_AXES}")
        check_grid("estimate_ds", self.estimate_ds, lambda n, v: check_int(n, v, 4, 10 ** 6))
        check_int("kappa_pairs", self.kappa_pairs, 100)
        check("require_sigma", self.require_sigma, isinstance(self.require_sigma, bool), "True or False")
        check_int("R", cfg.R, 2, 4096)


@dataclass(frozen=True)
class PremiseMapJudging:
    """Notebook 10's premise thresholds and smallest effect, fixed before any run: converge_loss_frac,
    converge_lp_c, converge_change, lucky_gamma, mask_share_min, effect_tol."""

    ROLE: ClassVar[str] = "judging"
    converge_loss_frac: float = 0.5   # convergence premise: final InfoNCE at most this times ln K ("well below ln K")
    converge_lp_c: float = 0.5        # convergence premise: the final mean l'_p is at least 1 - converge_lp_c / tau
    converge_change: float = 0.02     # convergence premise and stopping rule: relative loss change over the last block
    lucky_gamma: float = 0.1          # gamma of eq. (28) in Def. B.1's lucky sets
    mask_share_min: float = 0.9       # premise: the mask's share on minority-dominant neurons is at least this
    effect_tol: float = 0.02          # smallest effect of interest for the pruning gain in A_j*/A_maj

    def validate(self, cfg) -> None:
        """The thresholds' ranges."""
        check_float("lucky_gamma", self.lucky_gamma, 0.0, 1.0, hi_open=True)
        check_float("mask_share_min", self.mask_share_min, 0.0, 1.0, lo_open=True)
        check_float("effect_tol", self.effect_tol, 0.0, 1.0, lo_open=True, hi_open=True)
        check_float("converge_loss_frac", self.converge_loss_frac, 0.0, 1.0, lo_open=True, hi_open=True)
        check_float("converge_lp_c", self.converge_lp_c, 0.0, lo_open=True)
        check_float("converge_change", self.converge_change, 0.0, 1.0, lo_open=True)


class PremiseMapConfig(ModelConfig):
    """Notebook 10: a grid over d, lambda, eps_min/eps_max (the plane) and one-at-a-time variations of m/d, K,
    alpha, the number of minority features, the bias onset and the bias constant around a centre cell. Each cell
    trains vanilla until its loss plateaus (T4, the branch point), then branches into a control, Algorithm 1's
    magnitude mask (at the map's alpha and inside Remark 1's strict and extended bounds) and two oracle masks, for
    the paper's T (App. F.4) capped at prune_max. The grid, its ranges, the tolerances and the step rules are fixed
    here, before any run; nothing is searched toward a verdict.

    The model's fields are the cells' common settings, except those the grid sets per cell: d, d1, m, eps_min,
    steps and the pruning fields. n_pairs is the centre's K, n_minority the centre's count, weight_decay the
    "book" lambda, R the replicates of every cell.
    """

    PARTS = {**MODEL_PARTS, "protocol": PremiseMapProtocol, "judging": PremiseMapJudging, "pool": Workers}

    # --- the cells ---
    # 10 arguments: a cell is a point on the map's nine axes (the plane's d, lambda, ratio and the star's m/d, K,
    # alpha, n_minority, bias onset and bias constant) plus which axis it varies; unset star values are the centre's.
    def cell(self, axis: str, d: int, lam_name: str, ratio: float, m_over_d: float | None = None,
             K: int | None = None, alpha: float | None = None, n_minority: int | None = None,
             bias_onset: str = "crossing", bias_coef: float | None = None) -> Cell:
        """The Cell at one grid point (unset values: the centre's): its training config, whose vanilla_steps and
        prune_steps are the caps vanilla_max and prune_max (run_cell decides the lengths)."""
        m = max(2, int(round((m_over_d or self.m_over_d) * d)))
        K = int(K or self.n_pairs)
        alpha = float(alpha or self.alpha)
        n_min = int(n_minority or self.n_minority)
        coef = float(self.bias_coef if bias_coef is None else bias_coef)
        record = max(1, self.vanilla_block // 10)
        common = {name: getattr(self, name) for name in SimConfig.field_names()}
        common.update(d=d, d1=self.d1_over_d * d, m=m, n_pairs=K, n_minority=n_min, eps_min=ratio * self.eps_max,
                      weight_decay=lambda_value(lam_name, d, self.weight_decay), record_every=record,
                      prune_alpha=0.0, prune_start=0, prune_unit="neuron", prune_mask="magnitude",
                      prune_schedule="dynamic", progress=False, **bias_fields(bias_onset, coef))
        run = PruningConfig(**common, vanilla_steps=self.vanilla_max, prune_steps=self.prune_max, alpha_grid=(alpha,),
                            alpha_main=alpha, eps_min_grid=(ratio * self.eps_max,), threshold_alphas=(),
                            rate_window=min(2 * record, self.prune_max), top_k=1, lucky_gamma=self.lucky_gamma,
                            mask_share_min=self.mask_share_min, effect_tol=self.effect_tol, mask_control=False)
        star = {"m/d": m_over_d, "K": K, "alpha": alpha, "n_minority": n_minority, "bias_onset": bias_onset,
                "bias_coef": bias_coef}.get(axis)
        return Cell(axis, d, lam_name, ratio, m, K, alpha, n_min, run, self.kappa_pairs, self.require_sigma,
                    bias_onset, coef, self.vanilla_block, self.C_z,
                    (self.converge_loss_frac, self.converge_lp_c, self.converge_change),
                    (STAR_KEYWORDS[axis], star) if axis in STAR_KEYWORDS else ())

    def star_cells(self) -> list[Cell]:
        """The star around (ds[0], 'mid', max ratio): one cell per value of every star axis, in STAR_AXES order."""
        d0, r0 = self.ds[0], max(self.ratios)
        return [self.cell(axis, d0, "mid", r0, **{STAR_KEYWORDS[axis]: v})
                for axis in STAR_AXES for v in getattr(self, STAR_FIELDS[axis])]

    def record_cells(self) -> list[Cell]:
        """The cells the campaign computes ahead (kind premise_cell) and the notebook reads back: the plane at the d's
        of record_ds, and the star cells of the axes in record_star."""
        return ([self.cell("plane", d, lam, r) for d in self.record_ds for lam in self.lambdas for r in self.ratios]
                + [c for c in self.star_cells() if c.axis in self.record_star])

    def cells(self) -> list[Cell]:
        """The cells the notebook trains: the plane (every d x lambda x ratio at the centre) and the star around
        (ds[0], 'mid', max ratio), the bias onset and constant included, but for the axes in record_star."""
        out = [self.cell("plane", d, lam, r) for d in self.ds for lam in self.lambdas for r in self.ratios]
        return out + [c for c in self.star_cells() if c.axis not in self.record_star]

    def workload(self) -> list[tuple[SimConfig, int]]:
        """An upper bound on notebook 10's trainings, for the time estimate: every trained cell's vanilla run to
        vanilla_max (it stops earlier once converged) and six branches of prune_max (control, Algorithm 1 at the
        map's alpha and at Remark 1's two bounds, two oracle masks)."""
        return [w for c in self.cells()
                for w in ((c.cfg.vanilla(), self.vanilla_max), (c.cfg.sim(), 6 * self.prune_max))]


def _numbers(xs, lo, hi, integer: bool = False) -> bool:
    """Whether xs is a list/tuple of numbers in (lo, hi] (integers in [lo, hi] when `integer`)."""
    if not isinstance(xs, (tuple, list)):
        return False
    def ok(v):
        return isinstance(v, int) if integer else isinstance(v, (int, float))
    return all(ok(v) and not isinstance(v, bool) and math.isfinite(v) and
               ((lo <= v <= hi) if integer else (lo < v <= hi)) for v in xs)
