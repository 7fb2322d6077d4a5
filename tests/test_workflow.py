"""The workflows are valid (linted against GitHub's workflow schema) and do what the project needs: the Pages
workflow builds, caches and deploys the book; the test workflow runs `make test` as a user does."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"
WORKFLOW = WORKFLOWS / "book.yml"
TEST_WORKFLOW = WORKFLOWS / "test.yml"


def _linter() -> str | None:
    exe = Path(sys.executable).parent / "check-jsonschema"
    return str(exe) if exe.exists() else shutil.which("check-jsonschema")


@pytest.mark.parametrize("workflow", [WORKFLOW, TEST_WORKFLOW], ids=lambda p: p.name)
def test_workflow_passes_the_schema_linter(workflow):
    linter = _linter()
    if linter is None:
        pytest.skip("check-jsonschema is not installed (it is pinned in requirements.txt)")
    proc = subprocess.run([linter, "--builtin-schema", "vendor.github-workflows", str(workflow)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflow_builds_default_profile_caches_and_deploys():
    wf = yaml.safe_load(WORKFLOW.read_text())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as True
    assert on["push"]["branches"] == ["main"]
    steps = wf["jobs"]["build"]["steps"]
    text = WORKFLOW.read_text()
    assert any(s.get("with", {}).get("python-version") == "3.11" for s in steps)
    assert "pip install -r requirements.txt" in text
    assert "python -m imbalanced_cl book --profile default" in text
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@"))
    assert cache["with"]["path"] == "_build/executed"
    for part in ("notebooks/", "src/", "profiles.yaml", "requirements.txt"):
        assert part in cache["with"]["key"]
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/html"
    deploy = wf["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(str(s.get("uses", "")).startswith("actions/deploy-pages@") for s in deploy["steps"])


def test_test_workflow_runs_make_test_with_pip_cache_and_chromium():
    wf = yaml.safe_load(TEST_WORKFLOW.read_text())
    on = wf.get("on", wf.get(True))
    assert "push" in on and "pull_request" in on
    job = wf["jobs"]["test"]
    steps = job["steps"]
    runs = "\n".join(str(s.get("run", "")) for s in steps)
    assert "chromium chromium-driver" in runs and "python3-venv" in runs
    assert runs.strip().endswith("make test"), "the last step is `make test`, as a user runs it"
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@"))
    assert cache["with"]["path"] == job["env"]["PIP_CACHE_DIR"]  # pip writes where the cache is restored
    assert "requirements.txt" in cache["with"]["key"]
    # the Makefile's test target lints before pytest
    make = (WORKFLOWS.parents[1] / "Makefile").read_text()
    test_target = make.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert test_target.index("ruff check") < test_target.index("pytest")
