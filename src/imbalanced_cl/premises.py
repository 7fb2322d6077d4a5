"""Every condition the book checks, classified once: a premise (what a theorem or its proof assumes) or a prediction
(what a theorem, lemma or remark concludes), each with its source in the paper.

A verdict row names the premises it depends on by id (verdict.Verdict.depends); only a premise can make a row "not
comparable", a prediction never does: a prediction is judged as a row of its own (holds / does not hold / ...).
The methods page shows this table (book/pages/methods.py). Line numbers of our text copy are in comments only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

PREMISE, PREDICTION = "premise", "prediction"
KINDS = (PREMISE, PREDICTION)
ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")     # stable snake_case ids
SCOPE = "__"     # a premise row checked once per case carries a scoped id: "<premise id>__<case>" (scoped)


@dataclass(frozen=True)
class Condition:
    """One condition the book checks: its id, premise or prediction, where the paper states it, and what it says."""

    id: str              # stable snake_case id, used by Verdict.id and Verdict.depends
    kind: str            # PREMISE or PREDICTION
    source: str          # theorem, lemma, remark or equation of the paper
    statement: str       # one line
    needed_by: str = ""  # premises: the theorem (or lemma) whose statement or proof needs it
    required: bool = True  # premises: False for one the book reports but does not hold runs to (it follows App. A.2)

    def __post_init__(self):
        if not ID_PATTERN.match(self.id):
            raise ValueError(f"condition id {self.id!r} is not snake_case")
        if self.kind not in KINDS:
            raise ValueError(f"condition {self.id}: kind must be one of {KINDS}, got {self.kind!r}")


CONDITIONS: tuple[Condition, ...] = (
    # --- premises: Theorem 3.1's conditions (stated in the theorem, L277, or chosen in its proof) ---
    Condition("lambda_range", PREMISE, "proof of Thm 3.1 (App. C-E)", "weight decay λ ∈ [d^-1.49, d^-1.01]",
              "Thm 3.1, Thm 3.2"),                                             # L1266
    Condition("tau_polylog", PREMISE, "Thm 3.1", "temperature τ = polylog(d)", "Thm 3.1, Thm 3.2"),   # L277
    Condition("eta_poly", PREMISE, "Thm 3.1", "learning rate η = 1/poly(d)", "Thm 3.1, Thm 3.2"),
    Condition("m_poly", PREMISE, "Thm 3.1, Lemma B.2", "m = d^C_m neurons", "Lemma B.2, Thm 3.1, Thm 3.2"),
    Condition("k_poly", PREMISE, "Lemma B.1",
              "K = poly(d1) pairs per step, so that the K-pair gradient tracks the population gradient within "
              "||w||/d1^p; the exponent p is the book's choice (regime_grad_poly), the paper leaves poly(d1) open",
              "Lemma B.1, hence Lemma 3.1, Thm 3.1, Thm 3.2"),                  # L519
    Condition("no_memorisation", PREMISE, "Lemma B.1 (population loss)",
              "the training loss is the population loss: no pair is memorised (held-out InfoNCE = training InfoNCE)",
              "Lemma B.1"),
    Condition("step_window", PREMISE, "Thm 3.1", "steps T ∈ [d^1.01/η, d^1.99/η]", "Thm 3.1"),       # L277
    Condition("noise_scale", PREMISE, "Assumption 3.3", "noise σ_ξ² = Θ(√(log d)/d)", "Thm 3.1",
              required=False),     # the book follows App. A.2's σ; reported, never a gate
    Condition("convergence", PREMISE, "Thm 3.1 eq. (11); App. F (l'_p = 1 − Θ(1/τ))",
              "the vanilla network has converged: average loss o(1), well below ln K, and l'_p near 1 − Θ(1/τ)",
              "Thm 3.1 (its conclusions at convergence), Thm 3.2 / Thm F.1 (pruning starts there)"),   # L1768
    Condition("stage_reached", PREMISE, "Lemmas 3.1-3.2, Thm 3.1",
              "the run reached the stage the statement is about (T1, T2 or Stage 3), and its measurement stopped "
              "moving", "Lemma 3.1, Lemma 3.2, Thm 3.1"),
    Condition("minority_growth", PREMISE, "Lemma 3.1, eq. (7); proof of Thm 3.1",
              "a minority coefficient grows in Stage 1: its gain κ_min exceeds λ", "Thm 3.1, Thm 3.2"),
    Condition("sparse_data", PREMISE, "Def. 3.1", "the data are sparse: each feature is active in few tokens",
              "Thm 3.1"),
    Condition("lucky_exist", PREMISE, "Def. B.1, Lemma B.2(c), Thm 3.2(a)",
              "minority lucky neurons exist at initialisation (|M*_j*| ≥ 1): Thm 3.2(a) is about them",
              "Thm 3.2"),
    Condition("prune_from_t4", PREMISE, "Thm F.1; App. F.4",
              "pruning starts at T4 from the converged vanilla network and runs for the paper's "
              "T = ((ε_max/ε_j*) − 1) d / (η α ε_j*² C_z loglog d) steps", "Thm 3.2 / Thm F.1"),   # L1522, L1644
    Condition("alpha_bound", PREMISE, "Remark 1 (first assumption)", "α·m ≤ |M*_j*| (strict)", "Thm 3.2"),  # L330
    Condition("alpha_bound_extended", PREMISE, "Remark 1 (its extension)",
              "α·m ≤ the number of neurons with j* ∈ N_i (the extended bound)", "Thm 3.2 (extended)"),
    Condition("null_below_band", PREMISE, "the book's test design (no paper source)",
              "the untrained weights (the null) do not already meet the band, so a 'holds' is a margin over the null",
              "any 'for all' bound judged against its null"),
    Condition("baseline_reproduced", PREMISE, "Table 2 (the SimCLR row)",
              "our SimCLR baseline is within the band of the paper's SimCLR number, so gains are comparable",
              "Table 2's comparison"),
    Condition("companion_bias", PREMISE, "Wen & Li 2021 (the bias schedule)",  # their L182
              "the bias schedule switched on in every replicate",
              "Wen & Li 2021, Thm 3.4"),
    # --- predictions: what a theorem, lemma or remark concludes ---
    Condition("feature_span", PREDICTION, "Thm 3.1, β bound (eq. 13)",
              "the weights lie in the feature span: ||M Mᵀ w||²/||w||² → 1"),
    Condition("minority_dominant_exist", PREDICTION, "Thm 3.1 (≥ m d^-(ε_max/ε_min)² neurons with N_i = {j})",
              "minority-dominant neurons exist at convergence"),
    Condition("minority_smallest", PREDICTION, "Remark 2; Algorithm 1's paragraph",
              "the minority-dominant neurons are the smallest, so magnitude pruning removes them"),
    Condition("mask_share", PREDICTION, "Remark 1, Thm F.1 (P ⊆ M*_j*)",
              "the magnitude mask's share on minority-aligned neurons is ≈ 1"),
)

BY_ID: dict[str, Condition] = {c.id: c for c in CONDITIONS}
PREMISES = tuple(c.id for c in CONDITIONS if c.kind == PREMISE)
PREDICTIONS = tuple(c.id for c in CONDITIONS if c.kind == PREDICTION)
assert len(BY_ID) == len(CONDITIONS), "duplicate condition id"

# A few words per condition, for tables and answers that have no room for the statement
NAMES = {"lambda_range": "λ in the proof's range", "tau_polylog": "τ = polylog(d)", "eta_poly": "η = 1/poly(d)",
         "m_poly": "m = d^C_m", "k_poly": "Lemma B.1's gradient bound (K = poly(d1))",
         "no_memorisation": "no memorised pairs", "step_window": "Theorem 3.1's step window",
         "noise_scale": "Assumption 3.3's noise scale", "convergence": "a converged network",
         "stage_reached": "the stage reached", "minority_growth": "minority growth in Stage 1",
         "sparse_data": "sparse data", "lucky_exist": "minority lucky neurons exist",
         "prune_from_t4": "pruning from T4 for the paper's T steps", "alpha_bound": "α m ≤ |M*_j*|",
         "alpha_bound_extended": "α m ≤ neurons with j* ∈ N_i", "null_below_band": "a margin over the untrained null",
         "baseline_reproduced": "our SimCLR baseline near the paper's", "companion_bias": "the bias switched on",
         "feature_span": "weights in the feature span", "minority_dominant_exist": "minority-dominant neurons exist",
         "minority_smallest": "minority neurons are the smallest", "mask_share": "the mask's minority share"}
assert set(NAMES) == set(BY_ID), "every condition needs a short name"


def name(cid: str) -> str:
    """A few words naming condition `cid` (NAMES); a scoped id is named by its premise."""
    return NAMES[condition(cid).id]


def scoped(premise: str, case: str) -> str:
    """The id of a premise row that checks `premise` for one case of a table only (one ρ, one bound's null, one
    stage): "<premise>__<case>". Rows that need the premise for that case depend on this id."""
    if not is_premise(premise):
        raise ValueError(f"scoped premise id: {premise!r} is no premise (premises.CONDITIONS)")
    out = f"{premise}{SCOPE}{case}"
    if not case or not ID_PATTERN.match(out) or SCOPE in case:
        raise ValueError(f"scoped premise id {out!r}: the case must be non-empty snake_case without {SCOPE!r}")
    return out


def premise_of(cid: str) -> str:
    """The condition id of a row id or a depends entry: the id itself, or the premise a scoped id checks."""
    return cid.split(SCOPE, 1)[0]


# The regime rows' keys (claims/premise_rows.ROWS, on sim/regime.py's measurements) and the condition each checks
REGIME_IDS = {"share": "feature_span", "gradient": "k_poly", "loss": "no_memorisation", "window": "step_window",
              "lambda": "lambda_range", "sigma": "noise_scale"}


@dataclass(frozen=True)
class Effect:
    """How a premise the paper states asymptotically (poly, Θ, Õ, polylog) is tested: by its effect on each row that
    depends on it (push the premise's quantity, re-measure the row, and see whether it moves by more than its own
    tolerance), or, where the book cannot push it, why not. A finite number meets some polynomial, so a constant the
    book chose cannot decide whether a row is in the regime; the push can."""

    premise: str          # the premise's id (CONDITIONS)
    push: str = ""        # what is pushed and re-measured, in words ("" when it cannot be pushed)
    factor: float = 0.0   # by how much (K × factor pairs per step)
    why_not: str = ""     # where it is not pushed: why


# The premises stated with poly, Θ, Õ or polylog, and how each is tested by its effect (check_asymptotic)
ASYMPTOTIC: tuple[Effect, ...] = (
    Effect("k_poly", "the row re-measured with 4 × K pairs per step, all else equal (Lemma B.1: the K-pair gradient "
           "tracks the population gradient once K = poly(d1))", 4.0),
    Effect("tau_polylog", why_not="τ = polylog(d) is a statement about how τ scales with d; testing it by its effect "
           "needs every row again at a second d with τ moved along polylog(d), a second notebook run; notebook 08 "
           "follows the claims along d instead. The row reports τ's exponent and gates nothing"),
    Effect("eta_poly", why_not="η = 1/poly(d), like τ: only a second d can push it; the row reports η's exponent and "
           "gates nothing"),
    Effect("m_poly", why_not="true by construction: the census draws m = d^C_m neurons at every d it counts"),
    Effect("noise_scale", why_not="reported, never a gate (required=False): the book follows App. A.2's σ"),
    Effect("convergence", why_not="judged with stated constants (the loss at most converge_loss_frac · ln K, l'_p at "
           "least 1 − converge_lp_c/τ) and a plateau: the loss must stop moving over a window, which is this "
           "premise's own push (more steps)"),
)
EFFECTS: dict[str, Effect] = {e.premise: e for e in ASYMPTOTIC}


def push_pairs(n_pairs: int) -> int:
    """K of Lemma B.1's push: EFFECTS["k_poly"].factor × n_pairs pairs per step (the one place it is computed)."""
    return int(EFFECTS["k_poly"].factor * n_pairs)


def check_push(measured: int, asked: int) -> None:
    """Refuse a push measured with another K than the effect test asks for (a record made before EFFECTS changed its
    factor), naming both, so it is measured again rather than misread."""
    if measured != asked:
        raise ValueError(f"needs re-measuring (stage push: measured with K = {measured} pairs a step, the effect test "
                         f"asks for K = {asked})")


def check_asymptotic(declared: tuple[Effect, ...] = ASYMPTOTIC) -> None:
    """Refuse, with one line naming it, a declared asymptotic premise that is no premise (an unknown row id), or that
    has neither an effect test nor a reason why not (the build stops at import)."""
    for e in declared:
        if not is_premise(e.premise):
            raise ValueError(f"asymptotic premise {e.premise!r}: no premise row has this id (premises.CONDITIONS)")
        if not (e.push and e.factor > 1) and not e.why_not:
            raise ValueError(f"asymptotic premise {e.premise!r} has no effect test (push and factor > 1) and no "
                             f"reason why not")


def condition(cid: str) -> Condition:
    """The condition with id `cid` (or the one a scoped id checks); an unknown id is a ValueError naming it."""
    try:
        return BY_ID[premise_of(cid)]
    except KeyError:
        raise ValueError(f"unknown condition id {cid!r} (premises.CONDITIONS lists them)") from None


def is_premise(cid: str) -> bool:
    """Whether `cid` names a premise (a known id of kind PREMISE), or is a scoped id of one."""
    c = BY_ID.get(premise_of(cid))
    return c is not None and c.kind == PREMISE


check_asymptotic()
