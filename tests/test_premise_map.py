"""Notebook 10's premise map: the named lambdas and the window (hand-worked), the grid with its bias axes, each
premise failing alone on a hand-made cell, predictions that never gate, the (a)/(b)/(c) rule on hand-made results
(a prediction failing where the premises hold is "does not hold", never (c)), and bad parameters."""
import dataclasses
import math

import pytest
import torch

from imbalanced_cl import premises as P
from imbalanced_cl.claims import premise_map as PM
from imbalanced_cl.claims.premise_map.metrics import Premise
from imbalanced_cl.claims.pruning.metrics import Convergence
from imbalanced_cl.sim.regime import Regime
from imbalanced_cl.sim.train import Run
from imbalanced_cl.validate import ParameterError
from imbalanced_cl import verdict as V
from imbalanced_cl.verdict import FAILS, HOLDS, NOT_COMPARABLE

BASE = dict(ds=(10,), lambdas=("mid",), ratios=(1.0,), m_over_d=25.0, star_m_over_d=(), star_K=(), star_alpha=(),
            star_n_minority=(), star_bias_onset=(), star_bias_coef=(), R=2, progress=False, vanilla_block=20,
            vanilla_max=40, prune_max=20)


def test_named_lambdas_and_window_by_hand():
    # 10^-1.49 = 0.032359, 10^-1.25 = 0.056234, 10^-1.01 = 0.097724; the book's lambda is passed through
    assert PM.lambda_value("bottom", 10, 1e-3) == pytest.approx(0.032359, rel=1e-4)
    assert PM.lambda_value("mid", 10, 1e-3) == pytest.approx(0.056234, rel=1e-4)
    assert PM.lambda_value("top", 10, 1e-3) == pytest.approx(0.097724, rel=1e-4)
    assert PM.lambda_value("book", 10, 1e-3) == 1e-3
    t3, t4 = PM.window(20, 0.5)              # 20^1.01 = e^3.0257 = 20.608, 20^1.99 = e^5.9615 = 388.19; over 0.5
    assert t3 == pytest.approx(41.216, abs=0.01) and t4 == pytest.approx(776.39, abs=0.05)


def test_the_grid_is_the_plane_plus_the_star_with_the_bias_axes():
    cfg = PM.PremiseMapConfig(ds=(8, 12), lambdas=("book", "top"), ratios=(0.5, 0.8), star_K=(256,),
                              star_alpha=(0.3,), star_m_over_d=(), star_n_minority=(2,), star_bias_onset=("none",),
                              star_bias_coef=(2.0,), R=2)
    cells = cfg.cells()
    assert len(cells) == 2 * 2 * 2 + 5
    assert [c.axis for c in cells[-5:]] == ["K", "alpha", "n_minority", "bias_onset", "bias_coef"]
    centre = cells[-5]
    assert (centre.d, centre.lam_name, centre.ratio, centre.K) == (8, "mid", 0.8, 256)
    none, coef = cells[-2], cells[-1]
    assert none.cfg.bias == "none" and none.bias_onset == "none"
    assert coef.cfg.bias == "schedule" and coef.cfg.bias_coef == 2.0 and coef.bias_onset == "crossing"
    for c in cells:                                     # the caps: run_cell decides the lengths
        assert c.cfg.vanilla_steps == cfg.vanilla_max and c.cfg.prune_steps == cfg.prune_max
        assert c.cfg.eps_min == pytest.approx(c.ratio * c.cfg.eps_max) and c.cfg.d1 == 5 * c.d


def test_eq33_t1_by_hand():
    # d = 10, d1 = 50, eta = 0.5: 50 ln 10 / (0.5 ln ln 10) = 115.129 / 0.417016 = 276.08 -> 277
    assert PM.eq33_t1(10, 50, 0.5) == 277
    assert PM.eq33_t1(10, 10, 0.5) == 56                 # the workshop's: d for d1, 23.026 / 0.417016 = 55.22
    cfg = PM.PremiseMapConfig(**{**BASE, "star_bias_onset": ("eq33", "workshop")})
    eq33, ws = cfg.cells()[-2:]
    assert eq33.cfg.t1_onset_step == 277 and ws.cfg.t1_onset_step == 56 and eq33.cfg.bias_onset == "eq33"


def test_the_bias_onset_axis_gives_distinct_t1_in_a_tiny_run():
    """The onsets of one tiny cell: the bias switches on at the measured crossing, at eq. (33)'s T1 or the
    workshop's, or never; the bias history shows where b first leaves 0, and the four differ."""
    from imbalanced_cl.sim.train import train
    cfg = PM.PremiseMapConfig(**{**BASE, "ds": (6,), "m_over_d": 2.0, "n_pairs": 32, "ratios": (0.8,), "lr": 2.0,
                                 "star_bias_onset": ("eq33", "workshop", "none"), "record_ds": ()})
    cells = cfg.cells()
    first = {}
    for c in cells:
        run = train(c.cfg.sim(steps=70, record_every=1, prune_alpha=0.0))
        b = run.history.get("bias").abs().amax(dim=(1, 2))              # (T,) largest |b_i| over replicates, neurons
        on = (b > 0).nonzero().flatten()
        first[c.bias_onset] = int(run.history.get("steps")[on[0]]) if len(on) else -1
    # 6 ln 6 / (2 ln ln 6) = 10.75 / 1.1662 = 9.22 -> 10 (workshop); d1 = 30: 46.1 -> 47 (eq. 33); b starts at T1 + 1
    assert first["workshop"] == 11 and first["eq33"] == 48 and first["none"] == -1
    assert first["crossing"] >= 1 and len(set(first.values())) == 4, first


def _cell(**kw):
    cfg = PM.PremiseMapConfig(**{**BASE, **kw})
    return cfg.cells()[0]


def _kappa(cell, majority=0.4, minority=0.4):
    k = torch.full((cell.d,), majority)
    k[PM.metrics.minority_index(cell.cfg)] = minority
    return k


def test_each_closed_form_premise_fails_alone():
    """A cell where every closed-form premise holds (balanced data, m = 25 d, lambda mid, hand-made kappa), then one
    change per premise that breaks only that premise."""
    ok = _cell()
    prem = PM.closed_form(ok.cfg, _kappa(ok), require_sigma=False)
    assert all(p.holds for p in prem.values() if p.required), {k: p.value for k, p in prem.items()}
    assert not prem["sigma"].required                       # reported, not required, by default

    def failed(cell, kappa=None, require_sigma=False):
        got = PM.closed_form(cell.cfg, _kappa(cell) if kappa is None else kappa, require_sigma)
        return {k for k, p in got.items() if p.required and not p.holds}

    assert failed(_cell(lambdas=("book",))) == {"lambda"}
    assert failed(ok, kappa=_kappa(ok, minority=0.01)) == {"growth"}     # gain*0.01 < lambda = 0.056
    assert failed(_cell(m_over_d=2.5)) == {"lucky"}                      # E|M*| = 25 p_lucky < 1
    assert failed(ok, require_sigma=True) == {"sigma"}                   # sigma_xi = 0.05 is off the scale


def test_minority_growth_uses_gain_times_kappa_minus_lambda():
    ok = _cell()
    r_maj, r_min = PM.minority_rates(ok.cfg, _kappa(ok, 0.4, 0.1))
    gain = 1 - 1 / ok.cfg.n_pairs                                       # tau-scaled loss: gain = 1 - 1/K
    assert r_maj == pytest.approx(gain * 0.4 - ok.cfg.weight_decay)
    assert r_min == pytest.approx(gain * 0.1 - ok.cfg.weight_decay)


def _hand_run(cfg, norms, dominant):
    """A Run whose dictionary is the first d coordinates and whose neuron i points at feature dominant[i] (with a
    small share on the others), with norm norms[i]; two identical replicates."""
    d, d1, m = cfg.d, cfg.d1, len(norms)
    M = torch.eye(d1)[:, :d].unsqueeze(0)
    W = torch.full((1, m, d1), 0.0)
    for i, (n, j) in enumerate(zip(norms, dominant, strict=True)):
        v = torch.full((d1,), 0.01)
        v[j] = 1.0
        W[0, i] = n * v / v.norm()
    M, W = M.repeat(2, 1, 1), W.repeat(2, 1, 1)
    return Run(cfg, [0, 1], M, W, torch.zeros(2, dtype=torch.long), 0, None, None, W.clone())


def _regime(share=0.99, dev=0.001):
    def one(v):
        return torch.tensor([float(v), float(v) * 1.001])
    return Regime(one(share), one(dev), one(dev), one(1.0), one(1.0), 0, (0, 1), (0, 1), 1.0, "fresh")


def _conv(loss=1.0, pos_prob=0.8, change=0.0):
    return Convergence(loss, 4.6, 2.3, pos_prob, 0.5, change, 0.02, 100)


def test_each_measured_premise_fails_alone_and_predictions_never_gate():
    """m = 10 neurons, alpha = 0.1 (one neuron pruned), the minority feature is the last one; the run's step is its
    branch point (inside d = 4's window [4.1, 31.5] at eta = 0.5)."""
    cell = _cell(ds=(4,), m_over_d=2.5, n_minority=1)
    cfg = cell.cfg
    j = cfg.d - 1
    assert PM.metrics.minority_index(cfg) == [j]
    good = _hand_run(cfg, [0.1] + [1.0] * 9, [j] + [0, 1, 2] * 3)      # the smallest neuron is the minority one
    good.step = 20
    prem = PM.measured(good, cfg, _regime(), _conv())
    assert all(p.holds for p in prem.values()), {k: p.value for k, p in prem.items()}
    assert prem["mask"].value == 1.0 and prem["smallest"].value == 1.0
    assert {k for k, p in prem.items() if p.prediction} == {"share", "dominant", "mask", "smallest"}
    assert not any(p.required for p in prem.values() if p.prediction)

    def failed(run, reg, conv=None, predictions=False):
        got = PM.measured(run, cfg, reg, conv or _conv())
        return {k for k, p in got.items() if not p.holds and p.prediction == predictions}

    assert failed(good, _regime(dev=1.0)) == {"lemma_b1"}              # bound 1/d1 = 0.05
    assert failed(good, _regime(), _conv(loss=3.0)) == {"convergence"}   # above 0.5 ln K = 2.3
    assert failed(good, _regime(), _conv(pos_prob=0.3)) == {"convergence"}
    assert failed(good, _regime(), _conv(change=0.1)) == {"convergence"}
    late = _hand_run(cfg, [0.1] + [1.0] * 9, [j] + [0, 1, 2] * 3)
    late.step = 40
    assert failed(late, _regime()) == {"window"}
    assert failed(good, _regime(share=0.5), predictions=True) == {"share"}
    no_minority = _hand_run(cfg, [0.1] + [1.0] * 9, [0] + [0, 1, 2] * 3)
    no_minority.step = 20
    assert failed(no_minority, _regime()) == set()                      # predictions fail, no premise does
    assert failed(no_minority, _regime(), predictions=True) == {"dominant", "mask", "smallest"}
    assert math.isnan(PM.measured(no_minority, cfg, _regime(), _conv())["smallest"].value)   # undefined: not counted
    big = _hand_run(cfg, [2.0] + [1.0] * 8 + [0.1], [j] + [0, 1, 2] * 3)
    big.step = 20
    got = PM.measured(big, cfg, _regime(), _conv())
    assert {k for k, p in got.items() if not p.holds} == {"mask", "smallest"}
    assert got["smallest"].value == 0.0                                # the minority neuron is the largest


def _arm(name, gain, T_ok=True, bound=True, size=2.0):
    def p(k, ok):
        return Premise(k, k, 1.0, "t", ok)
    prem = {"prune_T": p("prune_T", T_ok), "bound": p("bound", bound), "bound_ext": p("bound_ext", bound)}
    g = torch.tensor(gain)
    return PM.Arm(name, torch.full(g.shape, size), 10.0, prem, g, 1.0, 0.5)


def _result(cell, holds: dict, gain=None, arms=None):
    prem = {k: Premise(k, k, 1.0 if ok else 0.0, "t", ok) for k, ok in holds.items()}
    g = None if gain is None else torch.tensor(gain)
    arms = arms if arms is not None else ({} if g is None else {"alg1": _arm("alg1", gain)})
    return PM.CellResult(cell, prem, g, arms=arms, extra={"T4": 100, "loss_T4": 1.0, "ln_K": 4.6})


ALL = dict.fromkeys(PM.CLOSED + PM.MEASURED, True)


def test_conclusion_a_where_every_premise_holds():
    cell = _cell()
    res = [_result(cell, ALL, [0.10, 0.12, 0.11]), _result(cell, {**ALL, "lambda": False}, [0.0, 0.1, -0.1])]
    c = PM.conclusion(res, [], cell.cfg)
    assert (c.kind, c.verdict, c.cells_ok, c.cells_run) == ("a", HOLDS, 1, 2)
    assert "holds" in c.answer and "Where every premise holds" in c.answer
    bad = [_result(cell, ALL, [0.001, -0.001, 0.0])]                   # tight around 0, below effect_tol 0.02
    assert PM.conclusion(bad, [], cell.cfg).verdict == FAILS


def test_a_prediction_that_fails_where_the_premises_hold_makes_the_claim_fail_not_c():
    """Every premise holds and the gain is clear, but the magnitude mask misses the minority neurons and they are
    not the smallest (Remarks 1-2): the claim reads "does not hold" at (a), never the conflict answer (c)."""
    cell = _cell()
    res = [_result(cell, {**ALL, "mask": False, "smallest": False}, [0.10, 0.12, 0.11])]
    c = PM.conclusion(res, [], cell.cfg)
    assert (c.kind, c.verdict) == ("a", FAILS)
    rows = PM.verdict_rows(res, [], cell.cfg)
    pred = {r.id: r for r in rows if r.id.endswith("_map") and r.id != "claim4_map"}
    assert pred["mask_share_map"].verdict == FAILS and pred["minority_smallest_map"].verdict == FAILS
    assert pred["feature_span_map"].verdict == HOLDS
    gain = next(r for r in rows if r.id.startswith("gain_alg1_"))
    assert gain.verdict == HOLDS and "mask_share" not in gain.depends        # a prediction gates nothing
    assert rows[-1].id == "claim4_map" and rows[-1].verdict == FAILS


def test_an_arm_outside_its_own_premises_does_not_decide():
    """The cell's premises hold but the arm ran short of the paper's T (or outside Remark 1's bounds): no pair
    qualifies, the answer is (b) naming the arm premise, and the arm's row keeps its measured verdict."""
    cell = _cell()
    res = [_result(cell, ALL, [0.1, 0.12, 0.11], arms={"alg1": _arm("alg1", [0.1, 0.12, 0.11], T_ok=False)})]
    c = PM.conclusion(res, [], cell.cfg)
    assert c.kind == "b" and "prune_T" in c.binding
    row = PM.judged_arm(res[0], "alg1", cell.cfg)
    assert row.verdict == NOT_COMPARABLE and row.would_be == HOLDS and f"prune_from_t4__alg1_{PM.slug(cell.label)}" \
        in row.depends and [P.premise_of(u) for u in row.unmet] == ["prune_from_t4"]
    res = [_result(cell, ALL, [0.1, 0.12, 0.11], arms={"alg1": _arm("alg1", [0.1, 0.12, 0.11], bound=False)})]
    assert PM.conclusion(res, [], cell.cfg).binding == ["bound"]


def test_conclusion_b_names_the_binding_premise_and_what_it_needs():
    cell = _cell()
    rates = [{"d": 10, "ratio": 0.8, "growth_min": 0.17, "lambda_bottom": 0.03, "m_needed": 4176.0,
              "lucky_threshold": 0.79}, {"d": 10, "ratio": 0.3, "growth_min": 0.06, "lambda_bottom": 0.03,
              "m_needed": math.inf, "lucky_threshold": 5.6}]
    res = [_result(cell, {**ALL, "lucky": False, "dominant": False, "mask": False}, [0.0, 0.0])]
    c = PM.conclusion(res, rates, cell.cfg)
    assert c.kind == "b" and c.verdict == NOT_COMPARABLE and c.binding == ["lucky"]   # predictions never bind
    assert "m ≥ 4,176" in c.text and "lucky set is empty" in c.text


def test_conclusion_c_only_when_premises_conflict():
    cell = _cell()
    # predictions failing in every cell (the minority neurons are not the smallest) are no conflict of premises
    res = [_result(cell, {**ALL, "lucky": False, "mask": False, "smallest": False}, [0.0, 0.0])]
    assert PM.conclusion(res, [], cell.cfg).kind == "b"
    # lambda's range and minority growth exclude each other at every d of the closed-form table
    rates = [{"d": d, "ratio": 0.3, "growth_min": 0.001, "lambda_bottom": 0.01, "m_needed": 1.0,
              "lucky_threshold": 0.5} for d in (10, 20)]
    res = [_result(cell, {**ALL, "growth": False}, [0.0, 0.0])]
    assert PM.conclusion(res, rates, cell.cfg).kind == "c"
    # every cell that converged did so only after Theorem 3.1's window
    res = [_result(cell, {**ALL, "window": False}, [0.0, 0.0]), _result(cell, {**ALL, "convergence": False,
                                                                             "window": True}, [0.0, 0.0])]
    c = PM.conclusion(res, [], cell.cfg)
    assert c.kind == "c" and "after Theorem 3.1's window" in c.text


@pytest.mark.parametrize("kw, name", [({"ds": ()}, "ds"), ({"lambdas": ("huge",)}, "lambdas"),
                                      ({"lambdas": ()}, "lambdas"), ({"weight_decay": 0.0}, "weight_decay"),
                                      ({"ratios": (1.5,)}, "ratios"), ({"star_K": (1,)}, "star_K")])
def test_bad_grid_stops_with_the_parameter_named(kw, name):
    with pytest.raises(ParameterError, match=name):
        PM.PremiseMapConfig(**{**BASE, **kw})


def test_a_cell_runs_and_reports_every_premise_and_arm():
    """The smallest real cell: vanilla to its cap, a control and the arms, every premise present, a finite gain per
    replicate and per arm, one row per arm plus the prediction rows and the claim-4 row, all with ids."""
    cfg = PM.PremiseMapConfig(**{**BASE, "ds": (6,), "m_over_d": 2.0, "n_pairs": 64, "ratios": (0.8,)})
    res = PM.run_cell(cfg.cells()[0])
    assert set(res.premises) == set(PM.CLOSED + PM.MEASURED)
    assert res.gain.shape == (2,) and torch.isfinite(res.gain).all()
    assert res.extra["T4"] in (20, 40) and res.extra["branch"] <= cfg.prune_max
    assert "alg1" in res.arms and all(torch.isfinite(a.gain).all() for a in res.arms.values())
    rows = PM.verdict_rows([res], PM.rate_table(cfg, (6,), (0.8,)), cfg)
    assert rows[-1].claim.startswith("claim 4 on the premise map") and rows[-1].id == "claim4_map"
    claims = [r for r in rows if r.kind != "premise"]
    assert len({r.id for r in rows}) == len(rows) and len(claims) == len(PM.ARMS) + 4 + 1
    # the premise rows: the cell's required premises, then each arm's own (the paper's T; and Remark 1's bound for
    # Algorithm 1's arms), each scoped to its cell (and arm)
    case = PM.slug(res.cell.label)
    want = [f"{p.cid}__{case}" for p in res.premises.values() if p.required and not p.prediction]
    want += [f"{q.cid}__{a}_{case}" for a in PM.ARMS if a in res.arms for q in PM.arm_premises(res.arms[a])]
    # a map where no cell meets every premise adds the premise that fails most, scoped to the map: the prediction
    # rows depend on it
    got = [r.id for r in rows if r.kind == "premise"]
    assert got[:len(want)] == want and (got[len(want):] == []) == res.required_ok()
    assert all(got[-1] in r.depends for r in rows if r.id.endswith("_map") and r.kind != "premise"
               and r.id != "claim4_map") or res.required_ok()


def test_cells_in_two_worker_processes_give_the_numbers_of_one_process():
    """The oracle is the map computed here, one cell after another: two one-thread workers must give the same
    gains, premises and measurements, in the same order."""
    cfg = PM.PremiseMapConfig(**{**BASE, "ds": (6,), "m_over_d": 2.0, "n_pairs": 32, "ratios": (0.8,),
                                 "lambdas": ("book", "top"), "star_m_over_d": (), "star_K": (), "star_alpha": (),
                                 "star_n_minority": ()})
    here = PM.run_map(cfg.replace(workers=1), progress=False)
    two = PM.run_map(cfg.replace(workers=2), progress=False)
    assert [r.cell.label for r in two] == [r.cell.label for r in here] and len(here) == 2
    for a, b in zip(here, two, strict=True):
        assert torch.equal(a.gain, b.gain) and a.extra == b.extra
        assert {k: (repr(p.value), p.holds) for k, p in a.premises.items()} == {k: (repr(p.value), p.holds)
                                                                               for k, p in b.premises.items()}


def test_smallest_share_counts_minority_neurons_among_the_k_smallest():
    """Hand-made: 2 minority-dominant neurons (norms 0.2 and 3.0) among 6; the 2 smallest are 0.1 (majority) and
    0.2 (minority), so the share is 1/2; with the minority neurons at 0.1 and 0.2 it is 1; none: NaN."""
    cell = _cell(ds=(4,), m_over_d=1.5, n_minority=1)
    j = cell.cfg.d - 1
    run = _hand_run(cell.cfg, [0.2, 3.0, 0.1, 1.0, 1.0, 1.0], [j, j, 0, 1, 2, 0])
    assert PM.metrics.smallest_share(run.W, run.M, cell.cfg).tolist() == [0.5, 0.5]
    run = _hand_run(cell.cfg, [0.2, 0.1, 2.0, 1.0, 1.0, 1.0], [j, j, 0, 1, 2, 0])
    assert PM.metrics.smallest_share(run.W, run.M, cell.cfg).tolist() == [1.0, 1.0]
    none = _hand_run(cell.cfg, [1.0] * 6, [0, 1, 2, 0, 1, 2])
    assert torch.isnan(PM.metrics.smallest_share(none.W, none.M, cell.cfg)).all()


def test_a_recorded_cell_is_read_back_marked_and_foreign_records_are_named(tmp_path):
    """premise_cell: a ci-sized cell run as a campaign unit, written as a record, read back as a CellResult marked
    "recorded"; a record under other code is named stale, one under other parameters names them; none is used."""
    from pathlib import Path

    from imbalanced_cl.book.records.record import source_code
    from imbalanced_cl.campaign import premise_cells as PC
    from imbalanced_cl.campaign import record
    from imbalanced_cl.campaign.units import Unit
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "src").symlink_to(root / "src")
    cfg = PM.PremiseMapConfig(**{**BASE, "ds": (6,), "record_ds": (8,), "m_over_d": 2.0, "n_pairs": 64,
                                 "ratios": (0.8,), "lambdas": ("mid", "top")})
    mid, top = cfg.record_cells()
    code = source_code(tmp_path, PC.ENTRY)
    folder = tmp_path / "results" / "campaign" / "ci"
    unit = Unit(PC.KIND, PC.cell_name(mid), "ci", PC.cell_params(cfg, mid), code)
    record.write(folder, unit, PC.run(unit, root), {"device": "cpu", "commit": "abc1234", "wall_s": 1.0})
    stale = Unit(PC.KIND, PC.cell_name(top), "ci", PC.cell_params(cfg, top), "other code")
    record.write(folder, stale, {}, {"commit": "0ld0ld0", "wall_s": 1.0})
    other = Unit(PC.KIND, PC.cell_name(top), "other", PC.cell_params(cfg.__class__(**{**BASE, "ds": (6,),
                 "record_ds": (8,), "m_over_d": 2.0, "n_pairs": 64, "ratios": (0.8,), "lambdas": ("mid", "top"),
                 "R": 3}), top), code)
    record.write(folder.parent / "other", other, {}, {"commit": "1a2b3c4", "wall_s": 1.0})
    got, notes = PC.recorded_cells(cfg, tmp_path)
    assert [r.cell.label for r in got] == [mid.label] and got[0].source == "recorded" and got[0].ran
    assert set(got[0].premises) == set(PM.CLOSED + PM.MEASURED) and got[0].gain.shape == (2,)
    assert set(got[0].arms) and got[0].extra["T4"] > 0
    assert any("0ld0ld0" in n and "stale" in n for n in notes)
    assert any("1a2b3c4" in n and "parameters differ in R" in n for n in notes)
    again, _ = PC.recorded_cells(cfg.replace(threads=cfg.threads + 1, progress=not cfg.progress), tmp_path)
    assert [r.cell.label for r in again] == [mid.label]      # how a cell runs (threads, progress) is not what it is


def test_a_star_cell_in_record_star_is_planned_for_the_campaign_and_not_trained_by_the_notebook():
    """record_star moves whole star axes from the notebook's own cells to the campaign's: the m/d = 500 cell at the
    default (about 20 of notebook 10's 26 minutes on 2 cores); the unit's parameters name the cell back exactly."""
    from imbalanced_cl.campaign import premise_cells as PC
    cfg = PM.PremiseMapConfig(**{**BASE, "ds": (6,), "record_ds": (), "star_m_over_d": (3.0, 4.0), "star_K": (96,),
                                 "record_star": ("m/d",)})
    star = [c for c in cfg.record_cells() if c.axis == "m/d"]
    assert [c.m for c in star] == [18, 24] and not [c for c in cfg.cells() if c.axis == "m/d"]
    assert [c.K for c in cfg.cells() if c.axis == "K"] == [96]                  # other axes still trained here
    for c in star:
        back = PC.cell_of(cfg, PC.cell_params(cfg, c)["cell"])
        assert (back.label, back.m, back.cfg) == (c.label, c.m, c.cfg)
    r = max(cfg.ratios)                                                         # the star sits at the largest ratio
    assert [PC.cell_name(c) for c in star] == [f"d6_mid_r{r:g}_m_over_d3", f"d6_mid_r{r:g}_m_over_d4"]
    plane = cfg.cell("plane", 6, "mid", 0.8)
    # plane records keep their key
    assert PC.cell_params(cfg, plane)["cell"] == {"d": 6, "lam_name": "mid", "ratio": 0.8}
    trained_here = cfg.replace(record_star=())
    assert [c.m for c in trained_here.cells() if c.axis == "m/d"] == [18, 24] and not trained_here.record_cells()
    with pytest.raises(ParameterError, match="record_star"):
        cfg.replace(record_star=("m/d", "depth"))


def test_a_recorded_cell_is_judged_again_by_todays_rules_from_its_values():
    """A recorded cell's conditions are judged again from their recorded values at the cell's config (issue 47:
    verdicts are recomputed): a λ the record called inside the range is outside [d^-1.49, d^-1.01] at d = 10 (by
    hand: [0.0324, 0.0977]); a mask share of 0.85 holds against mask_share_min 0.8 though it was recorded failing
    against 0.9; an arm's prune_T reads its own T; share, whose rule reads its interval, keeps its recorded
    judgement."""
    from imbalanced_cl.campaign.premise_cells import cell_result
    cell = PM.PremiseMapConfig(**{**BASE, "mask_share_min": 0.8}).cell("plane", 10, "mid", 1.0)
    def item(value, holds):
        return {"text": "t", "value": value, "threshold": "as recorded", "holds": holds, "required": True}
    rec = {"payload": {"premises": {"lambda": item(1e-3, True), "mask": item(0.85, False), "share": item(0.5, True)},
                       "gain": [0.1, 0.2], "seconds": 1.0, "extra": {},
                       "arms": {"alg1": {"size": [1.0, 1.0], "T": 30.0, "premises": {"prune_T": item(20.0, True)},
                                         "gain": [0.0, 0.1], "loss": 1.0, "pos_prob": 0.5}}}}
    got = cell_result(cell, rec)
    lo, hi = 10 ** -1.49, 10 ** -1.01
    assert (round(lo, 4), round(hi, 4)) == (0.0324, 0.0977)
    assert got.premises["lambda"].holds is False and got.premises["lambda"].threshold == f"[{lo:.3g}, {hi:.3g}]"
    assert got.premises["mask"].holds is True and got.premises["mask"].threshold.startswith("≥ 0.8")
    assert got.premises["share"].holds is True and got.premises["share"].threshold == "as recorded"
    assert got.arms["alg1"].premises["prune_T"].holds is False     # 20 steps < T = 30


def test_an_oracle_arm_does_not_depend_on_remark_1s_bound_in_notebook_10_as_in_notebook_04():
    """An oracle prunes a chosen set (Theorem 3.2 given its pruned set), so Remark 1's bound, which makes a magnitude
    mask fall inside M*_j*, does not gate it: outside both bounds, the oracle's row keeps its verdict while
    Algorithm 1's row is not comparable; notebook 04's oracle rows depend on the same premises, without the bound."""
    from imbalanced_cl.claims.pruning import verdicts as PV
    cell = _cell()
    gain = [0.1, 0.12, 0.11]
    arms = {"alg1": _arm("alg1", gain, bound=False), "oracle_lucky": _arm("oracle_lucky", gain, bound=False)}
    res = _result(cell, ALL, gain, arms=arms)
    alg, oracle = PM.judged_arm(res, "alg1", cell.cfg), PM.judged_arm(res, "oracle_lucky", cell.cfg)
    own = {a: [P.premise_of(d) for d in r.depends] for a, r in (("alg1", alg), ("oracle", oracle))}
    assert alg.verdict == NOT_COMPARABLE and "alpha_bound" in own["alg1"]
    assert oracle.verdict == HOLDS and not {"alpha_bound", "alpha_bound_extended"} & set(own["oracle"])
    assert "prune_from_t4" in own["oracle"] and PM.arm_ok(arms["oracle_lucky"]) and not PM.arm_ok(arms["alg1"])
    from types import SimpleNamespace

    from imbalanced_cl.claims.pruning import Oracles, OracleArm, PruningConfig
    arm = OracleArm(size=torch.ones(3), gain=torch.tensor(gain))
    made = SimpleNamespace(oracles=Oracles(magnitude=arm, lucky=arm, dominant=arm))
    for r in PV.oracle_rows(made, PruningConfig()):
        assert "prune_from_t4" in r.depends and not {"alpha_bound", "alpha_bound_extended"} & set(r.depends), r.id


def test_an_arms_judged_row_is_its_row_in_the_cells_gated_table_whatever_another_arm_fails():
    """judged_arm gates an arm by its cell's premises and its own only: the same row as in the whole cell's gated
    table, when the other arm's own premise (the paper's T) fails and when the cell's premise fails."""
    cell = _cell()
    for holds, t_ok in ((ALL, False), ({**ALL, "lambda": False}, True)):
        arms = {"alg1": _arm("alg1", [0.10, 0.12, 0.11]),
                "oracle_lucky": _arm("oracle_lucky", [0.10, 0.12, 0.11], T_ok=t_ok)}
        res = _result(cell, holds, [0.1, 0.12, 0.11], arms=arms)
        table = {r.id: r for r in V.gate(PM.cell_rows(res, cell.cfg), "10_premise_map")}
        for a in arms:
            mine = PM.judged_arm(res, a, cell.cfg)
            assert mine == table[mine.id]
        assert table["gain_oracle_lucky_" + PM.case_id(res)].verdict == NOT_COMPARABLE
        assert table["gain_alg1_" + PM.case_id(res)].verdict == (HOLDS if t_ok is False else NOT_COMPARABLE)


# --- The conclusion's words and numbers on hand-made cells (the mutation pass found them reached by no assertion)

def test_the_neurons_needed_read_as_a_number_a_power_of_ten_or_why_there_is_none():
    assert PM.reach.m_needed_text({"m_needed": 4176.0, "lucky_threshold": 0.99}) == "m ≥ 4,176"
    assert PM.reach.m_needed_text({"m_needed": 9_999_999.0}) == "m ≥ 9,999,999"
    assert PM.reach.m_needed_text({"m_needed": 1e7}) == "m ≥ about 10^7"
    assert PM.reach.m_needed_text({"m_needed": 3.2e12}) == "m ≥ about 10^13"
    assert PM.reach.m_needed_text({"m_needed": math.inf, "lucky_threshold": 0.5}) == "m > 10^300"
    assert PM.reach.m_needed_text({"m_needed": 5.0, "lucky_threshold": 1.0}) == \
        "no m (Def. B.1's threshold c1 log d/d = 1.00 ≥ 1: the lucky set is empty)"


def test_what_the_binding_premises_would_need_reads_per_ratio_and_per_d():
    cell = _cell()
    rates = [{"d": 20, "ratio": 0.8, "m_needed": 50.0}, {"d": 10, "ratio": 0.3, "m_needed": 2e8},
             {"d": 10, "ratio": 0.8, "m_needed": 12.0}]
    bound = cell.cfg.d1 ** -cell.cfg.regime_grad_poly
    def with_dev(dev, ran=True):
        r = _result(cell, ALL, [0.1, 0.1])
        r.premises["lemma_b1"] = Premise("lemma_b1", "t", dev, "t", dev <= bound)
        return r if ran else dataclasses.replace(r, gain=None)         # a cell not trained
    res = [with_dev(2 * bound), with_dev(3 * bound), with_dev(100 * bound, ran=False)]
    k = cell.K * 9                               # the larger deviation of the two run cells: K (3 bound / bound)²
    assert PM.reach.reach_text(rates, res, cell.cfg) == (
        "at ρ = 0.3, one minority lucky neuron needs d=10: m ≥ about 10^8; "
        "at ρ = 0.8, one minority lucky neuron needs d=20: m ≥ 50; d=10: m ≥ 12; "
        f"at d={cell.d}, Lemma B.1's bound needs K ≈ {math.ceil(k):,} pairs per step (largest over its cells)")
    no_b1 = _result(cell, {k: v for k, v in ALL.items() if k != "lemma_b1"}, [0.1, 0.1])
    assert PM.reach.reach_text([], [no_b1], cell.cfg) == ""


def test_premises_conflict_only_where_every_d_or_every_converged_cell_says_so_and_the_sentence_names_the_closest():
    cell = _cell()
    rates = [{"d": 10, "growth_min": 0.001, "lambda_bottom": 0.01}, {"d": 20, "growth_min": 0.01,
                                                                    "lambda_bottom": 0.01}]   # equal: still below
    assert PM.conflicts([], rates) == ["at every d the minority growth gain·κ_min lies below d^-1.49 (closest: d=20, "
                                       "0.01 vs 0.01)"]
    assert PM.conflicts([], rates + [{"d": 40, "growth_min": 0.02, "lambda_bottom": 0.01}]) == []
    assert PM.conflicts([], []) == []
    late = [_result(cell, {**ALL, "window": False}, [0.0]), _result(cell, {**ALL, "window": False}, [0.0]),
            _result(cell, {**ALL, "convergence": False}, [0.0])]          # not converged: does not count
    late[1].extra["T4"] = 250
    assert PM.conflicts(late, []) == ["every one of the 2 cells whose vanilla run converged did so after Theorem "
                                      "3.1's window (T4 = 100, 250 steps)"]
    assert PM.conflicts(late + [_result(cell, ALL, [0.0])], []) == []    # one converged cell inside the window
    assert PM.conflicts([dataclasses.replace(late[0], gain=None)], []) == []        # a cell not trained


def test_answers_b_and_c_read_as_written_with_the_premises_that_fail_everywhere():
    cell = _cell()
    rates = [{"d": 10, "ratio": 0.8, "growth_min": 0.17, "lambda_bottom": 0.03, "m_needed": 40.0}]
    res = [_result(cell, {**ALL, "lucky": False, "lambda": False}, [0.0, 0.0]),
           _result(cell, {**ALL, "lucky": False}, [0.0, 0.0])]
    c = PM.conclusion(res, rates, cell.cfg)
    assert (c.kind, c.binding, c.cells_ok, c.cells_run) == ("b", ["lucky"], 0, 2)
    k = cell.K * (1.0 / cell.cfg.d1 ** -cell.cfg.regime_grad_poly) ** 2        # _result's deviation is 1.0
    assert c.text == ("(b) no cell of 2 meets every premise; failing in every cell: lucky minority. Beyond this "
                      "map's reach: at ρ = 0.8, one minority lucky neuron needs d=10: m ≥ 40; at "
                      f"d={cell.d}, Lemma B.1's bound needs K ≈ {math.ceil(k):,} pairs per step (largest over its "
                      "cells).")
    assert c.fact == "no cell of 2 meets every premise; lucky minority fails in every cell"
    mixed = [_result(cell, {**ALL, "lucky": False}, [0.0]), _result(cell, {**ALL, "lambda": False}, [0.0])]
    c = PM.conclusion(mixed, [], cell.cfg)
    assert c.text == ("(b) no cell of 2 meets every premise; failing in every cell: none in every cell. Beyond this "
                      f"map's reach: at d={cell.d}, Lemma B.1's bound needs K ≈ {math.ceil(k):,} pairs per step "
                      "(largest "
                      "over its cells).")
    assert c.fact == "no cell of 2 meets every premise"
    clash = [{"d": 10, "ratio": 0.3, "growth_min": 0.001, "lambda_bottom": 0.01, "m_needed": 1.0}]
    c = PM.conclusion([_result(cell, {**ALL, "growth": False, "lucky": False}, [0.0])], clash, cell.cfg)
    assert (c.kind, c.verdict, c.binding) == ("c", NOT_COMPARABLE, ["growth", "lucky"])
    assert c.text == ("(c) no cell of 1 meets every premise, and premises conflict: at every d the minority growth "
                      "gain·κ_min lies below d^-1.49 (closest: d=10, 0.001 vs 0.01). Premises failing in every "
                      "cell: minority grows, lucky minority.")
    assert c.fact == "no cell of 1 meets every premise, and two premises conflict"


def test_answer_a_reads_as_written_with_the_pairs_where_every_premise_holds():
    cell = _cell()
    good = _result(cell, ALL, [0.10, 0.12, 0.11], arms={"alg1": _arm("alg1", [0.10, 0.12, 0.11]),
                                                         "oracle_lucky": _arm("oracle_lucky", [0.0, 0.01, -0.01])})
    c = PM.conclusion([good, _result(cell, {**ALL, "lambda": False}, [0.0])], [], cell.cfg)
    assert (c.kind, c.verdict, c.cells_ok, c.cells_run, c.binding) == ("a", HOLDS, 1, 2, [])
    assert c.text == (f"(a) every premise holds at 2 (cell, arm) pairs of 2 cells run: {cell.label} / alg1, "
                      f"{cell.label} / oracle_lucky. Algorithm 1 there: holds; the oracle masks there: inconclusive; "
                      "the predictions (mask share, minority smallest, minority-dominant exist, feature span): holds, "
                      "holds, holds, holds. Claim 4: holds.")
    assert c.fact == "every premise holds at 2 (cell, arm) pairs, and there the claim holds"


def test_a_cell_label_becomes_a_snake_case_id():
    assert PM.slug("d=10 λ=mid ρ=1 bias onset=eq33") == "d_10_lam_mid_r_1_bias_onset_eq33"
    assert PM.slug("d=10 · α=0.3 · m/d=500 · K=2048") == "d_10_a_0_3_m_per_d_500_k_2048"
    assert PM.slug("  (ρ) ") == "r"


def test_claim_4_in_plain_words_reads_as_written():
    """answer_text on three cells: the plane's centre (every premise holds; Algorithm 1 clear, one oracle unsettled,
    the other excluded), the eq. (33) onset (not converged, no minority-dominant neuron, Algorithm 1 unsettled) and
    no bias (λ off its range, no arm run)."""
    cfg = PM.PremiseMapConfig(**{**BASE, "star_bias_onset": ("eq33", "none")})
    plane, eq33, none = cfg.cells()
    arms = {"alg1": _arm("alg1", [0.10, 0.12, 0.11]), "oracle_lucky": _arm("oracle_lucky", [0.0, 0.01, -0.01]),
            "oracle_dominant": _arm("oracle_dominant", [-0.2, -0.21, -0.22])}
    res = [_result(plane, ALL, [0.1, 0.12, 0.11], arms=arms),
           _result(eq33, {**ALL, "convergence": False, "dominant": False}, [0.0, 0.01],
                   arms={"alg1": _arm("alg1", [0.0, 0.01, -0.01])}),
           _result(none, {**ALL, "lambda": False}, [0.0], arms={})]
    res[1].extra["loss_T4"] = 3.0                                        # 3.0 / ln K = 0.65
    text = PM.answer_text(res, "a", "holds", cfg)
    assert text == (
        "Where every premise holds, claim 4 holds. Convergence (Thm 3.1 eq. (11), the start of Thm F.1): the vanilla "
        "run converged at 2 of 3 cells; its lowest loss at the branch point was 0.22 ln K (d=10 λ=mid ρ=1, T4 = 100 "
        "steps). Theorem 3.2 as a conditional statement (the pruned set chosen, not found by norm): oracle P = M*_j* "
        "(Def. B.1; Thm F.1's hypothesis): gain above 0.02 at 0 of 1 cells, excluded at 0, unsettled at 1; oracle "
        "P = minority-dominant neurons at T4: gain above 0.02 at 0 of 1 cells, excluded at 1, unsettled at 0. "
        "Algorithm 1's magnitude mask: Algorithm 1 at the map's α: gain above 0.02 at 1 of 2 cells, excluded at 0, "
        "unsettled at 1; Algorithm 1, α·m = |M*_j*| (Remark 1, strict): not run at any cell; Algorithm 1, α·m = "
        "|{i: j* ∈ N_i}| (Remark 1, extended): not run at any cell. Predictions over the cells meeting every "
        "premise: mask on minority at 1 of 1, minority smallest at 1 of 1, minority neurons at 1 of 1, feature span "
        "at 1 of 1. Bias onset (a modelling choice the paper leaves open): crossing: loss at T4 0.22 ln K, "
        "minority-dominant neurons in every replicate: yes, gain of the oracle P = minority-dominant -0.21; eq33: "
        "loss at T4 0.65 ln K, minority-dominant neurons in every replicate: no, gain of the oracle P = "
        "minority-dominant not run (no such neuron in some replicate); no bias: loss at T4 0.22 ln K, "
        "minority-dominant neurons in every replicate: yes, gain of the oracle P = minority-dominant not run (no "
        "such neuron in some replicate).")
    assert PM.answer_text(res, "b", "x", cfg).startswith(
        "No cell meets every premise of Theorem 3.2, so the claim is not decided here (b). Convergence")
    assert PM.answer_text(res, "c", "x", cfg).startswith("No cell meets every premise, and two premises conflict (c). ")
    assert PM.answer_text(res[:1], "a", "holds", cfg).endswith("feature span at 1 of 1.")     # no onset cell: no line
    assert PM.answer_text([], "b", "x", cfg) == "No cell of the map was trained, so claim 4 was not tested."
    judged_over_run = PM.answer_text(res[1:], "b", "x", cfg)
    assert "Predictions over the cells run: " in judged_over_run           # no cell meets every premise


def test_notebook_10s_table_reads_as_written_when_no_cell_meets_every_premise():
    """Three cells: two run without a minority lucky neuron (one also off λ's range and missing the mask), one not
    run. The table: each cell's arm rows (run, empty set, or cell not run), the blocking premise row (the premise
    failing in the most run cells), the prediction rows over the cells run, gated by it, and claim 4's row."""
    cfg = PM.PremiseMapConfig(**{**BASE, "ratios": (1.0, 0.5), "star_bias_onset": ("eq33",)})
    a, b, c = cfg.cells()
    res = [_result(a, {**ALL, "lucky": False}, [0.1, 0.12, 0.11], arms={"alg1": _arm("alg1", [0.1, 0.12, 0.11])}),
           _result(b, {**ALL, "lucky": False, "lambda": False, "mask": False}, [0.0, 0.01], arms={}),
           _result(c, ALL)]
    rows = {r.id: r for r in PM.verdict_rows(res, [], cfg) if r.kind != "premise" or r.id.endswith("__map")}
    sa, sb, sc = (PM.case_id(r) for r in res)
    run = rows[f"gain_alg1_{sa}"]
    assert (run.claim, run.source, run.predicted, run.n, run.verdict, run.band_lo) == (
        f"Algorithm 1 at the map's α: pruning raises A_j*/A_maj over its control at {a.label}: gain in A_j*/A_maj, "
        "pruned − control", "Thm 3.2(c), Thm F.1, Remarks 1-3",
        "> 0.02 (Thm 3.2(c): the minority coefficient becomes dominant)", 3, V.HOLDS, 0.02)
    assert run.depends[-2:] == (f"prune_from_t4__alg1_{sa}", f"alpha_bound__alg1_{sa}")   # its own, after its cell's
    empty = rows[f"gain_oracle_lucky_{sb}"]
    assert (empty.verdict, empty.rule, empty.kind, empty.n) == (
        V.UNTESTED, "its set of neurons is empty in some replicate (nothing to prune)", "paper", 0)
    assert math.isnan(empty.measured) and empty.source == "Thm 3.2(c), Thm F.1, Remarks 1-3"
    assert rows[f"gain_alg1_{sc}"].rule == "the cell was not run" and f"gain_oracle_lucky_{sc}" not in rows
    block = rows["lucky_exist__map"]
    assert (block.claim, block.source, block.predicted, block.measured, block.verdict, block.rule) == (
        "no cell meets every premise; lucky minority fails in 2 of 2 cells run: share of cells run that meet it",
        "Def. B.1, Lemma B.2(c), Thm 3.2(a)", "all 2 cells run", 0.0, V.FAILS, "holds when all 2 cells run meet it "
        "(0 do)")
    mask = rows["mask_share_map"]
    assert (mask.claim, mask.predicted, mask.measured, mask.lo, mask.hi, mask.n, mask.verdict, mask.depends) == (
        "prediction: mask (over the map): share of cells where it holds", "holds at every cell", 0.5, 0.5, 0.5, 2,
        V.PARTLY, ("lucky_exist__map",))
    assert mask.rule == ("holds at 1 of 2 cells run (a count over the map's designed grid: no sampling interval); "
                         "per cell: t") and (mask.band_lo, mask.band_hi) == (1.0, 1.0)
    assert mask.source == P.condition("mask_share").source and mask.quantity == "fraction"
    top = rows["claim4_map"]
    assert (top.measured, top.verdict) == (pytest.approx(0.11), V.NOT_COMPARABLE)       # the cell meeting most
    assert top.premise == (f"cells meeting every premise: 0 of 2; shown: Algorithm 1's gain at {a.label}, the cell "
                           "meeting the most premises")
    assert top.claim == ("claim 4 on the premise map: pruning raises A_j*/A_maj over its control where Theorem 3.2's "
                         "premises hold: Algorithm 1's gain in A_j*/A_maj, pruned − control, at the cell meeting the "
                         "most premises")
    assert top.predicted == "(a), (b) or (c); the claim itself: gain > 0.02" and top.kind == "paper"
    assert top.depends[-2:] == ("prune_from_t4", "alpha_bound") and "lucky_exist" in top.depends
    assert top.band_words == "the gain > 0.02 at the cells meeting every premise (answer (a))"
    none = {r.id: r for r in PM.verdict_rows([_result(c, ALL)], [], cfg)}["claim4_map"]
    assert math.isnan(none.measured) and none.premise.endswith("shown: no cell run")
    assert PM.verdicts.blocking_rows([_result(c, ALL)]) == []
