"""The regime page's configuration: the arms (fixed pairs, fresh pairs, bias without the token factor) and notebook
04's model."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...sim.config import MODEL_PARTS, ModelConfig
from ...validate import check_float

# arm name -> the SimConfig fields it changes
ARMS = {"fixed": {"sampling": "fixed"}, "fresh": {"sampling": "fresh"},
        "fresh, bias without the token factor": {"sampling": "fresh", "bias_token_factor": False}}


@dataclass(frozen=True)
class RegimePageJudging:
    """The regime page's alignment threshold, fixed before the run (book/methods.md): cos_threshold."""

    ROLE: ClassVar[str] = "judging"
    cos_threshold: float = 0.3       # a neuron aligns with the minority feature if cos(w_i, M_j*) >= this (App. A.2)

    def validate(self, cfg) -> None:
        """The alignment threshold's range."""
        check_float("cos_threshold", self.cos_threshold, 0.0, 1.0, lo_open=True)


class RegimeConfig(ModelConfig):
    """The regime page: notebook 04's default model, trained as long as notebook 04's vanilla run."""

    PARTS = {**MODEL_PARTS, "judging": RegimePageJudging}
    DEFAULTS = dict(
        steps=1500,                      # notebook 04's vanilla_steps
        record_every=50,                 # history every this many steps (the share over time)
        progress=False,                  # tqdm progress bar
    )

    def workload(self) -> list:
        """(config, steps) of the page's trainings, for the time estimate (sim/runtime.py): one run per arm."""
        return [(self.sim(**change), self.steps) for change in ARMS.values()]
