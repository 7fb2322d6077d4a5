"""A notebook's grid of independent points, run as it is cheapest to run: in worker processes, one thread each, when
this process may use several threads; and, inside a campaign unit, one point (or batch) at a time, each kept on
disk, so that a unit stopped by its budget (or a killed worker) resumes from the points it finished.

The campaign worker names a folder (`kept`) before it runs a unit; a notebook's kernel gets it in its environment
(ENV), passed to the kernel, never written into the worker's own. Outside a campaign there is no folder:
`grid(fn, cfg, axes)` is exactly `fn(cfg)` and `memo()` just calls. The folder belongs to one unit key (its code
version and parameters), so a point computed under other code or parameters is never read back. It lives in the
campaign's results folder, beside the records (results/campaign/<profile>/checkpoints/), so that a commit carries a
stopped unit's finished points to the next session, machine or cluster job, which resumes there: a unit longer than
any one session still finishes. Notebook 03 keeps its (d, rho) points (`grid`), notebook 05 its training batches
(`memo`, passed to claims.appendix.run_appendix).

The points are pickles (numpy arrays and dataclasses inside): read back only for the exact unit key that wrote them,
from the repository's own results folder, as trusted as the code beside it.
"""
from __future__ import annotations

import itertools
import json
import os
import pickle
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

from .units import child_env, child_env_now

ENV = "IMBALANCED_CL_CHECKPOINTS"
ORIGIN = "origin.json"       # in a unit's folder: the commit, code digest and parameters its points were computed by


def unit_folder(results: Path, unit, device: str | None = None) -> Path:
    """Where a campaign unit keeps its checkpoints: <results>/checkpoints/<kind>-<name>-<version>[-cuda]/, where
    `results` is the campaign folder of its profile (results/campaign/<profile>) and the version is the unit's key and
    code digest (a point computed by other code is never resumed from).

    Points computed on a GPU live apart from points computed on the CPU (a GPU draws other numbers: one record must
    never mix the two), so a unit resumes only from points of the kind of device it runs on now; the CPU's folder
    keeps its old name.
    """
    device = device or run_device()
    suffix = "" if device == "cpu" else f"-{device}"
    return Path(results) / "checkpoints" / f"{unit.kind}-{unit.name}-{unit.version}{suffix}"


def write_origin(where: Path, prov: dict, unit) -> None:
    """Say in a unit's folder which commit, code digest and parameters compute its points (once: the first run's)."""
    path = Path(where) / ORIGIN
    if path.exists():
        return
    Path(where).mkdir(parents=True, exist_ok=True)
    doc = {"commit": prov.get("commit", ""), "dirty": bool(prov.get("dirty")), "code": unit.code,
           "params": unit.params}
    tmp = path.with_name(f".{ORIGIN}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)


def others(results: Path, unit, device: str | None = None) -> list[Path]:
    """The checkpoint folders of this unit (its key, on this kind of device) written under other code."""
    mine = unit_folder(results, unit, device)
    suffix = mine.name[len(f"{unit.kind}-{unit.name}-{unit.key}"):]        # "-<code>[-cuda]"
    cuda = suffix.endswith("-cuda")
    found = Path(results, "checkpoints").glob(f"{unit.kind}-{unit.name}-{unit.key}-*")
    return sorted(p for p in found if p != mine and p.is_dir() and p.name.endswith("-cuda") == cuda)


def adopt(results: Path, unit, same_numbers, device: str | None = None) -> str:
    """Carry the points of this unit computed under other code over to today's folder when that code computes the
    same numbers: the probe decides (campaign/probe.py), as for a record, so a refactor, a rename or an edited
    verdict never throws away hours of finished grid points. `same_numbers(origin) -> (ok, why)` is given the
    folder's origin as a record-like dict. Returns what was done, in one line ("" when there was nothing to adopt).

    A folder with no origin (made before origins were written) or from a dirty tree is left alone; status names it."""
    mine = unit_folder(results, unit, device)
    if mine.is_dir() and any(mine.glob("*.pkl")):
        return ""
    said = []
    for old in others(results, unit, device):
        try:
            origin = json.loads((old / ORIGIN).read_text())
        except (OSError, ValueError):
            continue
        rec = {"provenance": {"commit": origin.get("commit", ""), "dirty": origin.get("dirty", False)},
               "measure_code": origin.get("code", ""), "params": origin.get("params", {})}
        ok, why = same_numbers(rec)
        if not ok:
            said.append(f"checkpoints {old.name} not adopted: {why}")
            continue
        n = len(list(old.glob("*.pkl")))
        if mine.exists():
            shutil.rmtree(mine)
        os.replace(old, mine)
        (mine / ORIGIN).unlink(missing_ok=True)     # today's run writes its own origin
        return f"checkpoints: {n} points computed under other code adopted ({why})"
    return "; ".join(said)


def run_device() -> str:
    """The kind of device this machine's units run on ("cuda" where there is one: device "auto" takes it)."""
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


@contextmanager
def kept(where: Path):
    """Within the block, this process and the kernels it starts keep their points in `where`; yields what an
    earlier, interrupted run left there (`summary`), after removing its half-written files."""
    clean(where)
    try:
        with child_env(**{ENV: str(where)}):      # passed to the kernels; this process's os.environ is left alone
            yield summary(where)
    finally:       # however the unit ends: no partial notebook stays, nor a folder with nothing to resume from
        for p in Path(where).glob(".*.partial.ipynb"):
            p.unlink(missing_ok=True)
        if Path(where).is_dir() and not [p for p in Path(where).iterdir() if p.name != ORIGIN]:
            remove(where)


def partial_name(name: str) -> str:
    """The file name of the partial notebook a unit's kernel writes in its checkpoint folder as it goes."""
    return f".{name}.partial.ipynb"


def drop_partials(results: Path, unit) -> list[Path]:
    """Remove the partial notebook of a unit stopped with its worker (the worker's own clean-up, `kept`, never ran),
    and its checkpoint folder when nothing else is there; return what was removed. The partial names this machine's
    directories and answers for nothing: `git add results/campaign` must never find it."""
    gone = sorted(Path(results).glob(f"checkpoints/{unit.kind}-{unit.name}-{unit.key}*/.*.partial.ipynb"))
    for p in gone:
        p.unlink(missing_ok=True)
        if not [q for q in p.parent.iterdir() if q.name != ORIGIN]:
            remove(p.parent)
    return gone


def remove(where: Path) -> None:
    """Remove a unit's checkpoint folder once its record answers for it (and the profile's checkpoints/ if empty)."""
    shutil.rmtree(where, ignore_errors=True)
    try:
        Path(where).parent.rmdir()
    except OSError:
        pass            # other units' points are still there


def folder() -> Path | None:
    """The checkpoint folder of the campaign unit this process runs in, or None outside a campaign."""
    value = child_env_now().get(ENV) or os.environ.get(ENV, "")   # a worker's unit, or a kernel started for one
    return Path(value) if value else None


def _name(axes: tuple[str, ...], point: tuple) -> str:
    """The name of one grid point: its axis values, as in 'ds=40_ratios=0.5'."""
    return "_".join(f"{a}={v}" for a, v in zip(axes, point, strict=True))


def _write(path: Path, obj) -> None:
    """Pickle `obj` to `path` atomically (a temporary file in the same folder, renamed): never half-written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        pickle.dump(obj, f)
    os.replace(tmp, path)


class Memo:
    """`memo(name, fn)` returns fn(), and in a campaign unit keeps the result on disk under `name` (pickled
    atomically); when an earlier, interrupted run of the same unit left it there, reads it back instead of calling
    fn. `memo.saved(name)` says whether it is there (always False outside a campaign). Names must say what is
    computed within one unit."""

    def __init__(self, where: Path | None, log=print):
        self.where, self.log = where, log

    def saved(self, name: str) -> bool:
        """Whether an earlier run of this unit kept `name` (so calling memo reads it back, computing nothing)."""
        return self.where is not None and (self.where / f"{name}.pkl").exists()

    def __call__(self, name: str, fn):
        if self.where is None:
            return fn()
        path = self.where / f"{name}.pkl"
        if path.exists():
            with open(path, "rb") as f:
                out = pickle.load(f)["result"]
            if self.log:
                self.log(f"checkpoint: {name} read back (computed by an earlier, interrupted run of this unit)")
            return out
        self.where.mkdir(parents=True, exist_ok=True)
        t0 = time.time()
        out = fn()
        _write(path, {"result": out, "seconds": time.time() - t0})
        return out


def memo(log=print) -> Memo:
    """The Memo of the campaign unit this process runs in (outside a campaign it just calls)."""
    return Memo(folder(), log)


def grid(fn, cfg, axes: tuple[str, ...], log=print, workers: int = 0, prefix: str = "") -> dict:
    """`fn(cfg)` for a config whose fields `axes` are grids and whose result is a dict keyed by grid point (`prefix`
    names a second grid of the same unit, such as notebook 03's push, so that its points are kept apart).

    The points are independent (the caller's fn must compute each one on its own seed, with no shared state: tests
    check that the merged result equals fn(cfg)), so they are run as they are cheapest to run:
    - with several worker processes (`workers`; 0: workers.plan, one per torch thread on the CPU), each point runs in
      a worker of one thread (fn must then be picklable: a module-level function or a functools.partial of one), and
      what it prints is printed here, in grid order;
    - in a campaign unit, each finished point is kept on disk (`memo`), and a resumed unit reads it back;
    - otherwise it is exactly fn(cfg).
    The results are merged in the order of the full grid (the first axis outermost), so the merged dict iterates as
    `fn(cfg)` would.
    """
    from .. import workers as W
    points = list(itertools.product(*(getattr(cfg, a) for a in axes)))
    keep = memo(log)
    on_cuda = getattr(getattr(cfg, "torch_device", None), "type", "cpu") == "cuda"
    if keep.where is None and W.plan(workers, len(points), on_cuda) == 1:
        return fn(cfg)
    names = [prefix + _name(axes, p) for p in points]
    jobs = [(cfg.replace(**{a: (v,) for a, v in zip(axes, p, strict=True)}),) for p in points]
    _, parts = W.pieces(fn, jobs, names, workers, keep, on_cuda,
                        f"{getattr(fn, '__name__', 'grid')} point, one thread per worker")
    out = {}
    for part in parts:
        out.update(part)
    return out


def clean(where: Path) -> list[Path]:
    """Remove the temporary files and the partial notebook that a run killed mid-write left in a checkpoint folder
    (the unit's lock makes its caller the folder's only writer); return them."""
    gone = sorted([*where.glob(".*.tmp"), *where.glob(".*.partial.ipynb")]) if where.is_dir() else []
    for p in gone:
        p.unlink(missing_ok=True)
    return gone


def summary(where: Path | None) -> dict:
    """What a checkpoint folder holds: its points and the seconds they took ({"points": n, "seconds": s})."""
    files = sorted(Path(where).glob("*.pkl")) if where is not None and Path(where).is_dir() else []
    seconds = 0.0
    for p in files:
        with open(p, "rb") as f:
            seconds += float(pickle.load(f).get("seconds", 0.0))
    return {"points": len(files), "seconds": seconds}
