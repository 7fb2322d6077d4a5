"""Whether a record still answers for today's code, decided by behaviour, not by spelling (issue 47).

A record keeps the digest of the code that computed it (`measure_code`: the syntax of every module its entry imports)
and the commit it was made at. Where today's digest is the same, nothing changed. Where it differs, the kind's probe
decides: its measurement entry runs at a tiny size (the record's own parameters, shrunk; a fixed seed; two chunks; on
the CPU) once under the record's code, extracted from its commit with `git archive`, and once under today's, each in
a child process on the portable CPU kernel path (MKL_CBWR=COMPATIBLE, ATEN_CPU_CAPABILITY=default, one thread), so
that Intel and AMD hosts give the same bits. Equal outputs: the record stays valid (a rename, a refactor, a moved
threshold, a reworded page). Different outputs: the record is stale, and the reason names the probe that moved.

A probe's output is what the kind measures: timings, texts and judgements (`seconds`, `text`, `threshold`, `holds`,
...) are left out, and so are echoes of the configuration (a cell's own description), so that a new config field
keeps records whose numbers it does not move. A record keeps measurements; the verdicts are computed again.

Probe results are cached in results/campaign/probes.json, keyed by kind, code digest, parameters and the probe's
own text, and committed with the records, so a clean clone does not run them again.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..paths import repo_root

# What a probe's output leaves out: wall times, and the judgement of a measurement (re-done at every build).
SKIP = ("seconds", "wall_s", "recorded", "provenance", "text", "threshold", "holds", "required")

# The child's preamble: a canonical digest of any result (dicts by key, dataclasses and composed configs by field,
# arrays by dtype, shape and bytes, floats by their exact hex), written once so the old tree and today's hash alike.
DIGEST = f'''
import dataclasses, hashlib, json, math, sys
import numpy as np
SKIP = {SKIP!r}

def canon(x, h):
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        x = {{f.name: getattr(x, f.name) for f in dataclasses.fields(x)}}
    elif hasattr(type(x), "PARTS") and hasattr(x, "to_dict"):   # a config composed of parts, by its flat fields
        x = x.to_dict()
    if isinstance(x, dict):
        for k in sorted(x, key=str):
            if str(k) not in SKIP:
                h.update(b"k" + str(k).encode()); canon(x[k], h)
        return
    if isinstance(x, (list, tuple)):
        h.update(b"[%d" % len(x))
        for v in x:
            canon(v, h)
        return
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.ascontiguousarray(x)
        h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
        return
    if isinstance(x, float):
        h.update(b"nan" if math.isnan(x) else float(x).hex().encode())
        return
    h.update(repr(x).encode())

params = json.loads(sys.argv[1])
def shrunk(p, **small):
    """The parameters with the probe's sizes put in (only where the config knows the field), lists as tuples."""
    tup = lambda v: tuple(v) if isinstance(v, list) else v
    return {{k: tup(small[k] if k in small else v) for k, v in p.items()}}

def sized(p, **small):
    """The unit's parameters with every one of the probe's sizes put in, lists as tuples. A notebook unit's parameters
    are its profile's values only (none at default: the config's own), so shrunk would leave its sizes unset."""
    tup = lambda v: tuple(v) if isinstance(v, list) else v
    return {{k: tup(v) for k, v in {{**p, **small}}.items()}}
'''


@dataclass(frozen=True)
class Probe:
    """A kind's probe: Python that reads `params` (the unit's) and sets `out` to the measurements at a tiny size."""

    kind: str
    code: str

    def script(self) -> str:
        """The child's whole program: the digest preamble, the probe, and the digest printed on the last line."""
        return DIGEST + self.code + "\nh = hashlib.sha256(); canon(out, h); print(h.hexdigest()[:16])\n"


PROBES: dict[str, Probe] = {}


def register(probe: Probe) -> Probe:
    """Add a kind's probe (tests register their own)."""
    PROBES[probe.kind] = probe
    return probe


# notebook 10's plane cell: d = 6, two replicates in two chunks, short caps on both stages
register(Probe("premise_cell", '''
from imbalanced_cl.claims.premise_map import PremiseMapConfig, run_cell
p = dict(params); c = p.pop("cell")
cfg = PremiseMapConfig(**shrunk(p, R=2, chunk=1, n_pairs=64, vanilla_max=30, vanilla_block=10, prune_max=10,
                                 kappa_pairs=200, progress=False, threads=1, workers=0))
res = run_cell(cfg.cell("plane", 6, c["lam_name"], c["ratio"]))
out = {"premises": res.premises, "gain": res.gain, "arms": res.arms, "extra": res.extra}   # measured, not the cell
'''))
# notebook 10's target cell runs the same run_cell at derived m, K and vanilla cap: the premise_cell probe answers
# for its code (the derived settings are its parameters, compared apart)
register(Probe("target_cell", PROBES["premise_cell"].code))

# notebook 08's point: d = 6, two replicates in two chunks, short stages
register(Probe("scale_point", '''
from imbalanced_cl.claims.scale import ScaleConfig, measure_point
p = dict(params); p.pop("d_point")
cfg = ScaleConfig(**shrunk(p, R=2, chunk=1, n_pairs=64, t1_cap=0.3, t2_cap=0.3, t3_min=0.2, t3_cap=0.3,
                           branch_tau=0.1, records_per_tau=5, progress=False, threads=1, workers=0))
out = measure_point(cfg, 6)
'''))

def _ci_sizes(notebook: str, **small) -> dict:
    """The ci profile's values for a notebook (under a minute each), with `small` over them: the sizes its probe runs
    at. One dict, so that a size the ci profile also sets (R) is given once, not twice (a TypeError in the child)."""
    import yaml
    try:
        ci = dict(yaml.safe_load((repo_root() / "profiles.yaml").read_text())["ci"][notebook])
    except (OSError, KeyError, TypeError):
        ci = {}
    return {**ci, **small}


# Notebooks whose units keep measurement stages (book/records/record.py MEASURES): their stage functions at the ci
# sizes. A probe calls only what every record's commit has: notebook 02's push (measure_push, added 2026-11-28) is
# measure_t2 at 4 × K pairs, so measure_t2 answers for it, and the records made before it stay comparable.
register(Probe("notebook/02_lucky_neurons", f'''
from imbalanced_cl.claims.lucky import LuckyConfig, measure_t2, run_census, workshop_figure
cfg = LuckyConfig(**sized(params, **{_ci_sizes("02_lucky_neurons", R=2, chunk=1, progress=False)!r}))
out = {{"census": run_census(cfg.census()), "t2": measure_t2(cfg), "workshop": workshop_figure(cfg)}}
'''))
register(Probe("notebook/03_Ni_scaling", f'''
from imbalanced_cl.claims.scaling import ScalingConfig, train_grid
cfg = ScalingConfig(**sized(params, **{_ci_sizes("03_Ni_scaling", R=2, chunk=1, progress=False)!r}))
out = train_grid(cfg, log=None)
'''))
register(Probe("notebook/01_stage1_growth", f'''
from imbalanced_cl.claims.stage1 import Stage1Config, measure_main, measure_push, measure_sweeps
cfg = Stage1Config(**sized(params, **{_ci_sizes("01_stage1_growth", R=2, chunk=1, progress=False)!r}))
out = {{"main": measure_main(cfg), "sweeps": measure_sweeps(cfg), "push": measure_push(cfg)}}
'''))
register(Probe("notebook/04_pruning_gains", f'''
from imbalanced_cl.claims.pruning import PruningConfig, measure_protocol
cfg = PruningConfig(**sized(params, **{_ci_sizes("04_pruning_gains", R=2, chunk=1, progress=False, threads=1,
                                                  workers=1)!r}))
if params.get("record_sweeps"):     # its sweeps are units of their own (pruning_sweep): it measures its main part
    from imbalanced_cl.claims.pruning import measure_main
    out = measure_main(cfg)
else:
    out = measure_protocol(cfg)
'''))
# one sweep of notebook 04 (pruning_sweep) at notebook 04's ci sizes
register(Probe("pruning_sweep", f'''
from imbalanced_cl.claims.pruning import PruningConfig, measure_sweep
p = dict(params); name = p.pop("sweep")
cfg = PruningConfig(**shrunk(p, **{_ci_sizes("04_pruning_gains", R=2, chunk=1, progress=False, threads=1,
                                              workers=1)!r}))
out = measure_sweep(cfg, name)
'''))

# notebook 05: every (point, repeat) under both arms at the ci sizes, two repeats in batches of one; what the figures
# read (the process count and the wall time are how it ran, not what it measured)
register(Probe("notebook/05_appendix_figures", f'''
from imbalanced_cl.claims.appendix import AppendixConfig, measure_appendix
small = {{**{_ci_sizes("05_appendix_figures")!r}, "repeats": 2, "chunk": 1, "workers": 1, "threads": 1}}
cfg = AppendixConfig(**sized(params, **small, progress=False))
m = measure_appendix(cfg)
out = {{"points": m.points, "values": m.values, "trained": m.trained, "t1_mean": m.t1_mean}}
'''))
# notebook 09: the view correlations and the grid (with its sensitivity run) at the ci sizes, two replicates
register(Probe("notebook/09_feature_decoupling", f'''
from imbalanced_cl.claims.decoupling import DecouplingConfig, measure_grids, view_correlations
small = {{**{_ci_sizes("09_feature_decoupling")!r}, "R": 2, "chunk": 1, "workers": 1, "threads": 1}}
cfg = DecouplingConfig(**sized(params, **small, progress=False))
out = {{"views": view_correlations(cfg), "grids": measure_grids(cfg)}}
'''))

# notebook 06: digits-LT at the ci sizes whatever the record's data, one epoch, one seed, a short linear probe, every
# method (a few seconds on an idle core); each run's measurements, not its timings, precision or key (a config echo)
register(Probe("notebook/06_lt_benchmarks", f'''
from imbalanced_cl.lt.config import LTConfig
from imbalanced_cl.lt.experiment import measure_runs
small = {{**{_ci_sizes("06_lt_benchmarks")!r}, "dataset": "digits", "n_max": 0, "image_size": 0, "test_per_class": 0,
         "seeds": (0,), "epochs": 1, "probe_iters": 20, "workers": 1, "threads": 1, "device": "cpu", "download": False,
         "results_dir": "", "ckpt_dir": "", "ckpt_every": 0, "progress": False}}
cfg = LTConfig(**sized(params, **small))
MEASURED = ("dataset", "rho", "method", "seed", "acc", "per_class", "delta20", "many", "medium", "few", "train_counts",
            "n_train", "n_probe", "n_test", "epochs", "losses", "kept")
out = [{{k: r[k] for k in MEASURED if k in r}} for r in measure_runs(cfg, log=lambda *a: None).rows]
'''))

# notebook 08: its grid at two small d's with the scale_point probe's short stages, two replicates in batches of one,
# in this process (the ci sizes took over 6 min on the portable kernel path); the points, not the config they echo
register(Probe("notebook/08_scale", '''
from imbalanced_cl.claims.scale import ScaleConfig, run
cfg = ScaleConfig(**sized(params, ds=(6, 8), R=2, chunk=1, n_pairs=64, t1_cap=0.3, t2_cap=0.3, t3_min=0.2,
                           t3_cap=0.3, branch_tau=0.1, records_per_tau=5, progress=False, threads=1, workers=1))
out = run(cfg).points
'''))
# notebook 10: the closed forms at two d's, and two cells at d = 6 (one on the plane, one star cell) with the
# premise_cell probe's short caps; each cell's measurements, not the cell it describes
register(Probe("notebook/10_premise_map", '''
from imbalanced_cl.claims.premise_map import PremiseMapConfig, rate_table, run_map
no = ()
cfg = PremiseMapConfig(**sized(params, ds=(6,), lambdas=("mid",), ratios=(0.8,), R=2, chunk=1, n_pairs=64,
                                vanilla_max=30, vanilla_block=10, prune_max=10, kappa_pairs=200, estimate_ds=(10, 20),
                                star_m_over_d=no, star_K=no, star_n_minority=no, star_bias_onset=no, star_bias_coef=no,
                                star_alpha=(0.3,), record_ds=no, record_star=no, progress=False, threads=1, workers=1))
cells = [{"premises": r.premises, "gain": r.gain, "arms": r.arms, "extra": r.extra} for r in run_map(cfg, False)]
out = {"rates": rate_table(cfg, cfg.estimate_ds, cfg.ratios), "cells": cells}
'''))

# the regime page: its three arms at the ci sizes, two replicates; what the page reads of each arm
register(Probe("notebook/regime", f'''
from imbalanced_cl.claims.regime_compare import RegimeConfig, measure_arms
cfg = RegimeConfig(**sized(params, **{_ci_sizes("regime", R=2, chunk=1, progress=False)!r}))
out = measure_arms(cfg)
'''))


def probe_for(kind: str, name: str) -> str | None:
    """The probe that decides a unit's records: its own (kind/name), else its kind's, else None."""
    return f"{kind}/{name}" if f"{kind}/{name}" in PROBES else kind if kind in PROBES else None


PORTABLE = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}


# A probe takes seconds to a few minutes on an idle core; beside a campaign and a test run on a 2-core host, 04's and
# 09's took over 300 s (2026-11-28), and a probe that times out leaves a valid record out. It runs once per code version
# (probes.json keeps it), so a generous limit costs little.
TIMEOUT = 1800


class ProbeFailed(RuntimeError):
    """A probe could not run under some code (an old tree whose entry has another shape): one line, why."""


def run(probe: Probe, tree: Path, params: dict, timeout: float = TIMEOUT) -> str:
    """The probe's digest under the package sources of `tree` (a checkout or an extracted commit), in a child."""
    env = {**os.environ, **PORTABLE, "PYTHONPATH": str(Path(tree) / "src")}
    res = subprocess.run([sys.executable, "-c", probe.script(), json.dumps(params, default=str)], cwd=tree, env=env,
                         capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["no output"])[-1]
        raise ProbeFailed(f"probe {probe.kind} did not run under {tree}: {last}")
    return res.stdout.strip().splitlines()[-1]


def extract(commit: str, root: Path, where: Path) -> Path:
    """The package sources and profiles of `commit` (git archive), unpacked under `where`; the folder."""
    out = Path(where) / commit[:12]
    if (out / "src").is_dir():
        return out
    out.mkdir(parents=True, exist_ok=True)
    blob = subprocess.run(["git", "archive", "--format=tar", commit, "src", "profiles.yaml"], cwd=root,
                          capture_output=True, timeout=60)
    if blob.returncode != 0:
        raise ProbeFailed(f"commit {commit[:7]} is not in this repository's history: its code cannot be re-run")
    tar = out / "src.tar"
    tar.write_bytes(blob.stdout)
    with tarfile.open(tar) as t:
        t.extractall(out, filter="data")
    tar.unlink()
    return out


def cache_path(root: Path | None = None) -> Path:
    """Where probe results are kept: results/campaign/probes.json (committed with the records)."""
    return Path(root or repo_root()) / "results" / "campaign" / "probes.json"


def _key(kind: str, code: str, params: dict) -> str:
    """The cache key of one probe result: kind, code digest, parameters and the probe's own text."""
    blob = json.dumps({"kind": kind, "code": code, "params": params, "probe": PROBES[kind].code}, sort_keys=True,
                      default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def host() -> str:
    """The arithmetic a probe's last bits depend on beyond the code: the CPU's vendor and widest vector unit. The
    portable kernel path (PORTABLE) pins torch's and MKL's, but numpy dispatches its own by the CPU, and an Intel and an
    AMD host gave one tree two digests (2026-11-28: scale_point at 0ef50ea, 0d12e260... on one, f1475d52... here)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        info = ""
    vendor = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("vendor_id")), "")
    flags = set(next((ln.split(":", 1)[1].split() for ln in info.splitlines() if ln.startswith("flags")), []))
    width = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "base"
    import platform
    return f"{platform.machine()}/{vendor or platform.processor() or 'unknown'}/{width}"


class Cache:
    """Probe digests by key, read from and written back to probes.json (a damaged file counts as empty); each with the
    host that computed it (host()), since two hosts may give the same code two digests."""

    def __init__(self, path: Path):
        """Read the cache at `path` (absent or unreadable: empty)."""
        self.path = Path(path)
        try:
            self.data = json.loads(self.path.read_text())
            assert isinstance(self.data, dict)
        except (OSError, ValueError, AssertionError):
            self.data = {}

    def digest(self, kind: str, code: str, params: dict, tree, here: bool = False) -> str:
        """The probe's digest for code `code` at `params`, from the cache or run on `tree()` (then kept); `here`: only
        a digest this host computed counts (else it is run again)."""
        import torch
        key = _key(kind, code, params)
        hit = self.data.get(key)
        if (isinstance(hit, dict) and hit.get("torch") == torch.__version__ and isinstance(hit.get("probe"), str)
                and (not here or hit.get("host") == host())):
            return hit["probe"]
        value = run(PROBES[kind], tree(), params)
        self.data[key] = {"kind": kind, "code": code, "probe": value, "torch": torch.__version__, "host": host()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, self.path)
        return value

    def host_of(self, kind: str, code: str, params: dict) -> str:
        """The host that computed a cached digest ("" where the cache does not say)."""
        hit = self.data.get(_key(kind, code, params))
        return str(hit.get("host", "")) if isinstance(hit, dict) else ""


def same_numbers(kind: str, rec: dict, params: dict, code: str, root: Path | None = None,
                 cache: Cache | None = None) -> tuple[bool, str]:
    """Whether a record made under other code computes what today's code computes at `params`: (valid, why), by
    the probe `kind` (probe_for: a unit's own, or its kind's).

    `rec` is the record (its commit, code digest and parameters); `code` today's digest. Without a probe for the
    kind, or without the record's commit in this history, the record cannot be checked: stale, and why."""
    root = Path(root or repo_root())
    prov = rec.get("provenance") if isinstance(rec.get("provenance"), dict) else {}
    commit = str(prov.get("commit", ""))
    if kind not in PROBES:
        return False, f"made under other code, and kind {kind} has no probe to compare numbers"
    if prov.get("dirty"):
        return False, f"made under other code, from a tree with uncommitted changes at {commit[:7]}: not re-runnable"
    cache = cache or Cache(cache_path(root))
    old_code = rec.get("measure_code") or rec.get("code") or ""
    old_key, old_params = f"{commit}:{old_code}", rec.get("params", {})
    with tempfile.TemporaryDirectory(prefix="probe-") as tmp:
        def digests(here: bool = False) -> tuple[str, str]:
            return (cache.digest(kind, old_key, old_params, lambda: extract(commit, root, Path(tmp)), here),
                    cache.digest(kind, code, params, lambda: root, here))
        try:
            then, now = digests()
            # digests from two hosts (or one the cache does not place) may differ in the last bit for the same code:
            # before calling the record stale, compute both on this host
            if then != now and not (cache.host_of(kind, old_key, old_params) == cache.host_of(kind, code, params)
                                    == host()):
                then, now = digests(here=True)
        except ProbeFailed as e:
            return False, f"made under other code; {str(e).splitlines()[0]}"
        except subprocess.TimeoutExpired as e:     # its message is the whole child program: name the probe instead
            return False, f"made under other code; probe {kind} did not finish in {e.timeout:.0f} s (run status again)"
    if then == now:
        return True, f"made under other code at {commit[:7]}; probe {kind} gives the same numbers ({now})"
    return False, f"probe {kind} moved: the code of {commit[:7]} gives {then}, today's gives {now}"
