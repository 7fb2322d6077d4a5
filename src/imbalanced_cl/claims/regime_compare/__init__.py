"""The regime page: the same network trained on one fixed set of K pairs, on fresh pairs every step, and with the
bias's E|z|/L factor removed, measured side by side (share, losses, Lemma B.1, minority alignment, A_min/A_maj).

Every arm shares the dictionary, the initial weights and the held-out pairs of its replicate (data streams are
per replicate), so the arms differ only in how the training pairs are drawn and in the bias factor.

The package, in import order (each module imports only those above it):

    config    the config dataclass (the notebook's parameters), its constants and plain containers
    metrics   measurements: pure functions of weights, histories and Runs (no training)
    protocol  what is trained, in which order, and the summaries the notebook shows
    verdicts  verdict_rows(results, cfg) and the rules and reports that judge a finished run

Every public name of these modules is importable from here.
"""
from .config import ARMS, RegimeConfig  # noqa: F401
from .metrics import share_history  # noqa: F401
from .protocol import run_arms, summary, table  # noqa: F401
from .verdicts import verdict_changes  # noqa: F401
