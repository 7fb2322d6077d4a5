"""`python -m benchmarks [--quick]`: run every benchmark script in this folder, one after another."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    """Run each benchmarks/*.py (except this package's own files) with the same arguments."""
    here = Path(__file__).parent
    rc = 0
    for script in sorted(here.glob("*.py")):
        if script.name.startswith("_"):
            continue
        print(f"== {script.name}", flush=True)
        rc |= subprocess.call([sys.executable, str(script), *sys.argv[1:]])
    return rc


if __name__ == "__main__":
    sys.exit(main())
