"""imbalanced_cl: the companion package of 'Theoretical analysis of contrastive learning under imbalanced data'.

Modules: config (validated dataclasses), data (sparse-coding pairs), encoder (eq. 4), loss (eqs. 1-3, 21),
prune (Algorithm 1 masks), train (the loop), metrics, theory (predictions), verdict, plots, book (pipeline).
"""
from . import data, encoder, loss, metrics, prune, theory, train, verdict
from .config import ParameterError, SimConfig
from .profiles import params as profile_params
from .train import Run, gradient
from .train import train as train_run

__all__ = ["data", "encoder", "loss", "metrics", "prune", "theory", "train", "verdict",
           "ParameterError", "SimConfig", "profile_params", "Run", "gradient", "train_run"]
__version__ = "0.1.0"
