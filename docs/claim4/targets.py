"""The target cells the rule derives at the map's d (issue 63, item 2): python docs/claim4/targets.py

Deviations: Lemma B.1's measured ||g_K - g_pop|| / ||w|| from the default campaign's premise-cell records (d = 20,
40), the paper campaign's (d = 80) and notebook 10's default stage (d = 10), read from their JSON directly.
"""
import glob
import json
from pathlib import Path

from imbalanced_cl.campaign import typed
from imbalanced_cl.claims.premise_map import PremiseMapConfig
from imbalanced_cl.claims.premise_map import target as T

devs = T.measured_deviations(typed.load(Path(glob.glob(
    "results/campaign/default/notebook/10_premise_map-*.stages/cells.json")[0])))
for f in sorted(glob.glob("results/campaign/*/premise_cell/*.json")):
    rec = json.loads(Path(f).read_text())
    p, cell = rec["params"], rec["params"]["cell"]
    if cell["d"] == 10:
        continue                                       # d = 10 is read from the notebook's stage
    devs.setdefault(cell["d"], []).append((p["n_pairs"], rec["payload"]["premises"]["lemma_b1"]["value"],
                                           p["d1_over_d"] * cell["d"]))
cfg = PremiseMapConfig()
for d in (10, 20, 40, 80):
    for ratio in (0.8, 0.3):
        print(T.target(cfg, d, ratio, devs).line())
