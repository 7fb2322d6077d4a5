# Two commands do everything from a fresh clone: `make book` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PROFILE ?= default

.PHONY: venv book test bench clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(STAMP)

book: venv
	$(PY) -m imbalanced_cl book --profile $(PROFILE)

test: venv
	$(PY) -m ruff check .
	$(PY) -m pytest

bench: venv
	$(PY) -m benchmarks

clean:
	rm -rf _build
