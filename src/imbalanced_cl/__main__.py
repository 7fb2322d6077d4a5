"""Command line: `python -m imbalanced_cl book --profile {ci,default,paper}` and friends (`--help` lists them)."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

from .book.build.cells import sync
from .book.build.profiles import PROFILES, repo_root
from .book.build.runner import plan, run_book, toc_notebooks
from .validate import ParameterError


def write_params(check_only: bool = False) -> int:
    """Regenerate (or check) the parameters cell of every notebook in the toc from its config class."""
    stale = [nb for nb in toc_notebooks(repo_root()) if not sync(nb, write=not check_only)]
    for nb in stale:
        print(f"{'out of date' if check_only else 'rewrote'}: {nb.relative_to(repo_root())}")
    return 1 if (check_only and stale) else 0


DESCRIPTION = """\
The companion book of "Theoretical analysis of contrastive learning under imbalanced data": execute the claim
notebooks at a profile (ci: tiny, default: the published book, paper: the paper's scale) with papermill, cached,
and build the HTML book with Jupyter Book; regenerate parameters cells; record and compare verdicts."""

EXAMPLES = """\
examples:
  python -m imbalanced_cl book --profile ci --jobs 2                    # the tiny book, two notebooks at once
  python -m imbalanced_cl book --profile ci --only 01_stage1_growth --no-build
  python -m imbalanced_cl book --profile default --set sampling=fixed --no-build --out /tmp/fixed
  python -m imbalanced_cl book --profile ci --strict                    # Sphinx warnings fail the build
  python -m imbalanced_cl params --check                                # are the parameters cells up to date?
  python -m imbalanced_cl record --profile paper                        # verdicts + provenance -> results/paper/
  python -m imbalanced_cl show out.ipynb                                # an executed notebook's verdict table
  python -m imbalanced_cl stability --profile default --seeds 0 1       # verdicts under two base seeds

Executed notebooks go to _build/executed/, the HTML to _build/html/ (under --out). Profiles: profiles.yaml.
A mistake in a name or a value exits 2 with one line per error; see book/reproducing.md."""


def version_line() -> str:
    """The package's version and the versions of the packages that compute its results."""
    from . import __version__
    from .book.build.cache import dependency_versions
    return f"imbalanced-cl {__version__} (" + ", ".join(f"{k} {v}" for k, v in dependency_versions().items()) + ")"


class Defaults(argparse.RawDescriptionHelpFormatter):
    """Help whose every option says its default: argparse's '(default: X)' unless the text already says it.

    An option whose default is None says it in words ('default: all', 'default: the terminal's'); a flag is off.
    """

    def _get_help_string(self, action) -> str:
        text = action.help or ""
        if re.search(r"default[: ]", text) or not action.option_strings or action.nargs == 0 or action.default is None:
            return text
        return text + " (default: %(default)s)"


def _every_parser(ap: argparse.ArgumentParser):
    """The parser and its subcommands' parsers, recursively."""
    yield ap
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for p in action.choices.values():
                yield from _every_parser(p)


def parser() -> argparse.ArgumentParser:
    """The command line: book, params, record, stability and show, with a description, examples and --version."""
    ap = argparse.ArgumentParser(prog="python -m imbalanced_cl", description=DESCRIPTION, epilog=EXAMPLES,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=version_line())
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    b = sub.add_parser("book", help="execute every notebook at a profile and build the HTML book")
    b.add_argument("--profile", default="default", help=f"one of {PROFILES}")
    b.add_argument("--only", nargs="*", help="notebook names (e.g. 01_stage1_growth) to execute (default: all)")
    b.add_argument("--no-build", action="store_true", help="execute notebooks but do not build HTML")
    b.add_argument("--strict", action="store_true",
                   help="turn Sphinx warnings into errors (-W --keep-going), rebuilding every page")
    b.add_argument("--force", action="store_true", help="re-execute even when the cache is valid, and run sizes that "
                   "look too large for this machine's memory")
    b.add_argument("--fresh", action="store_true", help="recompute everything: read no campaign record (notebook 08's "
                   "recorded points, notebook 10's recorded cells) and re-execute every notebook")
    b.add_argument("--out", default=None, help="folder that receives _build/ (default: the repo root)")
    b.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                   help="override a parameter in every notebook that has it (YAML value), e.g. --set sampling=fixed")
    b.add_argument("--profiles", default=None, help="a profiles file of your own (default: profiles.yaml)")
    b.add_argument("--verbose", action="store_true", help="show the Python traceback of an error")
    b.add_argument("--jobs", type=int, default=1, help="notebooks executed at once (each kernel gets cores/jobs "
                   "threads; the published book uses 1, since thread counts can move float rounding)")
    p = sub.add_parser("params", help="rewrite each notebook's parameters cell from its config dataclass")
    p.add_argument("--check", action="store_true", help="only report notebooks whose cell is out of date (exit 1)")
    r = sub.add_parser("record", help="store executed notebooks' verdicts with provenance under results/<profile>/")
    r.add_argument("--profile", default="paper", help=f"one of {PROFILES}")
    r.add_argument("--executed", default=None, help="folder of executed notebooks (default: _build/executed/notebooks)")
    s = sub.add_parser("stability", help="re-run the claim notebooks under other base seeds; table of changed verdicts")
    s.add_argument("--profile", default="default", help=f"one of {PROFILES}")
    s.add_argument("--seeds", nargs="+", type=int, default=[0, 1], help="base seeds (at least two)")
    s.add_argument("--only", nargs="*", help="notebook names to include (default: all)")
    w = sub.add_parser("show", help="print the verdict table of executed notebooks (e.g. papermill's output) in the "
                                    "terminal")
    w.add_argument("notebooks", nargs="+", metavar="OUT.ipynb", help="executed notebooks")
    w.add_argument("--width", type=int, default=None, help="columns of the table (default: the terminal's)")
    from .campaign.cli import add_parser as add_campaign   # campaign run|status (issue 29)
    add_campaign(sub)
    for p in _every_parser(ap):     # every --help shows every default (the campaign's profile is paper's)
        p.formatter_class = Defaults
    return ap


def record_cmd(args) -> int:
    """`record`: store the executed notebooks' verdicts with provenance under results/<profile>/."""
    from .book.records.record import record
    root = repo_root()
    src = Path(args.executed) if args.executed else root / "_build" / "executed" / "notebooks"
    for path in record(src, args.profile, root / "results" / args.profile):
        print(f"recorded {path.relative_to(root)}")
    return 0


def stability_cmd(args) -> int:
    """`stability`: re-run the claim notebooks under other base seeds and list the verdicts that changed."""
    from .book.records.stability import run as stability
    res = stability(args.profile, args.seeds, repo_root(), args.only)
    print(f"{res['unchanged']} of {res['rows']} rows kept their verdict across seeds {res['seeds']} "
          f"({res['share_unchanged']:.0%}); changed: {len(res['changed'])}")
    for c in res["changed"]:
        print(f"  {c['notebook']}: {c['claim']}: {c['verdicts']}")
    return 0


def book_cmd(args) -> int:
    """`book`: run the pipeline; a mistake exits 2 with one line per error (the traceback with --verbose)."""
    try:
        overrides = {k: yaml.safe_load(v) for k, _, v in (item.partition("=") for item in args.set)}
        # a bad parameter is refused in one line before anything is judged: judging a paper record with measurement
        # stages executes its notebook (seconds to a minute), which must not come before the check
        plan(repo_root(), args.profile, args.only, not args.no_build, overrides, args.profiles, args.force)
        from .book.build.kernels import stops_kill_kernels
        from .campaign.judge import judge_all, replays
        # judging a record with stages executes its notebook: a stop there is quiet too (its kernel killed first)
        with stops_kill_kernels():
            if args.profile != "paper":    # the paper column: recorded paper units judged by today's verdict code
                judge_all(repo_root(), "paper")
            # notebooks whose measurements a valid campaign record of this profile holds are judged from it
            recorded = ({} if args.fresh or args.profiles or args.profile not in PROFILES
                        else replays(repo_root(), args.profile))
        return run_book(args.profile, out_root=args.out, only=args.only, build=not args.no_build,
                        strict=args.strict, force=args.force, overrides=overrides, profiles=args.profiles,
                        jobs=args.jobs, fresh=args.fresh, replays=recorded)
    except ParameterError as e:
        if args.verbose:
            raise
        for line in str(e).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.verbose:
            raise
        print("[stopped] interrupted; what was executed is kept, and the previous HTML (if any) is untouched",
              file=sys.stderr)
        return 130
    except Exception as e:  # an unexpected failure: one line, the traceback on request
        if args.verbose:
            raise
        print(f"error: {type(e).__name__}: {e} (run again with --verbose for the traceback)", file=sys.stderr)
        return 1


def main(argv=None) -> int:
    """Parse the command line and run the chosen command; its exit code."""
    from .campaign.cli import joined
    args = parser().parse_args(joined(sys.argv[1:] if argv is None else list(argv)))
    if args.cmd == "params":
        return write_params(check_only=args.check)
    if args.cmd == "show":
        from .book.pages.show import main as show
        return show(args.notebooks, args.width)
    if args.cmd == "campaign":
        from .campaign.cli import main as campaign
        return campaign(args)
    return {"record": record_cmd, "stability": stability_cmd, "book": book_cmd}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
