"""What notebook 10 runs: every cell of the map is notebook 04's protocol at that setting (a vanilla run to the
branch point, then a control and a pruned branch from the same checkpoint and data stream)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from ... import stats
from ... import workers as W
from ...sim import regime
from ...sim.train import train
from ..pruning.protocol import run_branches
from .config import Cell, PremiseMapConfig
from .metrics import cell_premises, gain_of_pruning, kappa


@dataclass
class CellResult:
    """A cell's premises (closed-form and, if run, measured), its pruning gain and how long it took."""

    cell: Cell
    premises: dict                      # key -> metrics.Premise
    gain: torch.Tensor | None = None    # (R,) change of A_j*/A_maj, pruned minus control
    seconds: float = 0.0
    source: str = "computed"            # "computed" here, or "recorded" (read from a campaign record)
    extra: dict = field(default_factory=dict)

    @property
    def ran(self) -> bool:
        """Whether the cell was trained (its measured premises and gain exist)."""
        return self.gain is not None

    def gain_ci(self) -> tuple[float, float, float]:
        """(mean, lo, hi) of the gain over replicates (NaN when the cell was not run)."""
        if self.gain is None:
            return (float("nan"),) * 3
        return stats.ci(self.gain.double())

    def required_ok(self) -> bool:
        """Whether every required premise holds (the closed forms only, for a cell that was not run)."""
        return all(p.holds for p in self.premises.values() if p.required)


def run_cell(cell: Cell, train_it: bool = True) -> CellResult:
    """The premises of one cell and, with train_it, its three runs (vanilla, control, pruned) and measurements."""
    t0 = time.time()
    cfg = cell.cfg
    kap = kappa(cfg, cell.kappa_pairs)
    if not train_it:
        return CellResult(cell, cell_premises(cell, kap, None, None), seconds=time.time() - t0)
    base = train(cfg.vanilla(progress=False))
    reg = regime.measure(base)
    runs = run_branches(cfg, [cell.alpha], base, progress=False)
    res = CellResult(cell, cell_premises(cell, kap, base, reg), gain_of_pruning(runs[0.0], runs[cell.alpha], cfg),
                     seconds=time.time() - t0)
    res.extra = {"grad_dev": float(reg.grad_dev.mean()), "share": float(reg.share.mean())}
    return res


def run_map(cfg: PremiseMapConfig, progress: bool = True) -> list[CellResult]:
    """Every cell of cfg.cells(), trained, in order (tqdm over cells). The cells are independent, so they run in
    worker processes of one thread each when cfg.workers (0: workers.plan) gives several: one process keeps about
    one core busy (the sampler draws each replicate's pairs in turn), and a cell's numbers do not depend on where
    it runs."""
    cells = cfg.cells()
    _, results = W.pieces(run_cell, [(c,) for c in cells], [c.label for c in cells], cfg.workers,
                          on_cuda=cfg.torch_device.type == "cuda", settings=f"notebook 10, ds {list(cfg.ds)}")
    return list(tqdm(results, total=len(cells), desc="premise map", disable=not progress, leave=False))
