"""Notebook 10's target lines (issue 63): each target cell's settings (claims/premise_map/target.py), and beside it
its campaign record read back (the loss and l'_p it measured at T4, and the required premises that fail there) or,
where none answers, its campaign unit (kind target_cell, campaign/premise_cells.py) and the time projected for it on
this machine, as `campaign status` gives it.

A record is read only when it answers for the unit today's notebook derives (the same map parameters and derived
settings, and code that computes the same numbers: campaign/validity.py); every other record of that unit is named
with its commit and why it is not used.
"""
from __future__ import annotations

from pathlib import Path

from . import premise_cells as PC
from .units import Unit


def recorded_targets(cfg, results, root: Path | None = None) -> tuple[list, list[str]]:
    """([(Target, its recorded CellResult or None, its Unit or None)], notes): notebook 10's target cells at the d's
    its `results` measured (PC.derive), a Unit for each whose settings were all derived, and its record where one
    answers for it (any profile folder: the parameters say what was run)."""
    from ..book.records.record import source_code
    from ..paths import repo_root
    from .validity import first_valid, fresh, note
    root = Path(root or repo_root())
    code = source_code(root, PC.ENTRY)
    out, notes = [], []
    for t in PC.derive(cfg, results):
        unit = PC.target_unit(cfg, t, "", code) if PC.derived(t) else None
        if unit is None or fresh():
            out.append((t, None, unit))
            continue
        j, stale = first_valid(unit, root)
        notes += [f"{unit.label}: {note(k)}" for k in stale]
        res = None
        if j is not None:
            try:
                res = PC.cell_result(PC.cell_of(PC.config_of(unit.params), unit.params["cell"]), j.rec)
            except (KeyError, TypeError, ValueError) as e:
                notes.append(f"{unit.label}: {j.path.name} needs re-measuring (field {e})")
        out.append((t, res, unit))
    if fresh():
        notes.append("a fresh build (--fresh): recorded target cells not read")
    return out, notes


def measured_line(res) -> str:
    """What a recorded target cell measured at T4, in one line: the loss as a fraction of ln K, l'_p, and the
    required premises that fail there (or that every one holds)."""
    from .validity import made_by
    x = res.extra
    failing = [k for k, p in res.premises.items() if p.required and not p.prediction and not p.holds]
    return (f"recorded ({made_by(x.get('provenance', {}))}): at T4 = {x['T4']:,} steps InfoNCE = "
            f"{x['loss_T4'] / x['ln_K']:.3f} ln K, l'_p = {x['lp_T4']:.3f}; "
            + (f"required premises failing: {', '.join(failing)}" if failing else "every required premise holds"))


def pending_lines(units: list[Unit], root: Path) -> dict[str, str]:
    """{unit label: 'about X on this machine by ...'} of units not recorded: the projection `campaign status` makes
    (campaign/projection.py) where its calibration is kept and current, else the loop-rate estimate (a page does not
    fit it: that plans every profile); and whether it is too large for this machine's memory (the target's line gives
    its size)."""
    from ..sim.runtime import duration
    from . import projection as P
    cal = P.calibration(root, fit_now=False)
    out = {}
    for u in units:
        if cal is not None:
            work, why = P.work_of(u.kind, u.name, u.params, root)
            secs, basis = ((cal.seconds(work), "the campaign's model" + P.misses(cal, u.kind)) if work is not None
                           else (None, why))
        else:
            secs, basis = P.uncalibrated(u.kind, u.name, u.params, root)[0], (
                "the loop-rate estimate (`campaign status` calibrates the campaign's model on this machine's records)")
        when = f"about {duration(secs)} on this machine by {basis}" if secs is not None else f"not projected: {basis}"
        big = PC.size_problem(u)
        out[u.label] = when + ("; too large for this machine's memory: it waits for a GPU lease or a cluster" if big
                               else "")
    return out


def target_lines(cfg, results, root: Path | None = None) -> list[str]:
    """The lines notebook 10 prints under its ceiling table: each target cell's settings and what stops it
    (Target.line), then its record's measurements, or "not recorded yet" with its campaign unit and projected time;
    then the notes on records not used."""
    from ..paths import repo_root
    root = Path(root or repo_root())
    found, notes = recorded_targets(cfg, results, root)
    todo = pending_lines([u for _, res, u in found if u is not None and res is None], root)
    lines = []
    for t, res, unit in found:
        lines.append(t.line())
        if res is not None:
            lines.append("  " + measured_line(res))
        elif unit is not None:
            lines.append(f"  not recorded yet (campaign unit {unit.label}; {todo[unit.label]})")
    return lines + [f"  {n}" for n in notes]
