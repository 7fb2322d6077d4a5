"""The book runner and command line (issue 28, items 3 and 8): a strict build stays strict on a rerun, the cache
follows the versions of the packages that compute results, executed notebooks name no directory of the builder,
and `--help` / `--version` say what the command does."""
from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest
import torch

from imbalanced_cl import __version__
from imbalanced_cl.book.build import cache, runner

from tiny_book import tiny_book

ROOT = Path(__file__).resolve().parents[1]




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


# --- item 8: the cache key, builder paths, --help ---

def test_dependency_versions_are_the_installed_ones():
    v = cache.dependency_versions()
    assert {"python", "torch", "numpy", "scipy"} <= set(v)
    assert v["torch"] == torch.__version__ and v["python"] == ".".join(map(str, sys.version_info[:3]))
    assert cache.dependency_versions(("no-such-package-xyz",))["no-such-package-xyz"] == "absent"


def test_cache_key_changes_with_a_dependency_version(tmp_path):
    nb = tmp_path / "a.ipynb"
    nb.write_text("{}")
    key = cache.cache_key(nb, {}, "ci", "code", "", {"torch": "2.13.0"})
    assert key == cache.cache_key(nb, {}, "ci", "code", "", {"torch": "2.13.0"})
    assert key != cache.cache_key(nb, {}, "ci", "code", "", {"torch": "2.14.0"})


def test_a_new_torch_version_re_executes_a_cached_notebook(tmp_path, monkeypatch, capsys):
    root, out = tmp_path / "repo", tmp_path / "out"
    tiny_book(root, "y = x + 1")
    assert runner.run_book("ci", out_root=out, build=False, root=root) == 0
    assert runner.run_book("ci", out_root=out, build=False, root=root) == 0
    assert capsys.readouterr().out.count("[cached]") == 1
    installed = runner.dependency_versions()
    monkeypatch.setattr(runner, "dependency_versions", lambda: {**installed, "torch": "0.0.1-other"})
    assert runner.run_book("ci", out_root=out, build=False, root=root) == 0
    log = capsys.readouterr().out
    assert "[running] notebooks/a.ipynb" in log and "[cached]" not in log


def test_scrub_replaces_directories_longest_first_and_leaves_images():
    subs = {"/home/u": "~", "/home/u/repo": "", "/opt/venv/site-packages": "<site-packages>"}
    nb = {"text": ["/home/u/repo/src/a.py:3: warning", "cwd /home/u/repo", "/home/u/.cache/x",
                   "/opt/venv/site-packages/numpy/core.py", "/home/u/repository/z", "/home/user"],
          "data": {"image/png": "/home/u/repo/AAAA", "text/plain": "'/home/u/repo/b'"}, "n": 3}
    assert cache.scrub(nb, subs) == {
        "text": ["src/a.py:3: warning", "cwd .", "~/.cache/x", "<site-packages>/numpy/core.py",
                 "~/repository/z", "/home/user"],
        "data": {"image/png": "/home/u/repo/AAAA", "text/plain": "'b'"}, "n": 3}


def _builder_dirs(root: Path, out: Path) -> list[str]:
    return [str(root), str(out), sysconfig.get_paths()["purelib"], str(Path.home()) + "/"]


def test_executed_notebook_names_no_directory_of_the_builder(tmp_path):
    """Paths in outputs (a printed working directory, a warning from site-packages, the home folder) and
    papermill's metadata become relative or stand-ins; the papermill record names the final file, not the partial."""
    root, out = tmp_path / "repo", tmp_path / "out"
    body = ("import os, sys, pathlib, warnings, numpy\n"
            "print(os.getcwd(), numpy.__file__, pathlib.Path.home() / '.cache')\n"
            "warnings.warn_explicit('careful', UserWarning, numpy.__file__, 1)\n"
            "sys.stderr.write(os.path.join(os.getcwd(), 'notebooks', 'a.ipynb') + '\\n')")
    tiny_book(root, body)
    assert runner.run_book("ci", out_root=out, build=False, root=root) == 0
    done = out / "_build" / "executed" / "notebooks" / "a.ipynb"
    text = done.read_text()
    for d in _builder_dirs(root, out) + [str(tmp_path)]:
        assert d not in text, f"{d} left in the executed notebook"
    meta = json.loads(text)["metadata"]["papermill"]
    assert (meta["input_path"], meta["output_path"]) == ("notebooks/a.ipynb", "_build/executed/notebooks/a.ipynb")
    outputs = "".join(o.get("text", "") for c in nbformat.read(done, as_version=4).cells for o in c.get("outputs", []))
    assert "<site-packages>/numpy/__init__.py" in outputs and "~/.cache" in outputs and "notebooks/a.ipynb" in outputs


@pytest.mark.slow
def test_downloadable_notebooks_of_the_ci_book_name_no_builder_directory(ci_book):
    out, log, rc = ci_book
    assert rc == 0, log[-3000:]
    downloads = sorted((out / "_build" / "html" / "_sources").rglob("*.ipynb"))
    assert downloads
    for nb in downloads:
        text = nb.read_text()
        for d in _builder_dirs(ROOT, out):
            assert d not in text, f"{nb.name} names {d}"


def test_help_has_a_description_examples_and_version():
    run = [sys.executable, "-m", "imbalanced_cl"]
    helped = subprocess.run(run + ["--help"], cwd=ROOT, capture_output=True, text=True)
    assert helped.returncode == 0
    assert "contrastive learning under imbalanced data" in helped.stdout and "examples:" in helped.stdout
    assert "python -m imbalanced_cl book --profile ci" in helped.stdout and "--version" in helped.stdout
    version = subprocess.run(run + ["--version"], cwd=ROOT, capture_output=True, text=True)
    assert version.returncode == 0
    assert (version.stdout.startswith(f"imbalanced-cl {__version__} (")
            and f"torch {torch.__version__}" in version.stdout)


def test_a_notebook_is_built_from_a_record_only_at_the_records_own_parameters():
    """A campaign record answers for a build at exactly its parameters: a `--set` that changes one value (or a
    parameter the record lacks) measures again; a notebook with no record measures."""
    from imbalanced_cl.book.build.runner import replay_for
    rep = {"params": {"d": 20, "ratios": [1.0, 0.5], "seed": 0}, "env": {}, "digest": "x", "made_by": "commit a"}
    nb = Path("notebooks/03_Ni_scaling.ipynb")
    assert replay_for({"03_Ni_scaling": rep}, nb, {"seed": 0, "ratios": [1.0, 0.5], "d": 20}) is rep
    assert replay_for({"03_Ni_scaling": rep}, nb, {"d": 20, "ratios": [1.0, 0.5], "seed": 1}) is None
    assert replay_for({"03_Ni_scaling": rep}, nb, {"d": 20, "ratios": [1.0, 0.5], "seed": 0, "m": 5}) is None
    assert replay_for({"02_lucky_neurons": rep}, nb, rep["params"]) is None
    assert replay_for(None, nb, rep["params"]) is None
