"""Notebook 04's results as its verdict rows read them: small typed dataclasses, built by `read` from the protocol
stage (measure_protocol's stored form, which campaign records keep as they were: a record made before stays valid)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ... import stats
from .config import PruningConfig
from .control import curve_alphas
from .metrics import FEATURE_STATS, Convergence
from .protocol import ORACLES, VARIANTS

Tensor = torch.Tensor

# The names a stage stores control.cell_stats' statistics under, in ControlCell's field order
CELL_STATS = ("A_j*/A_maj", "change over control", "minority-aligned neurons", "majority degradation",
              "first mask on minority-aligned", "pruned / kept norm", "first degrading alpha")


@dataclass(frozen=True)
class Split:
    """A per-feature statistic averaged over the minority features j* and over the majority ones: (R,) each."""

    minority: Tensor
    majority: Tensor


@dataclass(frozen=True)
class FeatureStats:
    """metrics.feature_stats of one run at its final weights (App. A.2's statistics), each split by group."""

    aligned: Split          # neurons with cos(w_i, M_j) >= cos_threshold, per feature
    max_cosine: Split       # max_i cos(w_i, M_j) (Fig. 2)
    single_feature: Split   # neurons whose N_i is {j} (Thm 3.2(d))
    amplitude: Split        # A_j = max_i |<w_i, M_j>|

    @classmethod
    def read(cls, stored: dict) -> FeatureStats:
        """From feature_stats' {statistic: (minority, majority)}."""
        return cls(*(Split(*stored[s]) for s in FEATURE_STATS))


@dataclass(frozen=True)
class Excess:
    """Step 3 (Thm 3.2(a, b)), metrics.excess_by_alpha: excess growth rates over the control per alpha."""

    minority: Tensor     # (R, k) over the sorted alpha grid
    majority: Tensor     # (R, k)
    slope: tuple         # log-log slope of the minority excess on alpha (mean, lo, hi)
    k_main: int          # index of alpha_main in the grid (its middle when alpha_main is not in it)
    ratio_main: Tensor   # minority over majority excess at k_main (R,); Thm 3.2(a, b) predicts about d


@dataclass(frozen=True)
class Degradation:
    """Step 5 (Remark 1), metrics.degradation: the majority's amplitude and aligned count per alpha."""

    A_maj: Tensor    # mean majority amplitude per alpha (R, k)
    A_maj0: Tensor   # the control's (R,)
    N_maj: Tensor    # mean majority aligned count per alpha (R, k)
    N_maj0: Tensor   # the control's (R,)
    thr_A: Tensor    # first alpha lowering A_maj by more than degrade_tol (R,); NaN: none in the grid
    thr_N: Tensor    # the same for the aligned count (R,)
    bound: Tensor    # Remark 1's bound |M_j*|/m: minority-aligned neurons at T_a over m (R,)


@dataclass(frozen=True)
class FinalRatios:
    """A_j*/A_maj at the end of every run of Steps 2 and 6 (protocol.final_ratios): (R,) each."""

    by_alpha: dict       # {alpha: (R,)} over the grid; 0.0 is the control
    faithful: Tensor     # the alpha_main branch, faithful backward (eq. 5)
    literal: Tensor      # the same branch, literal backward (masked autograd)
    from_start: Tensor   # Algorithm 1 from t = 0

    @property
    def control(self) -> Tensor:
        """The control's (alpha = 0)."""
        return self.by_alpha[0.0]

    @classmethod
    def read(cls, stored: dict) -> FinalRatios:
        """From final_ratios' {alpha | variant name: (R,)}."""
        return cls({k: v for k, v in stored.items() if not isinstance(k, str)},
                   *(stored[name] for name in VARIANTS[1:]))


@dataclass(frozen=True)
class SweepMask:
    """The alpha_main mask at one eps_min of Step 7 (protocol.sweep_masks), (R,) each."""

    change: Tensor                   # A_j*/A_maj, pruned minus control
    minority_dominant: Tensor        # share of the mask on minority-dominant neurons (control's final weights)
    minority_dominant_rank: Tensor   # their mean norm rank (0 = smallest)


@dataclass(frozen=True)
class Sweep:
    """Step 7 (protocol.eps_sweep): the control and the alpha_main branch at every eps_min of the grid."""

    eps: list            # the sorted eps_min grid (k values)
    xr: Tensor           # eps_min / eps_max (k,)
    ar_ctl: Tensor       # A_j*/A_maj of the control (R, k)
    ar_pr: Tensor        # and of the branch (R, k)
    exc: Tensor          # minority excess growth rate (R, k)
    slope_ctl: tuple     # log-log slopes against xr (mean, lo, hi): control,
    slope_pr: tuple      # branch,
    slope_exc: tuple     # and excess rate
    masks: dict          # {eps_min: SweepMask}

    @classmethod
    def read(cls, stored: dict) -> Sweep:
        """From eps_sweep's dict, less its runs."""
        masks = {e: SweepMask(**m) for e, m in stored["masks"].items()}
        return cls(**{k: v for k, v in stored.items() if k != "runs"} | {"masks": masks})


@dataclass(frozen=True)
class TheoremPremises:
    """Theorem 3.2's premises at the branch point (protocol.theorem_premises)."""

    convergence: Convergence   # the vanilla run converged (Thm 3.1 eq. (11); App. F)
    T: float                   # App. F.4's T at alpha_main, in steps
    strict: Tensor             # Remark 1's strict bound |M*_j*| per replicate (R,)
    extended: Tensor           # the extended one: neurons with j* in N_i at T_a (R,)


@dataclass(frozen=True)
class OracleArm:
    """One arm of protocol.run_oracles: how many neurons it pruned (R,), and its gain of A_j*/A_maj (R,)."""

    size: Tensor
    gain: Tensor


@dataclass(frozen=True)
class Oracles:
    """Theorem 3.2 as a conditional statement (protocol.run_oracles): three pruned sets from T_a, on the same pairs."""

    magnitude: OracleArm   # Algorithm 1's magnitude mask at alpha_main
    lucky: OracleArm       # P = M*_j*: Def. B.1's lucky minority neurons at initialisation
    dominant: OracleArm    # the neurons whose largest |cos(w_i, M_j)| is on a minority feature at T_a

    @classmethod
    def read(cls, stored: dict) -> Oracles:
        """From run_oracles' {arm name: {"size", "gain"}} (the magnitude arm's name carries its alpha)."""
        arm = {k: OracleArm(**v) for k, v in stored.items()}
        magnitude = next(v for k, v in arm.items() if k not in ORACLES)
        return cls(magnitude, *(arm[name] for name in ORACLES))


@dataclass(frozen=True)
class ControlCell:
    """One cell of the 2x2 mask control (control.cell_stats), over the control's alpha grid: (R, k) each."""

    ratio: Tensor                 # A_j*/A_maj
    change: Tensor                # its change over the control
    minority_aligned: Tensor      # minority-aligned neurons
    degradation: Tensor           # 1 - A_maj / A_maj(control)
    first_mask_minority: Tensor   # share of the mask at T_a on minority-aligned neurons
    norm_ratio: Tensor            # mean norm at the end of the neurons pruned at T_a over the others'
    first_degrading: Tensor       # (R,): the first alpha whose degradation exceeds degrade_tol; NaN: none

    @classmethod
    def read(cls, stored: dict) -> ControlCell:
        """From cell_stats' {statistic: tensor} of one cell."""
        return cls(*(stored[s] for s in CELL_STATS))


@dataclass
class Results:
    """What notebook 04's verdict rows read: per-replicate tensors, (R,) or (R, k) over the sorted alpha grid."""

    alphas: list                         # the sorted alpha grid
    features: dict                       # {0.0 | alpha: FeatureStats} of the control and every branch
    excess: Excess
    gap_diff: Tensor                     # Remark 2: rise of 1 - l'_p with j* minus without, under the mask (R,)
    mask_share: Tensor                   # share of the alpha_main mask at T_a on minority-aligned neurons (R,)
    degradation: Degradation
    ratios: FinalRatios
    sweep: Sweep | None                  # None: no eps_min at hand (eps_grid pending)
    control: dict | None = None          # {cell: ControlCell} of the 2x2 mask control (None: not run)
    premises: TheoremPremises | None = None   # None: not measured
    oracles: Oracles | None = None            # None: not run
    pending: tuple = ()                  # sweeps of record_sweeps (config.SWEEPS) not recorded yet: what needs them
                                         # is not tested

    def waits(self, sweep: str) -> bool:
        """Whether `sweep` ("alpha_grid", "eps_grid") is pending: the rows and figures that need it wait for it."""
        return sweep in self.pending

    def control_alphas(self, cfg: PruningConfig) -> list:
        """The ratios the mask control holds: the curve over alphas and threshold_alphas (control.curve_alphas), or
        the alphas at hand while the alpha grid, which trains threshold_alphas, is pending."""
        return self.alphas if self.waits("alpha_grid") else curve_alphas(self.alphas, cfg)


def read(meas: dict, cfg: PruningConfig) -> Results:
    """The Results of a protocol stage (measure_protocol's dict, as a campaign record keeps it) on cfg's alpha grid,
    or of split.assemble's (the ratios it holds, and the sweeps still pending)."""
    control = meas.get("control")
    return Results(
        alphas=meas.get("alphas", sorted(float(a) for a in cfg.alpha_grid)),
        features={k: FeatureStats.read(v) for k, v in meas["tables"].items() if not isinstance(k, str)},
        excess=Excess(**meas["excess"]),
        gap_diff=meas["mechanism"]["gap_diff"],
        mask_share=meas["mask_share"],
        degradation=Degradation(**meas["degradation"]),
        ratios=FinalRatios.read(meas["ratios"]),
        sweep=Sweep.read(meas["sweep"]) if meas["sweep"] is not None else None,
        control=None if control is None else {c: ControlCell.read(v) for c, v in control.items()},
        premises=TheoremPremises(**meas["premises"]) if meas.get("premises") is not None else None,
        oracles=Oracles.read(meas["oracles"]) if meas.get("oracles") is not None else None,
        pending=tuple(meas.get("pending", ())),
    )


def _effect_word(lo: float, hi: float) -> str:
    return "helps" if lo > 0 else "hurts" if hi < 0 else "no clear effect"


def where_it_helps(res: Results, census: dict, cfg: PruningConfig) -> dict:
    """A table, per alpha and then per eps_min of the sweep: the change of A_j*/A_maj over the control (R,), its
    reading, and the mean share of the mask on minority-dominant neurons (census: census_by_alpha, the mask at T_a;
    per eps_min, the mask on the control's final weights)."""
    out, R = {}, res.ratios
    for a in sorted(k for k in R.by_alpha if k > 0):
        d = R.by_alpha[a] - R.control
        c = stats.ci(d)
        out[f"alpha grid: alpha={a:g} (eps ratio {cfg.eps_min / cfg.eps_max:g})"] = {
            "change of A_j*/A_maj": d, "reading": _effect_word(c[1], c[2]),
            "mask on minority-dominant": stats.ci(census[a]["minority_dominant"])[0]}
    for e, m in (res.sweep.masks if res.sweep is not None else {}).items():
        c = stats.ci(m.change)
        out[f"eps sweep: eps ratio {e / cfg.eps_max:g} (alpha={cfg.alpha_main:g})"] = {
            "change of A_j*/A_maj": m.change, "reading": _effect_word(c[1], c[2]),
            "mask on minority-dominant": stats.ci(m.minority_dominant)[0],
            "minority-dominant norm rank": stats.ci(m.minority_dominant_rank)[0]}
    return out
