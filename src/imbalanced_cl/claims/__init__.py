"""One sub-package per claim notebook, each with the same inner shape; census/ is the part several of them share.

    stage1 (01)  lucky (02)  scaling (03)  pruning (04)  appendix (05)  explorer (07)  scale (08)  decoupling (09)
    regime_compare (the regime page)   census (Def. B.1, shared by 02, 03, 04 and 08)

Inside a claim package, in import order (each module imports only those above it; a slot with nothing in it is
absent): config (the config dataclass and its constants) -> metrics (measurements, no training) -> protocol (what
is trained, in which order, and the summaries) -> verdicts (verdict_rows). The package's __init__ re-exports every
public name, so `from imbalanced_cl.claims import pruning as pa; pa.amplitudes(...)` reads as before. (The flat
layout of the first version moved here in issue 26: CHANGELOG.md, 2026-11-25.)
"""
