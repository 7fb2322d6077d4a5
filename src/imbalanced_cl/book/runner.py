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

from ..validate import ParameterError, check_int, nearest
from .params import check_notebook
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


# Package files that only shape the HTML, never a notebook's output: editing them must not re-execute the book.
RENDER_ONLY = ("book/sphinxext.py",)


def package_digest(root: Path) -> str:
    """sha256 over the package's source files, so a code change invalidates cached notebooks."""
    h = hashlib.sha256()
    pkg = root / "src" / "imbalanced_cl"
    for p in sorted(pkg.rglob("*.py")):
        if p.relative_to(pkg).as_posix() in RENDER_ONLY:
            continue
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def cache_key(nb: Path, params: dict, profile: str, code: str, extra: str = "") -> str:
    """Key of one execution: notebook source, parameters, profile name, package code (and dependencies)."""
    blob = json.dumps({"nb": hashlib.sha256(nb.read_bytes()).hexdigest(), "params": params,
                       "profile": profile, "code": code, "extra": extra}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def check_params(nb: Path, params: dict, where: str = "") -> None:
    """Refuse parameters the notebook does not declare or its config class rejects (one line per error)."""
    lines = check_notebook(nb, params, where)
    if lines:
        raise ParameterError("\n".join(lines))


def collects(nb: Path) -> bool:
    """A notebook that reads the other executed notebooks (the scoreboard) says so in its metadata."""
    meta = json.loads(nb.read_text()).get("metadata", {})
    return bool(meta.get("imbalanced_cl", {}).get("collects", False))


def execute(nb: Path, out: Path, params: dict, cwd: Path, stamp: dict | None = None) -> tuple[bool, str]:
    """Run one notebook with papermill into `out` atomically; return (ok, message).

    papermill writes a `.NAME.partial.ipynb` beside `out` as it goes; only a run that finishes replaces `out`.
    A failure, an error or Ctrl-C (KeyboardInterrupt, re-raised) removes the partial file and leaves the
    previous executed copy as it was. `stamp` is merged into the executed copy's metadata.imbalanced_cl.
    """
    import nbformat
    import papermill as pm
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.partial.ipynb")
    try:
        pm.execute_notebook(str(nb), str(tmp), parameters=params, kernel_name="python3",
                            language="python", cwd=str(cwd), progress_bar=False)
        if stamp:
            done = nbformat.read(tmp, as_version=4)
            done.metadata.setdefault("imbalanced_cl", {}).update(stamp)
            nbformat.write(done, tmp)
    except pm.PapermillExecutionError as e:
        return False, f"cell [{e.exec_count}] (index {e.cell_index}): {e.ename}: {e.evalue}"
    except Exception as e:  # kernel died, bad notebook, ...
        return False, f"{type(e).__name__}: {e}"
    else:
        os.replace(tmp, out)
        return True, "ok"
    finally:
        tmp.unlink(missing_ok=True)  # after a failure, an error or Ctrl-C; a no-op after os.replace


def select(notebooks: list[Path], only: list[str] | None) -> list[Path]:
    """The notebooks named in `only` (all when None); an unknown name is a ParameterError listing the valid ones."""
    if only is None:
        return list(notebooks)
    names = [nb.stem for nb in notebooks]
    unknown = [n for n in only if n not in names]
    if unknown or not only:
        bad = ", ".join(f"{n!r}" + (f" (did you mean {nearest(n, names)}?)" if nearest(n, names) else "")
                        for n in unknown)
        what = f"unknown notebook name(s) for --only: {bad}" if unknown else "--only names no notebook"
        raise ParameterError(f"{what}. The notebooks are: {', '.join(names)}")
    return [nb for nb in notebooks if nb.stem in only]


def remove_partials(executed: Path) -> list[Path]:
    """Delete partial files an earlier, killed run left in the executed-notebook cache; return them."""
    gone = sorted(executed.rglob(".*.partial.ipynb")) if executed.exists() else []
    for p in gone:
        p.unlink(missing_ok=True)
    return gone


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
    """Build the HTML into <out_root>/_build/html, replacing the previous HTML only when the build succeeds.

    jupyter-book writes into <out_root>/_build/.jupyter-book/_build/ (its doctrees stay there between
    builds); a successful build's html folder is then moved into place, so a failed or interrupted build
    leaves the previous HTML as it was. A strict build rebuilds every page: Sphinx's saved environment would
    skip an unchanged page that warned before, and a broken reference would pass on the second try.
    """
    work = out_root / "_build" / ".jupyter-book"
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(executed), "--path-output", str(work)]
    if strict:  # --all: a fresh Sphinx environment, so that a page that warned last time is read (and warns) again
        cmd += ["-W", "--keep-going", "--all"]
    rc = subprocess.call(cmd)
    built, final = work / "_build" / "html", out_root / "_build" / "html"
    if rc == 0 and built.is_dir():
        old = final.with_name(".html-previous")
        shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            os.replace(final, old)
        os.replace(built, final)
        shutil.rmtree(old, ignore_errors=True)
    return rc


def _execute_in_worker(nb: Path, out: Path, params: dict, cwd: Path, stamp: dict, threads: int):
    """execute() in a worker process whose kernels get `threads` OpenMP threads (they inherit the environment)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    t0 = time.time()
    ok, msg = execute(nb, out, params, cwd, stamp)
    return ok, msg, time.time() - t0


def run_book(profile: str = "default", out_root: Path | None = None, only: list[str] | None = None,
             build: bool = True, strict: bool = False, force: bool = False, overrides: dict | None = None,
             root: Path | None = None, profiles: Path | None = None, jobs: int = 1) -> int:
    """Execute (or reuse) every notebook at a profile, then build the HTML. Returns a process exit code.

    Before anything runs, every selected notebook's parameters are checked (names and values); any error
    raises ParameterError with one line per problem. `only` executes the named notebooks; when the HTML is
    built, notebooks that collect the others (the scoreboard) run too, so the book never shows stale verdicts.
    `overrides` (e.g. {"seed": 1} for the stability command) apply only where the notebook has the parameter.
    `jobs` > 1 executes that many notebooks at once, each kernel with cores // jobs threads (the notebooks are
    independent; the collecting ones still run last). Thread counts can move float rounding, so the book's
    published numbers come from jobs = 1; the test suite uses 2 on its tiny ci profile.
    """
    check_int("jobs", jobs, 1)
    root = Path(root or repo_root()).resolve()
    out_root = Path(out_root or root).resolve()
    executed = out_root / "_build" / "executed"
    notebooks = toc_notebooks(root)
    chosen = select(notebooks, only)
    if only is not None and build:
        chosen += [nb for nb in notebooks if collects(nb) and nb not in chosen]
    where = f"profile {profile}" + (f" in {profiles}" if profiles else "")
    profiles_file = Path(profiles) if profiles else root / "profiles.yaml"
    plan = [(nb, profile_params(profile, nb.stem, profiles_file)) for nb in chosen]
    if overrides:
        import papermill as pm
        for nb, params in plan:
            declared = pm.inspect_notebook(str(nb))
            params.update({k: v for k, v in overrides.items() if k in declared})
    problems = [line for nb, params in plan for line in check_notebook(nb, params, where)]
    if problems:
        raise ParameterError("\n".join(problems))
    for p in remove_partials(executed):
        print(f"[cleanup] removed {p.relative_to(out_root)} (left by an interrupted run)", flush=True)
    code = package_digest(root)
    # The scoreboard notebook reads its siblings' glued verdicts from here, and says which profile built them.
    os.environ["IMBALANCED_CL_EXECUTED"] = str(executed / "notebooks")
    os.environ["IMBALANCED_CL_PROFILE"] = profile
    failures, pending = [], []      # pending: (future, rel, keyfile, key) of notebooks running in worker processes
    pool, threads = None, 1
    if jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
        threads = max(1, cores // jobs)

    def finish(ok: bool, msg: str, rel: Path, keyfile: Path, key: str, seconds: float) -> None:
        if ok:
            keyfile.write_text(key)
            print(f"[done]    {rel} in {seconds:.1f} s", flush=True)
        else:
            keyfile.unlink(missing_ok=True)
            failures.append((rel, msg))
            print(f"[FAILED]  {rel}: {msg}", file=sys.stderr, flush=True)

    def drain() -> None:
        for fut, rel, keyfile, key in pending:
            ok, msg, seconds = fut.result()
            finish(ok, msg, rel, keyfile, key, seconds)
        pending.clear()

    current = None      # the notebook running in this process, named if Ctrl-C stops it
    try:
        # Collecting notebooks (the scoreboard) run after every other one, whatever their place in the toc.
        for nb, params in sorted(plan, key=lambda item: collects(item[0])):
            if collects(nb):
                drain()     # it reads the others' executed copies and keys: they must be done
            rel = nb.relative_to(root)
            out = executed / rel
            keyfile = out.with_suffix(".key")
            extra = ""
            if collects(nb):  # its key follows every notebook it reads, run now or earlier
                extra = json.dumps({q.stem: _read(executed / q.relative_to(root).with_suffix(".key"))
                                    for q in notebooks if not collects(q)}, sort_keys=True)
            key = cache_key(nb, params, profile, code, extra)
            if not force and out.exists() and keyfile.exists() and keyfile.read_text() == key:
                print(f"[cached]  {rel} ({profile})", flush=True)
                continue
            print(f"[running] {rel} ({profile}) ...", flush=True)
            if pool is not None and not collects(nb):
                fut = pool.submit(_execute_in_worker, nb, out, params, root, {"profile": profile}, threads)
                pending.append((fut, rel, keyfile, key))
                continue
            t0, current = time.time(), rel
            ok, msg = execute(nb, out, params, root, stamp={"profile": profile})
            current = None
            finish(ok, msg, rel, keyfile, key, time.time() - t0)
        drain()
    except KeyboardInterrupt:
        names = ", ".join(str(r) for r in ([current] if current else []) + [p[1] for p in pending])
        print(f"\n[stopped] {names or 'the run'}: interrupted; its partial output was removed and the previous "
              "executed copy (if any) is untouched. The book was not built.", file=sys.stderr, flush=True)
        return 130
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if failures:
        print(f"{len(failures)} notebook(s) failed; the book was not built (earlier executed copies are kept):",
              file=sys.stderr)
        for rel, msg in failures:
            print(f"  {rel}: {msg}", file=sys.stderr)
        return 1
    if not build:
        return 0
    stage(root, executed)
    rc = build_html(executed, out_root, strict=strict)
    if rc == 0:
        print(f"HTML: {out_root / '_build' / 'html' / 'index.html'}")
    else:
        print(f"the HTML build failed (exit {rc}); the previous _build/html, if any, is untouched", file=sys.stderr)
    return rc


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None
