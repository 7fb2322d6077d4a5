"""Where things are: the project root. At the bottom of the package, so any layer may ask (issue 26: lt/ used to
import it from book/build/profiles.py, above itself)."""
from __future__ import annotations

from pathlib import Path


def repo_root() -> Path:
    """The project root (the folder holding profiles.yaml and _toc.yml)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "profiles.yaml").exists() and (parent / "_toc.yml").exists():
            return parent
    cwd = Path.cwd()
    for parent in (cwd, *cwd.parents):
        if (parent / "profiles.yaml").exists():
            return parent
    raise FileNotFoundError("cannot find profiles.yaml above the package or the working directory")
