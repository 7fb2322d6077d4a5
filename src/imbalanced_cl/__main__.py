"""Command line: `python -m imbalanced_cl book --profile {ci,default,paper}`."""
from __future__ import annotations

import argparse
import sys

from .book.runner import run_book
from .validate import ParameterError
from .book.profiles import PROFILES


def main(argv=None) -> int:
    """Parse the command line and run the book pipeline."""
    ap = argparse.ArgumentParser(prog="python -m imbalanced_cl")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("book", help="execute every notebook at a profile and build the HTML book")
    b.add_argument("--profile", default="default", help=f"one of {PROFILES}")
    b.add_argument("--only", nargs="*", help="notebook names (e.g. 01_stage1_growth) to execute")
    b.add_argument("--no-build", action="store_true", help="execute notebooks but do not build HTML")
    b.add_argument("--strict", action="store_true", help="turn Sphinx warnings into errors (-W --keep-going)")
    b.add_argument("--force", action="store_true", help="re-execute even when the cache is valid")
    b.add_argument("--out", default=None, help="folder that receives _build/ (default: the repo root)")
    args = ap.parse_args(argv)
    try:
        return run_book(args.profile, out_root=args.out, only=args.only, build=not args.no_build,
                        strict=args.strict, force=args.force)
    except ParameterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
