"""Premise rows shown as a matrix, claim rows shown without a premise list each (book/pages/premise_matrix.py), on
hand-made rows; and the length of the two heaviest claim pages (notebooks 10 and 04) on a book built at default."""
import html
import json
import math
import os
import re
from pathlib import Path

import pytest

from imbalanced_cl import premises as P
from imbalanced_cl import verdict as V
from imbalanced_cl.book.pages import premise_matrix as PMX
from imbalanced_cl.book.pages.tables import ANCHOR, VerdictTable
from imbalanced_cl.rules import Rule

ROOT = Path(__file__).resolve().parents[1]
NB = "10_premise_map"


def prem(pid: str, case: str, value: float, lo: float, hi: float = math.inf) -> V.Verdict:
    """A premise row of `pid` at `case` (scoped; unscoped where case is ""): it holds where value lies in [lo, hi]."""
    return V.premise_value(P.scoped(pid, case) if case else pid, f"{pid} at {case}: the value", "src",
                           f"in [{lo:g}, {hi:g}]", value, "the band", band=(lo, hi))


def claim(id: str, depends: tuple = (), verdict: str = V.HOLDS, rule: str = "a rule", measured: float = 0.5):
    """A claim row judged `verdict` by `rule`, depending on the premise rows `depends`."""
    return V.row(f"claim {id}", "Thm 0", "> 0", measured, measured - 0.1, measured + 0.1, (verdict, Rule(rule)),
                 id=id, depends=depends)


def words(page: str) -> int:
    """Words of an HTML page as a reader's screen shows them: <script>/<style> dropped, then every tag (the counter
    of the project's stop hook)."""
    page = re.sub(r"(?s)<(script|style).*?</\1>", "", page)
    return len(re.sub(r"<[^>]+>", " ", page).split())


def test_scoped_ids_split_into_premise_case_and_the_part_of_a_case():
    ids = [P.scoped("lambda_range", "d_10_r_0_3"), P.scoped("prune_from_t4", "alg1_d_10_r_0_3"),
           P.scoped("prune_from_t4", "alg1_extended_d_10_r_0_3"), "k_poly"]
    assert PMX.split_cases(ids) == {ids[0]: ("lambda_range", "d_10_r_0_3", ""),
                                    ids[1]: ("prune_from_t4", "d_10_r_0_3", "alg1"),
                                    ids[2]: ("prune_from_t4", "d_10_r_0_3", "alg1_extended"),
                                    "k_poly": ("k_poly", "", "")}
    # a case that merely ends like another, with no case of that name, stays a case of its own
    assert PMX.split_cases([P.scoped("lambda_range", "x_d_20")]) == {P.scoped("lambda_range", "x_d_20"):
                                                                     ("lambda_range", "x_d_20", "")}


def test_the_premise_matrix_marks_each_case_and_premise_and_counts_the_cases_meeting_it():
    rows = [prem("lambda_range", "c1", 0.05, 0.03), prem("k_poly", "c1", 0.5, 0.0, 1.0),
            prem("lambda_range", "c2", 0.01, 0.03), prem("k_poly", "c2", 2.0, 0.0, 1.0),
            prem("prune_from_t4", "alg1_c1", 100.0, 50.0), claim("a")]
    out = PMX.premise_matrix_html(rows, {"c1": "cell one", "c2": "cell two", "k_poly": "Lemma B.1"})
    first, second = out.split("</table>")[:2]
    lines = re.findall(r"<tr>(.*?)</tr>", first)
    assert re.sub(r"<[^>]+>", "|", lines[0]).split("|").count("Lemma B.1") == 1          # a column, named once
    assert P.name("lambda_range") in html.unescape(lines[0])                             # premises.name unlabelled
    text = [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", ln)).strip() for ln in lines[1:]]
    assert text == ["cell one ✓ 0.05 ✓ 0.5", "cell two ✗ 0.01 ✗ 2", "cases meeting it 1 of 2 1 of 2"]
    assert 'title="met; needs in [0.03, inf]"' in lines[1] and 'title="not met; needs in [0, 1]"' in lines[2]
    second = " ".join(re.sub(r"<[^>]+>", " ", second).split())
    assert "cell one · alg1 ✓ 100.0" in second and "claim a" not in out              # an arm: its own matrix
    assert PMX.premise_matrix_html([claim("a")]) == ""


def test_a_run_of_one_case_lists_its_premises_one_line_each_with_the_band():
    out = PMX.premise_matrix_html([prem("lambda_range", "", 0.001, 0.03, 0.05), prem("k_poly", "", 0.5, 0.0, 1.0)])
    lines = [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", ln)).strip() for ln in re.findall(r"<tr>(.*?)</tr>", out)]
    assert lines[1:] == [f"{html.escape(P.name('lambda_range'))} src in [0.03, 0.05] ✗ 0.001",
                         f"{html.escape(P.name('k_poly'))} src in [0, 1] ✓ 0.5"]


def test_the_table_names_a_shared_list_of_unmet_premises_once_however_many_rows_share_it():
    """The premise list most rows miss is named once above the table; a row with another list names its own."""
    def page(n):
        rows = [prem("lambda_range", "", 0.001, 0.03), prem("k_poly", "", 2.0, 0.0, 1.0)]
        rows += [claim(f"r{i}", ("lambda_range", "k_poly")) for i in range(n)] + [claim("own", ("k_poly",))]
        return PMX.MatrixTable(NB, rows)._repr_html_()
    for n in (2, 9):
        out = html.unescape(page(n))
        table = out.split('<table class="verdict-table">')[1].split("</table>")[0]
        assert out.count(P.name("lambda_range")) == 2                  # above the table, and the matrix's line
        assert table.count("not met: see above") == n
        assert table.count(f"not met: {P.name('k_poly')}") == 1 and P.name("lambda_range") not in table
        assert "met: " + P.name("k_poly") not in table.replace("not met: " + P.name("k_poly"), "")


def test_the_matrix_table_glues_the_same_rows_as_the_verdict_table_and_shows_one_verdict_table():
    rows = [prem("lambda_range", "c1", 0.05, 0.03), prem("lambda_range", "c2", 0.01, 0.03),
            claim("gain_a_c1", (P.scoped("lambda_range", "c1"),), V.HOLDS, rule="the gain rule"),
            claim("gain_a_c2", (P.scoped("lambda_range", "c2"),), V.FAILS, rule="the gain rule"),
            claim("gain_b_c1", (), V.UNTESTED, rule="nothing to prune", measured=math.nan),
            claim("gain_b_c2", (), V.UNTESTED, rule="nothing to prune", measured=math.nan),
            claim("map", (), V.PARTLY), claim("idle", (), V.UNTESTED, rule="no alpha in the grid", measured=math.nan)]
    key = {"gain_a_c1": ("c1", "a"), "gain_a_c2": ("c2", "a"), "gain_b_c1": ("c1", "b"), "gain_b_c2": ("c2", "b")}
    t = PMX.MatrixTable(NB, rows, matrix=lambda r: key.get(r.id), statement="the gain", columns={"a": "arm A"},
                        rules={"map": "decided by the map"})
    assert json.dumps(t._repr_json_(), sort_keys=True) == json.dumps(VerdictTable(NB, rows)._repr_json_(),
                                                                     sort_keys=True)
    out = t._repr_html_()
    assert out.count('class="verdict-table"') == 1 and '<details class="vt-premise-rows">' not in out
    assert out.startswith(f'<div id="{ANCHOR}" class="vt">') and out.count(f'id="{ANCHOR}"') == 1   # links land here
    table, matrix = out.split('<table class="verdict-table">')[1].split("</table>", 1)
    assert "claim map" in table and "decided by the map" in table and "claim gain" not in table
    assert "claim idle" not in table
    assert "Not tested at this run:</b><ul><li>claim idle (Thm 0): no alpha in the grid</li></ul>" in matrix
    assert matrix.count("the gain rule") == 1 and "arm A" in matrix                     # the shared rule, once
    grid = matrix.split('<table class="vt-matrix">')[1].split("</table>")[0]
    assert "measured: does not hold" in grid and grid.count(V.UNTESTED) == 0           # column b: never tested
    assert "Not tested in any case: b." in matrix and "nothing to prune" in matrix


DEFAULT_BUILD = "IMBALANCED_CL_DEFAULT_BUILD"     # a folder holding _build/ of a book executed at default
TARGETS = {"10_premise_map": 15_000, "04_pruning_gains": 8_000}


@pytest.mark.parametrize("nb", sorted(TARGETS))
def test_the_heaviest_claim_pages_built_at_default_stay_within_their_word_targets(nb):
    """Notebook 10 within 15,000 words, 04 within 8,000, on the built HTML a reader gets at the default profile
    (issue 62): the repository's own _build, or the folder $IMBALANCED_CL_DEFAULT_BUILD names (`make book`)."""
    import nbformat
    build = Path(os.environ.get(DEFAULT_BUILD) or ROOT) / "_build"
    executed, page = build / "executed" / "notebooks" / f"{nb}.ipynb", build / "html" / "notebooks" / f"{nb}.html"
    if not (executed.exists() and page.exists()) or page.stat().st_mtime < executed.stat().st_mtime:
        pytest.skip(f"no page of {nb} built from its executed notebook under {build} (make book, or {DEFAULT_BUILD})")
    if nbformat.read(executed, 4).metadata.get("imbalanced_cl", {}).get("profile") != "default":
        pytest.skip(f"{nb} under {build} was not executed at the default profile")
    assert words(page.read_text(encoding="utf-8")) <= TARGETS[nb]


def test_notebook_10_reads_each_arm_row_by_its_id_and_opens_its_conclusion_in_one_sentence():
    """Notebook 10's hooks: an arm's gain row (gain_<arm>_<case>) finds its cell and arm, the longer arm name first;
    its conclusion shows the answer and what decided it, the reasoning (every number) folded below."""
    from imbalanced_cl.book.plots import premise_map as PMP
    from imbalanced_cl.claims.premise_map import Conclusion
    assert PMP.arm_case(claim("gain_alg1_strict_d_10_lam_mid_r_0_8")) == ("d_10_lam_mid_r_0_8", "alg1_strict")
    assert PMP.arm_case(claim("gain_alg1_d_10_lam_mid_r_0_8")) == ("d_10_lam_mid_r_0_8", "alg1")
    assert PMP.arm_case(claim("gain_oracle_dominant_x")) == ("x", "oracle_dominant")
    assert PMP.arm_case(claim("claim4_map")) is None and PMP.arm_case(claim("mask_share_map")) is None
    long = " ".join(["a number 0.43 ln K"] * 200)
    c = Conclusion("b", V.NOT_COMPARABLE, long, ["convergence"], 0, 33, answer=long, fact="no cell of 33 meets every "
                   "premise; converged fails in every cell")
    out = PMP.conclusion_html(c).data
    shown, folded = out.split("<details>")
    assert words(shown) <= 150 and "Answer (b)" in shown and c.fact in shown and long not in shown
    assert folded.count(long) == 2 and out.endswith("</details>")


def test_notebook_04_prints_each_premise_met_or_not_from_its_numbers():
    """Notebook 04's premise lines (book/plots/pruning_gains.py) say met or NOT met from the numbers they print:
    convergence from its own verdict, App. F.4's T against the branch length."""
    from types import SimpleNamespace as NS

    import torch

    from imbalanced_cl.book.plots import pruning_gains as pg
    cfg = NS(converge_loss_frac=0.5, converge_window=100, alpha_main=0.05, m=50, prune_steps=1000)
    conv = NS(step=1500, loss=3.9, loss_max=3.1, pos_prob=0.05, lp_min=0.5, change=0.01, change_max=0.02, holds=False)
    short = NS(convergence=conv, T=18900.0, strict=torch.tensor([0, 1]), extended=torch.tensor([2, 3]))
    lines = pg.premises_text(short, cfg).splitlines()
    assert lines[0].endswith("-> NOT met") and "InfoNCE 3.900 (worst replicate) against 3.100" in lines[0]
    assert "18900 steps; the branches run 1000 -> NOT met" in lines[1]
    assert lines[2] == ("Remark 1's bound per replicate, strict |M*_j*|: [0, 1], extended (j* in N_i at T_a): [2, 3]; "
                        "alpha_main m = 2")
    long = NS(convergence=NS(**{**vars(conv), "holds": True}), T=900.0, strict=short.strict, extended=short.extended)
    assert [ln.endswith("-> met") for ln in pg.premises_text(long, cfg).splitlines()[:2]] == [True, True]


def test_a_claim_page_points_to_the_premise_map_where_a_required_premise_fails_and_marks_reported_ones():
    rows = [prem("lambda_range", "", 0.001, 0.03), prem("noise_scale", "", 0.01, 0.1), claim("a", ("lambda_range",))]
    assert not P.condition("noise_scale").required and P.condition("lambda_range").required
    out = html.unescape(PMX.MatrixTable("04_pruning_gains", rows)._repr_html_())
    assert f"{P.name('noise_scale')} (reported only)" in out and f"{P.name('lambda_range')} (reported" not in out
    assert out.count('href="10_premise_map.html"') == 1
    assert 'href="10_premise_map.html"' not in PMX.MatrixTable(NB, rows)._repr_html_()          # the map itself
    met = [prem("lambda_range", "", 0.05, 0.03), prem("noise_scale", "", 0.01, 0.1), claim("a", ("lambda_range",))]
    assert "premise map" not in PMX.MatrixTable("04_pruning_gains", met)._repr_html_()   # only reported ones fail


def test_notebook_04_reads_its_verdicts_in_at_most_150_words_with_the_reasoning_folded():
    cells = json.loads((ROOT / "notebooks" / "04_pruning_gains.ipynb").read_text())["cells"]
    [text] = ["".join(c["source"]) for c in cells if "".join(c["source"]).startswith("**Reading the verdicts.**")]
    shown, folded = text.split("<details>")
    assert len(shown.split()) <= 150 and len(folded.split()) > 20 and folded.rstrip().endswith("</details>")
