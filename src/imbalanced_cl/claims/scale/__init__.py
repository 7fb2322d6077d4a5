"""Notebook 08: each headline claim along d. Does the gap between a measurement and the paper's prediction close as d
grows, with the paper's assumptions kept?

The scaling rule (one grid point per d, every other setting fixed):
  * d1 = c1 d: the ambient dimension is poly(d) (brief §2; Def. 3.1 L244 needs only d1 >= d);
  * m = round(d^C_m): Theorem 3.1 (L277) takes m = d^{C_m}; lucky sets grow like d^{C_m - (1+gamma)/rho^2}
    (Lemma B.2(c)), so C_m > 1.1 keeps them growing in the balanced group;
  * n_minority = round(minority_share d): the minority keeps the same share of the features;
  * K = n_pairs fresh pairs every step (sampling = "fresh", the population regime of Lemma B.1, L519);
    Def. 3.1's Pr(z_j != 0) = eps_j loglog d / d shrinks with d by itself (data.token_prob);
  * time is counted in the paper's clock tau_d = d log d / (eps_max eta loglog d), the scale of T2 - T1 (eq. 60)
    and of T1 in the workshop version (W351). Stage 1 runs until T1 is reached (eq. 34), Stage 2 until T2 is
    reached (eq. 61), and Stage 3 until the training loss has levelled off (Theorem 3.1's convergence, eq. (11):
    its group means change by less than plateau_tol x their start between two windows 0.5 tau_d apart), each with a
    cap in tau_d. That step is T_a: the Stage-3 quantities are measured there and the pruning branch starts there;
    the branch lasts branch_tau tau_d. Reaching the same stage at every d is what makes the grid points comparable.
Every ratio group of one d trains in one batched call (slot = group x replicate; the groups share the dictionary
and initial weights of a replicate and draw their pairs from the same random numbers, a paired design).

The trend rule (written once, in `judge_trend`). For each quantity the gap at one d is
(measured - predicted) / tol in units of the claim's own tolerance, oriented so that + is away from the prediction
(for a one-sided claim "x >= target", + is a shortfall). Per replicate, a least-squares slope of that gap over
log2 d (per doubling of d); then the mean slope and its 95% t-interval over replicates. With s = trend_sesoi:
  the gap closes      the interval lies below -s                        -> holds
  no gap at any d     every per-d interval lies inside the claim's band   -> holds
  the gap stays       the interval lies inside [-s, s]                  -> does not hold
  the gap grows       the interval lies above +s                        -> does not hold
  the gap overshoots  the gap is outside the band on opposite sides at the first and last d (two-sided claims)
                                                                        -> does not hold
  inconclusive        otherwise (with the replicates that would settle it) -> inconclusive
A failed premise (a stage not reached, data not sparse, no lucky pair, Remark 1's alpha m bound) makes the row
"not comparable" and names the premise (verdict.row).

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here, so a notebook needs one import line.
"""
from .config import DERIVED, ScaleConfig, ScaleResult, clock, plan  # noqa: F401
from .metrics import alignment, group_loss, minority_dominant, plateau, rate_ratio  # noqa: F401
from .protocol import (advance, branches, lucky_fraction, measure_point, pruning_config, run, sampler,  # noqa: F401
                       start, t2_of, take, train_point)
from .verdicts import (CLOSES, GAP_LABEL, GROWS, NO_GAP, OVERSHOOTS, Quantity, STAYS, TREND_INCONCLUSIVE,  # noqa: F401
                       TREND_VERDICT, judge_trend, oriented, quantities, trend_slope, verdict_rows)
