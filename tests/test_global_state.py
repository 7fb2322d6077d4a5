"""Global state restored on every exit path: the variables a run passes to its notebooks' kernels reach them in
their environment and never this process's os.environ, and torch's thread count is back after a campaign unit."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import nbformat
import pytest
import torch
import yaml

from imbalanced_cl.book.build import runner
from imbalanced_cl.campaign import checkpoint, engine
from imbalanced_cl.campaign.units import Kind, Unit, child_env, child_env_now

ROOT = Path(__file__).resolve().parents[1]
VARS = ("IMBALANCED_CL_EXECUTED", "IMBALANCED_CL_PROFILE", checkpoint.ENV, "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _book(root: Path, body: str) -> None:
    """A book root with one notebook, notebooks/a.ipynb, in _toc.yml, and an empty ci profile."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (root / "notebooks").mkdir(parents=True)
    nbformat.write(nb, root / "notebooks" / "a.ipynb")
    (root / "_toc.yml").write_text(yaml.safe_dump({"format": "jb-book", "root": "intro",
                                                   "chapters": [{"file": "notebooks/a"}]}))
    (root / "profiles.yaml").write_text(yaml.safe_dump({"ci": {}}))


@pytest.mark.slow
def test_the_book_runner_passes_its_variables_to_the_kernel_not_to_this_process(tmp_path, monkeypatch):
    from imbalanced_cl.sim.runtime import ESTIMATED_ENV
    for var in (*VARS[:2], ESTIMATED_ENV):
        monkeypatch.delenv(var, raising=False)
    root, out = tmp_path / "repo", tmp_path / "out"
    _book(root, "import os\nprint('SEEN', os.environ.get('IMBALANCED_CL_PROFILE'), "
                "os.environ.get('IMBALANCED_CL_EXECUTED', '').endswith('notebooks'), "
                f"os.environ.get('{ESTIMATED_ENV}'))")
    before = dict(os.environ)
    assert runner.run_book("ci", out_root=out, build=False, root=root) == 0
    assert dict(os.environ) == before                      # nothing written into this process
    done = json.loads((out / "_build" / "executed" / "notebooks" / "a.ipynb").read_text())
    text = "".join("".join(o.get("text", "")) for c in done["cells"] for o in c.get("outputs", []))
    assert "SEEN ci True 1" in text                        # and the kernel got them (estimates printed: quiet)


def test_child_env_is_scoped_and_nests():
    assert child_env_now() == {}
    with child_env(A=1):
        with child_env(B="x", A=2):
            assert child_env_now() == {"A": "2", "B": "x"}
        assert child_env_now() == {"A": "1"}
        with pytest.raises(KeyError):
            with child_env(C=3):
                raise KeyError("a unit that fails")
        assert child_env_now() == {"A": "1"}
    assert child_env_now() == {}


def test_a_unit_gets_its_threads_and_checkpoints_without_touching_the_workers_state(tmp_path, monkeypatch):
    """engine.run_unit: inside the unit, torch's thread count is the unit's and the kernels' variables are named; after
    it, whether it returned or raised, the worker's thread count and os.environ are as they were, and no partial
    notebook or empty checkpoint folder is left."""
    for var in VARS:
        monkeypatch.delenv(var, raising=False)
    seen = {}

    def run(unit, root):
        seen.update(env=child_env_now(), threads=torch.get_num_threads(), folder=checkpoint.folder(),
                    environ={k: os.environ.get(k) for k in VARS})
        where = checkpoint.folder()
        where.mkdir(parents=True, exist_ok=True)
        (where / checkpoint.partial_name(unit.name)).write_text("{}")     # as papermill would, mid-run
        if unit.params.get("fail"):
            raise RuntimeError("the unit fails")
        return {"ok": 1}

    kind = Kind("envtest", lambda *a: [], run)
    before_threads, before_env = torch.get_num_threads(), dict(os.environ)
    want = 2 if before_threads != 2 else 3
    for fail in (False, True):
        unit = Unit("envtest", f"u{int(fail)}", "ci", {"fail": fail}, "v1")
        results = tmp_path / f"r{int(fail)}"
        if fail:
            with pytest.raises(RuntimeError):
                engine.run_unit(kind, unit, str(results), str(ROOT), time.time() + 60, threads=want)
        else:
            assert engine.run_unit(kind, unit, str(results), str(ROOT), time.time() + 60,
                                   threads=want)["status"] == "ran"
        where = checkpoint.unit_folder(results, unit)
        assert seen["threads"] == want and seen["folder"] == where
        assert seen["env"] == {"OMP_NUM_THREADS": str(want), "MKL_NUM_THREADS": str(want), checkpoint.ENV: str(where)}
        assert seen["environ"] == {k: None for k in VARS}
        assert torch.get_num_threads() == before_threads and dict(os.environ) == before_env
        assert not where.exists()           # the partial is gone, and with it the folder that held nothing else


def test_a_killed_units_partial_notebook_is_removed_when_the_unit_runs_again(tmp_path):
    where = tmp_path / "ck"
    where.mkdir()
    (where / checkpoint.partial_name("03")).write_text("{")
    (where / "p.pkl").write_bytes(b"")
    assert [p.name for p in checkpoint.clean(where)] == [checkpoint.partial_name("03")]
    assert [p.name for p in where.iterdir()] == ["p.pkl"]
