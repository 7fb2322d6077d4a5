"""The publishing workflow is valid: linted against GitHub's workflow schema, and it does what the book needs."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

WORKFLOW = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "book.yml"


def _linter() -> str | None:
    exe = Path(sys.executable).parent / "check-jsonschema"
    return str(exe) if exe.exists() else shutil.which("check-jsonschema")


def test_workflow_passes_the_schema_linter():
    linter = _linter()
    if linter is None:
        pytest.skip("check-jsonschema is not installed (it is pinned in requirements.txt)")
    proc = subprocess.run([linter, "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
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
