"""Run native kernels in a child process, so that a crash fails one test instead of killing the whole suite.

On AVX2-only CPUs (AMD EPYC) torch 2.13.0's oneDNN backward of a channels-last 1x1 stride-2 convolution with fewer
than 8 input channels corrupts the heap; the process dies with SIGSEGV or SIGABRT, and pytest with it. Any test
that runs a native trick (a memory layout, a precision, torch.compile) goes through `run_child` (CONTRIBUTING.md).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def signal_name(returncode: int) -> str:
    """'SIGSEGV' for a child killed by a signal (negative code, or 128 + n from a shell), else 'exit N'."""
    sig = -returncode if returncode < 0 else (returncode - 128 if returncode > 128 else 0)
    try:
        return signal.Signals(sig).name if sig else f"exit {returncode}"
    except ValueError:
        return f"exit {returncode}"


def run_child(code: str, what: str, timeout: float = 600) -> str:
    """Run `code` in a fresh Python on one thread (tests/ importable); return its stdout, or fail naming `what`,
    the signal or exit code and the child's last lines of stderr (an assertion's message, a crash's report)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH", "")]))}
    prelude = "import faulthandler, torch\nfaulthandler.enable()\ntorch.set_num_threads(1)\n"
    p = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=env, cwd=TESTS.parent)
    if p.returncode != 0:
        # the crash report and the assertion, without faulthandler's stack and module list
        lines = [x for x in p.stderr.strip().splitlines() if not x.startswith(("  File ", "Extension modules"))]
        tail = "\n".join(lines[-12:])
        pytest.fail(f"{what}: the child process ended with {signal_name(p.returncode)}\n{tail}", pytrace=False)
    return p.stdout
