"""The intro's first screen, generated from the claim-level answers (book/pages/answers.py): which profile built the
book, one plain sentence per claim with the paper-scale record beside it (its one-figure summary is drawn by
book/plots/summary.py, a layer above). Presentation only: every number comes from a verdict row.
"""
from __future__ import annotations

from ... import verdict as V
from . import answers as A
from ..records import record
from .render import badge, esc, header_cells, interval, lower_first, plural, value

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
    """The link to a claim notebook's verdict section (every claim notebook has a '## Verdict' heading)."""
    return f"{base}{notebook}.html#verdict"


def unit(a: A.Answer) -> str:
    """The unit of the claim's headline measurement."""
    return a.claim.unit


def paper_scale(a: A.Answer, paper: dict) -> dict:
    """The recorded paper-scale cell behind the claim's headline (record.column: its row under "row"), or
    {'status': why there is none}."""
    if a.headline is None:
        return {"status": "no headline row"}
    return record.column([a.headline], paper or {})[0]


def _row_note(h: V.Verdict, claim_verdict: str) -> str:
    """'' when the headline row reads as the claim does; else what that row itself reads (and, where it is gated,
    what was measured there), so a reader who checks the number against the verdict beside it sees why they differ."""
    row = h.verdict
    if row == claim_verdict:
        return ""
    there = f" (measured there: “{h.would_be}”)" if row == V.NOT_COMPARABLE and h.would_be else ""
    return f"This row reads “{row}”{there}; the claim's verdict combines all its judged rows."


MAX_WORDS = 40     # the first screen's sentence per claim (issue 49): the numbers are one click away


def sentence(a: A.Answer, profile: str) -> str:
    """One plain sentence, at most MAX_WORDS words, for the first screen: the claim's verdict at which profile, its
    headline number with its interval against the prediction, or (claim 4) the premise map's answer (a), (b) or (c)
    and the one fact that decides it. The full paragraph is on the claim's page (paragraph, found_box)."""
    prof, h = (f"the {profile} profile" if profile else "this build"), a.headline
    verb = V.PREDICATE.get(a.verdict, a.verdict)
    why = ""
    if a.verdict == V.NOT_COMPARABLE and a.failed_premises:
        why = f" ({A.premise_short(a.failed_premises[0])} not met)"
    number = f"{unit(a)} {value(h)} against {h.predicted}" if h is not None and value(h) else ""
    if a.kind:
        rest = [f"answer ({a.kind}): {a.decided}", f"answer ({a.kind})"]
    else:
        short = number.rsplit(" against ", 1)[0]
        rest = [number, short, value(h)] if number else ["no finite measurement"]
    for r, w in ((r, w) for r in rest for w in (why, "")):
        text = f"At {prof}, claim {a.claim.key} {verb}{w}: {r}."
        if len(text.split()) <= MAX_WORDS:
            return text
    return f"At {prof}, claim {a.claim.key} {verb}."


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
        names = ", ".join(A.premise_short(r) for r in a.failed_premises)
        says += f" ({names} not met)"
        if a.measured not in ("—", V.NOT_COMPARABLE, V.UNTESTED):
            says += f"; measured there anyway, its rows combine to “{a.measured}”"
    parts.append(f"Verdict {a.verdict}: {says}.")
    if a.plain:
        parts.append(f"In plain words: {a.plain}")
    p = paper_scale(a, paper or {})
    if p.get("status") == "ok":
        parts.append(f"At the paper's scale (recorded on {p.get('device', '?')}): {p['verdict']}, "
                     f"{interval(p['row'])}.")
    return " ".join(p for p in parts if p)


def build_note(profile: str, commit: str = "", date: str = "") -> str:
    """HTML: the profile this build used and what it means (for ci: that it is a smoke test)."""
    meaning = PROFILE_MEANING.get(profile, "notebooks run at different profiles; see the scoreboard")
    kind = "warning" if profile == "ci" else "note"
    return (f'<div class="admonition {kind} sb-build"><p class="admonition-title">This build: the '
            f'{esc(profile or "mixed")} profile</p><p>The numbers on these pages come from the '
            f'<b>{esc(profile or "mixed")}</b> profile: {esc(meaning)}. Built from commit '
            f'<code>{esc(commit or "unknown")}</code> on {esc(date or "an unknown date")}.</p></div>')


def findings(items: list[A.Answer], profile: str, paper: dict | None = None, base: str = "../notebooks/") -> str:
    """HTML table, one row per claim: the claim, one sentence on what was found, this build's verdict and the
    paper-scale record; it stacks into cards on a narrow screen (pages/static CSS), so the verdict stays visible."""
    head = ["claim", "what we found", f"verdict ({esc(profile or 'this build')})", "paper scale"]
    out = ['<table class="sb-findings"><caption>What the book found, claim by claim</caption><thead><tr>'
           + header_cells(head) + "</tr></thead><tbody>"]
    for a in items:
        nb = (a.headline.notebook if a.headline else "") or a.claim.notebooks[0]   # the evidence: the headline's table
        p = paper_scale(a, paper or {})
        pcell = (f'{badge(p["verdict"])}<br>'
                 f'<small>{esc(value(p["row"]))}; {esc(p.get("device", ""))}, commit {esc(p.get("commit", ""))}, '
                 f'{esc(p.get("date", ""))}</small>'
                 if p.get("status") == "ok" else f"<small>{esc(p.get('status', ''))}</small>")
        cells = [(f'<b>Claim {esc(a.claim.key)}</b> · {esc(a.claim.title)}<br><small>{esc(a.claim.source)}; '
                  f'<a href="{verdict_anchor(nb, base)}">evidence: its verdict table</a></small>', "claim"),
                 (f'{esc(sentence(a, profile))} <small><a href="{base}{esc(nb)}.html">The full paragraph and '
                  f'the numbers: its page</a></small>', "what we found"),
                 (badge(a.verdict), "verdict"),
                 (pcell, "paper scale")]
        out.append(f'<tr data-claim="{esc(a.claim.key)}">'
                   + "".join(f'<td data-label="{lab}">{c}</td>' for c, lab in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


class Findings:
    """The intro's build note and per-claim findings table (HTML in the book, plain text elsewhere)."""

    def __init__(self, items: list[A.Answer], profile: str, paper: dict | None = None, commit: str = "",
                 date: str = "", base: str = "../notebooks/"):
        self.items, self.profile, self.paper, self.commit, self.date, self.base = (items, profile, paper, commit,
                                                                                   date, base)

    def _repr_html_(self):
        return (build_note(self.profile, self.commit, self.date)
                + findings(self.items, self.profile, self.paper, self.base))

    def __repr__(self):
        return "\n".join(sentence(a, self.profile) for a in self.items)


def _claim_item(rows: list[V.Verdict], c, profile: str) -> str:
    """One claim's list item in the "What we found" box: its verdict, headline measurement and paragraph."""
    a = A.answer(rows, c)
    head = ""
    if a.headline is not None and value(a.headline):
        u = unit(a)
        head = (f" Headline: {esc(a.headline.claim)}, <b>{esc(value(a.headline))}</b>"
                f"{f' ({esc(u)})' if u else ''} against {esc(a.headline.predicted)}.")
    return (f'<li><b>Claim {esc(c.key)}</b> ({esc(c.source)}): {badge(a.verdict)}; '
            f'{esc(SAYS.get(a.verdict, ""))}.'
            f"{head}<br><small>{esc(paragraph(a, profile))}</small></li>")


def _premises_line(premises: list[V.Verdict]) -> str:
    """The box's count of premise rows and those not holding, the first four named ("" without premise rows)."""
    unmet = [r for r in premises if r.verdict != V.HOLDS]
    return (f"{plural(len(premises), 'premise row')}, {len(unmet)} not holding"
            + (": " + "; ".join(esc(A.premise_short(r)) for r in unmet[:4]) + ("; …" if len(unmet) > 4 else "")
               if unmet else "") + "." if premises else "")


def found_box(rows: list[V.Verdict], notebook: str, profile: str = "") -> str:
    """HTML: the "What we found" box a claim notebook's page opens with, from that notebook's own verdict rows: the
    claim-level verdict of each claim it tests (answers.answer on these rows alone), the headline measurement, the
    counts, and the premises not met; "" when the notebook glued no rows."""
    rows = [r for r in rows if (r.notebook or notebook) == notebook]
    if not rows:
        return ""
    claims = [r for r in rows if V.is_claim_row(r)]
    premises = [r for r in rows if V.is_premise_row(r)]
    tally = ", ".join(f"{n} {v}" for v in V.VERDICTS if (n := sum(r.verdict == v for r in claims)))
    items = [_claim_item(rows, c, profile) for c in A.CLAIMS if notebook in c.notebooks]
    prem = _premises_line(premises)
    where = f"At the <b>{esc(profile)}</b> profile" if profile else "In this run"
    return (f'<div class="admonition tip sb-found"><p class="admonition-title">What we found</p>'
            f"<p>{where}: "
            f"{plural(len(claims), 'claim row')} ({esc(tally)}). {prem}</p>"
            + (f"<ul>{''.join(items)}</ul>" if items else "")
            + '<p><a href="#verdict">The verdict table, with every row and its rule ↓</a></p></div>')


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
