"""The regime page's comparison of verdicts: the rows of notebooks 01-05 under the fresh and the fixed regime."""
from __future__ import annotations


def verdict_changes(fresh: list[dict], fixed: list[dict]) -> list[dict]:
    """Rows of notebooks 01-05 under both regimes, matched by (notebook, row id): measured values and verdicts."""
    key = lambda r: (r["notebook"], r.get("id") or r["claim"])
    other = {key(r): r for r in fixed}
    out = []
    for r in fresh:
        if not r["notebook"][:2] in {"01", "02", "03", "04", "05"} or key(r) not in other:
            continue
        f = other[key(r)]
        out.append({"notebook": r["notebook"], "claim": r["claim"], "fresh": r["verdict"], "fixed": f["verdict"],
                    "fresh_measured": r["measured"], "fixed_measured": f["measured"]})
    return out
