"""Sphinx extension for the book's HTML: one copy of each inline script, and accessible theme buttons.

Listed in _config.yml (sphinx.extra_extensions). Two defects of the stock toolchain, fixed here:
- Sphinx 7.4 adds an inline script registered after the builder starts (sphinx-thebe's THEBE_JS_URL,
  sphinx-togglebutton's selector) twice, once with filename None and once with '', so every page logs
  "Identifier 'THEBE_JS_URL' has already been declared". `dedupe_scripts` keeps the first copy.
- The theme's search and colour-mode buttons fail axe-core's label-content-name-mismatch rule, and its
  left sidebar lies outside every landmark (rule region); static/imbalanced-cl-a11y.js repairs both in
  the browser.
"""
from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
A11Y_JS = "imbalanced-cl-a11y.js"


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


def _add_static(app) -> None:
    app.config.html_static_path.append(str(STATIC))


def setup(app):
    """Register the handlers and the accessibility script."""
    app.connect("builder-inited", _add_static)
    app.connect("html-page-context", dedupe_scripts)
    app.add_js_file(A11Y_JS, defer="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
