"""Parameters cells generated from the config dataclasses, so every default has one home.

A notebook names its config class in its metadata (`imbalanced_cl.config = "imbalanced_cl.claims.stage1:Stage1Config"`).
Its `parameters` cell is written from that class: one line per field, `name: type = default  # meaning; allowed ...`.
The meaning is the field's comment in the class source; the allowed range is read off the class's own validate()
(by handing it a value no check accepts), so neither is typed twice. `python -m imbalanced_cl params` rewrites
the cells; a test fails when a cell and its class disagree. profiles.yaml then holds only what a profile changes.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import io
import json
import textwrap
import tokenize
from pathlib import Path

from ..validate import ParameterError

HEADER = ("# Parameters (papermill). Generated from {cls} by `python -m imbalanced_cl params`: edit the defaults there.\n"
          "# Override any of them: papermill NOTEBOOK OUT -p NAME VALUE, or a profile in profiles.yaml.")


def config_class(nb: Path) -> type | None:
    """The config dataclass a notebook names in metadata.imbalanced_cl.config, or None."""
    spec = json.loads(Path(nb).read_text()).get("metadata", {}).get("imbalanced_cl", {}).get("config")
    if not spec:
        return None
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def field_comments(cls: type) -> dict[str, str]:
    """{field: trailing comment} from the class body and its bases' bodies (the most derived comment wins)."""
    out: dict[str, str] = {}
    for klass in reversed([k for k in cls.__mro__ if dataclasses.is_dataclass(k)]):
        src = textwrap.dedent(inspect.getsource(klass))
        comments = {tok.start[0]: tok.string.lstrip("# ").strip()
                    for tok in tokenize.generate_tokens(io.StringIO(src).readline) if tok.type == tokenize.COMMENT}
        body = ast.parse(src).body[0].body
        for node in body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                text = comments.get(node.end_lineno, "")
                if text or node.target.id not in out:
                    out[node.target.id] = text
    return out


class _NoValue:
    """A value every check refuses, used to read a field's allowed range off validate()."""

    def __repr__(self):
        return "?"


def allowed(cls: type, name: str) -> str:
    """The allowed range of one field as its validate() states it ('' if the field is not checked)."""
    try:
        dataclasses.replace(cls(), **{name: _NoValue()})
    except ParameterError as e:
        msg = str(e)
        if f"parameter {name}=" in msg and "allowed " in msg:
            return msg.split("allowed ", 1)[1]
    except (TypeError, ValueError, AttributeError):
        pass
    return ""


def _literal(v) -> str:
    """A Python literal papermill can parse: tuples become lists, strings use double quotes."""
    if isinstance(v, tuple):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v)


def _comment(text: str) -> str:
    """A help text papermill can parse: it skips any parameter line holding a second '=', so none may appear."""
    for a, b in (("<=", "≤"), (">=", "≥"), ("!=", "≠"), ("==", "＝"), ("=", "＝")):
        text = text.replace(a, b)
    return text


def _type(f: dataclasses.Field, v) -> str:
    t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    return "list" if isinstance(v, tuple) or t.startswith("tuple") else t


def parameters_source(cls: type) -> str:
    """The text of a notebook's parameters cell for config class `cls`: the notebook's own fields first."""
    inst, comments = cls(), field_comments(cls)
    own = [n for n in cls.__dict__.get("__annotations__", {})]
    fields = sorted(dataclasses.fields(cls), key=lambda f: (f.name not in own, 0))
    lines = [HEADER.format(cls=f"{cls.__module__}.{cls.__name__}")]
    for f in fields:
        v = getattr(inst, f.name)
        note = comments.get(f.name, "")
        rng = allowed(cls, f.name)
        if rng and rng not in note:
            note = f"{note}; allowed: {rng}" if note else f"allowed: {rng}"
        lines.append(f"{f.name}: {_type(f, v)} = {_literal(v)}  # {_comment(note)}".rstrip())
    return "\n".join(lines)


def parameters_cell(nb: dict) -> dict | None:
    """The cell tagged `parameters` of a notebook (as a dict), or None."""
    for cell in nb["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    return None


def sync(path: Path, write: bool = False) -> bool:
    """True when the notebook's parameters cell equals the one generated from its config (rewrite it if `write`)."""
    cls = config_class(path)
    if cls is None:
        return True
    nb = json.loads(Path(path).read_text())
    cell = parameters_cell(nb)
    want = parameters_source(cls)
    have = "".join(cell["source"]) if cell else ""
    if have == want:
        return True
    if write and cell is not None:
        cell["source"] = want.splitlines(keepends=True)
        Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return False


def declared_defaults(cls: type) -> dict:
    """{field: default} of a config class, lists for tuples (what a profile override is compared with)."""
    inst = cls()
    return {f.name: (list(v) if isinstance(v := getattr(inst, f.name), tuple) else v) for f in dataclasses.fields(cls)}


