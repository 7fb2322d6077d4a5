"""Configs composed of parts (parts.py): reads by flat name, construction, copies, storage, and the shape of every
notebook's config (no part over 25 fields, every field documented in its part's docstring)."""
from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import ClassVar

import pytest

from imbalanced_cl import parts
from imbalanced_cl.book.build.cells import config_class, parameters_source
from imbalanced_cl.campaign import typed
from imbalanced_cl.sim.config import MODEL_PARTS, SimConfig, lambda_at
from imbalanced_cl.validate import ParameterError, check_int

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + [ROOT / "book" / "regime.ipynb"]
MAX_FIELDS = 25


@dataclasses.dataclass(frozen=True)
class Size:
    """A toy model part: n."""

    ROLE: ClassVar[str] = "model"
    n: int = 3          # a size

    def validate(self, cfg) -> None:
        check_int("n", self.n, 1)


@dataclasses.dataclass(frozen=True)
class Steps:
    """A toy protocol part: k, which may not exceed the model's n."""

    ROLE: ClassVar[str] = "protocol"
    k: int = 2          # at most n

    def validate(self, cfg) -> None:
        check_int("k", self.k, 0, cfg.n)


class Toy(parts.Composed):
    """Two parts; DEFAULTS changes the model's n."""

    PARTS = {"size": Size, "steps": Steps}
    DEFAULTS = dict(n=5)


def test_fields_read_by_flat_name_are_the_parts_fields():
    t = Toy(k=4)
    assert (t.n, t.k) == (5, 4) == (t.size.n, t.steps.k)
    assert Toy.field_names() == ["n", "k"]
    assert Toy.defaults() == {"n": 5, "k": 2}
    assert t.to_dict() == {"n": 5, "k": 4}
    assert Toy.role_of("n") == "model" and Toy.role_of("k") == "protocol"
    with pytest.raises(AttributeError):
        t.m


def test_each_part_checks_its_fields_against_the_whole_config():
    with pytest.raises(ParameterError, match="parameter n=0"):
        Toy(n=0)
    with pytest.raises(ParameterError, match="parameter k=6"):        # k <= n: a check across parts
        Toy(k=6)
    assert Toy(n=6, k=6).k == 6


def test_an_unknown_name_is_one_line_with_the_nearest():
    with pytest.raises(ParameterError, match="unknown parameter 'kk' for Toy: did you mean k?"):
        Toy(kk=1)
    from imbalanced_cl.claims.pruning import PruningConfig
    with pytest.raises(ParameterError, match="did you mean mask_share_min"):     # a judging tolerance, misspelt
        PruningConfig.from_namespace({"mask_share_mn": 0.8}, check_size=False)


def test_frozen_equal_hashable_and_replaced_by_a_new_config():
    t = Toy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.n = 2
    assert t == Toy() and hash(t) == hash(Toy()) and t != Toy(k=1)
    u = t.replace(n=7, k=7)
    assert (u.n, u.k, t.n) == (7, 7, 5)
    with pytest.raises(ParameterError):
        t.replace(k=9)


def test_a_part_named_like_a_field_is_refused():
    with pytest.raises(TypeError, match="has the name of a field"):
        type("Clash", (parts.Composed,), {"PARTS": {"n": Size}})


def test_pickle_and_the_stored_form_give_the_same_config_without_checking_again():
    t = Toy(n=4, k=3)
    assert pickle.loads(pickle.dumps(t)) == t
    stored = Toy.assemble({"n": 1, "k": 5})           # k > n: a stored config is not validated again
    assert (stored.n, stored.k) == (1, 5)
    cfg = SimConfig(d=12, lambda_rule="top")
    arrays: dict = {}
    form = typed._encode(cfg, arrays, "cfg")
    assert form["fields"] == cfg.to_dict()
    back = typed._decode(form, arrays)
    assert back == cfg and type(back) is SimConfig


def test_lambda_rule_is_derived_again_on_replace():
    cfg = SimConfig(d=10, lambda_rule="mid")
    assert cfg.weight_decay == pytest.approx(10 ** -1.25)
    assert cfg.replace(d=40).weight_decay == pytest.approx(lambda_at("mid", 40))
    assert cfg.replace(lambda_rule="value", weight_decay=0.002).weight_decay == 0.002


def test_simconfig_is_exactly_the_model_parts():
    names = [f.name for part in MODEL_PARTS.values() for f in dataclasses.fields(part)]
    assert SimConfig.field_names() == names and len(set(names)) == len(names)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_config_is_parts_of_at_most_25_documented_fields(nb):
    cls = config_class(nb)
    assert issubclass(cls, parts.Composed), cls
    for name, part in cls.PARTS.items():
        names = [f.name for f in dataclasses.fields(part)]
        assert len(names) <= MAX_FIELDS, (cls.__name__, name, len(names))
        assert part.ROLE in parts.ROLES, (part, part.ROLE)
        undocumented = [n for n in names if n not in (part.__doc__ or "")]
        assert not undocumented, (part.__name__, undocumented)
        assert hasattr(part, "validate"), part
    assert set(cls.DEFAULTS) <= set(cls.field_names())
    assert not any(issubclass(cls, part) for part in cls.PARTS.values())       # composed, not inherited
    assert not issubclass(cls, SimConfig) or cls is SimConfig


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_parameters_cell_lists_each_field_under_its_parts_role(nb):
    cls = config_class(nb)
    text = parameters_source(cls)
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "≡" not in text and "(see below)" not in text      # papermill's help shows the start of every note
    from imbalanced_cl.book.build.cells import ROLE_HEADERS
    heads = {r: text.find(ROLE_HEADERS[r]) for r in parts.ROLES}
    order = sorted((i, r) for r, i in heads.items() if i >= 0)
    for name in cls.field_names():
        at = text.index(f"\n{name}: ")
        under = [r for i, r in order if i < at][-1]
        assert under == cls.role_of(name), (name, under)


def test_a_field_wins_over_a_base_attribute_of_its_name():
    from imbalanced_cl.claims.explorer import ExplorerConfig
    cfg = ExplorerConfig(nsr=0.7)
    assert cfg.nsr == 0.7 == cfg.to_dict()["nsr"]                   # the slider's value, not sigma_xi^2 * d1
    assert SimConfig(sigma_xi=0.1, d1=50).nsr == pytest.approx(0.5)   # the derived NSR where no field hides it


def test_a_note_breaks_before_its_formula_not_inside_it():
    from imbalanced_cl.book.build.cells import _line
    head = "x: int = 1"
    assert _line(head, "ambient dimension per feature (d1 = 5d, as notebook 08)") == [
        "x: int = 1  # ambient dimension per feature", "#   (d1 = 5d, as notebook 08)"]
    assert _line(head, "scale of the rate: Pr(z ≠ 0) = min(1, p)")[0] == "x: int = 1  # scale of the rate:"
    assert _line(head, "the bias at T1, b_i(T1) = c ||w||")[0] == "x: int = 1  # the bias at T1,"
    assert _line(head, "T1 = first step")[0] == "x: int = 1  # (see below)"      # nothing stands before the formula
