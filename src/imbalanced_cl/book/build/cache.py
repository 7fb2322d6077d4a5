"""What a cached executed notebook is keyed by: the package's code, the versions of the packages that compute results,
the campaign records a notebook reads, its parameters; and how a published notebook is scrubbed of this machine's
directories."""
from __future__ import annotations

import hashlib
import json
import platform
import re
import sysconfig
from pathlib import Path

RENDER_ONLY = ("book/pages/sphinxext.py",)


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


# Packages whose version can change what a notebook computes or draws: installing another re-executes the book.
RESULT_PACKAGES = ("torch", "numpy", "scipy", "kornia", "matplotlib")


def dependency_versions(names: tuple[str, ...] = RESULT_PACKAGES) -> dict[str, str]:
    """{package: installed version} of the packages that compute results ('absent' if not installed), and Python's."""
    from importlib.metadata import PackageNotFoundError, version
    out = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


# The campaign records each notebook reads besides its code and parameters (issue 47): a new, mended or damaged record
# re-executes exactly the notebooks that read it. The probe cache decides which records are valid, so it counts too.
RECORDS_READ = {"04_pruning_gains": ("results/campaign/*/pruning_sweep/*.json",),
                "08_scale": ("results/campaign/*/scale_point/*.json",),
                "10_premise_map": ("results/campaign/*/premise_cell/*.json",)}
PAPER_RECORDS = ("results/campaign/*/notebook/*.json", "results/paper/*.json")    # the paper column (collectors)
PROBES_FILE = "results/campaign/probes.json"
FRESH_ENV = "IMBALANCED_CL_FRESH"     # `book --fresh`: the kernels compute everything and read no campaign record


def records_digest(root: Path, nb: Path) -> str:
    """sha256 over the names and bytes of the campaign records notebook `nb` reads ("" for one that reads none)."""
    globs = PAPER_RECORDS if collects(nb) else RECORDS_READ.get(nb.stem, ())
    if not globs:
        return ""
    h = hashlib.sha256()
    for p in sorted({p for g in (*globs, PROBES_FILE) for p in Path(root).glob(g)}):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def cache_key(nb: Path, params: dict, profile: str, code: str, extra: str = "", versions: dict | None = None) -> str:
    """Key of one execution: notebook source, parameters, profile name, package code, dependency versions, extra."""
    blob = json.dumps({"nb": hashlib.sha256(nb.read_bytes()).hexdigest(), "params": params, "profile": profile,
                       "code": code, "extra": extra, "versions": versions or {}}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def builder_paths(*roots: Path) -> dict[str, str]:
    """This machine's directories that a published notebook must not name, each with its stand-in.

    `roots` (the repository, the output folder) become relative ('' stands for the folder itself), the
    interpreter's site-packages '<site-packages>', the home folder '~'.
    """
    subs = {str(Path.home()): "~"}
    subs.update({sysconfig.get_paths()[k]: "<site-packages>" for k in ("purelib", "platlib")})
    subs.update({str(Path(r).resolve()): "" for r in roots})
    return subs


def scrub(value, subs: dict[str, str]):
    """A notebook's JSON with every directory in `subs` replaced by its stand-in, longest first ('DIR/x' -> 'x' for
    a stand-in '', 'STAND/x' otherwise; 'DIR' alone -> '.' or 'STAND'). Images are left as they are."""
    if isinstance(value, dict):
        return {k: v if k.startswith("image/") else scrub(v, subs) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, subs) for v in value]
    if not isinstance(value, str):
        return value
    for old in sorted(subs, key=len, reverse=True):
        if old in value:
            new = subs[old]
            value = value.replace(old + "/", new + "/" if new else "")
            value = re.sub(re.escape(old) + r"(?![\w./-])", new or ".", value)
    return value


def collects(nb: Path) -> bool:
    """A notebook that reads the other executed notebooks (the scoreboard) says so in its metadata."""
    meta = json.loads(nb.read_text()).get("metadata", {})
    return bool(meta.get("imbalanced_cl", {}).get("collects", False))
