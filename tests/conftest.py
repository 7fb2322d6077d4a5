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


@pytest.hookimpl(tryfirst=True)     # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    """A test that reads the ci book builds it (minutes): it is `slow`, so the numeric pass of `make test` (which
    re-runs numerics under another CPU kernel path) leaves the book alone and the book is built once per CI run."""
    for item in items:
        if "ci_book" in item.fixturenames:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def ci_book(tmp_path_factory):
    """Execute every notebook at the ci profile and build the HTML (strict); returns (out_root, log, rc)."""
    out = tmp_path_factory.mktemp("ci_book")
    # Two notebooks at once, one thread each: the ci notebooks are small, and the suite's wall time is theirs.
    proc = subprocess.run([sys.executable, "-m", "imbalanced_cl", "book", "--profile", "ci", "--out", str(out),
                           "--strict", "--jobs", "2"], cwd=ROOT, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    return out, log, proc.returncode


@pytest.fixture
def ci_unit_record():
    """record(name, results) runs notebook `name` at ci as a campaign unit, recorded under `results` (the campaign
    folder of its profile): (record path, record, its unit, wall seconds). Torch's thread count is restored."""
    import time

    from imbalanced_cl.campaign import engine, kinds, record

    def run(name: str, results: Path):
        (unit,) = kinds.plan_notebooks("ci", ROOT, only=[name])
        threads = torch.get_num_threads()
        try:
            out = engine.run_unit(kinds.NOTEBOOK, unit, str(results), str(ROOT), time.time() + 900)
        finally:
            torch.set_num_threads(threads)
        assert out["status"] == "ran", out
        path = Path(out["path"])
        return path, record.read(path), unit, out["wall_s"]
    return run

