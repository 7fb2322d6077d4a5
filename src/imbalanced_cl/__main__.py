"""Command line: `python -m imbalanced_cl book --profile {ci,default,paper}`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from .book.cells import sync
from .book.profiles import PROFILES, repo_root
from .book.runner import run_book, toc_notebooks
from .validate import ParameterError


def write_params(check_only: bool = False) -> int:
    """Regenerate (or check) the parameters cell of every notebook in the toc from its config class."""
    stale = [nb for nb in toc_notebooks(repo_root()) if not sync(nb, write=not check_only)]
    for nb in stale:
        print(f"{'out of date' if check_only else 'rewrote'}: {nb.relative_to(repo_root())}")
    return 1 if (check_only and stale) else 0


def main(argv=None) -> int:
    """Parse the command line and run the book pipeline; a mistake exits 2 with one line per error."""
    ap = argparse.ArgumentParser(prog="python -m imbalanced_cl")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("book", help="execute every notebook at a profile and build the HTML book")
    b.add_argument("--profile", default="default", help=f"one of {PROFILES}")
    b.add_argument("--only", nargs="*", help="notebook names (e.g. 01_stage1_growth) to execute")
    b.add_argument("--no-build", action="store_true", help="execute notebooks but do not build HTML")
    b.add_argument("--strict", action="store_true", help="turn Sphinx warnings into errors (-W --keep-going)")
    b.add_argument("--force", action="store_true", help="re-execute even when the cache is valid")
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
    s.add_argument("--only", nargs="*", help="notebook names to include")
    from .campaign.cli import add_parser as add_campaign   # campaign run|status (issue 29)
    add_campaign(sub)
    args = ap.parse_args(argv)
    if args.cmd == "params":
        return write_params(check_only=args.check)
    if args.cmd == "campaign":
        from .campaign.cli import main as campaign
        return campaign(args)
    if args.cmd == "record":
        from .book.record import record
        root = repo_root()
        src = Path(args.executed) if args.executed else root / "_build" / "executed" / "notebooks"
        for path in record(src, args.profile, root / "results" / args.profile):
            print(f"recorded {path.relative_to(root)}")
        return 0
    if args.cmd == "stability":
        from .book.stability import run as stability
        res = stability(args.profile, args.seeds, repo_root(), args.only)
        print(f"{res['unchanged']} of {res['rows']} rows kept their verdict across seeds {res['seeds']} "
              f"({res['share_unchanged']:.0%}); changed: {len(res['changed'])}")
        for c in res["changed"]:
            print(f"  {c['notebook']}: {c['claim']}: {c['verdicts']}")
        return 0
    try:
        overrides = {k: yaml.safe_load(v) for k, _, v in (item.partition("=") for item in args.set)}
        return run_book(args.profile, out_root=args.out, only=args.only, build=not args.no_build,
                        strict=args.strict, force=args.force, overrides=overrides, profiles=args.profiles,
                        jobs=args.jobs)
    except ParameterError as e:
        if args.verbose:
            raise
        for line in str(e).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.verbose:
            raise
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # an unexpected failure: one line, the traceback on request
        if args.verbose:
            raise
        print(f"error: {type(e).__name__}: {e} (run again with --verbose for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
