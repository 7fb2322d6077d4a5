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

from imbalanced_cl.book.pages import render as R

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


# --- nothing stray in the built pages (issue 62, item 7) ---
# Where it may stand: a cell's output (printed text, a displayed table), a table cell, or anywhere a reader reads.
# A command example in the prose may well name /tmp/x; a cell's output may not name the build machine's folders.
OBJECT_REPR = re.compile(r"<[\w.]+(?: object)? at 0x[0-9a-fA-F]+>")             # <torch._C.Generator at 0x7f…>
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|root|tmp|Users|private|var/folders|scratch)/[\w.+-]")
BARE_NAN = re.compile(r"(?<![\w.-])nan(?![\w.-])", re.IGNORECASE)                 # a number that is not there
ANYWHERE = {
    "a count with the wrong number": re.compile(r"(?<![\d.,])\b1 (?:premise|claim|verdict|judged|evidence) rows\b"),
    "an acronym lower-cased": re.compile(r"\b[a-z][A-Z]{3,}\b"),                  # "sDCLR-style"
}
# linkify's fuzzy links made a file name a web site: premises.py -> http://premises.py
AUTOLINK = re.compile(r'href="https?://[\w-]+\.(?:py|ipynb|md|txt|json|npz|csv|yml|yaml|toml|sh)/?"')


class _Where(html.parser.HTMLParser):
    """A page's visible text in three parts: inside cell outputs, inside table cells, and all of it."""

    def __init__(self):
        super().__init__()
        self.output, self.cells, self.all = [], [], []
        self._divs, self._cell, self._skip = [], 0, 0

    def handle_starttag(self, tag, attrs):
        if tag == "div":
            self._divs.append("cell_output" in (dict(attrs).get("class") or "").split())
        elif tag in ("td", "th"):
            self._cell += 1
            self.cells.append("")
        elif tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag == "div" and self._divs:
            self._divs.pop()
        elif tag in ("td", "th") and self._cell:
            self._cell -= 1
        elif tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if self._skip:
            return
        self.all.append(data)
        if any(self._divs):
            self.output.append(data)
        if self._cell:
            self.cells[-1] += data


def stray(page: str, where: str) -> list[str]:
    """What a page shows that it should not: an object's repr, a machine's path or a bare "nan" in a cell's output,
    a table cell that reads "nan", a file name autolinked as a web site, a wrong count or a lower-cased acronym."""
    p = _Where()
    p.feed(page)
    output, text = "\n".join(p.output), " ".join(p.all)
    bad = [f"{where}: {what}: …{s[max(0, m.start() - 40):m.end() + 30]!r}…"
           for what, pat, s in (("an object's repr", OBJECT_REPR, output), ("a machine's path", MACHINE_PATH, output),
                                ("a bare nan in an output", BARE_NAN, output),
                                *((w, pat, text) for w, pat in ANYWHERE.items()),
                                ("a file name autolinked", AUTOLINK, page))
           for m in pat.finditer(s)]
    return bad + [f"{where}: a table cell reads {c.strip()!r}" for c in p.cells if BARE_NAN.fullmatch(c.strip())]


OUT = '<div class="cell_output docutils container"><div class="output stream"><pre>{}</pre></div></div>'


@pytest.mark.parametrize("page, what", [
    (OUT.format("&lt;torch._C.Generator at 0x7fbe30142370&gt;"), "an object's repr"),
    (OUT.format("&lt;object object at 0x10&gt;"), "an object's repr"),
    (OUT.format(" 0.60    -1.06        nan     1.68"), "a bare nan in an output"),
    (OUT.format("rank: [nan, nan, nan, nan]"), "a bare nan in an output"),
    (OUT.format("**Data:** CIFAR-10 (lossy; /work/shared/data/cifar10-jpeg.npz)"), "a machine's path"),
    (OUT.format("cache in /home/me/.cache/x"), "a machine's path"),
    ("<table><tr><td>0.5</td><td> NaN </td></tr></table>", "a table cell reads"),
    ('<p>on <a class="reference external" href="http://premises.py">premises.py</a></p>', "a file name autolinked"),
    ("<p>1 premise rows, 1 not holding</p>", "a count with the wrong number"),
    ("<p>accuracy gain of sDCLR-style pruning</p>", "an acronym lower-cased"),
])
def test_the_stray_scan_finds_each_kind(page, what):
    hits = stray(page, "page")
    assert hits and all(what in h for h in hits), hits


@pytest.mark.parametrize("page", [
    OUT.format("dropped 0.6 [–, 0.8] (–: none in the grid); nanmean; finance; nan_policy; NaN-free"),
    OUT.format("CIFAR-10 (lossy; ../shared/data/cifar10-jpeg.npz); results/campaign/x.json; 1/tmp/2"),
    "<p>run <code>--out /tmp/tt/NAME</code> in a command example</p>",
    '<p><a href="https://example.org/a.py">a.py</a> and <code>premises.py</code></p>',
    "<p>1 premise row, 2 premise rows, 11 claim rows; SDCLR-style; SimCLR; A_maj; mAP</p>",
    "<table><tr><td>nanometre</td><td>–</td></tr></table>",
])
def test_the_stray_scan_passes_what_is_fine(page):
    assert stray(page, "page") == []


@pytest.mark.slow
def test_built_book_shows_nothing_stray(ci_book):
    """The built ci book's HTML: no object repr, machine path or bare nan in an output, no nan table cell, no file name
    autolinked as a web site, no "1 premise rows", no lower-cased acronym (on the session's one ci build)."""
    out, log, rc = ci_book
    assert rc == 0, f"the ci book did not build:\n{log[-4000:]}"
    html_dir = out / "_build" / "html"
    pages = [p for p in sorted(html_dir.rglob("*.html")) if "_static" not in p.parts and "_sources" not in p.parts]
    assert len(pages) > 10
    bad = [h for page in pages for h in stray(page.read_text(errors="replace"), page.relative_to(html_dir).as_posix())]
    assert not bad, "stray output in the built book:\n" + "\n".join(bad[:40])


# --- the renderers that keep them out, on hand-made input ---

def test_dash_nan_writes_a_dash_in_the_columns_width_and_says_why_once():
    lines = ["  rho  fit lucky", " 0.80      -0.27", " 0.60        nan", " 0.50        NaN"]
    out = R.dash_nan(lines, "no fit")
    assert out[:2] == lines[:2]
    assert out[2:4] == [" 0.60          –", " 0.50          –"]
    assert [len(s) for s in out[:4]] == [len(s) for s in lines]          # the columns stay aligned
    assert out[4:] == ["–: no fit"]
    assert R.dash_nan(lines[:2], "no fit") == lines[:2]                  # nothing missing: no footnote
    assert R.dash_nan(["nanmean 1.0", "x.nan"], "w") == ["nanmean 1.0", "x.nan"]


def test_numbers_dash_a_missing_number_and_say_why():
    assert R.numbers([float("nan")] * 2 + [None], "none in the grid") == "[–, –, –] (–: none in the grid)"
    assert R.numbers([0.123456, 2.0, float("nan")], "w") == "[0.123, 2, –] (–: w)"
    assert R.numbers([0.5, 1e-5], "never shown") == "[0.5, 1e-05]"
    assert R.numbers([], "w") == "[]"


def test_repo_relative_names_paths_from_the_repository(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    text = f"JPEG (lossy; {tmp_path}/shared/data/c.npz), kept in {root}/results/x.json; /elsewhere/y; a/b"
    assert R.repo_relative(text, root) == ("JPEG (lossy; ../shared/data/c.npz), kept in results/x.json; "
                                           "/elsewhere/y; a/b")
    assert R.repo_relative("/x/a and /y/b", "/x") == "a and /y/b"      # the file system's root is never rewritten


def test_plural_and_lower_first():
    assert [R.plural(n, "premise row") for n in (0, 1, 2)] == ["0 premise rows", "1 premise row", "2 premise rows"]
    assert [R.lower_first(s) for s in ("SDCLR-style pruning", "Majority rate", "A neuron", "A_maj rises", "K-pair",
                                       "ε_j", "")] == ["SDCLR-style pruning", "majority rate", "a neuron",
                                                       "A_maj rises", "K-pair", "ε_j", ""]
