"""One summary per claim and profile (book/pages/claim_summary.py, issue 62): the rows that decide each verdict, the
sentence built from them alone, the paper-scale counterpart, and every page reading the same summary; on hand-made
rows (written from the rule in verdict.combine, not from a run) and on the committed default records."""
from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from imbalanced_cl import premises as P
from imbalanced_cl import verdict as V
from imbalanced_cl.book.pages import answers as A
from imbalanced_cl.book.pages import claim_summary as CS
from imbalanced_cl.book.pages import summary as S
from imbalanced_cl.book.pages.sphinxext import mark_deciding
from imbalanced_cl.book.pages.render import fmt
from imbalanced_cl.book.pages.tables import render_html
from imbalanced_cl.book.records import record

ROOT = Path(__file__).resolve().parents[1]
C1, C3, C4, C5 = (next(c for c in A.CLAIMS if c.key == k) for k in ("1", "3", "4", "5"))
NB1 = "01_stage1_growth"


def row(id, verdict, measured=1.0, lo=0.9, hi=1.1, band=(0.8, 1.2), nb=NB1, kind="paper", claim=None, **kw):
    """A glued row of claim 1's notebook with its band, as the verdict layer writes it."""
    kw.setdefault("rule", "band")
    return V.Verdict(id=id, claim=claim or f"statement {id}: its quantity", source="eq. (7)", predicted="1",
                     measured=measured, lo=lo, hi=hi, verdict=verdict, notebook=nb, kind=kind, band_lo=band[0],
                     band_hi=band[1], **kw)


def premise(id, verdict, measured=0.02, nb=NB1):
    return row(id, verdict, measured, measured, measured, (-math.inf, 0.01), nb, kind="premise",
               claim=f"regime: {P.condition(id).statement}")


def gated(rows, nb=NB1):
    """The rows as a notebook's table leaves them: premise rows applied by id (verdict.gate)."""
    return [replace(r, notebook=nb) for r in V.gate(rows, nb)]


@pytest.mark.parametrize("verdicts, decided, says", [
    ((V.HOLDS, V.HOLDS), ("a", "b"), "all 2 judged rows hold, as statement a (1 [0.9, 1.1] against [0.8, 1.2])"),
    ((V.FAILS, V.FAILS, V.INCONCLUSIVE), ("a", "b"), "statement a (1 [0.9, 1.1] against [0.8, 1.2]) does not "
                                                     "hold (1 more row too)"),
    ((V.INCONCLUSIVE, V.INCONCLUSIVE), ("a", "b"), "statement a (1 [0.9, 1.1] against [0.8, 1.2]) is inconclusive"),
    ((V.FAILS, V.HOLDS, V.INCONCLUSIVE), ("a", "b", "c"), "statement b (1 [0.9, 1.1] against [0.8, 1.2]) holds, but "
                                                          "statement a (1 [0.9, 1.1] against [0.8, 1.2]) does not "
                                                          "hold"),
    ((V.PARTLY, V.NOT_COMPARABLE), ("a",), "statement a (1 [0.9, 1.1] against [0.8, 1.2]) partly holds"),
])
def test_the_deciding_rows_follow_combine_and_the_sentence_quotes_them(verdicts, decided, says):
    rows = [row(i, v) for i, v in zip("abc", verdicts, strict=False)]
    s = CS.summarise(rows, C1, "default")
    assert s.verdict == V.combine([v for v in verdicts if v != V.NOT_COMPARABLE])
    assert tuple(r.id for r in s.deciding) == decided
    assert s.sentence.startswith(f"At default, claim 1 {V.PREDICATE[s.verdict]}: {says}")
    assert len(s.sentence.split()) <= CS.MAX_WORDS


def test_a_number_is_quoted_as_support_only_from_a_row_that_holds():
    """Every row the sentence says "holds" holds; the headline that is inconclusive is quoted as what goes against."""
    for verdicts in [(V.INCONCLUSIVE, V.HOLDS), (V.PARTLY, V.FAILS), (V.HOLDS, V.PARTLY, V.FAILS)]:
        rows = [row(i, v, measured=k + 0.5) for k, (i, v) in enumerate(zip("abc", verdicts, strict=False))]
        rows[0] = replace(rows[0], id=C1.headline[0])
        s = CS.summarise(rows, C1, "default")
        for r in s.quoted:
            said = re.search(re.escape(CS.evidence_text(r)) + r" (holds|partly holds|does not hold|is inconclusive)",
                             s.sentence)
            assert said is not None, s.sentence
            assert said.group(1) == {V.HOLDS: "holds", V.PARTLY: "partly holds", V.FAILS: "does not hold",
                                     V.INCONCLUSIVE: "is inconclusive"}[r.verdict]


def test_a_headline_that_did_not_decide_is_named_as_such_never_quoted():
    """Claim 3 at default (issue 62): the headline slope is not comparable; 'partly' comes from two other rows."""
    head = row(C3.headline[0], V.HOLDS, 0.35, 0.27, 0.44, nb="03_Ni_scaling", depends=("k_poly",))
    rows = gated([head, row("beta", V.HOLDS, nb="03_Ni_scaling"), row("precision", V.FAILS, 0.62, 0.59, 0.65,
                  band=(0.8, math.inf), nb="03_Ni_scaling"), premise("k_poly", V.FAILS, nb="03_Ni_scaling")],
                 "03_Ni_scaling")
    s = CS.summarise(rows, C3, "default")
    assert s.verdict == V.PARTLY and {r.id for r in s.deciding} == {"beta", "precision"}
    assert f"the headline {C3.short} is not comparable: {P.name('k_poly').split(' (')[0]} not met" in s.sentence
    assert "0.35" not in s.sentence and "0.62" in s.sentence
    assert len(s.sentence.split()) <= CS.MAX_WORDS


def test_not_comparable_names_the_premise_and_what_was_measured_anyway():
    head = row("gain_main", V.FAILS, -0.015, -0.029, -0.001, band=(0.02, math.inf), nb="04_pruning_gains",
               depends=("k_poly", "convergence"))
    rows = gated([head, premise("k_poly", V.FAILS, nb="04_pruning_gains"),
                  premise("convergence", V.FAILS, nb="04_pruning_gains")], "04_pruning_gains")
    s = CS.summarise(rows, C4, "default")
    assert s.verdict == V.NOT_COMPARABLE and [r.id for r in s.deciding] == ["k_poly", "convergence"]
    assert "2 of its premises are not met" in s.sentence
    assert "measured anyway, the pruning gain is -0.015 [-0.029, -0.001] (does not hold on its own)" in s.sentence
    assert [r.id for r in s.quoted] == ["k_poly", "gain_main"]


def test_a_premise_without_a_finite_measurement_reads_so_in_the_sentence_never_a_dash():
    """Claim 5 at default on digits-LT: Table 2 has no SimCLR number to compare with, so the baseline premise has no
    finite measurement; the sentence says so instead of '(– against [-10, 10])'."""
    head = row("gain_main", V.INCONCLUSIVE, -1.757, -5.231, 1.718, band=(0.0, math.inf), nb="06_lt_benchmarks",
               depends=("baseline_reproduced",))
    base = premise("baseline_reproduced", V.FAILS, nb="06_lt_benchmarks")
    base = replace(base, measured=math.nan, lo=math.nan, hi=math.nan, band_lo=-10.0, band_hi=10.0)
    s = CS.summarise(gated([head, base], "06_lt_benchmarks"), C5, "default")
    assert s.verdict == V.NOT_COMPARABLE and "–" not in s.sentence, s.sentence
    assert "(no finite measurement)" in s.sentence, s.sentence


def test_claim_4_says_what_the_premise_maps_answer_means():
    rule = ("answer (b) — (b) no cell meets every premise. Decided by: no cell of 16 meets every premise. In plain "
            "words: never.")
    rows = [row("claim4_map", V.NOT_COMPARABLE, nb="10_premise_map", rule=rule, would_be="")]
    s = CS.summarise(rows, C4, "default")
    assert s.kind == "b" and "answer (b)" not in s.sentence
    assert f"Premise map: (b), {CS.MAP_ANSWERS['b']}" in s.sentence and len(s.sentence.split()) <= CS.MAX_WORDS


def test_claim_4s_conflict_answer_names_both_premises_and_its_numbers_within_the_word_limit():
    """Answer (c) from the map's own rule (two ceilings below convergence's l'_p at Lemma B.1's K, as at default):
    the intro's sentence keeps the deciding pair, the d's and the ceilings, in at most MAX_WORDS words, beside 04's
    eight unmet premises and its gain measured anyway."""
    from imbalanced_cl.claims import premise_map as PM
    from imbalanced_cl.claims.premise_map.ceiling import LpCeiling
    from tests.test_premise_map import ALL, _cell, _result
    cell = _cell()
    res = [_result(cell, {**ALL, "convergence": False}, [0.0, 0.0])]
    ceil = (LpCeiling(10, 1589, "", 0.105, 0.5, 0.073, 2), LpCeiling(20, 2483, "", 0.303, 0.5, 0.125, 2))
    c = PM.conclusion(res, [], cell.cfg, ceil)
    rule = f"answer ({c.kind}) — {c.text} Decided by: {c.fact}. In plain words: {c.answer}"
    unmet = ("k_poly", "convergence", "lambda_range", "step_window", "lucky_exist", "prune_from_t4", "alpha_bound",
             "minority_growth")
    head = row("gain_main", V.FAILS, -0.015, -0.029, -0.001, band=(0.02, math.inf), nb="04_pruning_gains",
               depends=unmet)
    rows = gated([head] + [premise(u, V.FAILS, nb="04_pruning_gains") for u in unmet], "04_pruning_gains") + [
        row("claim4_map", V.NOT_COMPARABLE, nb="10_premise_map", rule=rule, would_be="")]
    s = CS.summarise(rows, C4, "default")
    assert s.kind == "c" and len(s.sentence.split()) <= CS.MAX_WORDS, s.sentence
    assert (f"Premise map: (c), {CS.MAP_ANSWERS['c']}: convergence and Lemma B.1's K at d = 10, 20 "
            "(l'_p ≤ 0.105, 0.303 against 0.50)") in s.sentence, s.sentence


def test_the_paper_scale_summary_is_the_claims_verdict_there_or_says_why_there_is_none():
    assert CS.paper_summary(C1, {}).status == "not yet run at paper scale"
    assert CS.paper_summary(C1, {NB1: {"unreadable": "bad json"}}).status == f"record of {NB1} unreadable"
    old = {"rows": [], "judged": "rows as judged when recorded (kept no measurements)", "commit": "755634f0",
           "date": "2026-11-26T02:43", "measurements": False}
    said = CS.paper_summary(C1, {NB1: old})
    assert said.verdict == "" and said.status == record.not_judged(old) and "755634f, 2026-11-26" in said.status
    assert record.column([row("a", V.HOLDS)], {NB1: old}) == [{"status": record.not_judged(old)}]
    rec = {"rows": [row("a", V.HOLDS), row("b", V.FAILS)], "judged": "judged by today's verdict code",
           "device": "cuda", "commit": "abc1234def", "date": "2026-11-28T01:00"}
    p = CS.paper_summary(C1, {NB1: rec})
    assert p.verdict == V.PARTLY and p.made_by == "cuda, commit abc1234, 2026-11-28"   # the claim's, not one row's


def _verdict_of(html_cell: str) -> str:
    return re.search(r'<b style="color:[^"]+">([^<]+)</b>', html_cell).group(1)


def test_every_page_states_the_same_verdict_for_each_claim_and_profile():
    """The intro's table, the scoreboard's claim table and each claim page's box read one summary; the ★ marks exactly
    the deciding rows."""
    rows = [row("rate_ratio", V.INCONCLUSIVE), row("rate_slope", V.HOLDS), row("t1", V.HOLDS, depends=("k_poly",)),
            premise("k_poly", V.FAILS)]
    rows = gated(rows) + [row("fig2_trend", V.FAILS, nb="05_appendix_figures")]
    paper = {NB1: {"rows": [row("rate_ratio", V.HOLDS)], "device": "cpu", "commit": "c0ffee0"}}
    pairs = CS.summaries(rows, "default", paper)
    intro, board = S.findings(pairs, "default"), S.answers_table(pairs)
    for b, p in pairs:
        tr = re.search(rf'<tr data-claim="{re.escape(b.claim.key)}">(.*?)</tr>', intro).group(1)
        cells = re.findall(r"<td[^>]*>(.*?)</td>", tr)
        tr2 = re.search(rf'<tr data-claim="{re.escape(b.claim.key)}">(.*?)</tr>', board).group(1)
        cells2 = re.findall(r"<td>(.*?)</td>", tr2)
        if b.verdict:
            assert _verdict_of(cells[2]) == _verdict_of(cells2[2]) == b.verdict
        if p.verdict:
            assert _verdict_of(cells[3]) == _verdict_of(cells2[3]) == p.verdict
        for nb in b.claim.notebooks:
            box = S.found_box(rows, nb, "default", paper)
            if box:
                assert f'<li data-claim="{b.claim.key}"><b style="color:' in box and b.sentence.replace(
                    "'", "&#x27;") in box and _verdict_of(box.split(f'data-claim="{b.claim.key}">')[1]) == b.verdict
    assert [p.verdict for _, p in pairs][0] == V.HOLDS
    body = mark_deciding(render_html([r for r in rows if r.notebook == NB1]), NB1, pairs)
    starred = re.findall(r'<tr data-row="([^"]+)"><td><span class="vt-decides"', body)
    assert starred == [r.id for r in pairs[0][0].deciding] == ["rate_ratio", "rate_slope"]


def _default_rows() -> list[V.Verdict]:
    """The rows of every committed default notebook record, as recorded (results/campaign/default/notebook)."""
    out = []
    for p in sorted((ROOT / "results" / "campaign" / "default" / "notebook").glob("*.json")):
        rec = json.loads(p.read_text())
        out += [replace(r, notebook=r.notebook or rec["name"]) for r in record.read_rows(rec["payload"]["rows"])]
    return out


def test_the_six_sentences_at_default_from_the_committed_records_agree_with_their_rows(capsys):
    rows = _default_rows()
    if not rows:
        pytest.skip("no committed default records in this checkout")
    by_id = {(r.notebook, r.id): r for r in rows}
    for c in A.CLAIMS:
        s = CS.summarise(rows, c, "default")
        with capsys.disabled():
            print(f"\n[{s.verdict}] {s.sentence}")
        assert len(s.sentence.split()) <= CS.MAX_WORDS
        assert s.sentence.startswith(f"At default, claim {c.key} {V.PREDICATE[s.verdict]}")
        assert s.verdict == V.combine([r.verdict for r in A.evidence(rows, c)
                                       if r.verdict not in (V.NOT_COMPARABLE, V.UNTESTED)]) or not any(
            r.verdict not in (V.NOT_COMPARABLE, V.UNTESTED) for r in A.evidence(rows, c))
        for r in s.quoted:                         # each quoted row is the page's own row, with its own numbers
            assert by_id[(r.notebook, r.id)] == r
            assert CS.mentions(s.sentence, r, s.answer)
            if value := re.search(re.escape(CS.name(r)) + r" \(([-\d.e]+)", s.sentence):
                assert value.group(1) == fmt(r.measured)
        h = s.headline
        if h is not None and h not in s.deciding and h.verdict == V.NOT_COMPARABLE and s.verdict != V.NOT_COMPARABLE:
            assert f"the headline {c.short} is not comparable" in s.sentence


def test_claim_5s_prediction_is_table_2s_gains():
    from imbalanced_cl.lt.experiment import TABLE2
    gains = {k: round(w[0] - wo[0], 2) for k, (wo, w, _, _) in TABLE2.items()}
    cifar = [g for (data, _), g in gains.items() if data.startswith("cifar")]
    c5 = next(c for c in A.CLAIMS if c.key == "5")
    assert f"+{min(cifar):.1f} to +{max(cifar):.1f} points on CIFAR-LT" in c5.predicts
    assert f"+{gains[('imagenet-lt', 256)]:.1f} on ImageNet-LT" in c5.predicts


def _visible_words(fragment: str) -> int:
    """Words a reader sees in an HTML fragment, folded <details> left out."""
    import html as H
    shown = re.sub(r"(?s)<details.*?</details>", " ", fragment)
    return len(H.unescape(re.sub(r"<[^>]+>", " ", shown)).split())


@pytest.mark.slow
def test_the_built_book_states_one_verdict_per_claim_on_every_page_and_its_links_land(ci_book):
    """The built ci book (issue 62): for each claim, the intro's table, the scoreboard's claim table and every page of
    its notebooks state one verdict; each "What we found" box shows at most 150 words unfolded; every link to a
    verdict table lands on an element with that id; the deciding rows carry a ★."""
    out, log, rc = ci_book
    assert rc == 0, f"the ci book did not build:\n{log[-4000:]}"
    html = out / "_build" / "html"
    pages = {p.relative_to(html).as_posix(): p.read_text() for p in html.rglob("*.html")}

    def claim_cell(page: str, key: str, col: int) -> str:
        tr = re.search(rf'<tr data-claim="{re.escape(key)}">(.*?)</tr>', page, re.S).group(1)
        return re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)[col]

    intro, board = pages["book/intro.html"], pages["book/scoreboard.html"]
    for c in A.CLAIMS:
        said = _verdict_of(claim_cell(intro, c.key, 2))
        assert said == _verdict_of(claim_cell(board, c.key, 2)), c.key
        for nb in c.notebooks:
            page = pages[f"notebooks/{nb}.html"]
            box = page[page.index("sb-found"):page.index("</div>", page.index("sb-found"))]
            item = box.split(f'<li data-claim="{c.key}">')[1]
            assert _verdict_of(item) == said, (c.key, nb)
            assert _visible_words(box) <= 150, (nb, _visible_words(box))
    for nb in ("08_scale", "09_feature_decoupling"):                   # a one-line answer opens them too
        assert '<li data-claim="' in pages[f"notebooks/{nb}.html"].split("sb-found", 1)[1][:3000]
    for name, page in pages.items():
        for target, anchor in re.findall(r'href="([^"#]*\.html)#(verdict[^"]*)"', page):
            where = (html / name).parent / target
            assert f'id="{anchor}"' in where.read_text(), (name, target, anchor)
    assert any("vt-decides" in pages[f"notebooks/{c.notebooks[0]}.html"] for c in A.CLAIMS)
