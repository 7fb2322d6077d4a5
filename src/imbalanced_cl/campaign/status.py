"""Coverage of a campaign folder: units done, pending, stale, corrupt and running, and the projected time left."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import checkpoint, record
from .lock import holder, is_stale
from .units import Unit


@dataclass
class Coverage:
    """The plan's units sorted by state, stale and corrupt records, and the wall time of every recorded unit."""

    done: list = field(default_factory=list)        # [Unit]
    pending: list = field(default_factory=list)     # [Unit]
    # [(path, record, why)]: a planned unit's record that no longer answers
    stale: list = field(default_factory=list)
    outside: list = field(default_factory=list)     # [(path, record)]: units this plan does not name (--kind, --only)
    corrupt: list = field(default_factory=list)     # [(path, why)]
    running: dict = field(default_factory=dict)     # {unit label: lock holder}
    partial: dict = field(default_factory=dict)     # {unit label: checkpoint.summary} of pending units with points
    unclaimed: list = field(default_factory=list)   # [Path]: checkpoint folders of no pending unit of this plan
    adoptable: dict = field(default_factory=dict)   # {unit label: (folder, summary)}: its points under other code
    walls: dict = field(default_factory=dict)       # {(kind, name): latest recorded wall seconds, stale included}
    made: dict = field(default_factory=dict)        # {unit label: where its record was made (device, versions)}
    rerecord: list = field(default_factory=list)    # [Unit]: pending because its valid record kept no measurements
    # {unit label: (seconds or None, basis)} of the pending units without a recorded time (project(): the model)
    projected: dict = field(default_factory=dict)
    calibration: object = None                      # projection.Calibration the model used, or None
    # {unit label: one line with its size} of the pending units too large for this machine's memory (Kind.size)
    too_large: dict = field(default_factory=dict)

    def estimate(self, unit: Unit) -> float | None:
        """Expected seconds of a unit: the wall time recorded for the same kind and name (any code), or None."""
        return self.walls.get((unit.kind, unit.name))

    def expected(self, unit: Unit) -> float | None:
        """A pending unit's projected seconds: its recorded time, else the model's projection (project()), or None."""
        own = self.estimate(unit)
        return own if own is not None else self.projected.get(unit.label, (None, ""))[0]

    def time_left(self, workers: int = 1) -> tuple[float, list]:
        """(projected seconds for the pending units with a recorded time or a projection, divided over workers;
        units without either). A unit too large for this machine is in neither: it does not run here."""
        here = [u for u in self.pending if u.label not in self.too_large]
        known = [self.expected(u) for u in here if self.expected(u) is not None]
        unknown = [u for u in here if self.expected(u) is None]
        return sum(known) / max(workers, 1), unknown


def project(cov: Coverage, root: Path) -> None:
    """Project every pending unit without a recorded time by the model of campaign/projection.py, calibrated on this
    machine's records; without a calibration, runtime's training estimate marked "estimate only"; a unit whose work
    cannot be counted keeps None and why."""
    from . import projection as P
    todo = [u for u in cov.pending if cov.estimate(u) is None]
    if not todo:
        return
    cov.calibration = cal = P.calibration(root)
    for u in todo:
        if cal is None:
            cov.projected[u.label] = P.uncalibrated(u.kind, u.name, u.params, root)
            continue
        work, why = P.work_of(u.kind, u.name, u.params, root)
        cov.projected[u.label] = (cal.seconds(work), "the model" + P.misses(cal, u.kind)) if work is not None \
            else (None, why)


def _resumed_s(rec: dict) -> float:
    """Seconds that a resumed unit's earlier, interrupted runs spent on the points it read back (0 if none)."""
    payload = rec.get("payload")
    ck = payload.get("checkpoints") if isinstance(payload, dict) else None
    return float(ck.get("resumed_s", 0.0)) if isinstance(ck, dict) else 0.0


def coverage(units: list[Unit], results: Path, root: Path | None = None) -> Coverage:
    """Sort the planned units against the records under `results` (one profile's campaign folder): done (a valid
    record: today's code, or other code whose probe gives the same numbers), pending, stale (with why); and note the
    pending units that have checkpointed points there."""
    from .probe import Cache, cache_path
    sc = record.scan(results)
    cache = Cache(cache_path(root))
    cov = Coverage(corrupt=sc.corrupt)
    _note_walls(cov, sc)
    named = set()
    for u in units:
        _judge(cov, u, results, root, sc, cache)
        named.add((u.kind, u.name, u.seed))
        _note_size(cov, u)
        _note_running(cov, u, results)
        _note_points(cov, u, results)
    cov.outside = _outside(sc, named)
    cov.unclaimed = _unclaimed(cov, results)
    return cov


def _note_walls(cov: Coverage, sc) -> None:
    """Note the wall time of every recorded unit by kind and name: the longest, stale records included."""
    for key, rec in sc.records.items():
        prov = rec.get("provenance", {})
        if isinstance(prov, dict) and prov.get("wall_s") is not None:
            wall = prov["wall_s"] + _resumed_s(rec)    # a resumed unit's time includes its checkpointed points
            old = cov.walls.get((rec["kind"], rec["name"]))
            cov.walls[(rec["kind"], rec["name"])] = wall if old is None else max(old, wall)


def _judge(cov: Coverage, u: Unit, results: Path, root: Path | None, sc, cache) -> None:
    """Put a planned unit in done (noting where its record was made) or in pending (its record, if any, in stale)."""
    from .validity import find, to_rerecord
    j = find(results, u, root, sc, cache)
    if to_rerecord(j):
        cov.pending.append(u)
        cov.rerecord.append(u)
    elif j is not None and j.valid:
        cov.done.append(u)
        cov.made[u.label] = made_on(j.rec.get("provenance")) + (f"; {j.why}" if j.why else "")
    else:
        cov.pending.append(u)
        if j is not None:
            cov.stale.append((j.path, j.rec, j.why))


def _note_size(cov: Coverage, u: Unit) -> None:
    """Note a pending unit whose kind sizes it (Kind.size) and that cannot fit this machine's memory: one line."""
    from .units import KINDS
    size = KINDS[u.kind].size if u.kind in KINDS else None
    why = size(u) if size is not None and u in cov.pending else ""
    if why:
        cov.too_large[u.label] = why


def _note_running(cov: Coverage, u: Unit, results: Path) -> None:
    """Note a unit whose lock is held by a live process: it is running now."""
    info = holder(Path(results) / ".locks" / f"{u.kind}-{u.name}-{u.key}.lock")
    if info is not None and not is_stale(info):
        cov.running[u.label] = info


def _note_points(cov: Coverage, u: Unit, results: Path) -> None:
    """Note a pending unit's checkpointed points: under today's code (partial), else under other code (adoptable)."""
    if u not in cov.pending:
        return
    part = checkpoint.summary(checkpoint.unit_folder(results, u))
    if part and part["points"]:
        cov.partial[u.label] = part
    else:          # points of this unit under other code: the next run's probe decides
        olds = [(p, checkpoint.summary(p)) for p in checkpoint.others(results, u)]
        olds = [(p, s) for p, s in olds if s["points"]]
        if olds:
            cov.adoptable[u.label] = olds[0]


def _outside(sc, named: set) -> list:
    """The records (path, record) of units the plan does not name (another --kind, --only)."""
    from .validity import seed_of

    def planned(r: dict) -> bool:
        """Whether a record is of a planned unit (its kind and name, and its seed or none)."""
        return any((r.get("kind"), r.get("name")) == (k, n) and seed_of(r) in (None, s) for k, n, s in named)

    return [(sc.paths[k], r) for k, r in sc.records.items() if not planned(r)]


def _unclaimed(cov: Coverage, results: Path) -> list:
    """The checkpoint folders that belong to no pending unit of the plan and that none would adopt."""
    mine = {checkpoint.unit_folder(results, u, dev).name for u in cov.pending for dev in ("cpu", "cuda")}
    mine |= {p.name for p, _ in cov.adoptable.values()}
    kept = Path(results) / "checkpoints"
    return sorted(p for p in kept.iterdir() if p.name not in mine) if kept.is_dir() else []


def made_on(prov) -> str:
    """Where a record was made: 'cuda, torch 2.11.0, Python 3.12.3, CPU kernels AVX2' (provenance, not code)."""
    if not isinstance(prov, dict):
        return "?"
    parts = [str(prov.get("device", "?"))] + [f"{label} {prov[k]}" for k, label in
                                              (("torch", "torch"), ("python", "Python"), ("cpu_kernels", "CPU kernels"))
                                              if prov.get(k)]
    versions = prov.get("versions") if isinstance(prov.get("versions"), dict) else {}
    parts += [f"{k} {v}" for k, v in sorted(versions.items()) if k not in ("torch", "python")]
    return ", ".join(parts)


def unit_of(path: Path) -> str:
    """The unit a record file is named after: <kind>/<name> from <results>/<kind>/<name>-<key>.json."""
    return f"{path.parent.name}/{path.stem.rpartition('-')[0] or path.stem}"


def _holder(info: dict) -> str:
    """'pid 12 on node3, Slurm job 4711, refreshed 40 s ago' from a lock's holder()."""
    job = f", Slurm job {info['job']}" if info.get("job") else ""
    return f"pid {info.get('pid', '?')} on {info.get('host', '?')}{job}, refreshed {_hms(info.get('age', 0.0))} ago"


def _hms(seconds: float) -> str:
    """1 h 05 min, 12 min, 40 s; past three days in days or years (sim/runtime.duration)."""
    s = int(round(seconds))
    if s >= 72 * 3600:
        from ..sim.runtime import duration
        return duration(s)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    return f"{s // 60} min" if s >= 60 else f"{s} s"


def _points(part: dict) -> str:
    """'3 points (41 min of work)' from a checkpoint.summary."""
    n = part["points"]
    return f"{n} point{'s' if n != 1 else ''} ({_hms(part['seconds'])} of work)"


def report(cov: Coverage, profile: str, results: Path, workers: int = 1) -> list[str]:
    """The lines `campaign status` prints."""
    n = len(cov.done) + len(cov.pending)
    lines = [f"campaign {profile} ({results}): {n} units planned",
             f"  done     {len(cov.done):3d}" + "".join(f"\n             {u.label} ({_hms(cov.estimate(u) or 0)}; "
                                                   f"made on {cov.made.get(u.label, '?')})" for u in cov.done),
             f"  pending  {len(cov.pending):3d}" + "".join(
                 f"\n             {u.label}" + _projected(cov, u)
                 + (f" [too large for this machine: {cov.too_large[u.label]}; it waits for a GPU lease or a cluster]"
                    if u.label in cov.too_large else "")
                 + (" [to re-record: its record kept no measurements, so today's verdict code cannot judge it; it "
                    "answers, with its rows as judged then, until the new record replaces it]"
                    if u in cov.rerecord else "")
                 + (f" [running: {_holder(cov.running[u.label])}]"
                                               if u.label in cov.running else "")
                 + (f" [{_points(cov.partial[u.label])} on disk: the next run resumes there]"
                    if u.label in cov.partial else "")
                 + (f" [{_points(cov.adoptable[u.label][1])} on disk under other code: the next run adopts them if "
                    "its probe gives the same numbers]" if u.label in cov.adoptable else "") for u in cov.pending),
             f"  stale    {len(cov.stale):3d}" + "".join(
                 f"\n             {p.name} (recorded at commit {str(r['provenance'].get('commit', '?'))[:7]}; "
                 f"{why}; not used)" for p, r, why in cov.stale),
             f"  corrupt  {len(cov.corrupt):3d}" + "".join(
                 f"\n             {p}: {why} (skipped: {unit_of(Path(p))} counts as not recorded, and is run again)"
                 for p, why in cov.corrupt)]
    if cov.unclaimed:
        lines.append("  checkpoints of no pending unit of this plan (other code, parameters or selection): "
                     + ", ".join(p.name for p in cov.unclaimed))
    if cov.outside:
        lines.append(f"  other    {len(cov.outside):3d} records of units this plan does not name "
                     "(other kinds, names, seeds or a unit no longer planned)")
    lines += _time_left(cov, workers) if cov.pending else ["nothing pending"]
    return lines


def _projected(cov: Coverage, u: Unit) -> str:
    """' [projected 3.2 h: its recorded time]' (or the model's, or why there is none) for a pending unit."""
    own = cov.estimate(u)
    if own is not None:
        return f" [projected {_hms(own)}: its recorded time]"
    if u.label not in cov.projected:
        return ""
    secs, basis = cov.projected[u.label]
    return f" [projected {_hms(secs)}: {basis}]" if secs is not None else f" [not projected: {basis}]"


def _time_left(cov: Coverage, workers: int) -> list[str]:
    """The lines on the time left: the total over the units with a recorded time or a projection, where each came
    from, the calibration the model used (and the records it misses by more than its band), and the units left out
    (those too large for this machine are named with their projections, apart)."""
    secs, unknown = cov.time_left(workers)
    here = [u for u in cov.pending if u.label not in cov.too_large]
    known = len(here) - len(unknown)
    head = f"projected time left on this machine ({workers} worker{'s' if workers > 1 else ''}): "
    apart = _too_large(cov)
    if not known:
        whys = "; ".join(f"{u.name}: {cov.projected[u.label][1]}" for u in unknown if u.label in cov.projected)
        return [head + "unknown: no pending unit has a recorded wall time" + (f", and none can be projected ({whys})"
                                                                               if whys else " yet")] + apart
    mine = sum(cov.estimate(u) is not None for u in here)
    models = [cov.projected[u.label][1] for u in here if cov.estimate(u) is None
              and cov.projected.get(u.label, (None, ""))[0] is not None]
    parts = [f"{mine} from their recorded wall times"] if mine else []
    parts += [f"{len(models)} by {models[0] if len(set(models)) == 1 else 'the model'}"] if models else []
    lines = [head + f"{_hms(secs)} for {known} of {len(cov.pending)} pending units ({', '.join(parts)})"]
    lines += _calibration_lines(cov.calibration) if models else []
    if unknown:
        lines.append(f"  not projected: {', '.join(f'{u.name} ({_why(cov, u)})' for u in unknown)}")
    return lines + apart


def _too_large(cov: Coverage) -> list[str]:
    """The line naming the pending units too large for this machine, each with its projection ([] if none)."""
    big = [u for u in cov.pending if u.label in cov.too_large]
    return (["  too large for this machine, not counted (a GPU lease or a cluster runs them): "
             + ", ".join(f"{u.label} ({_projected(cov, u).strip(' []')})" for u in big)] if big else [])


def _calibration_lines(cal) -> list[str]:
    """What the model was calibrated on, and the records it misses by more than its band."""
    from .projection import BAND, inside
    if cal is None:
        return []
    missed = [f"{label} ({p / r:.2f}x)" for label, r, p in cal.ratios if not inside(p, r)]
    return [f"  the model: {cal.line()}"] + ([f"  records the model misses by more than {BAND:g}x (model / recorded): "
                                              f"{', '.join(missed)}"] if missed else [])


def _why(cov: Coverage, u: Unit) -> str:
    """Why a pending unit has no projection."""
    return cov.projected[u.label][1] if u.label in cov.projected else "no recorded time, and not modelled"
