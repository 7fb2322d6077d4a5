"""The book pipeline: run notebooks with papermill (cached by source, parameters and package code), stage, build HTML.

`python -m imbalanced_cl book --profile default` executes every notebook listed in _toc.yml with that
profile's parameters into _build/executed/notebooks/, leaving notebooks/ untouched, then builds
_build/html with Jupyter Book 1.x from the staged copy (Jupyter Book never reads sources under _build
when building the project root, so the executed copies are built as a book of their own).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from ..validate import ParameterError
from .profiles import params as profile_params
from .profiles import repo_root

STAGED = ("_config.yml", "_toc.yml", "book", "references.bib", "profiles.yaml")


def toc_notebooks(root: Path) -> list[Path]:
    """Notebook files named in _toc.yml, in reading order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    found: list[Path] = []

    def walk(node):
        if isinstance(node, dict):
            f = node.get("file")
            if f and (root / f).with_suffix(".ipynb").exists():
                found.append((root / f).with_suffix(".ipynb"))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return found


def package_digest(root: Path) -> str:
    """sha256 over the package's source files, so a code change invalidates cached notebooks."""
    h = hashlib.sha256()
    for p in sorted((root / "src" / "imbalanced_cl").rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def cache_key(nb: Path, params: dict, profile: str, code: str, extra: str = "") -> str:
    """Key of one execution: notebook source, parameters, profile name, package code (and dependencies)."""
    blob = json.dumps({"nb": hashlib.sha256(nb.read_bytes()).hexdigest(), "params": params,
                       "profile": profile, "code": code, "extra": extra}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def check_params(nb: Path, params: dict) -> None:
    """Refuse profile parameters the notebook's `parameters` cell does not declare."""
    import papermill as pm
    declared = pm.inspect_notebook(str(nb))
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise ParameterError(f"{nb.stem}: unknown parameter(s) {unknown}; allowed: {sorted(declared)}")


def collects(nb: Path) -> bool:
    """A notebook that reads the other executed notebooks (the scoreboard) says so in its metadata."""
    meta = json.loads(nb.read_text()).get("metadata", {})
    return bool(meta.get("imbalanced_cl", {}).get("collects", False))


def execute(nb: Path, out: Path, params: dict, cwd: Path) -> tuple[bool, str]:
    """Run one notebook with papermill into `out` atomically; return (ok, message)."""
    import papermill as pm
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.partial.ipynb")
    try:
        pm.execute_notebook(str(nb), str(tmp), parameters=params, kernel_name="python3",
                            language="python", cwd=str(cwd), progress_bar=False)
    except pm.PapermillExecutionError as e:
        tmp.unlink(missing_ok=True)
        return False, f"cell [{e.exec_count}] (index {e.cell_index}): {e.ename}: {e.evalue}"
    except Exception as e:  # kernel died, bad notebook, ...
        tmp.unlink(missing_ok=True)
        return False, f"{type(e).__name__}: {e}"
    os.replace(tmp, out)
    return True, "ok"


def stage(root: Path, executed: Path) -> None:
    """Copy the book's sources (config, toc, pages) next to the executed notebooks."""
    for name in STAGED:
        src = root / name
        dst = executed / name
        if src.is_dir():
            # Keep notebooks the runner executed into dst (e.g. book/scoreboard.ipynb, with its .key):
            # never stage a source notebook over its executed copy.
            keep = {q.relative_to(dst) for q in dst.rglob("*.ipynb")
                    if q.with_suffix(".key").exists()} if dst.exists() else set()
            if dst.exists():
                for q in dst.rglob("*"):
                    if q.is_file() and q.suffix not in (".ipynb", ".key"):
                        q.unlink()
            shutil.copytree(src, dst, dirs_exist_ok=True,
                            ignore=lambda d, names: [n for n in names
                                                     if (Path(d) / n).relative_to(src) in keep])
        elif src.exists():
            shutil.copy2(src, dst)
    for md in root.glob("*.md"):
        if md.name not in ("README.md",):
            shutil.copy2(md, executed / md.name)


def build_html(executed: Path, out_root: Path, strict: bool = False) -> int:
    """jupyter-book build <executed> --path-output <out_root>: HTML lands in <out_root>/_build/html."""
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(executed), "--path-output", str(out_root)]
    if strict:
        cmd += ["-W", "--keep-going"]
    return subprocess.call(cmd)


def run_book(profile: str = "default", out_root: Path | None = None, only: list[str] | None = None,
             build: bool = True, strict: bool = False, force: bool = False, overrides: dict | None = None) -> int:
    """Execute (or reuse) every notebook at a profile, then build the HTML. Returns a process exit code."""
    root = repo_root()
    out_root = Path(out_root or root).resolve()
    executed = out_root / "_build" / "executed"
    code = package_digest(root)
    # The scoreboard notebook reads its siblings' glued verdicts from here.
    os.environ["IMBALANCED_CL_EXECUTED"] = str(executed / "notebooks")
    keys: dict[str, str] = {}
    failures = []
    # Collecting notebooks (the scoreboard) run after every other one, whatever their place in the toc.
    for nb in sorted(toc_notebooks(root), key=collects):
        rel = nb.relative_to(root)
        if only and nb.stem not in only:
            continue
        params = profile_params(profile, nb.stem)
        if overrides:   # e.g. {"seed": 1} for the stability command: only where the notebook has the parameter
            import papermill as pm
            declared = pm.inspect_notebook(str(nb))
            params.update({k: v for k, v in overrides.items() if k in declared})
        check_params(nb, params)
        extra = json.dumps(keys, sort_keys=True) if collects(nb) else ""
        key = cache_key(nb, params, profile, code, extra)
        out = executed / rel
        keyfile = out.with_suffix(".key")
        if not force and out.exists() and keyfile.exists() and keyfile.read_text() == key:
            print(f"[cached]  {rel} ({profile})", flush=True)
            keys[nb.stem] = key
            continue
        print(f"[running] {rel} ({profile}) ...", flush=True)
        t0 = time.time()
        ok, msg = execute(nb, out, params, root)
        if ok:
            keyfile.write_text(key)
            keys[nb.stem] = key
            print(f"[done]    {rel} in {time.time() - t0:.1f} s", flush=True)
        else:
            keyfile.unlink(missing_ok=True)
            failures.append((rel, msg))
            print(f"[FAILED]  {rel}: {msg}", file=sys.stderr, flush=True)
    if failures:
        print(f"{len(failures)} notebook(s) failed; the book was not built:", file=sys.stderr)
        for rel, msg in failures:
            print(f"  {rel}: {msg}", file=sys.stderr)
        return 1
    if not build:
        return 0
    stage(root, executed)
    rc = build_html(executed, out_root, strict=strict)
    if rc == 0:
        print(f"HTML: {out_root / '_build' / 'html' / 'index.html'}")
    return rc
