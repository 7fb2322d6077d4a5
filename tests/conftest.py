"""Shared fixtures: the ci-profile book is executed and built once per test session."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


# The tests train tiny models: one thread runs their small tensor ops faster than two, and keeps a shared
# machine's other jobs from starving the thread pool (seen: 18x slower at load 8).
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def one_thread():
    """Every test starts on one thread, and a test that sets its own count (a config's `threads`) cannot leak it."""
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def ci_book(tmp_path_factory):
    """Execute every notebook at the ci profile and build the HTML (strict); returns (out_root, log, rc)."""
    out = tmp_path_factory.mktemp("ci_book")
    # Two notebooks at once, one thread each: the ci notebooks are small, and the suite's wall time is theirs.
    proc = subprocess.run([sys.executable, "-m", "imbalanced_cl", "book", "--profile", "ci", "--out", str(out),
                           "--strict", "--jobs", "2"], cwd=ROOT, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    return out, log, proc.returncode
