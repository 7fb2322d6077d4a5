"""The methods page's tables: the verdict words (verdict.MEANINGS), the premises and predictions the book checks
(premises.CONDITIONS), and every tolerance, smallest effect of interest and premise threshold, read off the configs.

A judgement parameter is a config field of a part whose role is judging (parts.py).
Its value is the config's default (the default profile); the page also shows what the ci and paper profiles change.
"""
from __future__ import annotations

from pathlib import Path

from ... import premises as P
from ... import verdict as V
from ...parts import fields_of
from ..build.cells import config_class, field_comments, role
from ..build.profiles import params
from ..build.runner import toc_notebooks
from .render import md_cell, md_table


def judgement_table(root: Path) -> list[dict]:
    """One row per (notebook, judgement parameter): its value per profile and its meaning."""
    out = []
    for nb in toc_notebooks(root):
        cls = config_class(nb)
        if cls is None:
            continue
        notes, inst = field_comments(cls), cls()
        for f, _ in fields_of(cls):
            if role(cls, f.name) != "judging":
                continue
            row = {"notebook": nb.stem, "parameter": f.name, "default": getattr(inst, f.name),
                   "meaning": notes.get(f.name, "")}
            for prof in ("ci", "paper"):
                row[prof] = params(prof, nb.stem, root / "profiles.yaml").get(f.name, "=")
            out.append(row)
    return out


def render(rows: list[dict]) -> str:
    """Markdown table of the judgement parameters."""
    return md_table(["notebook", "parameter", "default", "ci", "paper", "meaning"],
                    [[r["notebook"], f"`{r['parameter']}`", r["default"], r["ci"], r["paper"], md_cell(r["meaning"])]
                     for r in rows])


def legend() -> str:
    """The verdict words and their one meaning, as a Markdown table (verdict.legend_markdown)."""
    return V.legend_markdown()


def conditions() -> str:
    """Markdown table of every condition the book checks: id, premise or prediction, source, statement, for a
    premise the theorem that needs it (premises.CONDITIONS), and for one stated asymptotically how it is tested by
    its effect on the rows, or why it is not (premises.ASYMPTOTIC)."""
    rows = []
    for c in P.CONDITIONS:
        need = md_cell(c.needed_by) + ("" if c.required else " (reported only)") if c.kind == P.PREMISE else "—"
        e = P.EFFECTS.get(c.id)
        effect = "—" if e is None else md_cell(e.push) if e.push else "not pushed: " + md_cell(e.why_not)
        rows.append([f"`{c.id}`", c.kind, md_cell(c.source), md_cell(c.statement), need, effect])
    return md_table(["id", "kind", "the paper's source", "statement", "needed by", "asymptotic: tested by its effect"],
                    rows)
