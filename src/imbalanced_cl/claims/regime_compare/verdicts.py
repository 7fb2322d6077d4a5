"""The regime page's comparison of verdicts: the rows of notebooks 01-05 under the fresh and the fixed regime."""
from __future__ import annotations

from ...verdict import Verdict


def verdict_changes(fresh: list[Verdict], fixed: list[Verdict]) -> list[dict]:
    """Rows of notebooks 01-05 under both regimes, matched by (notebook, row id), or by (notebook, claim) where a
    recorded row predates ids: measured values and verdicts."""
    by_id = {(r.notebook, r.id): r for r in fixed if r.id}
    by_claim = {(r.notebook, r.claim): r for r in fixed}
    out = []
    for r in fresh:
        if r.notebook[:2] not in {"01", "02", "03", "04", "05"}:
            continue
        f = by_id.get((r.notebook, r.id)) or by_claim.get((r.notebook, r.claim))
        if f is None:
            continue
        out.append({"notebook": r.notebook, "claim": r.claim, "fresh": r.verdict, "fixed": f.verdict,
                    "fresh_measured": r.measured, "fixed_measured": f.measured})
    return out
