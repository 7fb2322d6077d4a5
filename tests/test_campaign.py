"""The campaign (issue 29): units recorded once, resumable, locked, stale and corrupt records reported, on Dask's
LocalCluster with 2 workers. Tiny hand-made unit kinds (tests/campaign_kinds.py) and one ci notebook.

No assert depends on timing: each run is waited for, and runs are counted from a log every unit appends to.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from imbalanced_cl import verdict as V
from imbalanced_cl.campaign import clusters, engine, lock, record, status
from imbalanced_cl.campaign.units import Unit
from imbalanced_cl.validate import ParameterError

sys.path.insert(0, str(Path(__file__).parent))
import campaign_kinds as CK

ROOT = Path(__file__).resolve().parents[1]
KINDS = {"tiny": CK.TINY, "flaky": CK.FLAKY}


@pytest.fixture(scope="module")
def cluster():
    """One LocalCluster of 2 single-thread workers for the module (starting one costs seconds)."""
    c = clusters.local_cluster(2)
    yield c
    c.close()


def runs(log: Path) -> Counter:
    """How many times each unit ran, from the log the tiny kinds append to."""
    return Counter(line.split()[0] for line in log.read_text().splitlines()) if log.exists() else Counter()


def opts(tmp_path: Path, **kw) -> engine.Options:
    """Options for a run into tmp_path/results, without a progress bar."""
    return engine.Options(tmp_path / "results", workers=2, budget_s=kw.pop("budget_s", 600), progress=False, **kw)


def test_every_unit_recorded_once_and_a_second_run_does_nothing(tmp_path, cluster):
    log = tmp_path / "runs.log"
    units = CK.plan_tiny("ci", ROOT, n=6, log=str(log))
    out = engine.run(KINDS, units, opts(tmp_path), ROOT, cluster=cluster)
    assert len(out.ran) == 6 and not out.failed and not out.skipped
    assert runs(log) == Counter({f"u{i}": 1 for i in range(6)})
    sc = record.scan(tmp_path / "results")
    assert sorted(r["payload"]["value"] for r in sc.records.values()) == [i * i for i in range(6)]
    rec = next(iter(sc.records.values()))
    for field in ("commit", "device", "torch", "wall_s", "seed", "host"):
        assert field in rec["provenance"]
    again = engine.run(KINDS, units, opts(tmp_path), ROOT, cluster=cluster)
    assert not again.ran and runs(log) == Counter({f"u{i}": 1 for i in range(6)})
    cov = status.coverage(units, tmp_path / "results")
    assert len(cov.done) == 6 and not cov.pending and not cov.stale and not cov.corrupt


def test_workers_run_with_dasks_housekeeping_quiet(cluster):
    """The workers read clusters.QUIET (no 10 ms stack profiler, a 1 s tick), and the environment variables that carry
    it to worker processes and Slurm jobs mean QUIET to Dask's own parser."""
    import dask
    from distributed import Client
    with Client(cluster) as client:
        got = client.run(lambda: {k: dask.config.get(k) for k in clusters.QUIET})
    assert len(got) == 2 and all(v == clusters.QUIET for v in got.values())
    with dask.config.set(dask.config.collect_env(clusters.quiet_env())):
        assert {k: dask.config.get(k) for k in clusters.QUIET} == clusters.QUIET


def test_threads_gives_each_unit_that_many_torch_threads(tmp_path, cluster):
    """--threads 2 (one long unit on both cores): the unit runs with 2 torch threads and its record says so."""
    units = CK.plan_tiny("ci", ROOT, n=2, log=str(tmp_path / "runs.log"))
    out = engine.run(KINDS, units, opts(tmp_path, threads=2), ROOT, cluster=cluster)
    assert len(out.ran) == 2
    recs = record.scan(tmp_path / "results").records.values()
    assert [(r["payload"]["threads"], r["provenance"]["threads"]) for r in recs] == [(2, 2), (2, 2)]
    with pytest.raises(ParameterError):
        engine.Options(Path("x"), threads=0)


@pytest.mark.parametrize("how", ["raise", "exit"])
def test_a_unit_that_fails_or_whose_worker_dies_leaves_no_record_and_is_redone(tmp_path, cluster, how):
    log = tmp_path / "runs.log"
    units = [Unit("flaky", u.name, "ci", {**u.params, "how": how}, "v1") for u in
             CK.plan_tiny("ci", ROOT, n=2, log=str(log))]
    first = engine.run(KINDS, units, opts(tmp_path), ROOT, cluster=cluster)
    results = tmp_path / "results"
    if how == "raise":
        assert sorted(f[0] for f in first.failed) == ["flaky/u0", "flaky/u1"]
        assert not list(results.rglob("*.json")) and not list(results.rglob(".*.tmp-*"))
    # a dead worker's task is retried by Dask on a fresh worker (the second try succeeds); either way every unit
    # is recorded exactly once, and nothing half-written is left
    second = engine.run(KINDS, units, opts(tmp_path), ROOT, cluster=cluster)
    assert not second.failed
    sc = record.scan(results)
    assert sorted(r["name"] for r in sc.records.values()) == ["u0", "u1"] and not sc.corrupt
    assert not list(results.rglob(".*.tmp-*"))


def test_the_write_is_atomic(tmp_path, monkeypatch):
    unit = Unit("tiny", "u0", "ci", {"i": 0}, "v1")
    folder = tmp_path / "results"

    def boom(src, dst):
        raise KeyboardInterrupt   # Ctrl-C between the bytes and the rename

    monkeypatch.setattr(record.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        record.write(folder, unit, {"value": 0}, {"wall_s": 1.0})
    assert not list(folder.rglob("*")) or not [p for p in folder.rglob("*") if p.is_file()]
    monkeypatch.undo()
    # a temporary file of a dead writer (a killed worker) is removed, and never read as a record
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = folder / "tiny" / f".u0-x.json.tmp-{os.uname().nodename}-{dead.pid}"
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_text('{"kind": "tiny", "na')
    assert record.scan(folder).records == {} and record.scan(folder).corrupt == []
    assert record.remove_orphans(folder) == [orphan] and not orphan.exists()


def test_a_corrupt_file_is_reported_by_name_and_the_rest_load(tmp_path):
    folder = tmp_path / "results"
    units = CK.plan_tiny("ci", ROOT, n=3, log=str(tmp_path / "log"))
    paths = [record.write(folder, u, {"value": 1}, {"wall_s": 10.0}) for u in units]
    paths[1].write_text(paths[1].read_text()[:40])       # truncated JSON
    sc = record.scan(folder)
    assert [p for p, _ in sc.corrupt] == [paths[1]] and len(sc.records) == 2
    cov = status.coverage(units, folder)
    assert [u.name for u in cov.done] == ["u0", "u2"] and [u.name for u in cov.pending] == ["u1"]
    text = "\n".join(status.report(cov, "ci", folder))
    assert paths[1].name in text and "corrupt    1" in text


def test_a_unit_recorded_under_other_parameters_or_code_is_stale(tmp_path):
    folder = tmp_path / "results"
    log = str(tmp_path / "log")
    old = CK.plan_tiny("ci", ROOT, n=2, log=log)
    for u in old:
        record.write(folder, u, {"value": 1}, {"wall_s": 100.0})
    other_params = CK.plan_tiny("ci", ROOT, n=2, log=log, extra={"scale": 2})
    cov = status.coverage(other_params, folder)
    assert not cov.done and len(cov.pending) == 2 and len(cov.stale) == 2
    other_code = CK.plan_tiny("ci", ROOT, n=2, log=log, code="v2")
    cov = status.coverage(other_code, folder)
    assert not cov.done and len(cov.stale) == 2
    assert cov.time_left(workers=2)[0] == 100.0      # the stale runs' wall times still project the time left
    text = "\n".join(status.report(cov, "ci", folder))
    assert "stale      2" in text and "not used" in text
    cov = status.coverage(other_code[:1], folder)   # a plan that names one unit (--only u0): u1's record is outside it
    assert len(cov.stale) == 1 and cov.stale[0][1]["name"] == "u0" and [r["name"] for _, r in cov.outside] == ["u1"]
    text = "\n".join(status.report(cov, "ci", folder))
    assert "stale      1" in text and "other      1" in text


def test_the_lock(tmp_path):
    path = tmp_path / "a.lock"
    first = lock.acquire(path)
    assert first is not None and lock.acquire(path) is None     # held by a live process (this one)
    first.release()
    assert not path.exists()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path.write_text(json.dumps({"pid": dead.pid, "host": os.uname().nodename, "since": 0}))
    again = lock.acquire(path)                                  # a dead process's lock is reclaimed
    assert again is not None and json.loads(path.read_text())["pid"] == os.getpid()
    again.release()


SCRIPT = """
import sys; sys.path.insert(0, {tests!r})
import campaign_kinds as CK
from pathlib import Path
from imbalanced_cl.campaign import engine
units = CK.plan_tiny("ci", Path({root!r}), n=8, log={log!r}, extra={{"sleep": 0.3}})
out = engine.run({{"tiny": CK.TINY}}, units, engine.Options(Path({res!r}), workers=2, budget_s=600, progress=False),
                 Path({root!r}))
print(len(out.ran), len(out.skipped), len(out.failed))
"""


@pytest.mark.slow
def test_two_campaigns_at_once_never_run_the_same_unit(tmp_path):
    log, res = tmp_path / "runs.log", tmp_path / "results"
    code = SCRIPT.format(tests=str(Path(__file__).parent), root=str(ROOT), log=str(log), res=str(res))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert runs(log) == Counter({f"u{i}": 1 for i in range(8)})          # each unit ran once, in one campaign
    assert len(record.scan(res).records) == 8
    ran = sum(int(o[0].split()[0]) for o in outs)
    assert ran == 8


@pytest.mark.parametrize("budget", ["0", "0s", "-5m", "soon"])
def test_a_budget_of_zero_or_below_stops_with_one_line(budget):
    with pytest.raises(ParameterError):
        engine.parse_budget(budget)
    proc = subprocess.run([sys.executable, "-m", "imbalanced_cl", "campaign", "run", "--profile", "ci",
                           f"--budget={budget}"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: parameter budget=") and "such as 540s" in lines[0]


def test_budget_parsing():
    assert engine.parse_budget("540s") == 540 and engine.parse_budget("9m") == 540
    assert engine.parse_budget("2h") == 7200 and engine.parse_budget(30) == 30
    with pytest.raises(ParameterError):
        engine.Options(Path("x"), workers=0)


@pytest.mark.slow
def test_a_ci_notebook_as_a_unit_through_the_command_line(tmp_path):
    """`campaign run` on the ci profile with 2 workers records the notebook's verdict rows; a second run does nothing;
    `campaign status` then counts it done."""
    cmd = [sys.executable, "-m", "imbalanced_cl", "campaign"]
    common = ["--profile", "ci", "--only", "01_stage1_growth", "--results", str(tmp_path)]
    first = subprocess.run(cmd + ["run", *common, "--workers", "2", "--budget", "9m", "--no-progress"], cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "[recorded] notebook/01_stage1_growth" in first.stdout
    (rec_path,) = (tmp_path / "ci" / "notebook").glob("01_stage1_growth-*.json")
    rec = json.loads(rec_path.read_text())
    assert rec["payload"]["rows"] and rec["provenance"]["threads"] == 1
    second = subprocess.run(cmd + ["run", *common, "--workers", "2", "--budget", "9m", "--no-progress"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert second.returncode == 0 and "0 of 1 units to run" in second.stdout
    st = subprocess.run(cmd + ["status", *common], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert st.returncode == 0 and "done       1" in st.stdout and "nothing pending" in st.stdout


def test_a_notebooks_code_version_ignores_comments_and_prose_not_code(tmp_path):
    """book.records.record.notebook_code: the syntax of the code cells and of the modules they import, transitively."""
    from imbalanced_cl.book.records.record import code_digest, science_files
    pkg = tmp_path / "src" / "imbalanced_cl"
    (pkg / "claims").mkdir(parents=True)
    for p in (pkg / "__init__.py", pkg / "claims" / "__init__.py", pkg / "other.py"):
        p.write_text("")
    (pkg / "claims" / "a.py").write_text('"""Doc."""\nfrom ..stats import f\nX = 1  # a comment\n')
    (pkg / "stats.py").write_text("def f():\n    return 2\n")
    nb = tmp_path / "n.ipynb"
    cell = {"cell_type": "code", "source": "%matplotlib inline\nfrom imbalanced_cl.claims.a import X\n",
            "metadata": {}, "outputs": [], "execution_count": None}
    prose = {"cell_type": "markdown", "source": "Text.", "metadata": {}}
    nb.write_text(json.dumps({"cells": [prose, cell], "metadata": {}}))
    names = sorted(p.relative_to(pkg).as_posix() for p in science_files(tmp_path, nb))
    assert names == ["__init__.py", "claims/__init__.py", "claims/a.py", "stats.py"]    # not other.py

    def version():
        return code_digest(tmp_path, [nb] + science_files(tmp_path, nb))

    before = version()
    (pkg / "claims" / "a.py").write_text('"""Other doc."""\nfrom ..stats import f\n\nX = 1  # another comment\n')
    nb.write_text(json.dumps({"cells": [{**prose, "source": "Other text."}, cell], "metadata": {}}))
    assert version() == before
    (pkg / "stats.py").write_text("def f():\n    return 3\n")
    assert version() != before


def test_a_code_version_does_not_depend_on_the_python_that_computes_it():
    """Python 3.12 added `type_params` to every def and class (PEP 695), so its ast.dump differs from 3.11's for the
    same source; on a lent GPU machine's 3.12 this made every record stale. The dump leaves empty new fields out."""
    import ast
    import sys

    from imbalanced_cl.book.records.syntax import syntax_dump
    tree = ast.parse("def f(x, *, y=1) -> int:\n    return x + y\nclass C(B):\n    pass\n")
    if sys.version_info[:2] == (3, 11):     # the oracle: the stdlib's own dump on the Python the records use
        assert syntax_dump(tree) == ast.dump(tree, annotate_fields=False)
        for p in sorted((ROOT / "src").rglob("*.py")):
            t = ast.parse(p.read_text())
            assert syntax_dump(t) == ast.dump(t, annotate_fields=False), p
    # By hand: a def as Python 3.12 parses it, with its (empty) type parameters, dumps as 3.11 wrote it.
    fields = ("name", "args", "body", "decorator_list", "returns", "type_comment", "type_params")
    Def312 = type("FunctionDef", (ast.AST,), {"_fields": fields, "returns": None, "type_comment": None})
    node = Def312(name="f", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                  body=[ast.Pass()], decorator_list=[], returns=None, type_comment=None, type_params=[])
    assert syntax_dump(node) == ("FunctionDef('f', arguments([], [], kwonlyargs=[], kw_defaults=[], defaults=[]), "
                           "[Pass()], [])")
    node.type_params = [ast.Name("T")]      # a def that uses one: then it counts
    assert "type_params=[Name('T'" in syntax_dump(node)


def test_the_scoreboard_reads_current_campaign_units_and_leaves_stale_ones_out(tmp_path):
    from imbalanced_cl.book.records import record as book_record
    from imbalanced_cl.campaign.kinds import plan_notebooks
    (tmp_path / "notebooks").symlink_to(ROOT / "notebooks")
    (tmp_path / "src").symlink_to(ROOT / "src")
    (unit,) = plan_notebooks("ci", ROOT, ["01_stage1_growth"])
    row = V.Verdict(notebook=unit.name, claim="c", source="s", predicted="p", verdict="holds", measured=1.0, lo=0.5,
                    hi=1.5)
    folder = tmp_path / "results" / "campaign" / "ci"
    old = Unit(unit.kind, unit.name, unit.profile, unit.params, "other code")
    made = record.write(folder, old, {"rows": [V.to_json(replace(row, verdict="does not hold"))]}, {"wall_s": 3.0})
    stale_path = made.rename(made.with_name(f"{unit.name}-0000000000000000.json"))   # named by an older key scheme
    current = record.write(folder, unit, {"rows": [V.to_json(row)], "stages": ["grid"]},
                           {"device": "cpu", "commit": "abcdef0123", "wall_s": 3.0,
                            "recorded": "2026-11-27T23:01:02+00:00"})
    got = book_record.load_campaign(tmp_path, "ci")
    assert list(got) == [unit.name] and got[unit.name]["units"] == "1 of 1"
    assert [V.to_json(r) for r in got[unit.name]["rows"]] == [V.to_json(row)]
    (cell,) = book_record.column([replace(row, verdict="partly")], got)
    assert cell["verdict"] == "holds" and cell["units"] == "1 of 1" and cell["differs"]
    assert (cell["device"].split(",")[0], cell["commit"], cell["date"]) == ("cpu", "abcdef0", "2026-11-27")
    assert stale_path.exists()     # reported by `campaign status`, never read here
    # a record that kept no measurements is shown as such on every page, not by its rows as judged then
    rec = json.loads(current.read_text())
    current.write_text(json.dumps({**rec, "payload": {"rows": rec["payload"]["rows"]}}))
    (cell,) = book_record.column([row], book_record.load_campaign(tmp_path, "ci"))
    assert cell == {"status": "recorded (commit abcdef0, 2026-11-27) before records kept their measurements, so "
                              "today's rules cannot judge it; it is being recorded again"}


@pytest.mark.slow
def test_a_scale_point_is_recorded_and_notebook_08_adds_it_marked_and_leaves_stale_ones_out(tmp_path):
    """scale_point: one d of notebook 08 measured in a unit, round-tripped through JSON, added to the grid; a record
    under other code is named stale and not used; a record of other parameters is named with them and not used; a
    config that differs only in how it runs (threads) still reads the record."""
    from imbalanced_cl.book.build.profiles import params
    from imbalanced_cl.book.records.record import source_code
    from imbalanced_cl.campaign import kinds as K
    from imbalanced_cl.claims import scale
    (tmp_path / "src").symlink_to(ROOT / "src")
    ci = {k: tuple(v) if isinstance(v, list) else v for k, v in params("ci", "08_scale").items()}
    cfg = scale.ScaleConfig(**{**ci, "ds": (8, 12)})
    unit = Unit("scale_point", "d16", "ci", K.scale_params(cfg, 16), source_code(tmp_path, K.SCALE_ENTRY))
    folder = tmp_path / "results" / "campaign" / "ci"
    record.write(folder, unit, K.run_scale_point(unit, ROOT), {"device": "cpu", "commit": "abc1234", "wall_s": 1.0})
    stale = Unit("scale_point", "d24", "ci", K.scale_params(cfg, 24), "other code")
    record.write(folder, stale, {"point": {"d": 24}}, {"commit": "0ld0ld0", "wall_s": 1.0})
    other = Unit("scale_point", "d32", "ci", K.scale_params(cfg.replace(R=cfg.R + 1), 32), unit.code)
    record.write(folder, other, {"point": {"d": 32}}, {"wall_s": 1.0})
    points, notes = K.recorded_points(cfg, tmp_path)
    assert [p["d"] for p in points] == [16] and points[0]["Ni"].shape == (len(cfg.ratios), cfg.R)
    assert len(notes) == 2 and "d = 24" in notes[0] and "stale" in notes[0]
    assert "d = 32" in notes[1] and "differ in R" in notes[1] and "not used" in notes[1]   # named, not silent
    assert [p["d"] for p in K.recorded_points(cfg.replace(threads=cfg.threads + 1), tmp_path)[0]] == [16]  # run-only
    res, ds, line = K.with_recorded(scale.run(cfg), tmp_path)
    assert ds == [16] and res.cfg.ds == (8, 12, 16) and "d = 16" in line and "stale" in line
    assert [p["d"] for p in res.points] == [8, 12, 16]
    assert all(max(q.at) > 12 for q in scale.quantities(res)) and scale.verdict_rows(res, res.cfg)   # d = 16 is used
    import matplotlib
    matplotlib.use("Agg")
    from imbalanced_cl.book.plots import scale as P
    Q = scale.quantities(res)
    P.quantity_figure(Q[:2], tuple(ds))
    P.show_measurements(Q[:2], tuple(ds))
    P.gap_figure(Q, cfg.trend_sesoi, tuple(ds))
    import matplotlib.pyplot as plt
    labels = [t.get_text() for t in plt.gcf().axes[0].get_xticklabels()]     # the gap figure, drawn last
    plt.close("all")
    assert labels[-1] == "16\nrecorded" and "recorded" not in labels[0]


def test_campaign_stability_compares_the_verdicts_recorded_under_two_seeds(tmp_path):
    from imbalanced_cl.campaign import seeds
    from imbalanced_cl.campaign.kinds import plan_notebooks
    (unit,) = plan_notebooks("ci", ROOT, ["01_stage1_growth"])
    assert seeds.with_seed(unit, unit.seed) is unit                # the default seed is the plain unit
    other = seeds.with_seed(unit, unit.seed + 1)
    assert other.key != unit.key and other.params["seed"] == unit.seed + 1
    folder = tmp_path / "results"
    row = lambda claim, verdict, measured: {"notebook": unit.name, "id": claim, "claim": claim,  # noqa: E731
                                            "verdict": verdict, "measured": measured}   # as a record stores it
    # a: moves and flips; b: a closed form (the same value under every seed); c: moves and keeps its verdict
    record.write(folder, unit, {"rows": [row("a", "holds", 1.0), row("b", "partly", 0.5), row("c", "holds", 3.0)]},
                 {"wall_s": 1.0})
    record.write(folder, other, {"rows": [row("a", "does not hold", 2.0), row("b", "partly", 0.5),
                                          row("c", "holds", 4.0)]}, {"wall_s": 1.0})
    out = tmp_path / "stability.json"
    lines = seeds.report([unit], [unit.seed, unit.seed + 1], folder, out)
    assert lines[0].startswith("2 of 3 rows kept their verdict") and "66.7%" in lines[0]
    assert lines[1].endswith("moves with the seed (the rest are closed forms or settings): 2, of which 1 kept their "
                             "verdict")
    assert "conclusive flips" in lines[2] and lines[2].endswith(": 1 (target 0)")
    saved = json.loads(out.read_text())
    assert saved["flips"] == 1 and (saved["seed_dependent"], saved["seed_dependent_unchanged"]) == (2, 1)
    assert seeds.report([unit], [unit.seed, unit.seed + 7], folder)[0].startswith("no notebook is recorded")


def test_gpu_check_skips_in_one_line_without_cuda_and_names_only_planned_units():
    """make gpu-check: without CUDA one line and exit 0; with it, every unit it asks for is one the paper plan has
    (a renamed notebook would make `campaign run --only` refuse it on the lent machine), cheapest first by the
    benchmark's projection, notebook 03 again under a second seed, then notebook 04 and its sweeps last."""
    from imbalanced_cl.campaign import gpu
    from imbalanced_cl.campaign.cli import plan
    if not torch.cuda.is_available():
        out = subprocess.run([sys.executable, "-m", "imbalanced_cl.campaign.gpu"], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0 and len(out.stdout.strip().splitlines()) == 1 and "skipped" in out.stdout
    projection = {"notebooks": {"01_stage1_growth": {"projected_s": 5.0}, "02_lucky_neurons": {"projected_s": 50.0},
                                "03_Ni_scaling": {"projected_s": 20.0}}}      # 05 unmeasured: after the measured
    units = gpu.plan(projection)
    names = [u[2] for u in units]
    assert names[:4] == ["01_stage1_growth", "03_Ni_scaling", "02_lucky_neurons", "05_appendix_figures"]
    assert units[4] == ("paper", "notebook", "03_Ni_scaling", 1) and names[-3] == "04_pruning_gains"
    assert units[-2:] == [("paper", "pruning_sweep", "alpha_grid", None), ("paper", "pruning_sweep", "eps_grid", None)]
    assert [u[2] for u in gpu.plan(None)][:4] == gpu.PROJECTED
    for profile in ("paper", "default"):
        for kind in {u[1] for u in units if u[0] == profile}:
            mine = sorted({u[2] for u in units if u[:2] == (profile, kind)})
            _, planned = plan(profile, mine, [kind], ROOT)
            assert sorted(u.name for u in planned) == mine, (profile, kind)
    assert ("default", "scale_point", "d160", None) in units


def test_run_only_settings_do_not_make_a_record_answer_for_other_parameters():
    """threads, progress and workers decide how a unit runs, not what it computes (the notebooks' tests check that
    their numbers do not depend on them); any other parameter does."""
    from imbalanced_cl.campaign.units import differing
    assert differing({"R": 4, "workers": 2, "threads": 1, "progress": True}, {"R": 4, "workers": 0}) == []
    assert differing({"R": 4, "workers": 2}, {"R": 8, "steps": 3}) == ["R", "steps"]


def test_compare_records_sees_numbers_and_parameters_but_not_timings(tmp_path):
    """tests/compare_records.py (the check that a re-recorded unit holds the old numbers): a record that differs
    only in its timings or in a run-only setting is the same; one number or one real parameter is not."""
    import compare_records as CR

    def write(folder, name, payload, params, recorded="2026-11-26T05:00:00"):
        path = tmp_path / folder / "premise_cell" / f"{name}-{len(list(tmp_path.rglob('*.json')))}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"kind": "premise_cell", "name": name, "params": params, "payload": payload,
                                    "provenance": {"recorded": recorded}}))

    old = {"premises": {"lambda": {"value": 0.0485}}, "gain": [1.5e-5, -2e-5], "seconds": 692.0}
    write("a", "d40_x", old, {"R": 4, "workers": 0})
    write("b", "d40_x", {**old, "seconds": 460.0}, {"R": 4, "workers": 2})
    assert CR.compare(CR.newest(tmp_path / "a"), CR.newest(tmp_path / "b")) == []
    write("b", "d40_x", {**old, "gain": [1.5e-5, -2.1e-5]}, {"R": 4}, recorded="2026-11-26T06:00:00")   # newest
    assert CR.compare(CR.newest(tmp_path / "a"), CR.newest(tmp_path / "b")) == [
        "premise_cell/d40_x: numbers differ in gain"]
    write("c", "d40_x", old, {"R": 8})
    assert CR.compare(CR.newest(tmp_path / "a"), CR.newest(tmp_path / "c")) == [
        "premise_cell/d40_x: parameters differ: R"]
