"""Validated configuration dataclasses: one per experiment family, all built on SimConfig."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields
from typing import Any, Mapping


class ParameterError(ValueError):
    """A notebook parameter is outside its allowed range; the message names both."""


def check(name: str, value: Any, ok: bool, allowed: str) -> None:
    """Raise ParameterError naming `name`, its value and the allowed range unless `ok`."""
    if not ok:
        raise ParameterError(f"parameter {name}={value!r} is invalid: allowed {allowed}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_int(name: str, v: Any, lo: int, hi: int | None = None) -> None:
    """Integer in [lo, hi]."""
    rng = f"an integer in [{lo}, {hi if hi is not None else 'inf'}]"
    check(name, v, _is_int(v) and v >= lo and (hi is None or v <= hi), rng)


def check_float(name: str, v: Any, lo: float, hi: float | None = None,
                lo_open: bool = False, hi_open: bool = False) -> None:
    """Finite number in the interval [lo, hi] (ends open when asked)."""
    left, right = "(" if lo_open else "[", ")" if hi_open else "]"
    rng = f"a number in {left}{lo}, {hi if hi is not None else 'inf'}{right}"
    ok = _is_num(v) and (v > lo if lo_open else v >= lo)
    if ok and hi is not None:
        ok = v < hi if hi_open else v <= hi
    check(name, v, ok, rng)


def check_choice(name: str, v: Any, choices: tuple) -> None:
    """One of a fixed set of values."""
    check(name, v, v in choices, f"one of {choices}")


def check_grid(name: str, v: Any, item_check) -> None:
    """A non-empty list whose items each pass `item_check(name_of_item, item)`."""
    check(name, v, isinstance(v, (list, tuple)) and len(v) > 0, "a non-empty list")
    for k, item in enumerate(v):
        item_check(f"{name}[{k}]", item)


@dataclass(frozen=True)
class SimConfig:
    """Data model (§3.2), encoder (eq. 4), loss (eqs. 1-3), optimiser (Alg. 1) and replicates."""

    # --- data model: Assumptions 3.1-3.4, Definition 3.1 ---
    d: int = 20                 # number of features (dictionary atoms)
    d1: int = 100               # ambient dimension, d1 >= d
    L: int = 4                  # tokens per sample
    eps_max: float = 1.0        # frequency of majority features
    eps_min: float = 0.3        # frequency of minority features
    n_minority: int = 1         # how many features are minority (the last ones), two_level profile
    eps_profile: str = "two_level"  # "two_level" or "geometric" (eps_j log-spaced from eps_max to eps_min)
    p_scale: float = 1.0        # Pr(z_j^(l) != 0) = min(1, p_scale * eps_j * loglog d / d)  (Def. 3.1)
    mag_lo: float = 0.5         # |z_j| ~ U[mag_lo, mag_hi] (Assumption 3.2: bounded, symmetric)
    mag_hi: float = 1.0
    sigma_xi: float = 0.05      # token noise std (Assumption 3.3); NSR = sigma_xi^2 * d1 (App. A.2)
    n_pairs: int = 512          # K: training pairs (eq. 3); negatives are the other pairs' Y
    views: str = "paper"        # how a pair's two views are built (sim/views.py): "paper" (Assumption 3.4),
                                # "identical" copies or "random_mask" (Wen & Li Def. 2.3)
    # --- encoder: eq. (4) with W_Q = W_K = W_V = I frozen ---
    attention: str = "softmax"  # "softmax" (identity attention) or "mean" (exact token average)
    attn_scale: float = 0.0     # softmax scale s; 0 means 1/sqrt(d1)
    m: int = 50                 # neurons
    sigma0: float = 1e-3        # w_i ~ N(0, sigma0^2 I_d1) (Alg. 1 step 1)
    bias: str = "schedule"      # "schedule" (0 until T1, then prop. to ||w_i||) or "none" (b = 0 always)
    bias_coef: float = 1.0      # b_i(T1) = bias_coef * sqrt(2 log d / d) * ||w_i||  (Thm C.1(b,c))
    bias_ramp: float = 0.0      # extra per-step growth of b after T1, (1+bias_ramp)^(t-T1) (W eq. 70 uses eta/d)
    bias_ramp_max: float = 2.0  # cap on that growth factor (the uncapped ramp explodes, brief §1)
    t1_fraction: float = 0.9    # T1 = first step where this fraction of neurons satisfies eq. (34)
    t1_max: int = 0             # force T1 at this step if not reached (0: never force)
    # --- loss and optimiser: eqs. (1)-(3), Algorithm 1 ---
    tau: float = 1.0            # InfoNCE temperature
    tau_scaled: bool = True     # optimise tau * InfoNCE so the gradient is eq. (5)/(21) exactly (no 1/tau)
    lr: float = 0.5             # eta
    weight_decay: float = 1e-3  # lambda, decoupled: theta <- (1 - eta lambda) theta - eta g
    steps: int = 300            # full-batch gradient steps
    # --- Algorithm 1: forward magnitude pruning (prune.py) ---
    prune_alpha: float = 0.0    # fraction pruned, in [0, 1)
    prune_unit: str = "neuron"  # "neuron" (smallest ||w_i||) or "weight" (smallest |w_ik|)
    prune_backward: str = "faithful"  # "faithful" (eq. 5, full h and grad h) or "literal" (masked autograd)
    prune_start: int = 0        # first step at which the mask takes effect
    prune_every: int = 1        # recompute the mask every this many steps (1 = every iteration, L150)
    # --- replicates, seeds, bookkeeping ---
    R: int = 4                  # independent replicates trained in one batched computation
    seed: int = 0
    record_every: int = 10      # history is kept every this many steps (and at the last step)
    chunk: int = 0              # replicates per training chunk, to bound memory (0: auto, about 64 MiB per chunk)
    progress: bool = True       # tqdm progress bar

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Check every field; raise ParameterError naming the first bad one."""
        check_int("d", self.d, 3)
        check_int("d1", self.d1, 3)
        check("d1", self.d1, self.d1 >= self.d, f"an integer >= d (d={self.d})")
        check_int("L", self.L, 1, 256)
        check_float("eps_max", self.eps_max, 0.0, lo_open=True)
        check_float("eps_min", self.eps_min, 0.0, self.eps_max, lo_open=True)
        check_int("n_minority", self.n_minority, 0, self.d)
        check_choice("eps_profile", self.eps_profile, ("two_level", "geometric"))
        check_float("p_scale", self.p_scale, 0.0, lo_open=True)
        check_float("mag_lo", self.mag_lo, 0.0, lo_open=True)
        check_float("mag_hi", self.mag_hi, self.mag_lo)
        check_float("sigma_xi", self.sigma_xi, 0.0)
        check_int("n_pairs", self.n_pairs, 2)
        check_choice("views", self.views, ("paper", "identical", "random_mask"))
        check_choice("attention", self.attention, ("softmax", "mean"))
        check_float("attn_scale", self.attn_scale, 0.0)
        check_int("m", self.m, 1)
        check_float("sigma0", self.sigma0, 0.0, lo_open=True)
        check_choice("bias", self.bias, ("schedule", "none"))
        check_float("bias_coef", self.bias_coef, 0.0)
        check_float("bias_ramp", self.bias_ramp, 0.0, 1.0)
        check_float("bias_ramp_max", self.bias_ramp_max, 1.0)
        check_float("t1_fraction", self.t1_fraction, 0.0, 1.0, lo_open=True)
        check_int("t1_max", self.t1_max, 0)
        check_float("tau", self.tau, 0.0, lo_open=True)
        check("tau_scaled", self.tau_scaled, isinstance(self.tau_scaled, bool), "True or False")
        check_float("lr", self.lr, 0.0, lo_open=True)
        check_float("weight_decay", self.weight_decay, 0.0)
        check("weight_decay", self.weight_decay, self.lr * self.weight_decay < 1,
              f"a number with lr * weight_decay < 1 (lr={self.lr})")
        check_int("steps", self.steps, 1)
        check_float("prune_alpha", self.prune_alpha, 0.0, 1.0, hi_open=True)
        check_choice("prune_unit", self.prune_unit, ("neuron", "weight"))
        check_choice("prune_backward", self.prune_backward, ("faithful", "literal"))
        check_int("prune_start", self.prune_start, 0)
        check_int("prune_every", self.prune_every, 1)
        check_int("R", self.R, 1)
        check_int("seed", self.seed, 0, 2**31 - 1)
        check_int("record_every", self.record_every, 1)
        check_int("chunk", self.chunk, 0)
        check("progress", self.progress, isinstance(self.progress, bool), "True or False")

    # --- construction helpers ---
    @classmethod
    def field_names(cls) -> list[str]:
        """Names of all fields, in declaration order."""
        return [f.name for f in fields(cls)]

    @classmethod
    def from_namespace(cls, ns: Mapping[str, Any], **overrides):
        """Build from a namespace (a notebook's globals()), taking only this class's fields."""
        kw = {k: ns[k] for k in cls.field_names() if k in ns}
        kw.update(overrides)
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in kw.items()}
        return cls(**kw)

    def sim(self, **changes) -> "SimConfig":
        """The plain SimConfig part of an experiment config, with optional changes."""
        kw = {k: getattr(self, k) for k in SimConfig.field_names()}
        kw.update(changes)
        return SimConfig(**kw)

    def replace(self, **changes):
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """Plain dict of all fields (for provenance and caching)."""
        return dataclasses.asdict(self)

    # --- derived quantities ---
    @property
    def softmax_scale(self) -> float:
        """Softmax scale s of the frozen attention (default 1/sqrt(d1), brief §1)."""
        return self.attn_scale if self.attn_scale > 0 else 1.0 / math.sqrt(self.d1)

    @property
    def nsr(self) -> float:
        """Noise-to-signal ratio as App. A.2 defines it: sigma^2 * d1."""
        return self.sigma_xi ** 2 * self.d1
