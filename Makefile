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

# The storage tests also run against PostgreSQL: .ci/postgres.sh starts a server on 127.0.0.1
# (installing Debian's package if needed) and prints its URL. CI (CI=true) must have it; on a
# machine where it cannot start, those tests are skipped with a message.
# The browser tests drive Debian's Chromium: .ci/chromium.sh installs it when missing (as root).
# Without it they are skipped with a message, except in CI (CI=true), where that fails the run.
test: lint
	@bash .ci/chromium.sh || [ "$${CI:-}" != "true" ] || \
		{ echo "make test: Chromium could not be installed, and CI needs it" >&2; exit 1; }
	@pg_url="$${SCORELAB_TEST_POSTGRES_URL:-}"; \
	if [ -z "$$pg_url" ] && ! pg_url="$$(bash .ci/postgres.sh)"; then \
		if [ "$${CI:-}" = "true" ]; then \
			echo "make test: PostgreSQL could not be started, and CI needs it" >&2; exit 1; \
		fi; \
		echo "make test: no PostgreSQL here, its tests will be skipped" >&2; pg_url=""; \
	fi; \
	echo "make test: PostgreSQL for the storage tests: $${pg_url:-none}"; \
	SCORELAB_TEST_POSTGRES_URL="$$pg_url" $(PY) -m pytest

bench: $(VENV)/.installed
	for script in bench/[!_]*.py; do echo "== $$script"; $(PY) $$script || exit 1; done
