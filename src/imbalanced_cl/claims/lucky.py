"""Notebook 02 (claim 2): lucky neurons. The census on a (d, eps ratio) grid (Def. B.1, Lemma B.2), T2 (eq. 61)
and Lemma 3.2 (eqs. 9-10) on trained runs.

Configs: CensusConfig (no training) and LuckyConfig (training) extend SimConfig with their grids;
bad grids raise ParameterError naming the parameter and its allowed range.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..sim.config import SimConfig
from ..validate import check_float, check_grid, check_int

from .census import census_of, check_d, check_ratio, gaussian_coef, thresholds
from .census_exact import _log_p_one_above, _p_one_above, p_ordinary, paper_p1, paper_p2, paper_pr_B


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


def mc_census_multi(d: int, rhos, gamma: float, n_neurons: int, R: int, seed: int = 0,
                    max_elems: int = 2 ** 22) -> list[dict]:
    """mc_census for several ratios on the same Gaussian draws (the ratio only moves the thresholds)."""
    block = max(1, min(n_neurons, max_elems // d))
    keys = ("n_ord", "n_lucky", "n_single", "n_B")
    acc = [{k: np.zeros(R) for k in keys} for _ in rhos]
    done, blk = 0, 0
    while done < n_neurons:
        nb = min(block, n_neurons - done)
        g = gaussian_coef(R, nb, d, seed, extra=blk)
        for q, rho in enumerate(rhos):
            c = census_of(g, d, rho, gamma)
            n_ord = c["Ni"]
            acc[q]["n_ord"] += n_ord.sum(-1).double().numpy()
            acc[q]["n_lucky"] += c["lucky"].sum((-1, -2)).double().numpy()
            acc[q]["n_single"] += (n_ord == 1).sum(-1).double().numpy()
            acc[q]["n_B"] += (n_ord.unsqueeze(-1) - c["ordinary"].long() == 0).sum((-1, -2)).double().numpy()
        done += nb
        blk += 1
    pairs = n_neurons * d
    return [{"p_ord": a["n_ord"] / pairs, "p_lucky": a["n_lucky"] / pairs, "Ni": a["n_ord"] / n_neurons,
             "single": a["n_single"] / n_neurons, "B": a["n_B"] / pairs, "hits_lucky": a["n_lucky"],
             "n_neurons": n_neurons} for a in acc]


def run_census(cfg: CensusConfig, progress: bool = False) -> dict:
    """Monte Carlo and exact census on the whole grid: arrays of shape (len(ds), len(ratios)[, R])."""
    ds, rhos = list(cfg.census_ds), list(cfg.census_ratios)
    shape = (len(ds), len(rhos))
    mc = {k: np.zeros(shape + (cfg.census_R,)) for k in ("p_ord", "p_lucky", "Ni", "single", "B")}
    hits = np.zeros(shape)
    neurons = np.zeros(len(ds), dtype=int)
    ex = {k: np.zeros(shape) for k in ("p_ord", "p_lucky", "Ni", "single", "B", "paper_B", "paper_p1",
                                        "paper_p2", "rse_lucky")}
    for i, d in enumerate(ds):
        # Monte-Carlo neurons: census_neurons, capped so that one replicate holds <= census_max_elems numbers
        neurons[i] = max(50, min(cfg.census_neurons, cfg.census_max_elems // d))
        rs = mc_census_multi(d, rhos, cfg.gamma, int(neurons[i]), cfg.census_R, seed=cfg.seed + 1000 * i)
        for k, rho in enumerate(rhos):
            r = rs[k]
            for key in mc:
                mc[key][i, k] = r[key]
            hits[i, k] = r["hits_lucky"].sum()
            a, b = thresholds(d, rho, cfg.gamma)
            ex["p_ord"][i, k] = p_ordinary(d, rho, cfg.gamma)
            ex["Ni"][i, k] = d * ex["p_ord"][i, k]
            lp, rse = _log_p_one_above(d, a, b, n=cfg.exact_samples)
            ex["p_lucky"][i, k], ex["rse_lucky"][i, k] = math.exp(lp), rse
            ex["single"][i, k] = d * _p_one_above(d, b, b, n=cfg.exact_samples)
            ex["B"][i, k] = _p_one_above(d, 0.0, b, n=cfg.exact_samples)
            ex["paper_B"][i, k] = paper_pr_B(d, rho, cfg.gamma)
            ex["paper_p1"][i, k] = paper_p1(d, rho, cfg.gamma)
            ex["paper_p2"][i, k] = paper_p2(d, rho, cfg.gamma)
            if progress:
                print(f"d={d} rho={rho} done", flush=True)
    m = np.array([[float(d) ** cfg.C_m] * len(rhos) for d in ds])
    return {"ds": np.array(ds), "rhos": np.array(rhos), "mc": mc, "exact": ex, "m": m, "hits_lucky": hits,
            "neurons": neurons}


@dataclass(frozen=True)
class LuckyConfig(SimConfig):
    """Notebook 02: census grid (see census.CensusConfig), training grid over eps_max, workshop figure."""

    # notebook 02's model (overrides of SimConfig)
    m: int = 100                     # neurons of the training runs
    eps_min: float = 0.8             # minority frequency (the lucky-neuron regime needs a ratio near 1, brief §6.1)
    n_minority: int = 10             # how many features are minority (the last ones)
    record_every: int = 1            # history every step (T2 detection needs it)
    progress: bool = False           # tqdm progress bar
    census_ds: tuple = (10, 30, 100, 300, 1000, 3000, 10000)
    census_ratios: tuple = (1.0, 0.8, 0.6, 0.5)
    gamma: float = 0.1
    C_m: float = 2.0
    census_neurons: int = 20000
    census_max_elems: int = 2000000
    census_R: int = 4
    exact_samples: int = 4000
    train_eps_max: tuple = (0.5, 1.0, 2.0)   # eps_max grid for T2 - T1 (eps_min = eps_max * eps_min/eps_max of the base)
    t2_factor: float = 0.0    # T2 = first step with max_i ||w_i||^2 >= t2_factor ||w_i(T1)||^2 (eq. 61); 0 means d
    lemma_C: float = 3.0      # the O(1) constant of eq. (10) used to judge it
    lemma_m: int = 1000          # neurons in the Lemma 3.2 run (0: m); lucky pairs are rare, so more neurons, more cases
    lemma_steps: int = 150      # steps of the Lemma 3.2 run (0: steps); it must reach T2
    fig_m: int = 30           # workshop Figure 1 (W132): m = 30, d = 9, 5 majority + 4 minority
    fig_d: int = 9
    fig_minority: int = 4
    fig_neurons: int = 13
    fig_steps: int = 1500
    fig_prune_alpha: float = 0.2

    def validate(self) -> None:
        super().validate()
        CensusConfig(**{k: getattr(self, k) for k in CensusConfig.__dataclass_fields__})
        check_grid("train_eps_max", self.train_eps_max, lambda n, v: check_float(n, v, 0.0, lo_open=True))
        check_float("t2_factor", self.t2_factor, 0.0)
        check_float("lemma_C", self.lemma_C, 1.0)
        check_int("lemma_m", self.lemma_m, 0)
        check_int("lemma_steps", self.lemma_steps, 0)
        check_int("fig_m", self.fig_m, 1)
        check_int("fig_d", self.fig_d, 3)
        check_int("fig_minority", self.fig_minority, 0, self.fig_d)
        check_int("fig_neurons", self.fig_neurons, 1, self.fig_m)
        check_int("fig_steps", self.fig_steps, 1)
        check_float("fig_prune_alpha", self.fig_prune_alpha, 0.0, 1.0, hi_open=True)

    def census(self) -> CensusConfig:
        """The census part as a CensusConfig."""
        return CensusConfig(**{k: getattr(self, k) for k in CensusConfig.__dataclass_fields__})

    @property
    def ratio(self) -> float:
        return self.eps_min / self.eps_max


def detect_t2(run, factor: float = 0.0) -> np.ndarray:
    """T2 per replicate (eq. 61): first recorded step t >= T1 at which some neuron has
    ||w_i(t)||^2 >= factor * ||w_i(T1)||^2 (factor 0 means d, the paper's rule). -1 if never.
    Needs a history recorded at every step up to T2 (record_every = 1) for exact times."""
    factor = factor or run.cfg.d
    steps = run.history.get("steps").numpy()
    n2 = run.history.get("norm2").numpy()            # (T, R, m)
    out = np.full(n2.shape[1], -1)
    for r in range(n2.shape[1]):
        T1 = int(run.T1[r])
        if T1 < 0:
            continue
        k1 = int(np.searchsorted(steps, T1))
        if k1 >= len(steps):
            continue
        grow = n2[k1:, r, :] / n2[k1, r, :][None, :]
        hit = np.nonzero((grow >= factor).any(-1))[0]
        if hit.size:
            out[r] = int(steps[k1 + hit[0]])
    return out


def coef_at(run, step: int, r: int) -> np.ndarray:
    """<w_i, M_j> (m, d) of replicate r at the recorded step nearest to `step`."""
    steps = run.history.get("steps").numpy()
    k = int(np.argmin(np.abs(steps - step)))
    return run.history.get("coef")[k, r].numpy()


def norm2_at(run, step: int, r: int) -> np.ndarray:
    steps = run.history.get("steps").numpy()
    k = int(np.argmin(np.abs(steps - step)))
    return run.history.get("norm2")[k, r].numpy()


def lemma32(run, T2: np.ndarray, gamma: float) -> dict:
    """Lemma 3.2 at T2 for each replicate: (a) lucky i in M_j*: ratio |<w_i(T2),M_j>|^2 / (2 eps_j/eps_max ||w_i(T1)||^2)
    (>= 1 claimed); (b) max over ordinary i' in M_j of |<w_i',M_j>| / max over lucky i of |<w_i,M_j>| (O(1) claimed).
    Also whether the neuron luckiest at init (largest u_ij^2) is the feature's top neuron at T2."""
    from ..sim.data import eps_vector
    cfg = run.cfg
    rho = cfg.eps_min / cfg.eps_max
    eps = eps_vector(cfg).numpy()
    g0 = (run.W0 @ run.M)
    cen = census_of(g0, cfg.d, rho, gamma)
    a_ratios, b_ratios, top_hit, top_hit_min = [], [], [], []
    for r in range(g0.shape[0]):
        if T2[r] < 0:
            continue
        cT2 = np.abs(coef_at(run, int(T2[r]), r))
        n1 = norm2_at(run, int(run.T1[r]), r)
        lucky, ordi = cen["lucky"][r].numpy(), cen["ordinary"][r].numpy()
        for i, j in zip(*np.nonzero(lucky)):
            a_ratios.append(cT2[i, j] ** 2 / (2 * eps[j] / cfg.eps_max * n1[i]))
        for j in range(cfg.d):
            li = np.nonzero(lucky[:, j])[0]
            oi = np.nonzero(ordi[:, j])[0]
            if li.size and oi.size:
                b_ratios.append(cT2[oi, j].max() / cT2[li, j].max())
        u2 = (g0[r] ** 2 / (g0[r] ** 2).sum(-1, keepdim=True)).numpy()
        best0 = u2.argmax(0)                     # luckiest neuron at init, per feature
        bestT2 = cT2.argmax(0)                   # top neuron at T2, per feature
        hit = best0 == bestT2
        mino = np.arange(cfg.d) >= cfg.d - cfg.n_minority   # by position, also when rho = 1
        top_hit.append(hit[~mino].mean())
        if mino.any():
            top_hit_min.append(hit[mino].mean())
    return {"a_ratio": np.array(a_ratios), "b_ratio": np.array(b_ratios), "top_hit_major": np.array(top_hit),
            "top_hit_minor": np.array(top_hit_min), "chance": 1.0 / cfg.m}
