"""The regime page's configuration: the arms (fixed pairs, fresh pairs, bias without the token factor) and notebook
04's model."""
from __future__ import annotations

from dataclasses import dataclass

from ...sim.config import SimConfig
from ...validate import check_float

# arm name -> the SimConfig fields it changes
ARMS = {"fixed": {"sampling": "fixed"}, "fresh": {"sampling": "fresh"},
        "fresh, bias without the token factor": {"sampling": "fresh", "bias_token_factor": False}}


@dataclass(frozen=True)
class RegimeConfig(SimConfig):
    """The regime page: notebook 04's default model, trained as long as notebook 04's vanilla run."""

    steps: int = 1500                # notebook 04's vanilla_steps
    record_every: int = 50           # history every this many steps (the share over time)
    progress: bool = False           # tqdm progress bar
    cos_threshold: float = 0.3       # a neuron aligns with the minority feature if cos(w_i, M_j*) >= this (App. A.2)

    def validate(self) -> None:
        """SimConfig's checks plus the alignment threshold."""
        super().validate()
        check_float("cos_threshold", self.cos_threshold, 0.0, 1.0, lo_open=True)
