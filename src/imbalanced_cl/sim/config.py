"""SimConfig: the paper's model, data and training, as parts (data, encoder, training, prune, regime, run) that
every experiment config composes with its own protocol and judging parts."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import torch

from ..parts import Composed
from ..validate import ParameterError, check, check_choice, check_float, check_int


FORCE_ENV = "IMBALANCED_CL_FORCE"   # set: run sizes the memory estimate refuses (the user knows better)


# When the bias switches on (the paper fixes b = 0 up to T1, Lemma F.3, and sizes T1 only up to Theta).
BIAS_ONSETS = ("crossing", "eq33", "workshop")


# Weight decays named by where they sit in the proof's range lambda in [d^-1.49, d^-1.01] (App. E.3): the bottom, the
# geometric middle and the top.
LAMBDA_EXPONENTS = {"bottom": -1.49, "mid": -1.25, "top": -1.01}


def lambda_at(rule: str, d: int) -> float:
    """The weight decay d^e that `rule` ("bottom", "mid" or "top" of [d^-1.49, d^-1.01], App. E.3) names at d."""
    return float(d) ** LAMBDA_EXPONENTS[rule]


@dataclass(frozen=True)
class DataModel:
    """The data model of §3.2 (Assumptions 3.1-3.4, Definition 3.1) and how pairs are drawn: d, d1, L, eps_max, eps_min,
    n_minority, eps_profile, p_scale, mag_lo, mag_hi, sigma_xi, n_pairs, sampling, views."""

    ROLE: ClassVar[str] = "model"
    d: int = 20                 # number of features (dictionary atoms)
    d1: int = 100               # ambient dimension, d1 >= d
    L: int = 4                  # tokens per sample
    eps_max: float = 1.0        # frequency of majority features
    eps_min: float = 0.3        # frequency of minority features
    n_minority: int = 1         # how many features are minority (the last ones), two_level profile
    eps_profile: str = "two_level"  # "two_level" or "geometric" (eps_j log-spaced from eps_max to eps_min)
    p_scale: float = 1.0        # scale of the sampling rate: Pr(z_j^(l) != 0) = min(1, p_scale * eps_j * loglog d / d)
                                # (Def. 3.1)
    mag_lo: float = 0.5         # |z_j| ~ U[mag_lo, mag_hi] (Assumption 3.2: bounded, symmetric)
    mag_hi: float = 1.0
    sigma_xi: float = 0.05      # token noise std (Assumption 3.3); NSR = sigma_xi^2 * d1 (App. A.2)
    n_pairs: int = 512          # K: pairs per step (eq. 3); negatives are the other pairs' Y
    sampling: str = "fresh"     # "fresh": K new pairs every step (online SGD, the population regime of Lemma B.1);
                                # "fixed": one set reused
    views: str = "paper"        # how the two views of a pair are built (sim/views.py):
                                # "paper" (Assumption 3.4), "identical" copies, "random_mask" (Wen & Li Def. 2.3)

    def validate(self, cfg) -> None:
        """The data model's ranges (d1 >= d, eps_min <= eps_max, mag_lo <= mag_hi)."""
        check_int("d", self.d, 3)
        check_int("d1", self.d1, 3)
        check("d1", self.d1, self.d1 >= self.d, "an integer >= d", given=f"d={self.d}")
        check_int("L", self.L, 1, 256)
        check_float("eps_max", self.eps_max, 0.0, lo_open=True)
        check_float("eps_min", self.eps_min, 0.0, self.eps_max, lo_open=True, given=f"eps_max={self.eps_max}")
        check_int("n_minority", self.n_minority, 0, self.d, given=f"d={self.d}")
        check_choice("eps_profile", self.eps_profile, ("two_level", "geometric"))
        check_float("p_scale", self.p_scale, 0.0, lo_open=True)
        check_float("mag_lo", self.mag_lo, 0.0, lo_open=True)
        check_float("mag_hi", self.mag_hi, self.mag_lo, given=f"mag_lo={self.mag_lo}")
        check_float("sigma_xi", self.sigma_xi, 0.0)
        check_int("n_pairs", self.n_pairs, 2)
        check_choice("sampling", self.sampling, ("fresh", "fixed"))
        check_choice("views", self.views, ("paper", "identical", "random_mask"))


@dataclass(frozen=True)
class Encoder:
    """The encoder of eq. (4) with W_Q = W_K = W_V = I frozen, and its bias schedule (Theorem C.1): attention,
    attn_scale, m, sigma0, bias, bias_coef, bias_token_factor, bias_ramp, bias_ramp_max, t1_fraction, t1_max,
    bias_onset."""

    ROLE: ClassVar[str] = "model"
    attention: str = "softmax"  # "softmax" (identity attention) or "mean" (exact token average)
    attn_scale: float = 0.0     # softmax scale s; 0 means 1/sqrt(d1)
    m: int = 50                 # neurons
    sigma0: float = 1e-3        # w_i ~ N(0, sigma0^2 I_d1) (Alg. 1 step 1)
    bias: str = "schedule"      # "schedule" (0 until T1, then prop. to ||w_i||) or "none" (b = 0 always)
    bias_coef: float = 1.0      # scale of the bias at T1: b_i(T1) = bias_coef * a * sqrt(2 log d / d) * ||w_i||
                                # (Thm C.1(b,c)); a: bias_token_factor
    bias_token_factor: bool = True  # use the token factor a in the bias threshold (eq. 98);
                                    # a = E|z|/L converts it into pre-activation units; False: a = 1
    bias_ramp: float = 0.0      # extra per-step growth of b after T1, (1+bias_ramp)^(t-T1) (W eq. 70 uses eta/d)
    bias_ramp_max: float = 2.0  # cap on that growth factor (the uncapped ramp explodes)
    t1_fraction: float = 0.9    # share of neurons that must satisfy eq. (34): T1 is the first step where they do
    t1_max: int = 0             # force T1 at this step if not reached (0: never force)
    bias_onset: str = "crossing"  # when the bias switches on, a choice the paper leaves open
                                  # (b = 0 up to T1, Lemma F.3): "crossing" (at the measured eq. (34) T1),
                                  # "eq33" (eq. (33)'s T1 with unit constants),
                                  # "workshop" (the workshop version's T1 with unit constants)

    def validate(self, cfg) -> None:
        """The encoder's and the bias schedule's ranges."""
        check_choice("attention", self.attention, ("softmax", "mean"))
        check_float("attn_scale", self.attn_scale, 0.0)
        check_int("m", self.m, 1)
        check_float("sigma0", self.sigma0, 0.0, lo_open=True)
        check_choice("bias", self.bias, ("schedule", "none"))
        check_float("bias_coef", self.bias_coef, 0.0)
        check("bias_token_factor", self.bias_token_factor, isinstance(self.bias_token_factor, bool), "True or False")
        check_float("bias_ramp", self.bias_ramp, 0.0, 1.0)
        check_float("bias_ramp_max", self.bias_ramp_max, 1.0)
        check_float("t1_fraction", self.t1_fraction, 0.0, 1.0, lo_open=True)
        check_int("t1_max", self.t1_max, 0)
        check_choice("bias_onset", self.bias_onset, BIAS_ONSETS)


@dataclass(frozen=True)
class Training:
    """The loss and optimiser of eqs. (1)-(3) and Algorithm 1, and the replicates: tau, tau_scaled, lr, weight_decay,
    lambda_rule, steps, R, seed, record_every."""

    ROLE: ClassVar[str] = "model"
    tau: float = 1.0            # InfoNCE temperature
    tau_scaled: bool = True     # optimise tau * InfoNCE so the gradient is eq. (5)/(21) exactly (no 1/tau)
    lr: float = 0.5             # eta
    weight_decay: float = 1e-3  # lambda, decoupled: theta <- (1 - eta lambda) theta - eta g;
                                # lambda_rule other than "value" sets it from d
    lambda_rule: str = "value"  # how lambda is set: "value": lambda = weight_decay as given;
                                # "bottom" | "mid" | "top": lambda = d^-1.49 | d^-1.25 | d^-1.01,
                                # in the proof's range (App. E.3)
    steps: int = 300            # training steps, each on K pairs (fresh every step, or one fixed set: sampling)
    R: int = 4                  # independent replicates trained in one batched computation
    seed: int = 0
    record_every: int = 10      # history is kept every this many steps (and at the last step)

    def validate(self, cfg) -> None:
        """The optimiser's ranges (lr * weight_decay < 1: the decay keeps the weights' sign)."""
        check_float("tau", self.tau, 0.0, lo_open=True)
        check("tau_scaled", self.tau_scaled, isinstance(self.tau_scaled, bool), "True or False")
        check_float("lr", self.lr, 0.0, lo_open=True)
        check_float("weight_decay", self.weight_decay, 0.0)
        check("weight_decay", self.weight_decay, self.lr * self.weight_decay < 1,
              "a number with lr * weight_decay < 1", given=f"lr={self.lr}")
        check_choice("lambda_rule", self.lambda_rule, ("value",) + tuple(LAMBDA_EXPONENTS))
        check_int("steps", self.steps, 1)
        check_int("R", self.R, 1)
        check_int("seed", self.seed, 0, 2**31 - 1)
        check_int("record_every", self.record_every, 1)


@dataclass(frozen=True)
class MagnitudePruning:
    """Algorithm 1's forward magnitude pruning (sim/prune.py): prune_alpha, prune_unit, prune_backward, prune_start,
    prune_every, prune_mask, prune_schedule."""

    ROLE: ClassVar[str] = "model"
    prune_alpha: float = 0.0    # fraction pruned, in [0, 1)
    prune_unit: str = "neuron"  # "neuron" (smallest ||w_i||) or "weight" (smallest |w_ik|)
    prune_backward: str = "faithful"  # "faithful" (eq. 5, full h and grad h) or "literal" (masked autograd)
    prune_start: int = 0        # first step at which the mask takes effect
    prune_every: int = 1        # recompute the mask every this many steps (1 = every iteration, as Algorithm 1 states)
    prune_mask: str = "magnitude"     # "magnitude" (Alg. 1: smallest units) or "random" (a control, beyond the paper)
    prune_schedule: str = "dynamic"   # "dynamic" (recomputed every prune_every steps)
                                      # or "static" (fixed at prune_start)

    def validate(self, cfg) -> None:
        """The pruning rule's ranges."""
        check_float("prune_alpha", self.prune_alpha, 0.0, 1.0, hi_open=True)
        check_choice("prune_unit", self.prune_unit, ("neuron", "weight"))
        check_choice("prune_backward", self.prune_backward, ("faithful", "literal"))
        check_int("prune_start", self.prune_start, 0)
        check_int("prune_every", self.prune_every, 1)
        check_choice("prune_mask", self.prune_mask, ("magnitude", "random"))
        check_choice("prune_schedule", self.prune_schedule, ("dynamic", "static"))


@dataclass(frozen=True)
class RegimeJudging:
    """The regime premises of sim/regime.py, fixed before any run (book/methods.md): regime_share_min,
    regime_grad_poly, regime_loss_gap_max, and pop_batches, how the population gradient is measured."""

    ROLE: ClassVar[str] = "judging"
    regime_share_min: float = 0.9    # feature-span share at the end that counts as Theorem 3.1's regime
                                     # (beta bound: share -> 1)
    regime_grad_poly: float = 1.0    # Lemma B.1: the population regime needs ||g_K - g_pop|| <= ||w|| / d1^p;
                                     # p = 1 is the weakest poly(d1)
    regime_loss_gap_max: float = 0.05  # largest relative gap (held-out - train) / held-out InfoNCE without memorisation
    pop_batches: int = 16         # held-out batches of K pairs averaged into the population gradient

    def validate(self, cfg) -> None:
        """The regime thresholds' ranges."""
        check_float("regime_share_min", self.regime_share_min, 0.0, 1.0)
        check_float("regime_grad_poly", self.regime_grad_poly, 0.0, lo_open=True)
        check_float("regime_loss_gap_max", self.regime_loss_gap_max, 0.0, lo_open=True)
        check_int("pop_batches", self.pop_batches, 1)


@dataclass(frozen=True)
class RunOptions:
    """Where and how a run goes, never what it measures (validate.RUN_OPTIONS): device, data_device, tf32, chunk,
    progress."""

    ROLE: ClassVar[str] = "run"
    device: str = "auto"        # "auto" (cuda when available), "cpu" or "cuda"
    data_device: str = "auto"   # where pairs are drawn: "auto" (on the run's device),
                                # "cpu" (on the CPU and copied: the CPU's numbers on every device, slow on a GPU),
                                # "run" (on the run's device); a GPU's generator draws the same law with other numbers
    tf32: bool = False          # allow TF32 matmuls on CUDA (faster, ~1e-3 relative error);
                                # exact float32 is what the theory checks need
    chunk: int = 0              # replicates per training chunk, to bound memory (0: auto, about 64 MiB per chunk)
    progress: bool = True       # tqdm progress bar

    def validate(self, cfg) -> None:
        """The run options' choices; device='cuda' without a CUDA device is refused before any compute."""
        check_choice("device", self.device, ("auto", "cpu", "cuda"))
        check_choice("data_device", self.data_device, ("auto", "cpu", "run"))
        check("tf32", self.tf32, isinstance(self.tf32, bool), "True or False")
        check_int("chunk", self.chunk, 0)
        check("progress", self.progress, isinstance(self.progress, bool), "True or False")
        if self.device == "cuda" and not torch.cuda.is_available():    # refuse before any compute, in one line
            raise ParameterError("parameter device='cuda' is invalid here: no CUDA device is available; "
                                 "allowed 'auto' or 'cpu'")


@dataclass(frozen=True)
class Workers:
    """How a notebook that trains independent runs side by side spreads them (never what it measures): threads,
    workers."""

    ROLE: ClassVar[str] = "run"
    threads: int = 0            # torch threads for the notebook (0: torch's default); results do not depend on it
    workers: int = 0            # processes for independent runs, one thread each
                                # (0: one per torch thread on the CPU, one on CUDA); results do not depend on it

    def validate(self, cfg) -> None:
        """The pool's sizes."""
        check_int("threads", self.threads, 0, 256)
        check_int("workers", self.workers, 0, 256)


# The model's parts, which SimConfig is and every experiment config composes with its protocol and judging parts.
MODEL_PARTS = {"data": DataModel, "encoder": Encoder, "training": Training, "prune": MagnitudePruning,
               "regime": RegimeJudging, "run": RunOptions}


class ModelConfig(Composed):
    """What every config of the paper's model shares: the lambda rule, the size check of from_namespace, the plain
    SimConfig part (sim) and the derived quantities. It holds no fields: its subclasses compose MODEL_PARTS."""

    @classmethod
    def _derive(cls, flat: dict) -> dict:
        """lambda_rule other than "value" sets the weight decay from d (a sweep over d keeps it in the proof's range
        at every d)."""
        rule = flat.get("lambda_rule", "value")
        if rule != "value" and rule in LAMBDA_EXPONENTS and isinstance(flat.get("d"), int):
            flat["weight_decay"] = lambda_at(rule, flat["d"])
        return flat

    @classmethod
    def from_namespace(cls, ns: Mapping[str, Any], strict: bool = True, check_size: bool = True, **overrides):
        """Build from a notebook's globals(): its fields are the parameters; with strict, any other plain-data name
        (a misspelt or unknown `papermill -p`) is a ParameterError that suggests the nearest parameter.

        With check_size, sizes whose estimated peak memory (sim/memory.py) exceeds what this machine has are a
        ParameterError too, before anything is allocated, unless $IMBALANCED_CL_FORCE is set (the book runner's
        --force sets it for its kernels, and does its own check before it starts them).
        """
        cfg = super().from_namespace(ns, strict, **overrides)
        if check_size and not os.environ.get(FORCE_ENV):
            from .memory import size_problem
            why = size_problem(cfg)
            if why:
                raise ParameterError(why.replace("--force", f"{FORCE_ENV}=1 (papermill) or --force (the runner)"))
        from .runtime import ESTIMATED_ENV, LONG_RUN_S, estimate
        if check_size and not os.environ.get(ESTIMATED_ENV):   # a long run says so before it starts (never refused)
            est = estimate(cfg)
            if est is not None and est.seconds > LONG_RUN_S:
                print(f"Expect {est.line()}.", flush=True)
        return cfg

    def workload(self) -> list[tuple["SimConfig", int]] | None:
        """(config, steps) of every training this config's notebook runs, for the time estimate (sim/runtime.py):
        a plain SimConfig trains once for `steps`; an experiment config that runs other trainings says which, and
        one that does not declare them (None) gets no estimate."""
        return None

    def sim(self, **changes) -> "SimConfig":
        """The plain SimConfig part of an experiment config, with optional changes."""
        return SimConfig(**{**{k: getattr(self, k) for k in SimConfig.field_names()}, **changes})

    # --- derived quantities ---
    @property
    def softmax_scale(self) -> float:
        """Softmax scale s of the frozen attention (default 1/sqrt(d1): the paper leaves it unstated)."""
        return self.attn_scale if self.attn_scale > 0 else 1.0 / math.sqrt(self.d1)

    @property
    def torch_device(self) -> torch.device:
        """The device every tensor of a run lives on ("auto": CUDA when present, else the CPU)."""
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ParameterError("parameter device='cuda' is invalid here: no CUDA device is available; "
                                 "allowed 'auto' or 'cpu'")
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    @property
    def t1_onset_step(self) -> int:
        """The step at which the bias onset puts T1 (-1 for "crossing": measured per run by eq. (34)).

        eq. (33): T1 = Theta(d1 log d / (eta loglog d)); the workshop version (its eq. (40)): Theta(d log d / (eta
        loglog d)); both taken with unit constants, the one reading the paper does not rule out.
        """
        if self.bias_onset == "crossing":
            return -1
        size = self.d1 if self.bias_onset == "eq33" else self.d
        return math.ceil(size * math.log(self.d) / (self.lr * math.log(math.log(self.d))))

    @property
    def nsr(self) -> float:
        """Noise-to-signal ratio as App. A.2 defines it: sigma^2 * d1."""
        return self.sigma_xi ** 2 * self.d1


class SimConfig(ModelConfig):
    """Data model (§3.2), encoder (eq. 4), loss (eqs. 1-3), optimiser (Alg. 1), replicates, the regime thresholds and
    the run options: the parts MODEL_PARTS lists, one training run."""

    PARTS = MODEL_PARTS

    def workload(self) -> list[tuple["SimConfig", int]]:
        """One training of `steps`."""
        return [(self, self.steps)]
