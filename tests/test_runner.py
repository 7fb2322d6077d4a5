"""The book runner (issue 28, item 3): a strict build stays strict on a rerun."""
from __future__ import annotations

from pathlib import Path

import pytest

from imbalanced_cl.book import runner


# --- item 3: strict builds stay strict ---

def _broken_book(executed: Path) -> Path:
    executed.mkdir()
    (executed / "_config.yml").write_text("title: t\nexecute:\n  execute_notebooks: 'off'\n")
    (executed / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    page = executed / "intro.md"
    page.write_text("# Intro\n\nA link to {ref}`nowhere-at-all`.\n")
    return page


@pytest.mark.slow
def test_a_broken_reference_fails_every_strict_build(tmp_path):
    """Sphinx keeps its environment between builds and does not re-read an unchanged page that warned: without a
    fresh environment the second strict build of the same broken page exits 0 and publishes it."""
    executed, out = tmp_path / "executed", tmp_path / "out"
    page = _broken_book(executed)
    assert runner.build_html(executed, out, strict=True) != 0
    assert runner.build_html(executed, out, strict=True) != 0, "the unchanged broken page passed the second time"
    assert not (out / "_build" / "html").exists(), "a failed strict build published HTML"
    page.write_text("# Intro\n\nNo link.\n")
    assert runner.build_html(executed, out, strict=True) == 0 and (out / "_build" / "html" / "intro.html").exists()
