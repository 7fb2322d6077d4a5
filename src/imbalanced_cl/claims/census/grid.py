"""The census of Def. B.1 on a (d, eps_min/eps_max) grid, Monte Carlo and exact (notebook 02, sections 1-2):
CensusConfig, run_census, the exponents fitted over d against Lemma B.2(c, d), and the printed summaries.

No training: at initialisation g_ij ~ N(0, 1) i.i.d. whatever the dictionary is (see sets.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ... import stats
from ...validate import ParameterError, check_choice, check_float, check_grid, check_int
from .exact import log_p_one_above, p_one_above, p_ordinary, paper_p1, paper_p2, paper_pr_B
from .sets import census_of, check_d, check_ratio, gaussian_coef, ni_exponent, omega1, omega2, thresholds


def _check_ds(name: str, v) -> None:
    check_grid(name, v, check_d)


def _check_ratios(name: str, v) -> None:
    check_grid(name, v, check_ratio)


@dataclass(frozen=True)
class CensusConfig:
    """The initialisation census on a (d, eps_min/eps_max) grid (Def. B.1, Lemma B.2). No training."""

    census_ds: tuple = (10, 30, 100, 300, 1000, 3000, 10000)   # numbers of features d (each >= 2)
    census_ratios: tuple = (1.0, 0.8, 0.6, 0.5)                # eps_min/eps_max, each in (0, 1]
    gamma: float = 0.1            # the "small constant" of eq. (28), in [0, 1)
    C_m: float = 2.0              # m = d^C_m neurons for the expected counts (Lemma B.2(c))
    census_neurons: int = 20000   # Monte-Carlo neurons per replicate and grid point
    census_max_elems: int = 2000000  # cap on Monte-Carlo numbers per replicate and d (neurons x d)
    census_R: int = 4             # Monte-Carlo replicates (intervals are over these)
    exact_samples: int = 4000     # draws of the conditional (Rao-Blackwellised) lucky-set expectation
    seed: int = 0
    device: str = "auto"          # where the Monte Carlo runs: "auto" (CUDA when present), "cpu" or "cuda"

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Raise ParameterError naming the first bad field."""
        _check_ds("census_ds", self.census_ds)
        _check_ratios("census_ratios", self.census_ratios)
        check_float("gamma", self.gamma, 0.0, 1.0, hi_open=True)
        check_float("C_m", self.C_m, 0.0, 4.0, lo_open=True)
        check_int("census_neurons", self.census_neurons, 10)
        check_int("census_max_elems", self.census_max_elems, 1000)
        check_int("census_R", self.census_R, 2)
        check_int("exact_samples", self.exact_samples, 100)
        check_int("seed", self.seed, 0, 2**31 - 1)
        check_choice("device", self.device, ("auto", "cpu", "cuda"))
        if self.device == "cuda" and not torch.cuda.is_available():    # refuse before any compute, in one line
            raise ParameterError("parameter device='cuda' is invalid here: no CUDA device is available; "
                                 "allowed 'auto' or 'cpu'")

    @property
    def torch_device(self) -> torch.device:
        """Where the census's array work runs ("auto": CUDA when present, else the CPU)."""
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    @classmethod
    def from_namespace(cls, ns, **overrides):
        """Build from a notebook's globals(), taking only this class's fields (lists become tuples)."""
        from dataclasses import fields as _fields
        kw = {f.name: ns[f.name] for f in _fields(cls) if f.name in ns}
        kw.update(overrides)
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in kw.items()})

    def to_dict(self) -> dict:
        """Plain dict of all fields."""
        import dataclasses
        return dataclasses.asdict(self)


# 8 arguments: the grid point (d, rhos, gamma), the Monte-Carlo size and seed (n_neurons, R, seed), a memory cap and
# the device
def mc_census_multi(d: int, rhos, gamma: float, n_neurons: int, R: int, seed: int = 0,
                    max_elems: int = 2 ** 22, device="cpu") -> list[dict]:
    """mc_census for several ratios on the same Gaussian draws (the ratio only moves the thresholds), on `device`."""
    block = max(1, min(n_neurons, max_elems // d))
    keys = ("n_ord", "n_lucky", "n_single", "n_B")
    # integer counts summed in float64 on the device: exact, so the host's numbers (mc_census), read once at the end
    acc = [{k: torch.zeros(R, dtype=torch.float64, device=device) for k in keys} for _ in rhos]
    done, blk = 0, 0
    while done < n_neurons:
        nb = min(block, n_neurons - done)
        g = gaussian_coef(R, nb, d, seed, extra=blk, device=device)
        for q, rho in enumerate(rhos):
            c = census_of(g, d, rho, gamma)
            n_ord = c["Ni"]
            acc[q]["n_ord"] += n_ord.sum(-1).double()
            acc[q]["n_lucky"] += c["lucky"].sum((-1, -2)).double()
            acc[q]["n_single"] += (n_ord == 1).sum(-1).double()
            acc[q]["n_B"] += (n_ord.unsqueeze(-1) - c["ordinary"].long() == 0).sum((-1, -2)).double()
        done += nb
        blk += 1
    acc = [{k: v.cpu().numpy() for k, v in a.items()} for a in acc]
    pairs = n_neurons * d
    return [{"p_ord": a["n_ord"] / pairs, "p_lucky": a["n_lucky"] / pairs, "Ni": a["n_ord"] / n_neurons,
             "single": a["n_single"] / n_neurons, "B": a["n_B"] / pairs, "hits_lucky": a["n_lucky"],
             "n_neurons": n_neurons} for a in acc]


def run_census(cfg: CensusConfig, progress: bool = False) -> dict:
    """Monte Carlo and exact census on the whole grid: arrays of shape (len(ds), len(ratios)[, R]).

    The Monte Carlo and the exact expectations' draws run on cfg's device (cfg.torch_device): on the CPU the numbers
    every CPU record was made with, on a GPU its generator's (the same law, other numbers).
    """
    ds, rhos = list(cfg.census_ds), list(cfg.census_ratios)
    dev = cfg.torch_device
    shape = (len(ds), len(rhos))
    mc = {k: np.zeros(shape + (cfg.census_R,)) for k in ("p_ord", "p_lucky", "Ni", "single", "B")}
    hits = np.zeros(shape)
    neurons = np.zeros(len(ds), dtype=int)
    ex = {k: np.zeros(shape) for k in ("p_ord", "p_lucky", "Ni", "single", "B", "paper_B", "paper_p1",
                                        "paper_p2", "rse_lucky")}
    for i, d in enumerate(ds):
        # Monte-Carlo neurons: census_neurons, capped so that one replicate holds <= census_max_elems numbers
        neurons[i] = max(50, min(cfg.census_neurons, cfg.census_max_elems // d))
        rs = mc_census_multi(d, rhos, cfg.gamma, int(neurons[i]), cfg.census_R, seed=cfg.seed + 1000 * i,
                             device=dev)
        for k, rho in enumerate(rhos):
            r = rs[k]
            for key in mc:
                mc[key][i, k] = r[key]
            hits[i, k] = r["hits_lucky"].sum()
            a, b = thresholds(d, rho, cfg.gamma)
            ex["p_ord"][i, k] = p_ordinary(d, rho, cfg.gamma)
            ex["Ni"][i, k] = d * ex["p_ord"][i, k]
            lp, rse = log_p_one_above(d, a, b, n=cfg.exact_samples, device=dev)
            ex["p_lucky"][i, k], ex["rse_lucky"][i, k] = math.exp(lp), rse
            ex["single"][i, k] = d * p_one_above(d, b, b, n=cfg.exact_samples, device=dev)
            ex["B"][i, k] = p_one_above(d, 0.0, b, n=cfg.exact_samples, device=dev)
            ex["paper_B"][i, k] = paper_pr_B(d, rho, cfg.gamma)
            ex["paper_p1"][i, k] = paper_p1(d, rho, cfg.gamma)
            ex["paper_p2"][i, k] = paper_p2(d, rho, cfg.gamma)
            if progress:
                print(f"d={d} rho={rho} done", flush=True)
    m = np.array([[float(d) ** cfg.C_m] * len(rhos) for d in ds])
    return {"ds": np.array(ds), "rhos": np.array(rhos), "mc": mc, "exact": ex, "m": m, "hits_lucky": hits,
            "neurons": neurons}


def paper_exponents(cfg: CensusConfig) -> dict:
    """The paper's exponents in d per ratio: {rho: {'ordinary': omega2, 'lucky': omega1, 'Ni': 1 - rho^2 (1 - gamma)}}
    (Lemma B.2(c), eqs. 31-32, with m = d^C_m; Lemma B.2(d))."""
    return {rho: {"ordinary": omega2(cfg.C_m, rho, cfg.gamma), "lucky": omega1(cfg.C_m, rho, cfg.gamma),
                  "Ni": ni_exponent(rho, cfg.gamma)} for rho in cfg.census_ratios}


def census_fits(cen: dict, rse_max: float) -> dict:
    """Exponents over d per ratio: {rho: (lucky, ordinary, Ni)} as stats.SlopeFit. lucky and ordinary are fitted to the
    exact expectations E|M_j*| and E|M_j| (m = d^C_m; lucky only where finite and its relative standard error is
    below rse_max), Ni to the Monte-Carlo |N_i| per replicate (mean and 95% interval of the replicate slopes)."""
    ds, m_of_d, ex = cen["ds"], cen["m"][:, 0], cen["exact"]
    fits = {}
    for k, rho in enumerate(cen["rhos"]):
        ok = (ex["rse_lucky"][:, k] < rse_max) & (ex["p_lucky"][:, k] > 0)
        fits[rho] = (stats.fit_loglog(ds[ok], (ex["p_lucky"][:, k] * m_of_d)[ok]),
                     stats.fit_loglog(ds, ex["p_ord"][:, k] * m_of_d),
                     stats.fit_loglog_replicates(ds, cen["mc"]["Ni"][:, k, :].T))
    return fits


def census_report(cen: dict, fits: dict, cfg: CensusConfig) -> list[str]:
    """The fitted exponents against the claimed ones (a table), then per ratio the direction in which the exact
    expected lucky count moves with d and at how many d Monte Carlo found any lucky neuron."""
    ds, m_of_d, exps = cen["ds"], cen["m"][:, 0], paper_exponents(cfg)
    out = [f"{'rho':>5} {'omega1':>8} {'fit lucky':>10} {'omega2':>8} {'fit ord':>8} {'Ni claim':>8} {'fit Ni':>7}"]
    for rho, (fl, fo, fnr) in fits.items():
        e = exps[rho]
        out.append(f"{rho:5.2f} {e['lucky']:8.2f} {fl.slope:10.2f} {e['ordinary']:8.2f} "
                   f"{fo.slope:8.2f} {e['Ni']:8.2f} {fnr.slope:7.2f}")
    for k, rho in enumerate(cen["rhos"]):
        ex = cen["exact"]["p_lucky"][:, k] * m_of_d
        trend = ("is below 1e-12 at every d" if ex.max() < 1e-12 else
                 f"{'rises' if ex[-1] > ex[0] else 'falls'} from {ex[0]:.3g} (d={ds[0]}) to {ex[-1]:.3g} (d={ds[-1]})")
        out.append(f"ρ={rho}: exact expected lucky count per feature {trend}; "
                   f"ω1 = {exps[rho]['lucky']:.2f}; Monte Carlo found lucky neurons at "
                   f"{int((cen['mc']['p_lucky'][:, k, :].sum(-1) > 0).sum())} of {len(ds)} values of d")
    return out


def pr_b_report(cen: dict) -> list[str]:
    """Per ratio, the paper's (1 - p2)^(d-1) (set to 1 at L1967) at the ends of the d grid and the exact Pr[B_i] at the
    largest d."""
    ds, ex = cen["ds"], cen["exact"]
    return [f"rho={rho}: (1-p2)^(d-1) at d={ds[0]}: {ex['paper_B'][0, k]:.3g}, "
            f"at d={ds[-1]}: {ex['paper_B'][-1, k]:.3g}; "
            f"exact Pr[B_i] at d={ds[-1]}: {ex['B'][-1, k]:.3g}" for k, rho in enumerate(cen["rhos"])]


def pr_b_trend_report(cen: dict) -> list[str]:
    """From the computed curves: whether (1 - p2)^(d-1) falls with d towards 0 for every rho < 1 (the argument of
    book/inconsistencies.md, section 1) on this grid, and its range at rho = 1."""
    ds, ex, out = cen["ds"], cen["exact"], []
    imb = [k for k, rho in enumerate(cen["rhos"]) if rho < 1.0]
    if imb:
        falls = all(ex["paper_B"][-1, k] < ex["paper_B"][0, k] for k in imb)
        small = max(float(ex["paper_B"][-1, k]) for k in imb)
        out.append(f"Where the paper is inconsistent, §1: for every ρ < 1 on this grid, "
                   f"(1-p2)^(d-1) {'falls' if falls else 'does not always fall'} "
                   f"with d and is at most {small:.3g} at d={ds[-1]}: the argument "
                   f"{'stands' if falls and small < 0.5 else 'is not confirmed here'}.")
    for k in [k for k, rho in enumerate(cen["rhos"]) if rho >= 1.0]:
        out.append(f"at ρ=1, (1-p2)^(d-1) ranges "
                   f"{ex['paper_B'][:, k].min():.2f}–{ex['paper_B'][:, k].max():.2f} over d "
                   "(the paper uses 1).")
    return out
