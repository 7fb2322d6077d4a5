"""The book's Sphinx extension repairs what axe-core finds in docutils' and myst-nb's HTML (issue 28, item 4): the
bibliography's deprecated doc-biblioentry role inside a list (aria-required-children, critical), empty header cells
(empty-table-header) and a folded cell's mislabelled summary (label-content-name-mismatch). Checked on HTML that
docutils and myst-nb themselves write, and on the built ci book."""
from __future__ import annotations

import re

import pytest
from docutils.core import publish_parts

from imbalanced_cl.book.pages.sphinxext import accessible_body

RST = """
A claim [Ano25]_.

.. [Ano25] Anonymous. Theoretical analysis of contrastive learning under imbalanced data.
.. [CKNH20] Chen et al. A simple framework for contrastive learning.

+------+----------+----------+
|      | minority | majority |
+======+==========+==========+
| gain | 2.0      | 1.0      |
+------+----------+----------+
"""


def _docutils_body() -> str:
    return publish_parts(RST, writer_name="html5")["body"]


def test_docutils_writes_what_axe_core_flags():
    """The premise of the repair: docutils' own output has the deprecated role and an empty <th>."""
    body = _docutils_body()
    assert 'role="doc-biblioentry"' in body and 'role="list"' in body
    assert re.search(r"<th[^>]*>\s*(<p>\s*</p>)?\s*</th>", body)


def test_accessible_body_makes_list_items_and_empty_corners_plain_cells():
    body = accessible_body(_docutils_body())
    assert "doc-biblioentry" not in body and body.count('role="listitem"') == 2
    assert not re.search(r"<th[^>]*>\s*(<p>\s*</p>)?\s*</th>", body)
    assert re.search(r"<td[^>]*></td>", body) and "<p>minority</p></th>" in body   # named headers stay <th>
    assert accessible_body(body) == body                                              # idempotent


def test_a_folded_cells_summary_is_named_by_its_visible_text():
    """myst-nb's own markup for a hide-cell cell: the summary's aria-label ("Toggle hidden content") does not contain
    what it shows ("Show code cell content"), which fails axe-core's label-content-name-mismatch."""
    from types import SimpleNamespace

    from myst_nb.sphinx_ import depart_HideCellInput, visit_HideCellInput
    writer = SimpleNamespace(body=[])
    node = {"classes": ["above-input"], "prompt_show": "Show code cell content",
            "prompt_hide": "Hide code cell content"}
    visit_HideCellInput(writer, node)
    depart_HideCellInput(writer, node)
    markup = "".join(writer.body)
    assert "<summary aria-label=" in markup
    fixed = accessible_body(markup)
    assert "aria-label" not in fixed and "<summary>" in fixed and "Show code cell content" in fixed


@pytest.mark.slow
def test_built_book_has_no_deprecated_role_or_empty_header(ci_book):
    out, log, rc = ci_book
    assert rc == 0, log[-3000:]
    pages = [p for p in (out / "_build" / "html").rglob("*.html") if "_static" not in p.parts]
    refs = (out / "_build" / "html" / "book" / "references.html").read_text()
    assert 'class="citation-list"' in refs and 'role="listitem"' in refs
    for page in pages:
        text = page.read_text()
        assert "doc-biblioentry" not in text, page
        assert not re.search(r"<th[^>]*>\s*(<p>\s*</p>)?\s*</th>", text), page
        assert "<summary aria-label=" not in text, page
