"""Records that outlive code changes (issue 47): a record is judged by the numbers its code computes (a probe at a tiny
size, under the record's commit and under today's tree), never by the spelling of that code; the reasons a record is
stale are named; the book re-executes exactly the notebooks that read a changed record.

The probe test builds a small git repository holding a copy of the package, records a unit there, then edits the
package the ways a maintainer does: a renamed variable, a moved verdict threshold and an edited page keep the record;
a changed formula in sim/ makes it stale, and `campaign status` says which probe moved."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from imbalanced_cl import verdict as V
from imbalanced_cl.book.records.glued import rows_of
from imbalanced_cl.book.records.record import code_digest
from imbalanced_cl.book.build.cache import records_digest
from imbalanced_cl.campaign import probe, record, status, validity
from imbalanced_cl.campaign.units import Unit

ROOT = Path(__file__).resolve().parents[1]

# A probe of the training loop itself: 6 steps of a tiny model, two replicates; its output is the final weights. The
# unit's parameters carry a judging tolerance (tol_ratio), as a claim's config does; the training config has none.
TINY = probe.register(probe.Probe("tiny_train", '''
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.train import train
sim = {k: v for k, v in params.items() if not k.startswith("tol_")}
out = train(SimConfig(**shrunk(sim, R=2, chunk=1, steps=6, progress=False))).W
'''))
PARAMS = {"d": 4, "d1": 8, "m": 6, "n_pairs": 16, "steps": 6, "R": 2, "seed": 0, "tol_ratio": 0.1}


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def _commit(repo: Path, msg: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", msg)
    return _git(repo, "rev-parse", "HEAD")


def _code(repo: Path) -> str:
    """The package's code digest (syntax of every module under sim/ and the verdict layer)."""
    pkg = repo / "src" / "imbalanced_cl"
    return code_digest(repo, [pkg / "sim", pkg / "verdict.py"])


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}: the test's edit no longer applies"
    path.write_text(text.replace(old, new))


@pytest.fixture
def repo(tmp_path):
    """A git repository with a copy of today's package and profiles, one commit."""
    r = tmp_path / "repo"
    shutil.copytree(ROOT / "src", r / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(ROOT / "profiles.yaml", r / "profiles.yaml")
    (r / "book").mkdir()
    (r / "book" / "methods.md").write_text("# Methods\nThe band is the prediction minus its tolerance.\n")
    _git(r, "init", "-q")
    return r


def _record(repo: Path, commit: str, params: dict) -> tuple[Path, Unit]:
    """A record of unit tiny_train/u made at `commit`, written under repo/results/campaign/ci."""
    unit = Unit("tiny_train", "u", "ci", params, _code(repo), 0)
    folder = repo / "results" / "campaign" / "ci"
    record.write(folder, unit, {"W": "measured"}, {"commit": commit, "dirty": False, "seed": 0, "wall_s": 1.0,
                                                    "recorded": "2026-11-27T12:00:00+00:00", "device": "cpu"})
    return folder, unit


@pytest.mark.slow
def test_a_record_is_kept_through_a_rename_a_threshold_and_a_page_and_dropped_by_a_changed_formula(repo):
    made_at = _commit(repo, "v1")
    folder, unit = _record(repo, made_at, PARAMS)
    cache = probe.Cache(repo / "probes.json")

    def judged(params=PARAMS):
        now = Unit("tiny_train", "u", "ci", params, _code(repo), 0)
        return validity.find(folder, now, repo, cache=cache), now

    j, _ = judged()
    assert j.valid and j.why == ""                                   # same code: no probe needed

    # a renamed local variable in sim/, a moved verdict threshold, an edited page, a moved tolerance parameter
    loss = repo / "src" / "imbalanced_cl" / "sim" / "loss.py"
    _edit(loss, "    pos_prob = (torch.diagonal(E, dim1=-2, dim2=-1) / Z).mean(dim=-1)",
          "    positive_prob = (torch.diagonal(E, dim1=-2, dim2=-1) / Z).mean(dim=-1)")
    _edit(loss, "    return loss, (G if tau_scaled else G / tau), pos_prob",
          "    return loss, (G if tau_scaled else G / tau), positive_prob")
    verdict = repo / "src" / "imbalanced_cl" / "verdict.py"
    verdict.write_text(verdict.read_text() + "\nBAND_SLACK = 0.25   # a threshold of the verdict layer, moved\n")
    _edit(repo / "book" / "methods.md", "prediction minus its tolerance", "prediction less its tolerance")
    _commit(repo, "refactor")
    j, now = judged({**PARAMS, "tol_ratio": 0.3})
    assert j.valid, j.why
    assert j.why.startswith(f"made under other code at {made_at[:7]}; probe tiny_train gives the same numbers")
    assert not validity.find(folder, now, repo, cache=cache).why.endswith("moved")

    # a changed formula in sim/ (eq. 21's 1/n becomes 1/(n+1)): the probe moves, and status names it
    _edit(loss, "    G = ((E @ V) / Z.unsqueeze(-1) - V) / n ", "    G = ((E @ V) / Z.unsqueeze(-1) - V) / (n + 1) ")
    _commit(repo, "formula")
    j, now = judged()
    assert not j.valid and j.why.startswith(f"probe tiny_train moved: the code of {made_at[:7]} gives ")
    lines = status.report(status.coverage([now], folder, repo), "ci", folder)
    assert any("probe tiny_train moved" in ln and "not used" in ln for ln in lines), lines
    assert any(ln.split()[:2] == ["pending", "1"] for ln in lines) and any(
        ln.split()[:2] == ["done", "0"] for ln in lines), lines


def test_a_parameter_that_changes_what_is_measured_makes_a_record_stale_and_is_named(repo):
    made_at = _commit(repo, "v1")
    folder, _ = _record(repo, made_at, PARAMS)
    for params, valid, why in (({**PARAMS, "threads": 2, "progress": True}, True, ""),   # run-only settings
                               ({**PARAMS, "tol_ratio": 0.5}, True, ""),                  # a judging tolerance
                               ({**PARAMS, "d1": 12}, False, "parameters differ in d1"),
                               ({**PARAMS, "R": 4, "steps": 9}, False, "parameters differ in R, steps")):
        j = validity.find(folder, Unit("tiny_train", "u", "ci", params, _code(repo), 0), repo)
        assert (j.valid, j.why) == (valid, why)
    # another seed is another unit: no record answers for it, and none is called stale
    assert validity.find(folder, Unit("tiny_train", "u", "ci", PARAMS, _code(repo), 1), repo) is None


def test_a_record_from_a_dirty_tree_or_an_unknown_commit_under_other_code_is_stale_with_why(repo):
    _commit(repo, "v1")
    folder = repo / "results" / "campaign" / "ci"
    unit = Unit("tiny_train", "u", "ci", PARAMS, "other-code", 0)
    for prov, why in (({"commit": "abc", "dirty": True}, "uncommitted changes"),
                      ({"commit": "f" * 40, "dirty": False}, "is not in this repository's history")):
        record.write(folder, Unit("tiny_train", "u", "ci", PARAMS, "old-code", 0), {}, {**prov, "seed": 0})
        j = validity.find(folder, unit, repo, cache=probe.Cache(repo / "probes.json"))
        assert not j.valid and why in j.why, j.why


def test_a_corrupt_record_is_named_and_the_rest_load(tmp_path):
    folder = tmp_path / "ci"
    good = Unit("tiny_train", "u", "ci", PARAMS, "c", 0)
    record.write(folder, good, {"W": 1}, {"commit": "x", "seed": 0})
    bad = folder / "tiny_train" / "v-0000000000000000.json"
    bad.write_text('{"kind": "tiny_train", "name": "v", ')            # cut short mid-write by a crash
    sc = record.scan(folder)
    assert [p.name for p, _ in sc.corrupt] == [bad.name] and "not valid JSON" in sc.corrupt[0][1]
    assert validity.find(folder, good, tmp_path, sc).valid


def test_a_scale_point_record_without_its_measurements_needs_re_measuring(tmp_path):
    from imbalanced_cl.book.build.profiles import params as profile_params
    from imbalanced_cl.book.records.record import source_code
    from imbalanced_cl.campaign import kinds
    from imbalanced_cl.claims.scale import ScaleConfig
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    cfg = ScaleConfig(**profile_params("ci", "08_scale"))
    d = next(d for d in kinds.EXTRA_DS if d not in cfg.ds)
    unit = Unit("scale_point", f"d{d}", "ci", kinds.scale_params(cfg, d), source_code(root, kinds.SCALE_ENTRY),
                cfg.seed)
    record.write(root / "results" / "campaign" / "ci", unit, {"points": []}, {"commit": "x", "seed": cfg.seed})
    points, notes = kinds.recorded_points(cfg, root)
    assert points == [] and any(f"d = {d} needs re-measuring (field point)" in n for n in notes), notes


def test_the_book_key_of_a_notebook_follows_exactly_the_records_it_reads(tmp_path):
    nb08, nb10, nb01 = (Path(f"notebooks/{n}.ipynb") for n in ("08_scale", "10_premise_map", "01_stage1_growth"))
    before = {nb: records_digest(tmp_path, nb) for nb in (nb08, nb10, nb01)}
    point = tmp_path / "results" / "campaign" / "default" / "scale_point" / "d160-0.json"
    point.parent.mkdir(parents=True)
    point.write_text("{}")
    after = {nb: records_digest(tmp_path, nb) for nb in (nb08, nb10, nb01)}
    assert after[nb08] != before[nb08] and after[nb10] == before[nb10] and after[nb01] == before[nb01] == ""
    point.write_text('{"mended": 1}')                                  # a mended record re-executes its reader
    assert records_digest(tmp_path, nb08) != after[nb08]
    mended = records_digest(tmp_path, nb08)
    probes = tmp_path / "results" / "campaign" / "probes.json"        # so does a new judgement of its validity
    probes.write_text("{}")
    assert records_digest(tmp_path, nb08) != mended and records_digest(tmp_path, nb10) != after[nb10]
    assert records_digest(tmp_path, nb01) == ""


def test_the_probe_digest_is_the_same_run_after_run_and_follows_the_parameters():
    a = probe.run(TINY, ROOT, PARAMS)
    assert a == probe.run(TINY, ROOT, {**PARAMS, "tol_ratio": 0.9}) and len(a) == 16     # a judging field: unused
    assert probe.run(TINY, ROOT, {**PARAMS, "seed": 1}) != a           # another seed draws other numbers


def test_a_probe_output_leaves_out_timings_and_judgements():
    script = probe.Probe("skip", 'out = {"value": params["v"], "seconds": params["s"], "holds": params["h"]}')
    one, two = (probe.run(script, ROOT, {"v": 1.5, "s": s, "h": h}) for s, h in ((0.1, True), (9.0, False)))
    assert one == two != probe.run(script, ROOT, {"v": 1.25, "s": 0.1, "h": True})


def test_the_probe_cache_is_kept_and_reused(tmp_path):
    cache = probe.Cache(tmp_path / "probes.json")
    calls = []
    digest = cache.digest("tiny_train", "code-1", PARAMS, lambda: calls.append(1) or ROOT)
    again = probe.Cache(tmp_path / "probes.json").digest("tiny_train", "code-1", PARAMS, lambda: calls.append(1))
    assert digest == again and calls == [1]
    (tmp_path / "probes.json").write_text("{not json")                 # a damaged cache counts as empty
    assert probe.Cache(tmp_path / "probes.json").data == {}


@pytest.mark.slow
def test_a_notebook_unit_keeps_its_measurements_and_is_judged_again_from_them_alone(tmp_path, capsys, ci_unit_record):
    """Notebook 03 at ci as a campaign unit: its record keeps the measured grid beside it (stages), judging the
    record executes the notebook with the grid read back, training nothing, and gives the recorded rows again; a
    record whose stage is gone needs re-measuring, named, never a crash."""
    import time

    from imbalanced_cl.campaign import judge, typed
    path, rec, unit, wall_s = ci_unit_record("03_Ni_scaling", tmp_path)
    where = judge.kept_stages(path, rec)
    assert rec["payload"]["stages"] == ["grid", "push"]        # the grid, and again at 4 × K (Lemma B.1's push)
    assert all((where / f"{s}.{x}").exists() for s in ("grid", "push") for x in ("json", "npz"))
    grid, push = typed.load(where / "grid"), typed.load(where / "push")
    points = sorted((d, r) for d in unit.params["ds"] for r in unit.params["ratios"])
    assert sorted(grid) == points == sorted(push["grid"]) and push["n_pairs"] == 4 * unit.params.get("n_pairs", 512)

    t0 = time.time()
    rows, why = judge.judge(ROOT, path, rec, tmp_path / "judged.ipynb")
    assert why == "" and time.time() - t0 < wall_s + 60
    text = json.dumps(json.loads((tmp_path / "judged.ipynb").read_text())["cells"])
    assert "d= 10 rho=" not in text        # train_grid's per-point log line: nothing was trained
    recorded = {r["id"]: (r["verdict"], r["measured"], r["lo"], r["hi"]) for r in rec["payload"]["rows"]}
    assert {j["id"]: (j["verdict"], j["measured"], j["lo"], j["hi"]) for j in map(V.to_json, rows)} == recorded

    # the book builds the page from the record: the grid is read back (nothing trained), the page says which record
    # measured it, and the book's cache key follows the record
    from imbalanced_cl.book.build.runner import run_book
    reps = judge.replays(ROOT, "ci", results=tmp_path)
    assert list(reps) == ["03_Ni_scaling"] and reps["03_Ni_scaling"]["made_by"].startswith("commit ")
    assert run_book("ci", out_root=tmp_path / "book", only=["03_Ni_scaling"], build=False, replays=reps) == 0
    page = (tmp_path / "book" / "_build" / "executed" / "notebooks" / "03_Ni_scaling.ipynb").read_text()
    assert "d= 10 rho=" not in page and "grid: read from the campaign record made by commit " in page
    assert "nothing trained in this build" in page
    assert {j["id"]: (j["verdict"], j["measured"], j["lo"], j["hi"]) for j in
            map(V.to_json, rows_of(tmp_path / "book" / "_build" / "executed" / "notebooks" / "03_Ni_scaling.ipynb"))} \
        == recorded

    good = (where / "grid.npz").read_bytes()
    (where / "grid.npz").write_bytes(good[: len(good) // 2])       # a damaged stage: named, and measured again
    assert judge.replays(ROOT, "ci", results=tmp_path) == {}
    assert "03_Ni_scaling: a stage of its ci record is unreadable (grid: unreadable" in capsys.readouterr().err
    (where / "grid.npz").write_bytes(good)
    (where / "grid.json").unlink()
    assert judge.replays(ROOT, "ci", results=tmp_path) == {}      # a record missing a stage is not replayed
    rows, why = judge.judge(ROOT, path, rec, tmp_path / "again.ipynb")
    assert rows is None and why == "needs re-measuring (stage grid: not in the record)"


def test_a_page_says_which_commit_device_and_date_made_its_recorded_results():
    from types import SimpleNamespace

    from imbalanced_cl.campaign import premise_cells
    a = {"commit": "c8dd1bf0123", "device": "cpu", "recorded": "2026-11-27T12:01:02+00:00"}
    b = {"commit": "abcdef0999", "device": "cuda", "recorded": "2026-11-28T01:00:00+00:00"}
    assert validity.made_by(a) == "commit c8dd1bf on cpu, 2026-11-27"
    cells = [SimpleNamespace(extra={"provenance": p}) for p in (a, a, b)]
    assert premise_cells.made_by(cells) == ["1 cell recorded by commit abcdef0 on cuda, 2026-11-28",
                                            "2 cells recorded by commit c8dd1bf on cpu, 2026-11-27"]


def test_a_stage_refuses_a_training_object_and_an_oversized_array_before_writing(tmp_path):
    """A stage keeps measurements: a Run (weights, pairs, per-step history) is refused by name, and so is any value
    whose arrays exceed typed.MAX_BYTES; nothing is written in either case. A round trip of a measurement is exact."""
    import numpy as np
    import torch

    from imbalanced_cl.campaign import typed
    from imbalanced_cl.sim.config import SimConfig
    from imbalanced_cl.sim.train import train
    run = train(SimConfig(d=4, d1=8, m=4, n_pairs=8, steps=2, R=1, progress=False))
    with pytest.raises(typed.NotStorable, match=r"t2\['lemma32'\]\['run'\]: a Run is a training object"):
        typed.save({"lemma32": {"run": run}}, tmp_path / "t2")
    with pytest.raises(typed.NotStorable, match=r"MiB of arrays, above the 32 MiB"):
        typed.save({"W": np.zeros(typed.MAX_BYTES // 8 + 1)}, tmp_path / "big")
    assert not list(tmp_path.iterdir())
    value = {"T1": torch.tensor([3, -1]), "gap": np.array([[1.5, np.nan]]), (10, 0.5): (1, "a")}
    typed.save(value, tmp_path / "ok")
    back = typed.load(tmp_path / "ok")
    assert torch.equal(back["T1"], value["T1"]) and np.array_equal(back["gap"], value["gap"], equal_nan=True)
    assert back[(10, 0.5)] == (1, "a")


def test_notebook_02s_measured_stages_keep_no_run():
    """measure_t2 at a tiny size is storable: the Lemma 3.2 part keeps T1 and T2, not its run (whose per-step history
    made a paper record hundreds of MB)."""
    from imbalanced_cl.campaign import typed
    from imbalanced_cl.claims.lucky import LuckyConfig, measure_t2
    cfg = LuckyConfig(d=6, d1=12, m=8, n_minority=2, n_pairs=16, steps=20, R=1, train_eps_max=(1.0,),
                      census_ds=(10,), progress=False)
    out = measure_t2(cfg)
    assert "run" not in out["lemma32"] and out["lemma32"]["T1"].shape == (1,)
    typed._encode(out, {}, "t2")          # raises NotStorable if a training object is left in it


def test_a_probe_that_runs_past_its_limit_is_named_in_one_line(tmp_path, monkeypatch):
    """A probe that times out leaves its record unvalidated (stale, not used), and the reason names the probe and its
    limit in one line; the TimeoutExpired message is the whole child program, which status printed before."""
    import subprocess

    def slow(p, tree, params, timeout=probe.TIMEOUT):
        raise subprocess.TimeoutExpired(["python", "-c", "a\nlong\nprogram"], timeout)
    monkeypatch.setattr(probe, "run", slow)
    rec = {"provenance": {"commit": "HEAD"}, "code": "old", "params": PARAMS}
    ok, why = probe.same_numbers("tiny_train", rec, PARAMS, "new", ROOT, probe.Cache(tmp_path / "probes.json"))
    assert not ok and why == f"made under other code; probe tiny_train did not finish in {probe.TIMEOUT} s (run " \
                             "status again)"


def test_a_tree_is_dirty_by_its_code_not_by_the_records_and_probe_cache_a_campaign_writes(repo):
    """provenance's dirty flag: a changed probes.json or record under results/ (written by the campaign itself) leaves
    a tree clean, a changed module makes it dirty."""
    cache = repo / "results" / "campaign" / "probes.json"
    cache.parent.mkdir(parents=True)
    cache.write_text("{}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    unit = Unit("tiny_train", "u", "ci", PARAMS, "code", 0)
    cache.write_text('{"k": 1}\n')
    assert record.provenance(repo, unit, 1.0, 1)["dirty"] is False
    (repo / "src" / "imbalanced_cl" / "stats.py").write_text("# edited\n")
    assert record.provenance(repo, unit, 1.0, 1)["dirty"] is True


def test_a_copy_that_names_its_commit_is_that_commit_whatever_its_own_git_says(repo, monkeypatch):
    """A lent GPU's copy carries the .git of the session's first commit while its code is a later commit, which
    $IMBALANCED_CL_COMMIT names (a record of 2026-11-28 said "040c24e, dirty" for code at 3470338): the named commit
    wins; a named commit the copy's git holds is compared with the tree (dirty when they differ, clean when not); one
    it lacks is taken as said."""
    from imbalanced_cl.book.records.provenance import COMMIT_ENV
    first = _commit(repo, "one")
    (repo / "src" / "imbalanced_cl" / "stats.py").write_text("# the next commit's code\n")
    second = _commit(repo, "two")
    _git(repo, "checkout", "-q", first, "--", ".")              # the copy's files are the first commit's again
    unit = Unit("tiny_train", "u", "ci", PARAMS, "code", 0)
    monkeypatch.setenv(COMMIT_ENV, first)
    assert {k: record.provenance(repo, unit, 1.0, 1)[k] for k in ("commit", "dirty")} == {"commit": first,
                                                                                         "dirty": False}
    monkeypatch.setenv(COMMIT_ENV, second)                      # named, known, and the files differ from it
    assert record.provenance(repo, unit, 1.0, 1)["dirty"] is True
    monkeypatch.setenv(COMMIT_ENV, "f" * 40)                    # a commit this copy's git does not hold
    assert {k: record.provenance(repo, unit, 1.0, 1)[k] for k in ("commit", "dirty")} == {"commit": "f" * 40,
                                                                                         "dirty": False}
    monkeypatch.delenv(COMMIT_ENV)
    assert record.provenance(repo, unit, 1.0, 1)["commit"] == second


def test_digests_from_two_hosts_are_compared_only_after_both_run_on_this_one(tmp_path, monkeypatch):
    """A digest cached on another host (an Intel one, say) may differ in the last bit from this host's for the same
    code. The record is stale only when the code of its commit and today's differ on one host; a digest the cache
    holds from this host is not run again."""
    import torch
    runs = []

    def fake_run(p, tree, params, timeout=probe.TIMEOUT):
        runs.append(str(tree))
        old = str(tree) != str(ROOT)
        return {"same": "B", "moved": "B" if old else "C"}[params["case"]]
    monkeypatch.setattr(probe, "run", fake_run)
    monkeypatch.setattr(probe, "extract", lambda commit, root, where: Path("/old-tree"))
    monkeypatch.setattr(probe, "host", lambda: "x86_64/AuthenticAMD/avx512")
    cache = probe.Cache(tmp_path / "probes.json")
    for case in ("same", "moved"):
        params = {**PARAMS, "case": case}
        rec = {"provenance": {"commit": "0ef50ea"}, "code": "old", "params": params}
        # the old code's digest as another host computed it, and today's nowhere yet
        cache.data[probe._key("tiny_train", "0ef50ea:old", params)] = {
            "kind": "tiny_train", "code": "0ef50ea:old", "probe": "A", "torch": torch.__version__,
            "host": "x86_64/GenuineIntel/avx512"}
        runs.clear()
        ok, why = probe.same_numbers("tiny_train", rec, params, "new", ROOT, cache)
        assert runs == [str(ROOT), "/old-tree"]                 # today's here, then the old code again here
        assert cache.host_of("tiny_train", "0ef50ea:old", params) == "x86_64/AuthenticAMD/avx512"
        if case == "same":
            assert ok and why == "made under other code at 0ef50ea; probe tiny_train gives the same numbers (B)"
        else:
            assert not ok and why == "probe tiny_train moved: the code of 0ef50ea gives B, today's gives C"
        runs.clear()
        assert probe.same_numbers("tiny_train", rec, params, "new", ROOT, cache)[0] is ok and runs == []


def test_the_host_names_the_cpu_vendor_and_vector_width():
    parts = probe.host().split("/")
    assert len(parts) == 3 and parts[2] in ("avx512", "avx2", "base") and all(parts)


def test_a_valid_notebook_record_without_its_measurements_is_to_be_recorded_again_and_answers_meanwhile(tmp_path):
    """Issue 64, item 1: a notebook record kept before records kept their stages (paper 03) cannot be judged by
    today's code, so a campaign runs its unit again; it stays the valid record until the new one replaces it. A stale
    record, another kind, or a notebook record with its stages is not re-recorded."""
    path = tmp_path / "notebook" / "03_Ni_scaling-abc.json"
    path.parent.mkdir(parents=True)
    rec = {"kind": "notebook", "name": "03_Ni_scaling", "key": "abc", "payload": {"rows": []}}
    old = validity.Judged(path, rec, True, "")
    assert validity.to_rerecord(old)
    assert not validity.to_rerecord(validity.Judged(path, rec, False, "stale"))
    assert not validity.to_rerecord(None)
    assert not validity.to_rerecord(validity.Judged(path, {**rec, "kind": "premise_cell"}, True, ""))
    kept = {**rec, "payload": {"rows": [], "stages": ["grid"]}}
    assert validity.to_rerecord(validity.Judged(path, kept, True, ""))        # named, but the folder is gone
    validity.kept_stages(path, kept).mkdir()
    assert not validity.to_rerecord(validity.Judged(path, kept, True, ""))
    unit = Unit("notebook", "03_Ni_scaling", "paper")
    cov = status.Coverage(pending=[unit], rerecord=[unit])
    line = "\n".join(status.report(cov, "paper", tmp_path))
    assert "notebook/03_Ni_scaling [to re-record: its record kept no measurements" in line
