"""The intro's first screen, generated from the claim-level answers (book/pages/answers.py): which profile built the
book, one plain sentence per claim with the paper-scale record beside it (its one-figure summary is drawn by
book/plots/summary.py, a layer above). Presentation only: every number comes from a verdict row.
"""
from __future__ import annotations

from dataclasses import replace

from ... import verdict as V
from . import answers as A
from . import claim_summary as CS
from .tables import ANCHOR
from .render import badge, esc, header_cells, lower_first, plural, value

# What each profile is, in a reader's words (the sizes themselves live in profiles.yaml and the configs).
PROFILE_MEANING = {
    "ci": "a smoke test: tiny sizes that check that every notebook runs end to end in seconds. Its verdicts are not "
          "evidence about the paper; the published book is built at the default profile",
    "default": "the published book's sizes: minutes per notebook on a 2-core laptop, far below the paper's scale",
    "paper": "the paper's own scale (d1 = 500, many replicates; hours, a GPU helps)",
}

# What a claim's verdict says about the paper, in one clause (the verdict words' definitions are on the methods
# page, verdict.py; this is only their consequence for the claim).
SAYS = {
    V.HOLDS: "this supports the paper's prediction",
    V.PARTLY: "this supports the prediction only in part",
    V.FAILS: "this contradicts the paper's prediction",
    V.INCONCLUSIVE: "the data cannot decide at this size; a larger run would",
    V.NOT_COMPARABLE: "this says nothing for or against the paper, because a premise it depends on was not met",
    V.UNTESTED: "nothing was measured for it at this size",
}





def verdict_anchor(notebook: str, base: str = "../notebooks/") -> str:
    """The link to a claim notebook's verdict table (the glued table carries id ANCHOR)."""
    return f"{base}{notebook}.html#{ANCHOR}"


def unit(a: A.Answer) -> str:
    """The unit of the claim's headline measurement."""
    return a.claim.unit


def _row_note(h: V.Verdict, claim_verdict: str) -> str:
    """'' when the headline row reads as the claim does; else what that row itself reads (and, where it is gated,
    what was measured there), so a reader who checks the number against the verdict beside it sees why they differ."""
    row = h.verdict
    if row == claim_verdict:
        return ""
    there = f" (measured there: “{h.would_be}”)" if row == V.NOT_COMPARABLE and h.would_be else ""
    return f"This row reads “{row}”{there}; the claim's verdict combines all its judged rows."


MAX_WORDS = CS.MAX_WORDS     # the first screen's sentence per claim (issue 62): built by claim_summary


def paragraph(a: A.Answer, profile: str, paper: dict | None = None) -> str:
    """The full paragraph for a claim's page: what was predicted and measured, at which scale, what the verdict says,
    the premises not met and what was measured there, the plain-words answer and the paper-scale record."""
    h, prof = a.headline, profile or "this build's"
    parts = [f"Predicted ({a.claim.source}): {a.claim.predicts}."]
    if h is not None and value(h):
        u, what = unit(a), h.claim.rstrip(".")
        parts.append(f"Measured at the {prof} profile: {lower_first(what)}, {value(h)}"
                     f"{f' ({u})' if u else ''}, against {h.predicted}.")
        parts.append(_row_note(h, a.verdict))
    else:
        parts.append(f"Measured at the {prof} profile: no finite measurement.")
    says = SAYS.get(a.verdict, "")
    if a.verdict == V.NOT_COMPARABLE and a.failed_premises:
        failed, _, short = A.by_premise(a)         # a premise checked per cell is named once
        says += f" ({', '.join(short[p] for p in failed)} not met)"
        if a.measured not in ("—", V.NOT_COMPARABLE, V.UNTESTED):
            says += f"; measured there anyway, its rows combine to “{a.measured}”"
    parts.append(f"Verdict {a.verdict}: {says}.")
    if a.plain:
        parts.append(f"In plain words: {a.plain}")
    if paper is not None:
        p = CS.paper_summary(a.claim, paper)
        parts.append(p.sentence + (f" (Recorded on {p.made_by}.)" if p.made_by else "") if p.verdict
                     else f"At the paper's scale: {p.status}.")
    return " ".join(p for p in parts if p)


def build_note(profile: str, commit: str = "", date: str = "") -> str:
    """HTML: the profile this build used and what it means (for ci: that it is a smoke test)."""
    meaning = PROFILE_MEANING.get(profile, "notebooks run at different profiles; see the scoreboard")
    kind = "warning" if profile == "ci" else "note"
    return (f'<div class="admonition {kind} sb-build"><p class="admonition-title">This build: the '
            f'{esc(profile or "mixed")} profile</p><p>The numbers on these pages come from the '
            f'<b>{esc(profile or "mixed")}</b> profile: {esc(meaning)}. Built from commit '
            f'<code>{esc(commit or "unknown")}</code> on {esc(date or "an unknown date")}.</p></div>')


def verdict_cell(s: CS.ClaimSummary) -> str:
    """HTML: a claim's verdict at one profile with the number that decided it and what recorded it, or why there is
    no verdict there."""
    if not s.verdict:
        return f"<small>{esc(s.status)}</small>"
    nums = "".join(f"<br><small>{esc(CS.name(r))}: <b>{esc(value(r))}</b> ({esc(_reads(r))})</small>"
                   for r in s.quoted if value(r))
    made = f"<br><small>{esc(s.made_by)}</small>" if s.made_by else ""
    return badge(s.verdict) + nums + made


def _reads(r: V.Verdict) -> str:
    """What a quoted row reads on its own: its verdict ('not met' for a premise row; for a row not comparable, what
    it would read)."""
    if V.is_premise_row(r):
        return "met" if r.verdict == V.HOLDS else "not met"
    return f"{r.would_be} on its own" if r.verdict == V.NOT_COMPARABLE and r.would_be else r.verdict


def findings(pairs: list, profile: str, base: str = "../notebooks/") -> str:
    """HTML table, one row per claim: the claim, its sentence (claim_summary), and the claim's verdict at this build's
    profile and at the paper's scale, each with the number that decided it; it stacks into cards on a narrow screen
    (pages/static CSS), so the verdict stays visible."""
    head = ["claim", "what we found", f"verdict ({esc(profile or 'this build')})", "paper scale"]
    out = ['<table class="sb-findings"><caption>What the book found, claim by claim</caption><thead><tr>'
           + header_cells(head) + "</tr></thead><tbody>"]
    for b, p in pairs:
        nb = b.claim.notebooks[0]
        cells = [(f'<b>Claim {esc(b.claim.key)}</b> · {esc(b.claim.title)}<br><small>{esc(b.claim.source)}; '
                  f'<a href="{verdict_anchor(nb, base)}">evidence: its verdict table</a></small>', "claim"),
                 (f'{esc(b.sentence)} <small><a href="{base}{esc(nb)}.html">The full paragraph and '
                  f'the numbers: its page</a></small>', "what we found"),
                 (verdict_cell(b), "verdict"), (verdict_cell(p), "paper scale")]
        out.append(f'<tr data-claim="{esc(b.claim.key)}">'
                   + "".join(f'<td data-label="{lab}">{c}</td>' for c, lab in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


class Findings:
    """The intro's build note and per-claim findings table (HTML in the book, plain text elsewhere), from the claims'
    summaries: (this build's, the paper scale's) per claim (claim_summary.summaries)."""

    def __init__(self, pairs: list, profile: str, commit: str = "", date: str = "", base: str = "../notebooks/"):
        self.pairs, self.profile, self.commit, self.date, self.base = pairs, profile, commit, date, base

    def _repr_html_(self):
        return build_note(self.profile, self.commit, self.date) + findings(self.pairs, self.profile, self.base)

    def __repr__(self):
        return "\n".join(b.sentence for b, _ in self.pairs)


def _claim_item(rows: list[V.Verdict], c: A.Claim, profile: str, paper: dict | None, notebook: str) -> str:
    """One claim's list item in the "What we found" box: its verdict and sentence at this profile and at the paper's
    scale (claim_summary, the intro's own), and, folded, the full paragraph; the plain-words answer of another page
    (claim 4's premise map, on notebook 04) is a link to that page, not a copy."""
    b, p = CS.summarise(rows, c, profile), CS.paper_summary(c, paper or {})
    there = (f"{badge(p.verdict)}: {esc(p.sentence.split(': ', 1)[-1])}" if p.verdict else esc(p.status))
    a = A.answer(rows, c)
    home = next((r.notebook for r in rows if c.plain_row and r.id == c.plain_row), notebook)
    link = ""
    if a.plain and home != notebook:
        a = replace(a, plain="")
        link = f' <a href="{esc(home)}.html">Its answer in plain words, on the premise map\'s page.</a>'
    return (f'<li data-claim="{esc(c.key)}">{badge(b.verdict)} · {esc(b.sentence)}<br><small>Paper scale: {there}'
            "</small>"
            f'<details class="sb-why"><summary>Why, in full</summary><small>'
            f"{esc(paragraph(a, profile, paper or {}))}{link}</small></details></li>")


def _premises_line(premises: list[V.Verdict]) -> str:
    """The box's count of premise rows and those not holding ("" without premise rows); the premises themselves are
    listed once, in the table's premise note."""
    unmet = [r for r in premises if r.verdict != V.HOLDS]
    return f" {plural(len(premises), 'premise row')}, {len(unmet)} not holding." if premises else ""


def found_box(rows: list[V.Verdict], notebook: str, profile: str = "", paper: dict | None = None) -> str:
    """HTML: the "What we found" box a claim notebook's page opens with: for each claim it tests (answers.CLAIMS and
    answers.PAGES), the claim's verdict and sentence from every notebook's rows (`rows`: the whole build's, so the page
    says what the intro says), beside the paper-scale summary; then this page's own counts; "" when the notebook
    glued no rows."""
    mine = [r for r in rows if (r.notebook or notebook) == notebook]
    if not mine:
        return ""
    claims = [r for r in mine if V.is_claim_row(r)]
    tally = ", ".join(f"{n} {v}" for v in V.VERDICTS if (n := sum(r.verdict == v for r in claims)))
    items = [_claim_item(rows, c, profile, paper, notebook) for c in A.CLAIMS + A.PAGES if notebook in c.notebooks]
    where = f"At the <b>{esc(profile)}</b> profile" if profile else "In this run"
    return ('<div class="admonition tip sb-found"><p class="admonition-title">What we found</p>'
            + (f"<ul>{''.join(items)}</ul>" if items else "")
            + f"<p><small>{where}, this page has {plural(len(claims), 'claim row')} ({esc(tally)})."
            f"{_premises_line([r for r in mine if V.is_premise_row(r)])} The rows that decide a claim are marked ★ "
            f'in the table.</small></p><p><a href="#{ANCHOR}">The verdict table, with every row and its rule ↓</a>'
            "</p></div>")


def answers_table(pairs: list, base: str = "../notebooks/") -> str:
    """The scoreboard's claim-level table: claim · the paper predicts · the claim's verdict at this build's profile and
    at the paper's scale, each with the number that decided it; under each, folded, the criterion, the regime and
    why. Wrapped in a horizontally scrollable, labelled region for narrow screens."""
    profile = pairs[0][0].profile if pairs else ""
    head = ["claim", "the paper predicts", f"verdict ({esc(profile or 'this build')})", "paper scale"]
    out = ['<div class="sb-scroll" style="overflow-x:auto" tabindex="0" role="region" aria-label="Claim-level '
           'answers (scrolls sideways on narrow screens)"><table class="verdict-table sb-answers">'
           '<caption>The answer, claim by claim</caption><thead><tr>' + header_cells(head) + "</tr></thead><tbody>"]
    for b, p in pairs:
        a = b.answer
        links = ", ".join(f'<a href="{verdict_anchor(nb, base)}">{esc(nb[:2])}</a>' for nb in b.claim.notebooks)
        r = b.figure_row
        rule = "—" if r is None else r.rule.split(";")[0]
        why = (f"<b>deciding rule</b>: {esc(rule)}<br><b>the paper's regime</b>: {esc(b.claim.regime)}; "
               f"<b>ours</b>: {esc(A.ours(a))}<br><b>why</b>: {esc(a.why)}")
        cells = [f'<b>{esc(b.claim.key)}</b> {esc(b.claim.title)} <small>({esc(b.claim.source)}; {links})</small>',
                 f"<small>{esc(b.claim.predicts)}</small>",
                 f'{verdict_cell(b)}<details class="sb-why"><summary>why</summary><small>{why}</small></details>',
                 verdict_cell(p)]
        out.append(f'<tr data-claim="{esc(b.claim.key)}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


class AnswersTable:
    """Displayable claim-level table (HTML in the book, plain text elsewhere)."""

    def __init__(self, pairs: list, base: str = "../notebooks/"):
        self.pairs, self.base = pairs, base

    def _repr_html_(self):
        return answers_table(self.pairs, self.base)

    def __repr__(self):
        return "\n".join(f"claim {b.claim.key}: {b.verdict} ({b.sentence})" for b, _ in self.pairs)


class VerdictLegend:
    """The verdict words and their one meaning, as verdict.py states them (verdict.legend_markdown), for the intro."""

    def _repr_markdown_(self):
        return V.legend_markdown()

    def _repr_html_(self):
        # The intro pastes glued outputs by their HTML ({glue} with :doc: renders no Markdown): render it here.
        from markdown_it import MarkdownIt
        return ('<div class="sb-legend">' + MarkdownIt("commonmark").enable("table").render(self._repr_markdown_())
                + "</div>")

    def __repr__(self):
        return self._repr_markdown_()


def bullets(lines) -> object:
    """Report lines as a Markdown bullet list (displayable), so that a notebook's conclusion wraps in the page like
    prose instead of running off a printed block; a leading "- " is kept once, and "*" is escaped."""
    from IPython.display import Markdown
    items = [str(s).strip().removeprefix("- ").replace("*", r"\*") for s in lines if str(s).strip()]
    return Markdown("\n".join(f"- {s}" for s in items))
