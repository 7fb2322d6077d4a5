"""Parameters: one home for every default (the config dataclass), generated cells, and loud unknown names."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import papermill as pm
import pytest
import yaml

from imbalanced_cl.book.build import cells
from imbalanced_cl.book.build.runner import toc_notebooks
from imbalanced_cl.validate import ParameterError, check_int

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [nb for nb in toc_notebooks(ROOT) if cells.config_class(nb) is not None]


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_parameters_cell_is_generated_from_the_config_class(nb):
    """The cell equals what `python -m imbalanced_cl params` writes, so the dataclass is the only home of a default."""
    assert cells.config_class(nb) is not None, f"{nb.stem} names no config class in its metadata"
    assert cells.sync(nb), f"{nb.stem}: parameters cell out of date; run `python -m imbalanced_cl params`"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_parameter_has_a_type_and_a_help_text(nb):
    """What `papermill --help-notebook` shows: a type and a one-line meaning for every parameter."""
    declared = pm.inspect_notebook(str(nb))
    untyped = [k for k, v in declared.items() if v["inferred_type_name"] in ("None", "")]
    silent = [k for k, v in declared.items() if not v["help"].strip()]
    assert not untyped and not silent, (untyped, silent)
    assert set(declared) == set(cells.config_class(nb).field_names())


def test_profiles_list_only_what_they_change():
    data = yaml.safe_load((ROOT / "profiles.yaml").read_text())
    for prof, block in data.items():
        for nb, kv in (block or {}).items():
            path = next(p for p in toc_notebooks(ROOT) if p.stem == nb)
            defaults = cells.declared_defaults(cells.config_class(path))
            unknown = set(kv) - set(defaults)
            same = [k for k, v in kv.items() if k in defaults and defaults[k] == v]
            assert not unknown, f"{prof}/{nb}: not parameters: {sorted(unknown)}"
            assert not same, f"{prof}/{nb}: equal to the default, so written twice: {same}"


def test_allowed_range_is_read_off_validate():
    @dataclasses.dataclass(frozen=True)
    class Toy:
        n: int = 3      # how many
        k: int = 1      # fewer than n

        def __post_init__(self):
            check_int("n", self.n, 1, 9)
            check_int("k", self.k, 0, self.n - 1, given=f"n={self.n}")

    assert cells.allowed(Toy, "n") == "an integer in [1, 9]"
    assert cells.allowed(Toy, "k") == "an integer in [0, 2]"
    src = cells.parameters_source(Toy)
    assert "n: int = 3  # how many; in [1, 9]" in src
    with pytest.raises(ParameterError, match=r"k=5 is invalid \(given n=3\)"):
        Toy(k=5)


@pytest.mark.parametrize("rng, note, want", [
    ("an integer in [1, inf]", "", "≥ 1"),
    ("a number in (0.0, inf]", "", "> 0"),
    ("a number in (0.0, 1.0]", "", "in (0, 1]"),
    ("a number in [0.5, 2.25)", "", "in [0.5, 2.25)"),
    ("True or False", "", ""),                                              # the type says it
    ("one of ('fresh', 'fixed')", '"fresh": new pairs; "fixed": one set', ""),   # the note names every option
    ("one of ('fresh', 'fixed')", '"fresh": new pairs', 'one of "fresh", "fixed"'),
    ("a non-empty list", "", "a non-empty list"),                          # not an interval: as validate says it
])
def test_a_parameters_range_is_written_short_beside_its_type(rng, note, want):
    assert cells.short_range(rng, note) == want


def test_a_short_range_stays_on_one_line():
    """A note that fills the line wraps before the range, never inside it ("> 0" is not split after ">")."""
    from imbalanced_cl.claims.pruning import PruningConfig           # long notes, several of them full to the edge
    lines = cells.parameters_source(PruningConfig).splitlines()
    assert not any(line.rstrip().endswith((" >", " ≥", " in")) for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_raw_papermill_refuses_an_unknown_parameter(nb, tmp_path):
    """papermill itself only warns about an undeclared -p name; the notebook's check cell makes it fail."""
    out = subprocess.run([sys.executable, "-m", "papermill", str(nb), str(tmp_path / "out.ipynb"),
                          "-p", "eps_minn", "3", "-k", "python3", "--cwd", str(ROOT)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    assert "unknown parameter 'eps_minn'" in out.stderr + out.stdout


def test_the_colab_install_line_names_the_repository_of_config_yml(tmp_path):
    """The repository's address has one home, _config.yml: every notebook's Colab install line reads it (`params`
    writes it there), and a fork that changes the one line gets its own address in every notebook."""
    import shutil
    url = cells.repository_url(ROOT)
    with_install = [nb for nb in toc_notebooks(ROOT) if "imbalanced-cl @ git+" in nb.read_text()]
    assert len(with_install) >= 10
    for nb in with_install:
        assert f'imbalanced-cl @ git+{url}\\"' in nb.read_text() and cells.sync(nb), nb.stem
    fork = "https://example.org/someone/imbalanced-cl"
    copy = tmp_path / with_install[0].name
    shutil.copy(with_install[0], copy)
    assert not cells.sync(copy, url=fork)
    cells.sync(copy, write=True, url=fork)
    assert f"git+{fork}" in copy.read_text() and f"git+{url}" not in copy.read_text() and cells.sync(copy, url=fork)
