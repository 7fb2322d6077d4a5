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

from .glued import rows_of


def _provenance(nb) -> dict:
    """What papermill and the provenance cell recorded about an executed notebook."""
    pm = nb.metadata.get("papermill", {})
    out = {"parameters": pm.get("parameters", {}), "wall_s": pm.get("duration"), "date": pm.get("end_time")}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            md = data.get("text/markdown", "")
            md = "".join(md) if isinstance(md, list) else md
            if "Provenance" in md:   # the table provenance.show prints: | field | `value` |
                for key in ("commit", "device", "torch", "threads"):
                    m = re.search(rf"\| {key} \| `([^`]*)`", md)
                    if m:
                        out[key] = m.group(1)
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
               **_provenance(nb), "rows": rows}
        target = out_dir / f"{path.stem}.json"
        target.write_text(json.dumps(rec, indent=1, default=str) + "\n")
        written.append(target)
    return written


def load(out_dir: Path) -> dict[str, dict]:
    """{notebook: record} of every results/<profile>/*.json (empty when the folder does not exist)."""
    folder = Path(out_dir)
    if not folder.is_dir():
        return {}
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def column(rows: list[dict], records: dict[str, dict]) -> list[dict]:
    """For each book row, the recorded row with the same (notebook, claim), or a 'not yet run' marker."""
    out = []
    for r in rows:
        rec = records.get(r["notebook"])
        if rec is None:
            out.append({"status": "not yet run at paper scale"})
            continue
        match = next((x for x in rec["rows"] if x["claim"] == r["claim"]), None)
        if match is None:
            out.append({"status": "no such row in the paper-scale record"})
            continue
        out.append({"status": "ok", "verdict": match["verdict"], "measured": match["measured"], "lo": match["lo"],
                    "hi": match["hi"], "device": rec.get("device", "?"), "commit": str(rec.get("commit", "?"))[:7],
                    "differs": match["verdict"] != r["verdict"], "units": rec.get("units")})
    return out


# Modules that render or schedule, never compute a measurement: editing them must not make a recorded unit stale.
RENDERING = ("imbalanced_cl.book", "imbalanced_cl.campaign")


def _syntax(source: str) -> str:
    """A source's syntax tree without comments, docstrings or layout (the text itself if it does not parse): two
    sources that differ only in those compute the same thing, and must not make a recorded unit stale."""
    import ast
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return _dump(tree)


# Fields that later Pythons added to the syntax tree (3.12: PEP 695's type parameters). Left out while empty, a
# source that uses none of them dumps the same on every Python, so a record made on a cluster's Python 3.12 is not
# stale on a laptop's 3.11 (seen on a lent GPU machine, 2026-11-26: every record read as stale there).
NEWER_FIELDS = ("type_params",)


def _dump(node) -> str:
    """ast.dump(node, annotate_fields=False) as Python 3.11 writes it, on any Python (NEWER_FIELDS left out while
    empty): a code version must not depend on the interpreter that computes it."""
    import ast
    if isinstance(node, list):
        return "[" + ", ".join(_dump(x) for x in node) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    args, keywords = [], False
    for name in node._fields:
        try:
            value = getattr(node, name)
        except AttributeError:
            keywords = True
            continue
        if (value is None and getattr(type(node), name, ...) is None) or (name in NEWER_FIELDS and not value):
            keywords = True
            continue
        args.append(f"{name}={_dump(value)}" if keywords else _dump(value))
    return f"{type(node).__name__}({', '.join(args)})"


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
        h.update(_syntax(notebook_source(p) if p.suffix == ".ipynb" else p.read_text()).encode())
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


def science_files(root: Path, notebook: Path | None = None, source: str = "") -> list[Path]:
    """The package modules a notebook's results (or a piece of code, `source`) depend on: what its code cells and
    config import, followed transitively (parent packages' __init__ included), leaving out the rendering layers
    (book/, campaign/)."""
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
        if not mod or mod in seen or mod.startswith(RENDERING):
            continue
        seen.add(mod)
        path = known[mod]
        pkg_name = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        todo |= _names_in(ast.parse(path.read_text()), pkg_name)
        todo |= {".".join(parts[:i]) for i in range(1, len(parts))}   # importing a.b.c runs a and a.b
    return sorted(known[m] for m in seen)


def source_code(root: Path, source: str) -> str:
    """The code version of a piece of code that calls the package (a campaign unit's entry): the syntax of the
    modules it imports, transitively, and the versions of the result packages."""
    from .runner import dependency_versions
    return code_digest(Path(root), science_files(root, source=source), {**dependency_versions(), "entry": source})


def notebook_code(root: Path, notebook: Path) -> str:
    """The code version of one notebook's results: the syntax of its code cells and of the package modules it
    imports (science_files; comments, docstrings and prose do not count), and the versions of the result packages."""
    from .runner import dependency_versions
    return code_digest(Path(root), [Path(notebook)] + science_files(root, notebook), dependency_versions())


def load_campaign(root: Path, profile: str) -> dict[str, dict]:
    """{notebook: record} of the campaign's `notebook` units at a profile that match today's code and parameters.

    Each record is shaped like a results/<profile>/ record (rows, device, commit, wall time) plus `units`
    ("1 of 1"). A unit recorded under other code or parameters is stale and left out (`campaign status` lists it);
    a file that does not parse is skipped.
    """
    from .profiles import params as profile_params
    folder = Path(root) / "results" / "campaign" / profile / "notebook"
    out = {}
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            rec = json.loads(p.read_text())
            nb = Path(root) / "notebooks" / f"{rec['name']}.ipynb"
            current = (nb.exists() and rec["code"] == notebook_code(root, nb)
                       and rec["params"] == profile_params(profile, rec["name"]))
        except (ValueError, KeyError, OSError):
            continue
        if current:
            prov = rec["provenance"]
            out[rec["name"]] = {"notebook": rec["name"], "profile": profile, **prov,
                                "date": prov.get("recorded"), "parameters": rec["params"],
                                "rows": rec["payload"].get("rows", []), "units": "1 of 1"}
    return out
