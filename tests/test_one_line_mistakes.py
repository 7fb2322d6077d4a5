"""Every mistake of issue 51 gets one line on stderr and a non-zero exit, before anything is computed; a unit redone
after its worker died says so; every --help shows every default."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
import torch

from imbalanced_cl.__main__ import main, parser
from imbalanced_cl.book.build.params import check_notebook
from imbalanced_cl.campaign import clusters, engine
from imbalanced_cl.campaign.units import Unit

sys.path.insert(0, str(Path(__file__).parent))
import campaign_kinds as CK

ROOT = Path(__file__).resolve().parents[1]


def _run(argv: list[str]) -> int:
    """main(argv)'s exit code, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


def _one_line(capsys) -> str:
    """The one line the command printed on stderr (it printed nothing else there)."""
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_notebook_06_refuses_cuda_without_cuda_in_one_line_before_compute(tmp_path, monkeypatch, capsys):
    """As the simulation notebooks do: device='cuda' where there is no CUDA is refused when the parameters are
    checked (it failed at cell [7] with torch's AssertionError, exit 1)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    nb = ROOT / "notebooks" / "06_lt_benchmarks.ipynb"
    (line,) = check_notebook(nb, {"device": "cuda"}, "profile ci")
    assert "device='cuda' is invalid here: no CUDA device is available" in line
    assert check_notebook(nb, {"device": "cpu"}, "profile ci") == []
    rc = _run(["book", "--profile", "ci", "--only", "06_lt_benchmarks", "--set", "device=cuda", "--no-build",
               "--out", str(tmp_path)])
    assert rc == 2 and "no CUDA device is available" in _one_line(capsys)
    assert not (tmp_path / "_build").exists()          # nothing executed


@pytest.mark.parametrize("option", ["--budget", "--join-timeout"])
def test_a_negative_duration_gets_its_one_line_whatever_its_spelling(tmp_path, capsys, option):
    """`--budget -1m` (argparse read -1m as an option and printed its 14-line usage) and `--budget=-1m`."""
    name = option[2:].replace("-", "_")
    for argv in ([option, "-1m"], [f"{option}=-1m"]):
        rc = _run(["campaign", "run", "--profile", "ci", "--results", str(tmp_path / "r"), *argv])
        line = _one_line(capsys)
        assert rc == 2 and line.startswith(f"error: parameter {name}='-1m' is invalid"), line
    assert not (tmp_path / "r").exists()


def test_a_misspelt_only_suggests_the_nearest_name_and_lists_the_valid_ones(tmp_path, capsys):
    """The hint came from candidates already filtered by --only, so it could never appear."""
    rc = _run(["campaign", "status", "--profile", "ci", "--only", "02_lucky_neuron", "--results", str(tmp_path)])
    line = _one_line(capsys)
    assert rc == 2 and "'02_lucky_neuron' (did you mean 02_lucky_neurons?)" in line, line
    listed = line.split("The units are: ")[1].split(", ")
    assert {"01_stage1_growth", "02_lucky_neurons", "06_lt_benchmarks"} <= set(listed), listed


def test_campaign_stability_with_nothing_to_compare_exits_non_zero_saying_why(tmp_path, capsys):
    rc = _run(["campaign", "stability", "--profile", "ci", "--only", "01_stage1_growth", "--results", str(tmp_path)])
    out = capsys.readouterr()
    err = out.err.strip().splitlines()
    assert rc == 1 and out.out == "" and len(err) == 1, out
    assert err[0].startswith("error: no notebook is recorded under every seed [0, 1]"), err


def _parsers(ap: argparse.ArgumentParser):
    """The parser and every subcommand's parser under it."""
    yield ap
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for p in action.choices.values():
                yield from _parsers(p)


def test_every_help_shows_every_default():
    """Every option that takes a value says its default (in argparse's words or the help's own), and the campaign's
    profile says it is paper."""
    top = parser()
    missing = []
    for p in _parsers(top):
        fmt = p._get_formatter()
        for action in p._actions:
            if not action.option_strings or action.nargs == 0 or isinstance(action, argparse._SubParsersAction):
                continue
            text = fmt._expand_help(action) if action.help else ""
            if "default" not in text.replace("'default'", ""):
                missing.append(f"{p.prog} {action.option_strings[0]}")
    assert not missing, missing
    run = next(p for p in _parsers(top) if p.prog.endswith("campaign run"))
    assert "(default: paper)" in " ".join(run.format_help().split())


@pytest.mark.slow
def test_a_unit_redone_after_its_worker_died_says_so(tmp_path, capsys):
    """The worker dies in the unit's first run; Dask redoes it on a fresh worker, and the run says so on stderr (it
    reported '1 recorded' and nothing else)."""
    log = tmp_path / "runs.log"
    (u,) = CK.plan_tiny("ci", ROOT, n=1, log=str(log))
    flaky = Unit("flaky", u.name, "ci", {**u.params, "how": "exit"}, "v1")
    cluster = clusters.local_cluster(1)
    try:
        out = engine.run({"flaky": CK.FLAKY}, [flaky], engine.Options(tmp_path / "r", budget_s=300, progress=False),
                         ROOT, cluster=cluster)
    finally:
        cluster.close()
    assert [r["unit"] for r in out.ran] == ["flaky/u0"] and not out.failed
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"[redone]  flaky/u0: worker died; unit redone (1 of {clusters.WORKER_DEATHS})"], err


def test_a_bad_parameter_is_refused_before_any_record_is_judged(tmp_path, monkeypatch, capsys):
    """`book` checks its parameters before it judges the paper records for the scoreboard's column: judging a record
    with measurement stages executes its notebook, and a mistake must get its one line before any of that."""
    from imbalanced_cl.campaign import judge

    def judged(*a, **k):
        raise AssertionError("a record was judged before the parameters were checked")
    monkeypatch.setattr(judge, "judge_all", judged)
    monkeypatch.setattr(judge, "replays", judged)
    rc = _run(["book", "--profile", "ci", "--only", "01_stage1_growth", "--set", "R=-1", "--no-build",
               "--out", str(tmp_path)])
    assert rc == 2 and "R" in _one_line(capsys)
