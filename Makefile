# The two entry points of the README: `make dashboard` and `make test`.
# Both set up a virtual environment in .venv on first use (and again when pyproject.toml changes).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: dashboard test lint bench

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

dashboard: $(VENV)/.installed
	$(VENV)/bin/streamlit run app.py --server.headless true

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports

test: lint
	$(PY) -m pytest

bench: $(VENV)/.installed
	for script in bench/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done
