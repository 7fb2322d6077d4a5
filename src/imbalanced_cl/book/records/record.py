"""Recorded results: each executed notebook's verdict rows with their provenance, stored as small JSON files.

After a paper-profile run on a GPU, `python -m imbalanced_cl record --profile paper` writes
results/paper/<notebook>.json (commit, device, date, parameters, wall time, rows). The scoreboard shows those rows
in a column of their own beside the book's own (default-profile) verdicts, without re-running anything.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from pathlib import Path

import nbformat

from ... import verdict as V
from .glued import rows_of
from .syntax import code_syntax


def recorded_provenance(nb) -> dict:
    """What papermill and the provenance cell recorded about an executed notebook."""
    pm = nb.metadata.get("papermill", {})
    out = {"parameters": pm.get("parameters", {}), "wall_s": pm.get("duration"), "date": pm.get("end_time")}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            md = data.get("text/markdown", "")
            md = "".join(md) if isinstance(md, list) else md
            if "Provenance" in md:   # the table provenance.show prints: | field | `value` |
                for key in ("commit", "device", "torch", "threads", "python", "cpu_kernels", "versions"):
                    m = re.search(rf"\| {key} \| `([^`]*)`", md)
                    if m:
                        out[key] = m.group(1)
                if isinstance(out.get("versions"), str):
                    try:
                        out["versions"] = json.loads(out["versions"])
                    except ValueError:
                        pass
                if isinstance(out.get("versions"), dict):     # the table shows torch and Python there only
                    for key in ("torch", "python"):
                        out.setdefault(key, out["versions"].get(key))
    return out


def record(executed_dir: Path, profile: str, out_dir: Path) -> list[Path]:
    """Write <out_dir>/<notebook>.json for every executed notebook that glued verdict rows; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(Path(executed_dir).glob("*.ipynb")):
        rows = rows_of(path)
        if not rows:
            continue
        nb = nbformat.read(path, as_version=4)
        rec = {"notebook": path.stem, "profile": profile, "recorded": _dt.datetime.now(_dt.timezone.utc).isoformat(),
               **recorded_provenance(nb), "rows": [V.to_json(r) for r in rows]}
        target = out_dir / f"{path.stem}.json"
        target.write_text(json.dumps(rec, indent=1, default=str) + "\n")
        written.append(target)
    return written


def _unreadable(path: Path, why: str, name: str) -> dict:
    """The stand-in of a record that could not be read: the scoreboard shows "record unreadable" in its place."""
    return {"notebook": name, "unreadable": f"{path.name}: {why}", "rows": []}


def _read_json(path: Path) -> dict:
    """A JSON object from a file; ValueError naming what is wrong (truncated, not an object, unreadable)."""
    try:
        rec = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON ({e.msg} at line {e.lineno})") from None
    except OSError as e:
        raise ValueError(f"cannot be read ({e.strerror})") from None
    if not isinstance(rec, dict):
        raise ValueError("not a JSON object")
    return rec


def read_rows(rows) -> list[V.Verdict]:
    """A record's stored rows as Verdict rows (verdict.from_json); ValueError naming the first row that is not one."""
    if not isinstance(rows, list):
        raise ValueError("no rows")
    out = []
    for i, r in enumerate(rows):
        try:
            out.append(V.from_json(r))
        except (ValueError, TypeError, AttributeError) as e:
            raise ValueError(f"row {i + 1} is not a verdict row ({e})") from None
    return out


def load(out_dir: Path) -> dict[str, dict]:
    """{notebook: record} of every results/<profile>/*.json, its rows as Verdict rows (empty when the folder does not
    exist); a file that cannot be read stands as {"unreadable": why} (column() shows it), never silently left out."""
    folder = Path(out_dir)
    if not folder.is_dir():
        return {}
    out = {}
    for p in sorted(folder.glob("*.json")):
        try:
            rec = _read_json(p)
            out[p.stem] = {**rec, "rows": read_rows(rec.get("rows"))}
        except ValueError as e:
            out[p.stem] = _unreadable(p, str(e), p.stem)
    return out


def paper_records(root: Path, profile: str = "paper") -> dict[str, dict]:
    """The records the scoreboard's paper column reads: results/<profile>/ (the `record` command), overridden by
    the campaign's current units; a readable record is never overridden by an unreadable one's stand-in."""
    out = load(Path(root) / "results" / profile)
    for name, rec in load_campaign(root, profile).items():
        if not rec.get("unreadable") or name not in out or out[name].get("unreadable"):
            out[name] = rec
    return out


def unreadable_notes(records: dict[str, dict]) -> list[str]:
    """One line per unreadable record of a loaded set: which file, why, and what was left out."""
    return [f"{rec['unreadable']}; the paper-scale verdicts of {name} are left out (shown as 'record unreadable')"
            for name, rec in records.items() if rec.get("unreadable")]


def device_label(rec: dict) -> str:
    """The device a record was made on, with the versions that can move its last digits: 'cuda, torch 2.11.0,
    Python 3.12.3' (versions are provenance, not part of its code version)."""
    versions = rec.get("versions") if isinstance(rec.get("versions"), dict) else {}
    torch_v, py = versions.get("torch") or rec.get("torch"), versions.get("python") or rec.get("python")
    parts = [str(rec.get("device", "?"))] + ([f"torch {torch_v}"] if torch_v else []) + ([f"Python {py}"] if py else [])
    if rec.get("cpu_kernels"):
        parts.append(f"CPU kernels {rec['cpu_kernels']}")
    return ", ".join(parts)


def not_judged(rec: dict) -> str:
    """Why today's verdict code cannot judge a campaign record (it kept no measurements: its rows are as judged when
    recorded, under older rules and often without ids), in the words every page uses; "" for a record it judges."""
    if rec.get("measurements", True):
        return ""
    return (f"recorded (commit {str(rec.get('commit', '?'))[:7]}, {str(rec.get('date') or '?')[:10]}) before records "
            "kept their measurements, so today's rules cannot judge it; it is being recorded again")


def column(rows: list[V.Verdict], records: dict[str, dict]) -> list[dict]:
    """For each book row, the recorded row with the same id in its notebook's record (the same claim text for a record
    made before rows had ids) under "row", with its verdict and provenance; or a 'not yet run' marker, or why the
    record cannot be judged today (not_judged)."""
    out = []
    for r in rows:
        rec = records.get(r.notebook)
        if rec is None:
            out.append({"status": "not yet run at paper scale"})
            continue
        if rec.get("unreadable"):
            out.append({"status": f"record unreadable ({rec['unreadable']})"})
            continue
        if not_judged(rec):
            out.append({"status": not_judged(rec)})
            continue
        same = (lambda x: x.id == r.id) if r.id else (lambda x: x.claim == r.claim)
        match = next((x for x in rec["rows"] if same(x)), None)
        if match is None:
            out.append({"status": "no such row in the paper-scale record"})
            continue
        out.append({"status": "ok", "row": match, "verdict": match.verdict, "device": device_label(rec),
                    "commit": str(rec.get("commit", "?"))[:7],
                    "date": str(rec.get("date") or rec.get("recorded") or "?")[:10],
                    "differs": match.verdict != r.verdict, "units": rec.get("units")})
    return out


# Modules that draw, render, schedule or say where a run happened, never shape a recorded value or row: editing them
# must not make a recorded unit stale. The rest of book/ counts: tables.py builds the verdict rows a notebook glues,
# glued.py reads them back into the record (RECORD_SHAPERS), so an edit there changes what a record holds.
RENDERING = ("imbalanced_cl.campaign", "imbalanced_cl.book.plots", "imbalanced_cl.book.records.provenance",
             "imbalanced_cl.book.pages.sphinxext", "imbalanced_cl.book.pages.scoreboard",
             "imbalanced_cl.book.build.runner", "imbalanced_cl.book.records.record",
             "imbalanced_cl.book.records.stability", "imbalanced_cl.book.records.syntax")

# Modules that turn an executed notebook into a record's rows whatever the notebook imports (the notebook unit's
# payload is rows_of(executed copy)).
RECORD_SHAPERS = "import imbalanced_cl.book.records.glued\n"


def notebook_source(notebook: Path) -> str:
    """A notebook's code cells (IPython magics and shell lines dropped) and the config class its metadata names."""
    nb = json.loads(Path(notebook).read_text())
    cells = ["\n".join(ln for ln in "".join(c["source"]).splitlines() if not ln.lstrip().startswith(("%", "!")))
             for c in nb["cells"] if c["cell_type"] == "code"]
    config = nb.get("metadata", {}).get("imbalanced_cl", {}).get("config", "")
    return "\n".join(cells) + f"\n_config = {config!r}\n"


def code_digest(root: Path, paths: list[Path], versions: dict | None = None) -> str:
    """sha256 (16 hex digits) over the syntax of files (.py, and notebooks' code cells; folders walked for *.py),
    their names, and package versions."""
    h = hashlib.sha256()
    files = []
    for p in map(Path, paths):
        files += sorted(p.rglob("*.py")) if p.is_dir() else [p] if p.exists() else []
    for p in sorted(set(files)):
        h.update(str(p.relative_to(root)).encode())
        h.update(code_syntax(notebook_source(p) if p.suffix == ".ipynb" else p.read_text()).encode())
    h.update(json.dumps(versions or {}, sort_keys=True).encode())
    return h.hexdigest()[:16]


def _names_in(tree, package: str) -> set[str]:
    """Every module a parsed source names: imports (relative ones resolved against `package`, at any depth) and
    string constants that spell an imbalanced_cl module (the lazy re-exports import by name)."""
    import ast
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            out |= {base} | {f"{base}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("imbalanced_cl."):
            out.add(node.value.partition(":")[0])
    return out


# The verdict layer: how measurements are judged, never what they are. A unit whose measurements are kept apart from
# its rows (campaign/stages.py) leaves it out of its code version (measure_code), so a moved threshold or a new rule
# never makes such a record stale.
VERDICT_LAYER = ("imbalanced_cl.verdict", "imbalanced_cl.rules", "imbalanced_cl.premises",
                 "imbalanced_cl.claims.premise_rows")


def _judging(module: str) -> bool:
    """Whether a module belongs to the verdict layer (VERDICT_LAYER, or a claim package's verdicts or results module:
    how its verdict rows read a stage, judged again at every build)."""
    return module in VERDICT_LAYER or module.endswith((".verdicts", ".results"))


def measure_code(root: Path, entry: str, notebook: Path | None = None) -> str:
    """The code version of what a unit measures: the syntax of the modules `entry` imports, transitively, the verdict
    layer left out, and the notebook's own calls of its measurement stages (its `measured(...)` lines)."""
    calls = []
    if notebook is not None:
        calls = [ln.strip() for ln in notebook_source(notebook).splitlines() if "measured(" in ln]
    files = science_files(root, source=entry, exclude=_judging)
    return code_digest(Path(root), files, {"entry": entry, "calls": calls})


# What each notebook with measurement stages measures (campaign/stages.py): its unit's code version covers these
# modules (and the notebook's own `measured(...)` calls), not the verdict layer, and its probe (campaign/probe.py)
# runs them at the ci profile's sizes. A notebook not named here is versioned by all its code, and its records keep
# their rows only. A page named here that is no claim notebook (the regime page) is a campaign unit too: its record
# keeps its stages and no rows, and the book replays it.
MEASURES = {"01_stage1_growth": "from imbalanced_cl.claims.stage1 import measure_main, measure_push, measure_sweeps",
            "02_lucky_neurons": "from imbalanced_cl.claims.lucky import measure_push, measure_t2, run_census, "
                                "workshop_figure",
            "03_Ni_scaling": "from imbalanced_cl.claims.scaling import measure_push, train_grid",
            "04_pruning_gains": "from imbalanced_cl.claims.pruning import measure_protocol",
            "05_appendix_figures": "from imbalanced_cl.claims.appendix import measure_appendix",
            "06_lt_benchmarks": "from imbalanced_cl.lt.experiment import measure_runs",
            "08_scale": "from imbalanced_cl.claims.scale import run",
            "09_feature_decoupling": "from imbalanced_cl.claims.decoupling import measure_grids, view_correlations",
            "10_premise_map": "from imbalanced_cl.claims.premise_map import rate_table, run_map",
            "regime": "from imbalanced_cl.claims.regime_compare import measure_arms"}


def unit_code(root: Path, nb: Path) -> str:
    """A notebook unit's code version: what it measures (MEASURES) where it keeps stages, else all its code."""
    if Path(nb).stem in MEASURES:
        return measure_code(root, MEASURES[Path(nb).stem], nb)
    return notebook_code(root, nb)


def science_files(root: Path, notebook: Path | None = None, source: str = "", exclude=None) -> list[Path]:
    """The package modules a notebook's results (or a piece of code, `source`) depend on: what its code cells and
    config import, followed transitively (parent packages' __init__ included), leaving out the rendering layers
    (book/, campaign/) and the modules `exclude(name)` names."""
    import ast
    pkg = Path(root) / "src"
    known = {".".join(p.relative_to(pkg).with_suffix("").parts[:-1] if p.name == "__init__.py"
                      else p.relative_to(pkg).with_suffix("").parts): p
             for p in (pkg / "imbalanced_cl").rglob("*.py")}
    todo = _names_in(ast.parse(notebook_source(notebook) if notebook else source), "")
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        parts = name.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        mod = ".".join(parts)
        if not mod or mod in seen or mod.startswith(RENDERING) or (exclude is not None and exclude(mod)):
            continue
        seen.add(mod)
        path = known[mod]
        pkg_name = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        todo |= _names_in(ast.parse(path.read_text()), pkg_name)
        todo |= {".".join(parts[:i]) for i in range(1, len(parts))}   # importing a.b.c runs a and a.b
    return sorted(known[m] for m in seen)


def source_code(root: Path, source: str) -> str:
    """The code version of a piece of code that calls the package (a campaign unit's entry): the syntax of the
    modules it imports, transitively. The versions of torch, numpy and Python are not part of it: a record made on
    another machine under the same code and parameters answers for them (its provenance names the versions)."""
    return code_digest(Path(root), science_files(root, source=source), {"entry": source})


def notebook_code(root: Path, notebook: Path) -> str:
    """The code version of one notebook's results: the syntax of its code cells, of the package modules it imports
    (science_files; comments, docstrings and prose do not count) and of those that turn its output into rows
    (RECORD_SHAPERS). Package versions are provenance, not code (see source_code)."""
    files = [Path(notebook)] + science_files(root, notebook) + science_files(root, source=RECORD_SHAPERS)
    return code_digest(Path(root), files)


def _judged(root: Path, profile: str, name: str) -> dict:
    """What campaign/judge.py kept for a notebook's record at a profile ({} when nothing)."""
    try:
        done = json.loads((Path(root) / "_build" / "judged" / profile / f"{name}.json").read_text())
    except (OSError, ValueError):
        return {}
    return done if isinstance(done, dict) else {}


def vouched(root: Path, profile: str, rec: dict) -> bool:
    """Whether this build's judge found this record valid under other code (its probe gives the same numbers)."""
    return _judged(root, profile, rec["name"]).get("record") == rec.get("key")


def judged_rows(root: Path, profile: str, rec: dict) -> tuple[list, str]:
    """A notebook record's rows (as stored, JSON) as today's verdict code reads its measurements (campaign/judge.py,
    kept under _build/judged/), and how they were judged; the rows stored at record time where it kept no
    measurements or has not been judged by this build."""
    done = _judged(root, profile, rec["name"])
    if done.get("record") == rec.get("key") and isinstance(done.get("rows"), list):
        return done["rows"], "judged by today's verdict code from the recorded measurements"
    why = done.get("why") if done.get("record") == rec.get("key") else ""
    return rec["payload"].get("rows", []), "rows as judged when recorded" + (f" ({why})" if why else "")


def load_campaign(root: Path, profile: str) -> dict[str, dict]:
    """{notebook: record} of the campaign's `notebook` units at a profile that match today's code and parameters.

    Each record is shaped like a results/<profile>/ record (rows, device, commit, wall time, versions) plus `units`
    ("1 of 1"). A unit recorded under other code or parameters is stale and left out (`campaign status` lists it).
    A file that cannot be read stands, when no current record of its notebook exists, as {"unreadable": why}: the
    scoreboard shows "record unreadable" there rather than a column that silently lacks the notebook.
    """
    from ..build.profiles import params as profile_params
    folder = Path(root) / "results" / "campaign" / profile / "notebook"
    out, bad = {}, {}
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if p.name.startswith("."):
            continue
        name = p.stem.rpartition("-")[0] or p.stem      # <notebook>-<key>.json
        try:
            rec = _read_json(p)
            missing = [k for k in ("name", "code", "params", "provenance", "payload") if k not in rec]
            if missing:
                raise ValueError(f"missing {', '.join(missing)}")
            nb = Path(root) / "notebooks" / f"{rec['name']}.ipynb"
            same = rec["params"] == profile_params(profile, rec["name"])
            current = nb.exists() and same and (rec["code"] == unit_code(root, nb) or vouched(root, profile, rec))
            if current:
                stored, judged = judged_rows(root, profile, rec)
                rows = read_rows(stored)
        except (ValueError, KeyError, TypeError) as e:
            bad.setdefault(name, _unreadable(p, str(e), name))
            continue
        if current:
            prov = rec["provenance"] if isinstance(rec["provenance"], dict) else {}
            out[rec["name"]] = {"notebook": rec["name"], "profile": profile, **prov,
                                "date": prov.get("recorded"), "parameters": rec["params"],
                                "rows": rows, "judged": judged, "units": "1 of 1",
                                "measurements": bool(rec["payload"].get("stages"))}
    return {**bad, **out}
