"""`python -m imbalanced_cl campaign run|status|stability`: run a profile's units within a budget, report its
coverage, or compare the verdicts recorded under two base seeds."""
from __future__ import annotations

import argparse
import io
import re
import sys
from contextlib import redirect_stderr
from pathlib import Path

from ..book.build.profiles import PROFILES, repo_root
from ..validate import ParameterError, check_choice, nearest


def add_parser(sub) -> argparse.ArgumentParser:
    """Add the `campaign` command (subcommands run and status) to the main parser's subparsers."""
    c = sub.add_parser("campaign", help="run a profile as independent recorded units (Dask), resumable; or report",
                       description="Split a profile into units (one notebook, or one point of notebook 08), run the "
                       "ones not yet recorded on a Dask cluster within a time budget, and record each as it "
                       "finishes under results/campaign/<profile>/.")
    csub = c.add_subparsers(dest="campaign_cmd", required=True, metavar="SUBCOMMAND")
    for name, what in (("run", "run the pending units within --budget"),
                       ("status", "units done / pending / stale / corrupt, and the projected time left"),
                       ("stability", "compare the verdicts of the notebook units recorded under --seeds")):
        p = csub.add_parser(name, help=what)
        p.add_argument("--profile", default="paper", help=f"one of {PROFILES}")
        p.add_argument("--only", nargs="*", help="unit names (e.g. 02_lucky_neurons) to include (default: all)")
        p.add_argument("--kind", nargs="*", help="unit kinds to include (default: all)")
        p.add_argument("--results", default=None, help="campaign folder root (default: results/campaign)")
        p.add_argument("--workers", type=int, default=1, help="worker processes, one torch thread each")
        if name == "stability":
            p.add_argument("--seeds", nargs="+", type=int, default=[0, 1], help="base seeds (at least two)")
        else:
            p.add_argument("--seed", type=int, default=None, help="base seed of every unit that has one (default: "
                           "the profile's; other seeds are other units, for `campaign stability`)")
    r = csub.choices["run"]
    r.add_argument("--budget", default="540s", help="no unit starts after this (540s, 30m, 2h); units still "
                   "running then are stopped and redone next time (default 540s)")
    r.add_argument("--threads", type=int, default=None, help="torch threads per unit (default 1: one worker per core; "
                   "use 2 with --workers 1 to give one long unit both cores)")
    r.add_argument("--join-timeout", default="10m", help="end the campaign (exit 1) when no worker is connected for "
                   "this long: none joined (Slurm jobs that never start) or all left and none came back (default 10m)")
    r.add_argument("--slurm", action="store_true", help="run on a Slurm cluster (dask-jobqueue SLURMCluster); "
                   "its jobs' logs go to <results>/<profile>/slurm-logs/")
    r.add_argument("--jobs", type=int, default=1, help="with --slurm: how many single-worker jobs to keep (a job "
                   "that ends, at its wall time say, is replaced)")
    r.add_argument("--partition", default=None, help="with --slurm: the partition (queue); no default, required "
                   "with --slurm")
    r.add_argument("--time", default="2:00:00", help="with --slurm: each job's wall time limit")
    r.add_argument("--memory", default="8GB", help="with --slurm: each job's memory")
    r.add_argument("--force", action="store_true", help="run units whose sizes look too large for the memory there "
                   "(this machine's, or --memory's with --slurm)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.add_argument("--verbose", action="store_true", help="show the Python traceback of an error")
    return c


def plan(profile: str, only: list[str] | None, kinds: list[str] | None, root: Path):
    """(registered kinds, the planned units) of a profile, filtered by name and kind; ParameterError on bad input."""
    from .kinds import KINDS, get   # importing kinds registers the built-in ones
    check_choice("profile", profile, PROFILES)
    names = kinds or sorted(KINDS)
    chosen = {n: get(n) for n in names}
    planned = []
    for k in chosen.values():
        try:
            planned += k.plan(profile, root, only)
        except ParameterError as e:
            if kinds:       # asked for by name: its error stops the command
                raise
            # one kind whose profile block is wrong must not hide the other kinds' units
            print(f"warning: no {k.name} units: {str(e).splitlines()[0]}", file=sys.stderr)
    if only:
        known = sorted({u.name for u in planned})
        bad = [n for n in only if n not in known]
        if bad:     # the hint and the list come from every unit, not from the ones --only already kept
            valid = every_name(chosen.values(), profile, root)
            hints = "; ".join(f"{n!r}" + (f" (did you mean {nearest(n, valid)}?)" if nearest(n, valid) else "")
                              for n in bad)
            raise ParameterError(f"unknown unit name(s) for --only: {hints}. The units are: {', '.join(valid)}")
        planned = sorted((u for u in planned if u.name in only), key=lambda u: only.index(u.name))  # --only's order
    return chosen, planned


def every_name(kinds, profile: str, root: Path) -> list[str]:
    """The names of every unit these kinds plan at a profile (a kind whose plan fails adds none; its warnings were
    printed once already, so they are not printed again here)."""
    names: set[str] = set()
    for k in kinds:
        try:
            with redirect_stderr(io.StringIO()):
                names |= {u.name for u in k.plan(profile, root, None)}
        except ParameterError:
            continue
    return sorted(names)


# Options whose value is a duration: argparse reads a value that starts with '-' ('--budget -1m') as another option
# and answers with its 14-line usage; written '--budget=-1m', the value gets its own one-line check.
DURATIONS = ("--budget", "--join-timeout")


def joined(argv: list[str]) -> list[str]:
    """The command line with '--budget -1m' (any duration option followed by a negative value) as '--budget=-1m'."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in DURATIONS and i + 1 < len(argv) and re.match(r"-[0-9.]", argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(args) -> int:
    """Run the chosen subcommand; a mistake exits 2 with one line, Ctrl-C 130, a failed unit 1."""
    from . import status
    try:
        root = repo_root()
        results = Path(args.results or root / "results" / "campaign") / args.profile
        opts = run_options(args, results) if args.campaign_cmd == "run" else None
        kinds, units = plan(args.profile, args.only, args.kind, root)
        if args.campaign_cmd == "stability":
            from .seeds import NOTHING, report
            if len(set(args.seeds)) < 2:
                raise ParameterError(f"parameter seeds={args.seeds} is invalid: allowed at least two distinct seeds")
            # a scratch --results keeps its comparison beside its records; only the repository's own campaign
            # writes the committed one
            out = (Path(args.results) / f"stability-{args.profile}.json" if args.results
                   else root / "results" / "stability" / f"campaign-{args.profile}.json")
            lines = report(units, args.seeds, results, out)
            if lines and lines[-1].startswith(NOTHING):     # nothing compared is no answer: said, and not 0
                for line in lines:
                    print(f"error: {line}", file=sys.stderr)
                return 1
            for line in lines:
                print(line)
            return 0
        if args.seed is not None:
            from .seeds import with_seed
            units = [v for v in (with_seed(u, args.seed) for u in units) if v is not None]
        if args.campaign_cmd == "status":
            cov = status.coverage(units, results, root)
            status.project(cov, root)
            for line in status.report(cov, args.profile, results, args.workers):
                print(line)
            return 0
        if not args.force:
            units = check_sizes(units, root, args)
    except ParameterError as e:
        for line in str(e).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return 2
    return execute(args, kinds, units, opts, root, results)


def check_sizes(units, root: Path, args) -> list:
    """The units to run: refuse, before the budget starts, notebook units whose sizes cannot fit the memory they will
    run in (this machine's now, or each Slurm job's with --memory), one line per unit; leave out, with one line each,
    units of a kind that sizes itself (Kind.size: notebook 10's premise and target cells) that cannot fit, which stop
    the command only when --only names them. --force runs them all anyway."""
    from ..book.build.runner import size_problems
    from .kinds import KINDS, notebook_file
    available, where = None, "the machine"
    if args.slurm:
        from dask.utils import parse_bytes
        available, where = parse_bytes(args.memory), "each Slurm job (--memory)"
    runs = [(notebook_file(root, u.name), u.params) for u in units if u.kind == "notebook"]
    problems = size_problems(runs, available, where)
    big = {u.label: why for u in units if KINDS[u.kind].size is not None
           and (why := KINDS[u.kind].size(u, available, where))}
    named = getattr(args, "only", None) or []
    problems += [f"{u.label}: {big[u.label]}; --force to run anyway" for u in units
                 if u.label in big and u.name in named]
    if problems:
        raise ParameterError("\n".join(problems))
    for label, why in big.items():
        print(f"[too large] {label}: {why}; not run here (a GPU lease, or --slurm with --memory)", flush=True)
    return [u for u in units if u.label not in big]


def run_options(args, results: Path):
    """The engine's Options of a `campaign run` (a bad budget, or --slurm without a partition, is a ParameterError)."""
    from . import engine
    budget = engine.parse_budget(args.budget)
    join = engine.parse_budget(args.join_timeout, "join_timeout")
    slurm = {}
    if args.slurm:
        from .slurm import check_slurm
        check_slurm(args.partition, args.jobs)
        slurm = {"jobs": args.jobs, "partition": args.partition, "walltime": args.time, "memory": args.memory,
                 "log_directory": str(results / "slurm-logs")}
    return engine.Options(results, args.workers, budget, not args.no_progress, slurm, args.threads, join)


def execute(args, kinds, units, opts, root: Path, results: Path) -> int:
    """Run the pending units and print what was recorded; Ctrl-C or SIGTERM 130, a failed unit 1."""
    from . import engine, status
    cov = status.coverage(units, results, root)
    where = f"{args.jobs} Slurm job(s) on {args.partition}" if args.slurm else f"{args.workers} worker(s)"
    print(f"campaign {args.profile}: {len(cov.pending)} of {len(units)} units to run, budget {args.budget}, "
          f"{where}; records in {results}", flush=True)
    import signal

    def _stop(signum, frame):
        raise KeyboardInterrupt   # `kill PID` stops a background campaign as cleanly as Ctrl-C

    signal.signal(signal.SIGTERM, _stop)
    try:
        out = engine.run(kinds, units, opts, root, estimate=cov.estimate, say=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print("[stopped] interrupted before the workers started; nothing was recorded", file=sys.stderr)
        return 130
    for r in out.ran:
        print(f"[recorded] {r['unit']} in {r['wall_s']:.0f} s -> {r['path']}")
    for r in out.skipped:
        print(f"[skipped]  {r['unit']}: "
              f"{'another campaign holds its lock' if r['status'] == 'locked' else 'already recorded'}")
    left = len(out.not_started)
    print(f"campaign {args.profile}: {len(out.ran)} recorded, {len(out.skipped)} skipped, {len(out.failed)} failed, "
          f"{left} not run (budget or stop; they run next time)")
    if out.interrupted:
        print("[stopped] interrupted: units under way were stopped and left no record; the next run redoes them",
              file=sys.stderr)
        return 130
    if out.no_workers:
        print(f"error: {out.no_workers}; {left} unit(s) not run", file=sys.stderr)
        return 1
    stopped = sum(r["status"] == "stopped" for r in out.not_started)
    if stopped:     # the budget ran out with units under way: said in one line, like any other stop
        print(f"[stopped] budget {args.budget} spent: {stopped} unit(s) unfinished (those under way were stopped and "
              "left no record); the next run redoes them", file=sys.stderr)
    return 1 if out.failed else 0
