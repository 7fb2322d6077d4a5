# Two commands do everything from a fresh clone: `make book` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PROFILE ?= default

.PHONY: venv book test bench clean gpu-check

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(STAMP)

book: venv
	$(PY) -m imbalanced_cl book --profile $(PROFILE) $(if $(FRESH),--fresh)

# The numerics-sensitive tests (sim/, claims/, records) a second time on another CPU kernel path (MKL's portable
# kernels, ATen without vector units): a test that asserts the bits of one formulation against another fails here on
# any host, not only on the kind of CPU CI happens to meet (Intel and AMD round differently).
ISA_VARIANT := MKL_CBWR=COMPATIBLE ATEN_CPU_CAPABILITY=default
NUMERIC_TESTS := tests/test_core.py tests/test_science_*.py tests/test_decoupling.py tests/test_claims_*.py \
	tests/test_prune.py tests/test_pruning.py tests/test_census.py tests/test_appendix.py tests/test_premise_map.py \
	tests/test_regime.py tests/test_checkpoint.py tests/test_record_stability.py

test: venv
	$(PY) -m ruff check .
	$(PY) -m pytest
	$(ISA_VARIANT) $(PY) -m pytest -q -p no:cacheprovider -m "not slow and not cuda" $(NUMERIC_TESTS)

bench: venv
	$(PY) -m benchmarks

# On a CUDA machine: the CUDA tests, the GPU step benchmark, then `paper` campaign units until the budget ends, in one
# call under 9 minutes (src/imbalanced_cl/campaign/gpu.py). Without CUDA it prints one line and exits 0.
gpu-check: venv
	$(PY) -m imbalanced_cl.campaign.gpu

clean:
	rm -rf _build

# Mutation testing of the model-and-training layer (src/imbalanced_cl/sim/ but regime.py; config in pyproject.toml [tool.mutmut]).
# Long (tens of minutes on 2 cores); results are cached in mutants/, so a second run only redoes changed code.
# One thread per test process: mutmut forks its workers, and a fork after OpenMP has started its pool hangs.
.PHONY: mutation
mutation: venv
	mkdir -p mutants
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 nice -n 10 $(VENV)/bin/mutmut run --max-children 2 $(MUTANTS) > mutants/run.log 2>&1 || (tail -c 3000 mutants/run.log; exit 1)
	$(VENV)/bin/mutmut export-cicd-stats
	$(VENV)/bin/mutmut results
	$(PY) -c "import json; s = json.load(open('mutants/mutmut-cicd-stats.json')); \
	k, n = s['killed'] + s['timeout'], s['total'] - s['skipped']; \
	print(f'mutation score: {k}/{n} killed = {100 * k / max(n, 1):.1f}% (survived {s[\"survived\"]}, ' \
	      f'no test reaches {s[\"no_tests\"]}, timeouts {s[\"timeout\"]} count as killed, as in mutmut badge)')"
	$(PY) tests/mutation_scores.py mutants

# The Python packages a lent GPU machine lacks (its image has Python 3.12, torch, numpy, scipy, matplotlib, but no
# Jupyter, papermill or Dask), as wheels for Python 3.12 at the versions requirements.txt pins, in .whl/ (ignored
# by git). There: pip install --no-index --no-deps --target /tmp/site .whl/*.whl; export PYTHONPATH=/tmp/site.
GPU_WHEELS := papermill nbformat nbclient jupyter_client jupyter_core ipykernel ipython ipython_pygments_lexers \
	traitlets pyzmq tornado comm debugpy jedi parso matplotlib-inline prompt_toolkit wcwidth pexpect ptyprocess \
	stack-data executing asttokens pure_eval platformdirs fastjsonschema jsonschema jsonschema-specifications \
	referencing rpds-py tenacity entrypoints nest-asyncio2 dask distributed partd locket zict tblib
.PHONY: gpu-wheels
gpu-wheels:
	mkdir -p .whl
	for p in $(GPU_WHEELS); do grep -i -E "^$$p==" requirements.txt; done > .whl/requirements-gpu.txt
	$(PYTHON) -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
	  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
	  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_26_x86_64 \
	  --platform manylinux_2_24_x86_64 -d .whl -r .whl/requirements-gpu.txt
	du -sh .whl
