"""Text for readers only: no notes to ourselves ("brief", "issue 12", "session 5") and no line numbers of our text
copy of the paper ("L1266", "W351") in the book's sources, the parameter help (`papermill --help-notebook`, read
through papermill's own inspection) or the built ci book's HTML. The paper is cited by section, equation, theorem
and appendix; line numbers may stay in code comments only, never in a config field's comment (that is help)."""
from __future__ import annotations

import html.parser
import json
import re
from pathlib import Path

import papermill
import pytest

ROOT = Path(__file__).resolve().parents[1]
# A note to ourselves, or a line reference into papers/*.txt (L123, W45 with three or four digits, or two digits
# with a range such as L62-64); "Theory at a glance" replaced "Theory in brief", so "brief" is never legitimate.
NOTE = re.compile(r"\bbrief\b|\bissue \d|\bsession \d|\b[LW]\d{3,4}\b|\b[LW]\d{2,4}[–-]\d{2,4}\b", re.IGNORECASE)


def _hits(text: str, where: str) -> list[str]:
    return [f"{where}: …{text[max(0, m.start() - 50):m.end() + 30]!r}…" for m in NOTE.finditer(text)]


def test_the_pattern_finds_what_it_must():
    """Oracle cases for the pattern itself: every kind of note is caught, and ordinary prose is not."""
    for bad in ("brief §6 item 1", "the Brief's argument", "(issue 14)", "Issue 30", "session 5", "(L1266)",
                "W351", "L449–477", "L62-64"):
        assert NOTE.search(bad), bad
    for ok in ("Theory at a glance", "Lemma B.1", "L = 4 tokens", "eq. (40)", "App. E.3", "W eq. 70", "L32 = run",
               "issues", "a session of work", "T1"):
        assert not NOTE.search(ok), ok


def _sources() -> list[tuple[str, str]]:
    out = []
    for md in sorted((ROOT / "book").glob("*.md")) + [ROOT / "README.md"]:
        out.append((md.relative_to(ROOT).as_posix(), md.read_text()))
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(nb.read_text())["cells"]):
            out.append((f"{nb.relative_to(ROOT).as_posix()} cell {i}", "".join(cell["source"])))
    return out


def test_book_sources_hold_no_notes_to_ourselves():
    """Every page and every notebook cell (prose and code, both shown on the page) is free of notes and line refs."""
    bad = [h for where, text in _sources() for h in _hits(text, where)]
    assert not bad, "notes to ourselves in reader-facing text:\n" + "\n".join(bad)


def test_parameter_help_holds_no_notes_to_ourselves():
    """What `papermill --help-notebook` prints for every notebook (its parameters and their help)."""
    bad = []
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.ipynb")):
        for name, p in papermill.inspect_notebook(str(nb)).items():
            bad += _hits(f"{name}: {p.get('help', '')}", f"{nb.name} parameter {name}")
    assert not bad, "notes to ourselves in the parameter help:\n" + "\n".join(bad)


class _Text(html.parser.HTMLParser):
    """The visible text of a page (script and style bodies left out) and its images' alt text."""

    def __init__(self):
        super().__init__()
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        for k, v in attrs:
            if k in ("alt", "title", "aria-label") and v:
                self.parts.append(v)

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


@pytest.mark.slow
def test_built_book_holds_no_notes_to_ourselves(ci_book):
    """The built ci book's HTML (every page, outputs included) is free of notes and line refs."""
    out, log, rc = ci_book
    assert rc == 0, f"the ci book did not build:\n{log[-4000:]}"
    bad = []
    pages = sorted((out / "_build" / "html").rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        if "_static" in page.parts:
            continue
        parser = _Text()
        parser.feed(page.read_text(errors="replace"))
        bad += _hits(" ".join(parser.parts), page.name)
    assert not bad, "notes to ourselves in the built book:\n" + "\n".join(bad[:40])
