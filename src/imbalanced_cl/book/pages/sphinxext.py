"""Sphinx extension for the book's HTML: one copy of each inline script, and accessible theme buttons.

Listed in _config.yml (sphinx.extra_extensions). Defects of the stock toolchain, fixed here:
- Sphinx 7.4 adds an inline script registered after the builder starts (sphinx-thebe's THEBE_JS_URL,
  sphinx-togglebutton's selector) twice, once with filename None and once with '', so every page logs
  "Identifier 'THEBE_JS_URL' has already been declared". `dedupe_scripts` keeps the first copy.
- The theme's search and colour-mode buttons fail axe-core's label-content-name-mismatch rule, and its
  left sidebar lies outside every landmark (rule region); static/imbalanced-cl-a11y.js repairs both in
  the browser.
- sphinx-external-toc writes index.html as a bare <meta> redirect: no title, no language, no icon, so the
  browser asks for /favicon.ico (a console error). `index_page` rewrites it as a small page of its own.
- docutils writes the bibliography as <div role="list"> of <div role="doc-biblioentry">, a role that ARIA 1.2
  deprecates and that a list may not hold (axe-core: aria-required-children, critical), and an empty corner of
  a table header as an empty <th> (empty-table-header). myst-nb names a folded cell's <summary> "Toggle hidden
  content" while it shows "Show code cell content" (label-content-name-mismatch, serious). `accessible_body`
  makes them list items and <td>s, and lets the summary's visible text name it.
- A header cell holding only a formula has no text axe-core can read (MathJax's MathML is embedded content):
  static/imbalanced-cl-a11y.js labels such formulas with their plain-text reading once MathJax has typeset them.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

from docutils import nodes

STATIC = Path(__file__).resolve().parent / "static"
A11Y_JS = "imbalanced-cl-a11y.js"
LAYOUT_CSS = "imbalanced-cl.css"   # the book's layout: full-width text at 1280 px, wrapped output, stacked tables


def script_key(js) -> tuple:
    """What makes two script tags the same: file (None and '' alike), priority and attributes (body too)."""
    attrs = getattr(js, "attributes", {}) or {}
    return (getattr(js, "filename", js) or "", getattr(js, "priority", 0), tuple(sorted(attrs.items())))


def dedupe(scripts: list) -> list:
    """The scripts in order, each distinct one once."""
    seen, out = set(), []
    for js in scripts:
        key = script_key(js)
        if key not in seen:
            seen.add(key)
            out.append(js)
    return out


def dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    """html-page-context handler: drop repeated script tags from this page."""
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        scripts[:] = dedupe(scripts)


_BIBLIOENTRY = re.compile(r'(<div class="citation"[^>]*? role=")doc-biblioentry(")')
_EMPTY_TH = re.compile(r"<th(\s[^>]*)?>\s*(?:<p>\s*</p>\s*)?</th>")
_SUMMARY_LABEL = '<summary aria-label="Toggle hidden content">'


def accessible_body(body: str) -> str:
    """A page body with bibliography entries as list items, empty header cells as <td> and folded cells' summaries
    named by their visible text (see the module doc)."""
    body = _BIBLIOENTRY.sub(r"\1listitem\2", body).replace(_SUMMARY_LABEL, "<summary>")
    return _EMPTY_TH.sub(lambda m: f"<td{m.group(1) or ''}></td>", body)


def repair_body(app, pagename, templatename, context, doctree) -> None:
    """html-page-context handler: accessible_body() on this page's body."""
    if isinstance(context.get("body"), str):
        context["body"] = accessible_body(context["body"])


def redirect_page(target: str, title: str, icon: str = "") -> str:
    """A complete HTML page that sends the reader to `target` (the book's first page)."""
    t, esc = html.escape(title), html.escape(target, quote=True)
    link = f'<link rel="icon" href="{html.escape(icon, quote=True)}">' if icon else ""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{t}</title>{link}'
            f'<meta http-equiv="Refresh" content="0; url={esc}"></head>\n'
            f'<body><main><p><a href="{esc}">{t}</a></p></main></body></html>\n')


def index_page(app, exception) -> None:
    """build-finished handler: replace the toc extension's bare redirect with redirect_page()."""
    if exception is not None or getattr(app.builder, "format", "") != "html":
        return
    index = Path(app.outdir) / "index.html"
    text = index.read_text(encoding="utf8") if index.exists() else ""
    found = re.fullmatch(r'\s*<meta http-equiv="Refresh" content="0; url=([^"]+)" />\s*', text)
    if found:
        favicon = app.config.html_favicon or ""
        icon = f"_static/{Path(favicon).name}" if favicon and "://" not in favicon else favicon
        index.write_text(redirect_page(found.group(1), app.config.html_title or app.config.project, icon),
                         encoding="utf8")


def _book(srcdir: str) -> tuple[list, dict]:
    """(every claim notebook's verdict rows in the staged book, the paper-scale records), gathered as the scoreboard
    gathers them (a verdict that changes with the seed shown inconclusive): what every page's claim summary is built
    from, so a page says what the intro says. Read once per build process."""
    key = str(srcdir)
    if key not in _BOOK:
        from . import scoreboard
        board = scoreboard.gather(str(Path(srcdir) / "notebooks"))
        _BOOK[key] = (board.rows, board.paper)
    return _BOOK[key]


_BOOK: dict = {}


def _page(app, docname: str) -> tuple[Path | None, str]:
    """(the executed notebook of a claim page, its profile), or (None, "") for any other page."""
    if not docname.startswith("notebooks/"):
        return None, ""
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb" or not path.exists():
        return None, ""
    import json
    return path, json.loads(path.read_text()).get("metadata", {}).get("imbalanced_cl", {}).get("profile", "")


def found_box(app, doctree) -> None:
    """Open every claim notebook's page with its "What we found" box (book/summary.found_box), built from every
    notebook's verdict rows (the claim's summary, as the intro shows it) under the page title: the reader sees the
    result before the method."""
    docname = app.env.docname
    path, profile = _page(app, docname)
    if path is None:
        return
    from . import summary
    rows, paper = _book(app.srcdir)
    box = summary.found_box(rows, Path(docname).name, profile, paper)
    section = next(iter(doctree.findall(nodes.section)), None)
    if not box or section is None:
        return
    title = next((i for i, n in enumerate(section.children) if isinstance(n, nodes.title)), -1)
    section.insert(title + 1, nodes.raw("", box, format="html"))


def mark_deciding(body: str, notebook: str, pairs: list) -> str:
    """A page body with a ★ before the first cell's text of each verdict-table row (<tr data-row="id">) that decides
    a claim's verdict (claim_summary.star)."""
    from . import claim_summary as CS
    marks = {r.id: CS.star(r, pairs) for b, _ in pairs for r in b.deciding if r.notebook == notebook}

    def mark(m):
        star = marks.get(html.unescape(m.group(1)), "")
        return m.group(0) + star if star else m.group(0)

    return re.sub(r'<tr data-row="([^"]*)"><td>', mark, body)


def deciding_rows(app, pagename, templatename, context, doctree) -> None:
    """html-page-context handler: on a claim page, mark_deciding() with the claims' summaries of the whole build."""
    if not pagename.startswith("notebooks/") or not isinstance(context.get("body"), str):
        return
    path, profile = _page(app, pagename)
    if path is None:
        return
    from . import claim_summary as CS
    rows, paper = _book(app.srcdir)
    context["body"] = mark_deciding(context["body"], Path(pagename).name, CS.summaries(rows, profile, paper))


def results_table(app, exception) -> None:
    """Write the downloadable results table (book/records/results_table.py) into the built HTML's results/ folder."""
    if exception is not None or app.builder.format != "html":
        return
    from ..records import results_table as RT
    RT.write(Path(app.srcdir) / "notebooks", Path(app.outdir) / "results")


def _add_static(app) -> None:
    app.config.html_static_path.append(str(STATIC))


def setup(app):
    """Register the handlers and the accessibility script."""
    app.connect("builder-inited", _add_static)
    app.connect("html-page-context", dedupe_scripts)
    app.connect("doctree-read", found_box)
    app.connect("html-page-context", repair_body)
    app.connect("html-page-context", deciding_rows)
    app.connect("build-finished", index_page, priority=900)
    app.connect("build-finished", results_table)  # after sphinx-external-toc wrote its redirect
    app.add_js_file(A11Y_JS, defer="defer")
    app.add_css_file(LAYOUT_CSS)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
