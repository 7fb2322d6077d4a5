"""The intro's first screen (book/pages/summary.py), the "What we found" box of every claim page, and the downloadable
results table (book/records/results_table.py), on hand-made rows and notebooks; the built ci book's pages (slow)."""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from imbalanced_cl import verdict as V
from imbalanced_cl.book.pages import answers as A
from imbalanced_cl.book.records import results_table as RT
from imbalanced_cl.book.pages import claim_summary as CS
from imbalanced_cl.book.pages import summary as S
from imbalanced_cl.book.pages.render import badge, esc
from imbalanced_cl.book.pages.tables import ANCHOR

NAN = float("nan")


CLAIM1 = A.CLAIMS[0]
HEAD = "majority/minority rate ratio equals ε_max/ε_min"


def _row(claim, verdict, measured=1.0, lo=0.5, hi=1.5, notebook="01_stage1_growth", kind="paper", predicted="1",
         source="eq. (7)", depends=()):
    """A glued row as the verdict layer writes it; the claim-1 headline row carries the headline's id."""
    rid = CLAIM1.headline[0] if claim == HEAD else re.sub(r"\W+", "_", claim.lower()).strip("_") or "row"
    return V.Verdict(id=rid, claim=claim, source=source, predicted=predicted, measured=measured, lo=lo, hi=hi,
                     verdict=verdict, rule="band", notebook=notebook, kind=kind, depends=depends)


@pytest.mark.parametrize("verdict", [V.HOLDS, V.PARTLY, V.FAILS, V.INCONCLUSIVE])
def test_sentence_says_what_was_measured_where_and_what_it_means(verdict):
    rows = [_row(HEAD, verdict, 13.6, 1.09, 26.2, predicted="10")]
    a = A.answer(rows, CLAIM1)
    text = S.paragraph(a, "ci")
    assert a.verdict == verdict
    assert f"({CLAIM1.source})" in text and CLAIM1.predicts in text
    assert "Measured at the ci profile: majority/minority rate ratio" in text       # what, and at which scale
    assert "13.6 [1.09, 26.2]" in text and "against 10" in text and CLAIM1.unit in text   # the value with its unit
    assert f"Verdict {verdict}: {S.SAYS[verdict]}." in text                        # what it says about the paper


def test_sentence_names_the_premise_that_failed_and_the_outcome_measured_there():
    """A headline row that depends on Lemma B.1's premise, gated by the verdict layer where that premise fails: the
    sentence names the premise and shows what was measured there anyway."""
    head = V.Verdict(
        claim=HEAD,
        source="eq. (7)",
        predicted="10",
        measured=10.2,
        lo=9.8,
        hi=10.6,
        verdict=V.HOLDS,
        id=CLAIM1.headline[0],
        depends=("k_poly",),
    )
    prem = V.Verdict(
        claim="K-pair gradient tracks the population gradient",
        source="Lemma B.1",
        predicted="≤ 1/d1",
        measured=0.1,
        lo=0.05,
        hi=0.15,
        verdict=V.FAILS,
        kind="premise",
        id="k_poly",
    )
    rows = [replace(r, notebook="01_stage1_growth") for r in V.gate([head, prem], "01_stage1_growth")]
    a = A.answer(rows, CLAIM1)
    assert a.verdict == V.NOT_COMPARABLE
    text = S.paragraph(a, "default")
    assert "not met" in text and "“holds”" in text     # measured there anyway: the rows' own outcome, shown beside it


def test_a_headline_row_that_reads_otherwise_than_its_claim_says_so():
    """The claim's verdict combines its judged rows; when the headline row shown beside it is gated (or reads
    otherwise), the sentence says what that row reads and what was measured there, so the number and the verdict
    beside it can be checked against each other."""
    head = V.Verdict(
        claim=HEAD,
        source="eq. (7)",
        predicted="10",
        measured=2.0,
        lo=1.8,
        hi=2.2,
        verdict=V.FAILS,
        id=CLAIM1.headline[0],
        depends=("k_poly",),
    )
    other = V.Verdict(
        claim="another row",
        source="eq. (7)",
        predicted="1",
        measured=1.0,
        lo=0.2,
        hi=1.9,
        verdict=V.INCONCLUSIVE,
        id="other",
    )
    prem = V.Verdict(
        claim="K-pair gradient tracks the population gradient",
        source="Lemma B.1",
        predicted="≤ 1/d1",
        measured=0.1,
        lo=0.05,
        hi=0.15,
        verdict=V.FAILS,
        kind="premise",
        id="k_poly",
    )
    rows = [replace(r, notebook="01_stage1_growth") for r in V.gate([head, other, prem], "01_stage1_growth")]
    a = A.answer(rows, CLAIM1)
    text = S.paragraph(a, "default")
    assert a.headline.id == CLAIM1.headline[0] and a.verdict != V.NOT_COMPARABLE
    assert "This row reads “not comparable” (measured there: “does not hold”)" in text
    same = A.answer([_row(HEAD, V.HOLDS, 10.0, 9.9, 10.1, predicted="10")], CLAIM1)
    assert "This row reads" not in S.paragraph(same, "default")


def test_paper_scale_record_appears_beside_the_build():
    rows = [_row(HEAD, V.PARTLY, 12.0, 11.0, 13.0, predicted="10")]
    paper = {"01_stage1_growth": {"rows": [_row(HEAD, V.HOLDS, 10.1, 9.9, 10.3, predicted="10")],
                                  "device": "cuda", "commit": "abc1234"}}
    a = A.answer(rows, CLAIM1)
    p = CS.paper_summary(CLAIM1, paper)
    assert p.status == "" and p.verdict == V.HOLDS
    text = S.paragraph(a, "default", paper)
    assert "At paper scale, claim 1 holds: majority/minority rate ratio equals ε_max/ε_min (10.1 [9.9, 10.3]" in text
    assert text.endswith("(Recorded on cuda, commit abc1234.)")
    html = S.findings(CS.summaries(rows, "default", paper), "default")
    assert 'data-label="paper scale"' in html and "abc1234" in html
    assert f'href="../notebooks/01_stage1_growth.html#{ANCHOR}"' in html


def test_build_note_says_ci_is_a_smoke_test():
    note = S.build_note("ci", "abc1234", "2026-11-26 15:00 UTC")
    assert "smoke test" in note and "not evidence" in note and "abc1234" in note and "admonition warning" in note
    assert "smoke test" not in S.build_note("default")


def test_found_box_states_the_claims_summary_from_every_notebook_and_counts_this_pages_rows():
    rows = [_row(HEAD, V.HOLDS, 10.2, 9.8, 10.6, predicted="10"), _row("other", V.FAILS),
            _row("regime: weight decay λ inside the proof's range", V.FAILS, kind="premise"),
            _row("not mine", V.HOLDS, notebook="02_lucky_neurons")]
    box = S.found_box(rows, "01_stage1_growth", "ci")
    claim1 = CS.summarise(rows, CLAIM1, "ci")
    assert box.startswith('<div class="admonition tip sb-found"><p class="admonition-title">What we found</p>')
    assert f"{badge(claim1.verdict)} · {esc(claim1.sentence)}" in box      # the intro's own sentence and verdict
    assert "this page has 2 claim rows (1 holds, 1 does not hold). 1 premise row, 1 not holding." in box
    assert "Paper scale: not yet run at paper scale" in box and f'href="#{ANCHOR}"' in box
    assert "<details" in box and S.paragraph(A.answer(rows, CLAIM1), "ci", {}) in box.replace("&#x27;", "'")
    assert S.found_box([], "01_stage1_growth") == ""


def _notebook(tmp_path: Path, name: str, rows: list[V.Verdict], commit: str) -> Path:
    nb = nbformat.v4.new_notebook()
    glue = nbformat.v4.new_code_cell("glue")
    glued = {"notebook": name, "rows": [V.to_json(r) for r in rows]}
    glue.outputs = [nbformat.v4.new_output("display_data", data={"application/json": glued},
                                           metadata={"scrapbook": {"name": f"{name}_verdicts"}})]
    prov = nbformat.v4.new_code_cell("provenance")
    prov.outputs = [nbformat.v4.new_output("display_data", data={
        "text/markdown": f"**Provenance**\n\n| field | value |\n|---|---|\n| commit | `{commit}` |\n"})]
    nb.cells = [glue, prov]
    nb.metadata["imbalanced_cl"] = {"profile": "ci"}
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def test_results_table_has_every_row_with_notebook_profile_commit_and_value(tmp_path):
    _notebook(tmp_path, "01_stage1_growth", [_row(HEAD, V.HOLDS, 10.2, 9.8, 10.6), _row("nan row", V.UNTESTED, NAN,
                                                                                      NAN, NAN)], "c0ffee1")
    _notebook(tmp_path, "02_lucky_neurons", [_row("lucky", V.PARTLY, 0.8, notebook="02_lucky_neurons")], "c0ffee2")
    (tmp_path / "no_rows.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    paths = RT.write(tmp_path, tmp_path / "results")
    assert [p.name for p in paths] == ["verdicts.csv", "verdicts.json"]
    table = list(csv.DictReader(io.StringIO(paths[0].read_text())))
    assert [(r["notebook"], r["profile"], r["commit"], r["verdict"]) for r in table] == [
        ("01_stage1_growth", "ci", "c0ffee1", V.HOLDS), ("01_stage1_growth", "ci", "c0ffee1", V.UNTESTED),
        ("02_lucky_neurons", "ci", "c0ffee2", V.PARTLY)]
    assert float(table[0]["measured"]) == 10.2 and table[1]["measured"] == ""
    data = json.loads(paths[1].read_text())
    assert data["fields"] == list(RT.FIELDS) and len(data["rows"]) == 3 and data["rows"][1]["lo"] is None


@pytest.mark.slow
def test_built_book_opens_with_the_answer_and_ships_the_results_table(ci_book):
    out, log, rc = ci_book
    assert rc == 0, f"the ci book did not build:\n{log[-4000:]}"
    html = out / "_build" / "html"
    intro = (html / "book" / "intro.html").read_text()
    assert "This build: the ci profile" in intro and "smoke test" in intro
    assert intro.count('<tr data-claim="') >= 2 * len(A.CLAIMS)   # the findings table and the answer table
    assert 'class="sb-summary-figure"' in intro
    assert intro.index("sb-findings") < intro.index("sb-summary-figure") < intro.index("sb-answers")
    for c in A.CLAIMS:
        page = (html / "notebooks" / f"{c.notebooks[0]}.html").read_text()
        assert "What we found" in page and f'id="{ANCHOR}"' in page, c.notebooks[0]
        assert page.index("What we found") < page.index(f'id="{ANCHOR}"')
    table = list(csv.DictReader(io.StringIO((html / "results" / "verdicts.csv").read_text())))
    assert table and {r["profile"] for r in table} == {"ci"} and all(r["commit"] for r in table)
    assert 'href="../results/verdicts.csv"' in (html / "book" / "scoreboard.html").read_text()


def test_verdict_legend_is_the_verdict_layers_own():
    """The intro's legend is verdict.legend_markdown(), rendered to HTML: every word with its one meaning."""
    html = S.VerdictLegend()._repr_html_()
    assert "<th>verdict</th>" in html
    for v in V.VERDICTS:
        assert f"<td><strong>{v}</strong></td>" in html, v

def test_bullets_make_report_lines_a_markdown_list():
    md = S.bullets(["- already a bullet", "  |M_j*| ≥ 3 with a star  ", "", "plain"])._repr_markdown_()
    assert md == "- already a bullet\n- |M_j\\*| ≥ 3 with a star\n- plain"


def test_claim_4_reads_the_premise_maps_plain_words_answer():
    """Claim 4's sentence carries the premise map's answer in plain words (its claim4_map row), where that row
    exists."""
    claim4 = next(c for c in A.CLAIMS if c.key == "4")
    rule = "answer (b) — no cell meets every premise. In plain words: the vanilla run never converged."
    rows = [replace(_row("Claim 4 on the map", V.NOT_COMPARABLE, notebook="10_premise_map"), id="claim4_map",
                    rule=rule)]
    a = A.answer(rows, claim4)
    assert a.plain == "the vanilla run never converged."
    assert S.paragraph(a, "default").endswith("In plain words: the vanilla run never converged.")
    assert A.answer([], claim4).plain == ""


def test_the_first_screen_links_each_sentence_to_its_full_paragraph():
    rows = [_row(HEAD, V.HOLDS, 10.2, 9.8, 10.6, predicted="10")]
    pairs = CS.summaries(rows, "default")
    html = S.findings(pairs, "default")
    assert esc(pairs[0][0].sentence) in html
    assert 'href="../notebooks/01_stage1_growth.html">The full paragraph' in html
    assert S.paragraph(A.answer(rows, CLAIM1), "default") not in html   # the paragraph is on the claim's page
    box = S.found_box(rows, "01_stage1_growth", "default")
    assert "Measured at the default profile" in box
