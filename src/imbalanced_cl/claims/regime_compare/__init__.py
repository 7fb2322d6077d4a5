"""The regime page: the same network trained on one fixed set of K pairs, on fresh pairs every step, and with the
bias's E|z|/L factor removed, measured side by side (share, losses, Lemma B.1, minority alignment, A_min/A_maj).

Every arm shares the dictionary, the initial weights and the held-out pairs of its replicate (data streams are
per replicate), so the arms differ only in how the training pairs are drawn and in the bias factor.

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here.
"""
from .config import ARMS, RegimeConfig  # noqa: F401
from .metrics import Arm, measure_arm, share_history  # noqa: F401
from .protocol import measure_arms, quantities, run_arms, summary, table  # noqa: F401
from .verdicts import verdict_changes  # noqa: F401
