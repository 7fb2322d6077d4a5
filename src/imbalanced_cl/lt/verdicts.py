"""Claim 5's verdict rows (notebook 06): each pruning variant's paired gain over SimCLR per ρ, behind the premise
that our SimCLR baseline is near the paper's (Table 2)."""
from __future__ import annotations

import math

import numpy as np
import torch

from .. import premises as P
from .. import rules
from .. import stats
from .. import verdict as V
from .experiment import LABELS, TABLE2, paired


def verdict_rows(results: list[dict], dataset: str, band: float = 10.0) -> list:
    """Claim 5 judged per rho and pruning variant: accuracy gain, and Δ20 reduction, vs SimCLR on the same seeds.

    The interval is the 95% t-interval over seeds of the paired differences (same seed = same LT draw and init).
    Premise (like with like): our SimCLR baseline lies within `band` points of the paper's SimCLR accuracy at that
    rho; where it does not, the gain rows read "not comparable" and say how far off the baseline is. Fixed before
    any run.
    """
    rows = []
    rhos = sorted({r["rho"] for r in results})
    for rho in rhos:
        ref = TABLE2.get((dataset, int(rho)))
        base = [r["acc"] for r in results if r["rho"] == rho and r["method"] == "simclr"]
        ours = float(np.mean(base)) if base else math.nan
        # the premise, checked once per ρ: a premise row with a scoped id that this ρ's gain rows depend on
        pid = P.scoped("baseline_reproduced", f"{dataset}_rho{rho:g}".replace("-", "_").replace(".", "p").lower())
        off = ours - ref[0][0] if ref else math.nan
        if ref:
            what = (f"our SimCLR baseline within {band:g} points of the paper's {ref[0][0]:.2f}% ({dataset}-LT "
                    f"ρ={rho:g}): ours minus the paper's, in percentage points")
        else:
            what = (f"Table 2 has a SimCLR number for {dataset}-LT ρ={rho:g} to compare with: ours minus the "
                    "paper's, in percentage points")
        # no paper number (NaN): not met
        rows.append(V.premise_value(pid, what, "Table 2 (the SimCLR row)", f"|ours − paper| ≤ {band:g} points", off,
                                    f"holds when our SimCLR mean lies within {band:g} points of the paper's",
                                    band=(-band, band)))
        for method in ("sdclr", "alg1"):
            for metric, sign, what in (("acc", 1, "accuracy gain"), ("delta20", -1, "Δ20 reduction")):
                d = sign * paired(results, rho, method, metric)
                if ref:
                    p = ref[1][0] - ref[0][0] if metric == "acc" else ref[2][0] - ref[3][0]
                    pred = f"> 0 (Table 2: {p:+.2f} pts)"
                else:
                    pred = "> 0"
                claim = f"{LABELS[method]} vs SimCLR: {what} in percentage points, {dataset}-LT ρ={rho:g}"
                id = f"{method}_{metric}_{dataset}_rho{rho:g}".replace("-", "_").replace(".", "p").lower()
                if len(d) < 2:
                    rows.append(
                        V.row(
                            claim=claim,
                            source="Table 2; §4",
                            predicted=pred,
                            measured=math.nan,
                            lo=math.nan,
                            hi=math.nan,
                            judged=(V.UNTESTED, "fewer than two paired seeds"),
                            id=id,
                            depends=(pid,),
                        )
                    )
                    continue
                m, lo, hi = stats.ci(torch.tensor(d))
                rows.append(V.row(claim, "Table 2; §4", pred, m, lo, hi, rules.judge_positive(lo, hi, what),
                                  n=len(d), id=id, depends=(pid,)))
    return rows
