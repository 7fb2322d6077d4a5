"""A book root of one notebook for the runner's tests (tests/test_runner.py, tests/test_stalls.py)."""
from __future__ import annotations

from pathlib import Path

import nbformat
import yaml


def tiny_book(root: Path, body: str) -> None:
    """A book root with one notebook, notebooks/a.ipynb (parameter x, then `body`), in _toc.yml, and an empty ci
    profile."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    (root / "notebooks").mkdir(parents=True)
    nbformat.write(nb, root / "notebooks" / "a.ipynb")
    (root / "_toc.yml").write_text(yaml.safe_dump({"format": "jb-book", "root": "intro",
                                                   "chapters": [{"file": "notebooks/a"}]}))
    (root / "profiles.yaml").write_text(yaml.safe_dump({"ci": {}}))
