"""The book pipeline: run notebooks with papermill (cached by source, parameters, package code and the versions of
the packages that compute results), stage, build HTML.

`python -m imbalanced_cl book --profile default` executes every notebook listed in _toc.yml with that
profile's parameters into _build/executed/notebooks/, leaving notebooks/ untouched, then builds
_build/html with Jupyter Book 1.x from the staged copy (Jupyter Book never reads sources under _build
when building the project root, so the executed copies are built as a book of their own).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from ...validate import ParameterError, check_int, nearest
from . import kernels
from .cache import FRESH_ENV, cache_key, collects, dependency_versions, package_digest, records_digest
from .execution import cell_timeout, execute
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


def _execute_in_worker(nb: Path, out: Path, params: dict, cwd: Path, stamp: dict, env: dict,
                       out_root: Path | None = None, timeout: float | None = None):
    """execute() in a worker process, its kernel given `env` (the run's variables and its OpenMP thread count), each
    cell limited to `timeout` seconds."""
    t0 = time.time()
    ok, msg = execute(nb, out, params, cwd, stamp, out_root, env, timeout=timeout)
    return ok, msg, time.time() - t0


def size_problems(runs: list[tuple[Path, dict]], available: int | None = None,
                  where: str = "the machine") -> list[str]:
    """One line per planned notebook whose sizes cannot fit the memory there is (sim.memory's estimate; default:
    this machine's available memory)."""
    from ...sim.memory import size_problem
    from .params import build, config_class
    out = []
    for nb, params in runs:
        cls = config_class(nb)
        why = size_problem(build(cls, params), available, where) if cls is not None else ""
        if why:
            out.append(f"{nb.stem}: {why}")
    return out


def time_estimates(runs: list[tuple[Path, dict]], rates: dict | None = None) -> list[str]:
    """One line per planned notebook whose training time can be estimated (sim.runtime: its workload at the measured
    loop rate of its device), and a total; nothing where no rate was measured."""
    from ...sim.runtime import duration, estimate
    from .params import build, config_class
    lines, total = [], 0.0
    for nb, params in runs:
        cls = config_class(nb)
        est = estimate(build(cls, params), rates) if cls is not None else None
        if est is not None:
            lines.append(f"[estimate] {nb.stem}: {est.line()}")
            total += est.seconds
    if len(lines) > 1:
        lines.append(f"[estimate] in all, about {duration(total)} of training where it is not cached "
                     "(training alone: a notebook's measurements come on top, and at default on the 2-core host each "
                     "took 2.4-6.8 times its training estimate; benchmarks/loop_rates.py measures this machine)")
    return lines


def plan(root: Path, profile: str, only: list[str] | None, build: bool, overrides: dict | None,
         profiles: Path | None, force: bool = False) -> tuple[list[Path], list[tuple[Path, dict]]]:
    """The toc's notebooks and the (notebook, parameters) pairs to execute, every one checked before any runs.

    `only` selects notebooks; when the HTML is built, the collecting ones (the scoreboard) are added. Overrides
    apply where a notebook has the parameter. Any problem raises ParameterError with one line per problem; so do
    sizes that cannot fit this machine's memory, unless `force`.
    """
    notebooks = toc_notebooks(root)
    chosen = select(notebooks, only)
    if only is not None and build:
        chosen += [nb for nb in notebooks if collects(nb) and nb not in chosen]
    where = f"profile {profile}" + (f" in {profiles}" if profiles else "")
    profiles_file = Path(profiles) if profiles else root / "profiles.yaml"
    runs = [(nb, profile_params(profile, nb.stem, profiles_file)) for nb in chosen]
    if overrides:
        _apply_overrides(runs, overrides)
    problems = [line for nb, params in runs for line in check_notebook(nb, params, where)]
    if problems:
        raise ParameterError("\n".join(problems))
    problems = [] if force else size_problems(runs)
    if problems:
        raise ParameterError("\n".join(problems))
    return notebooks, runs


def _apply_overrides(runs: list[tuple[Path, dict]], overrides: dict) -> None:
    """Set each override in the parameters of every notebook that declares it; one that none declares is refused."""
    import papermill as pm
    names: set[str] = set()
    for nb, params in runs:
        declared = pm.inspect_notebook(str(nb))
        names |= set(declared)
        params.update({k: v for k, v in overrides.items() if k in declared})
    unused = [k for k in overrides if k not in names]
    if unused:   # a typo would otherwise run (or reuse) every notebook with its parameters unchanged
        raise ParameterError(unused_message(unused, overrides, names))


def unused_message(unused: list[str], overrides: dict, names: set[str]) -> str:
    """One line naming each --set parameter that no selected notebook has, with the nearest parameter name."""
    parts = [f"{k}={overrides[k]!r}" + (f" (did you mean {nearest(k, names)}?)" if nearest(k, names) else "")
             for k in unused]
    return (f"--set {', '.join(parts)}: no selected notebook has {'this parameter' if len(parts) == 1 else 'these'}; "
            "nothing would change (`papermill --help-notebook NOTEBOOK` lists a notebook's parameters)")


class Batch:
    """Notebooks executed here or, with jobs > 1, in spawned worker processes; keys written, failures collected."""

    def __init__(self, root: Path, out_root: Path, profile: str, jobs: int, env: dict | None = None):
        """A batch for one run_book call (`jobs` notebooks at once, each kernel with cores // jobs threads), whose
        kernels get `env` in their environment."""
        self.root, self.out_root, self.stamp, self.env = root, out_root, {"profile": profile}, dict(env or {})
        self.timeout = cell_timeout(profile)     # seconds a cell may run (None: no limit)
        self.failures: list[tuple[Path, str]] = []
        self.pending: list = []     # (future, rel, keyfile, key) of notebooks running in worker processes
        self.current: Path | None = None    # the notebook running in this process, named if Ctrl-C stops it
        self.pool, self.threads = None, 1
        if jobs > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
            self.pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
            self.threads = max(1, cores // jobs)

    def start(self, nb: Path, out: Path, params: dict, keyfile: Path, key: str, here: bool,
              env: dict | None = None) -> None:
        """Execute `nb` into `out` (its kernel also gets `env`): in a worker when there is a pool and `here` is False,
        else now, in this process."""
        rel = nb.relative_to(self.root)
        env = {**self.env, **(env or {})}
        if self.pool is not None and not here:
            threads = {"OMP_NUM_THREADS": str(self.threads), "MKL_NUM_THREADS": str(self.threads)}
            fut = self.pool.submit(_execute_in_worker, nb, out, params, self.root, self.stamp,
                                   {**env, **threads}, self.out_root, self.timeout)
            self.pending.append((fut, rel, keyfile, key))
            return
        t0, self.current = time.time(), rel
        ok, msg = execute(nb, out, params, self.root, self.stamp, self.out_root, env, timeout=self.timeout)
        self.current = None
        self.finish(ok, msg, rel, keyfile, key, time.time() - t0)

    def finish(self, ok: bool, msg: str, rel: Path, keyfile: Path, key: str, seconds: float) -> None:
        """Write the key of a finished notebook, or drop it and record the failure."""
        if ok:
            keyfile.write_text(key)
            print(f"[done]    {rel} in {seconds:.1f} s", flush=True)
        else:
            keyfile.unlink(missing_ok=True)
            self.failures.append((rel, msg))
            print(f"[FAILED]  {rel}: {msg}", file=sys.stderr, flush=True)

    def drain(self) -> None:
        """Wait for every notebook running in a worker."""
        for fut, rel, keyfile, key in self.pending:
            ok, msg, seconds = fut.result()
            self.finish(ok, msg, rel, keyfile, key, seconds)
        self.pending.clear()

    def running(self) -> list[Path]:
        """The notebooks under way (here and in workers)."""
        return ([self.current] if self.current else []) + [p[1] for p in self.pending]

    def close(self) -> None:
        """Stop the worker processes (cancelling what has not started)."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def replay_for(replays: dict | None, nb: Path, params: dict) -> dict | None:
    """The campaign record a notebook's run is built from: its entry in `replays` when the record was made at exactly
    these parameters (a run with other values, `--set seed=1` say, measures for itself), else None."""
    rep = (replays or {}).get(nb.stem)
    same = rep is not None and json.dumps(rep["params"], sort_keys=True, default=str) == json.dumps(
        params, sort_keys=True, default=str)
    return rep if same else None


def execute_all(root: Path, out_root: Path, notebooks: list[Path], runs: list[tuple[Path, dict]], profile: str,
                force: bool, jobs: int, env: dict | None = None,
                replays: dict | None = None) -> list[tuple[Path, str]] | None:
    """Execute (or reuse from the cache) each planned notebook; the failures, or None after Ctrl-C.

    Collecting notebooks (the scoreboard) run after every other one, whatever their place in the toc, and their key
    follows the key of every notebook they read. A notebook in `replays` (campaign/judge.replays: a valid campaign
    record of it at exactly these parameters) is executed with its measurements read back from the record.
    """
    executed = out_root / "_build" / "executed"
    code, versions = package_digest(root), dependency_versions()
    batch = Batch(root, out_root, profile, jobs, env)
    try:
        for nb, params in sorted(runs, key=lambda item: collects(item[0])):
            if collects(nb):
                batch.drain()     # it reads the others' executed copies and keys: they must be done
            rel = nb.relative_to(root)
            out = executed / rel
            keyfile = out.with_suffix(".key")
            extra = json.dumps({q.stem: _read(executed / q.relative_to(root).with_suffix(".key"))
                                for q in notebooks if not collects(q)}, sort_keys=True) if collects(nb) else ""
            extra += records_digest(root, nb) if not (env or {}).get(FRESH_ENV) else "fresh"
            rep = replay_for(replays, nb, params)
            extra += f"recorded:{rep['digest']}" if rep else ""
            key = cache_key(nb, params, profile, code, extra, versions)
            if not force and out.exists() and keyfile.exists() and keyfile.read_text() == key:
                print(f"[cached]  {rel} ({profile})", flush=True)
                continue
            print(f"[running] {rel} ({profile})" + (f", measurements from the campaign record made by "
                                                    f"{rep['made_by']}" if rep else "") + " ...", flush=True)
            batch.start(nb, out, params, keyfile, key, here=collects(nb), env=rep["env"] if rep else None)
        batch.drain()
    except KeyboardInterrupt:
        names = ", ".join(str(r) for r in batch.running())
        print(f"\n[stopped] {names or 'the run'}: interrupted; its partial output was removed and the previous "
              "executed copy (if any) is untouched. The book was not built.", file=sys.stderr, flush=True)
        return None
    finally:
        batch.close()
    return batch.failures


def publish(root: Path, out_root: Path, strict: bool) -> int:
    """Stage the book's sources beside the executed notebooks and build the HTML; the build's exit code."""
    executed = out_root / "_build" / "executed"
    stage(root, executed)
    rc = build_html(executed, out_root, strict=strict)
    if rc == 0:
        print(f"HTML: {out_root / '_build' / 'html' / 'index.html'}")
    else:
        print(f"the HTML build failed (exit {rc}); the previous _build/html, if any, is untouched", file=sys.stderr)
    return rc


def run_book(profile: str = "default", out_root: Path | None = None, only: list[str] | None = None,
             build: bool = True, strict: bool = False, force: bool = False, overrides: dict | None = None,
             root: Path | None = None, profiles: Path | None = None, jobs: int = 1, fresh: bool = False,
             replays: dict | None = None) -> int:
    """Execute (or reuse) every notebook at a profile, then build the HTML. Returns a process exit code.

    Before anything runs, every selected notebook's parameters are checked (names and values); any error
    raises ParameterError with one line per problem. `only` executes the named notebooks; when the HTML is
    built, notebooks that collect the others (the scoreboard) run too, so the book never shows stale verdicts.
    `overrides` (e.g. {"seed": 1} for the stability command) apply only where the notebook has the parameter.
    Sizes that cannot fit this machine's memory are refused the same way, before anything runs; `force` (which
    also re-executes cached notebooks) runs them anyway.
    `jobs` > 1 executes that many notebooks at once, each kernel with cores // jobs threads (the notebooks are
    independent; the collecting ones still run last). Thread counts can move float rounding, so the book's
    published numbers come from jobs = 1; the test suite uses 2 on its tiny ci profile.
    `replays` ({notebook: ...} from campaign/judge.replays) names the notebooks whose measurements a valid campaign
    record holds at these parameters: they are judged from it, nothing trained (never with `fresh`).
    """
    check_int("jobs", jobs, 1)
    root = Path(root or repo_root()).resolve()
    out_root = Path(out_root or root).resolve()
    executed = out_root / "_build" / "executed"
    notebooks, runs = plan(root, profile, only, build, overrides, profiles, force)
    replays = None if fresh else replays
    recorded = [nb.stem for nb, params in runs if replay_for(replays, nb, params)]
    for line in time_estimates([(nb, params) for nb, params in runs if nb.stem not in recorded]):
        print(line, flush=True)
    if recorded:
        print(f"[estimate] no training for {', '.join(recorded)}: judged from their campaign records", flush=True)
    for p in remove_partials(executed):
        print(f"[cleanup] removed {p.relative_to(out_root)} (left by an interrupted run)", flush=True)
    # The scoreboard notebook reads its siblings' glued verdicts from here, and says which profile built them: passed
    # to the kernels, not written into this process (a second run_book in it must not inherit the first one's).
    from ...sim.runtime import ESTIMATED_ENV
    env = {"IMBALANCED_CL_EXECUTED": str(executed / "notebooks"), "IMBALANCED_CL_PROFILE": profile,
           ESTIMATED_ENV: "1"}     # the estimates were printed above: the kernels' parameter checks stay quiet
    if force:       # sizes the estimate refuses run anyway: the kernels' own check (from_namespace) stands aside
        from ...sim.config import FORCE_ENV
        env[FORCE_ENV] = "1"
    if fresh:       # every notebook recomputes what the campaign recorded (notebook 08's points, notebook 10's cells)
        env[FRESH_ENV] = "1"
    # a stop kills the kernels before papermill's clean-up reaches them: `[stopped]` is then all it prints
    with kernels.stops_kill_kernels():
        failures = execute_all(root, out_root, notebooks, runs, profile, force or fresh, jobs, env, replays)
    if failures is None:
        return 130
    if failures:
        print(f"{len(failures)} notebook(s) failed; the book was not built (earlier executed copies are kept):",
              file=sys.stderr)
        for rel, msg in failures:
            print(f"  {rel}: {msg}", file=sys.stderr)
        return 1
    return publish(root, out_root, strict) if build else 0


def _read(path: Path) -> str | None:
    """The text of a file, or None when it does not exist."""
    return path.read_text() if path.exists() else None
