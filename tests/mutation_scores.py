"""Mutation scores per layer and per file, from mutmut's records (mutants/**/*.meta), as `make mutation` prints them.

A mutant counts as killed when the tests failed or timed out (as in mutmut's badge); one no test reaches counts
against the score; one not run (a `make mutation MUTANTS=...` run that selected others) is left out.
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

LAYERS = {"sim": ("sim/",), "verdict": ("premises.py", "rules.py", "verdict.py", "stats.py", "claims/premise_rows.py",
                                        "claims/", "lt/verdicts.py", "book/pages/answers.py")}


def layer(path: str) -> str:
    """The layer a mutated file belongs to (LAYERS), "other" if none."""
    rel = path.split("imbalanced_cl/", 1)[-1]
    return next((k for k, pre in LAYERS.items() if any(rel.startswith(p) for p in pre)), "other")


def main(root: str = "mutants") -> int:
    """Print killed / counted per file and per layer; 0."""
    per_layer: dict[str, Counter] = {}
    for meta in sorted(Path(root).glob("src/**/*.meta")):
        codes = json.loads(meta.read_text()).get("exit_code_by_key", {})
        c = Counter(status_by_exit_code[v] for v in codes.values())
        counted = sum(n for s, n in c.items() if s not in ("not checked", "skipped"))
        if not counted:
            continue
        killed = c["killed"] + c["timeout"]
        name = str(meta.relative_to(root)).removesuffix(".meta")
        print(f"{name}: {killed}/{counted} killed = {100 * killed / counted:.1f}% (survived {c['survived']}, "
              f"no test reaches {c['no tests']})")
        per_layer.setdefault(layer(name), Counter()).update(killed=killed, counted=counted)
    for k, c in per_layer.items():
        print(f"layer {k}: {c['killed']}/{c['counted']} killed = {100 * c['killed'] / max(c['counted'], 1):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
