# The two entry points of the README: `make dashboard` and `make test`.
# Both set up a virtual environment in .venv on first use, from the lock file (uv.lock, resolved
# once with `uv lock` and committed): the same versions on every machine, installed by uv in
# parallel. Only Python and make are needed: uv itself is pip-installed into the venv first.
# Everything is compiled to bytecode at install time (`--compile-bytecode`, compileall): uv does
# not by default, and a shell with PYTHONDONTWRITEBYTECODE=1 would otherwise compile every
# imported module again at each start (litellm alone: seconds for each CLI command).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
UV_VERSION := 0.13.8
export LITELLM_LOCAL_MODEL_COST_MAP := True
# uv must use the venv's Python, never download one.
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: dashboard test lint bench lock

$(UV):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# The dashboard needs the runtime packages only; the tests add the `test` extra. `--inexact`
# keeps what the other target installed (and uv itself).
$(VENV)/.runtime: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --inexact --no-progress --compile-bytecode --python $(PY)
	$(PY) -m compileall -q -j 0 app.py core pages
	touch $@

$(VENV)/.installed: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --inexact --no-progress --compile-bytecode --extra test --extra ray \
		--python $(PY)
	$(PY) -m compileall -q -j 0 app.py core pages
	touch $@ $(VENV)/.runtime

# After changing the dependencies in pyproject.toml: resolve them again into uv.lock.
lock: | $(UV)
	$(UV) lock

dashboard: $(VENV)/.runtime
	$(VENV)/bin/scorelab serve --server.headless true

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m mypy

# The storage tests also run against PostgreSQL: .ci/postgres.sh starts a server on 127.0.0.1
# (installing Debian's package if needed) and prints its URL. CI (CI=true) must have it; on a
# machine where it cannot start, those tests are skipped with a message.
# The Mastra tests (tests/mastra) run real Mastra from npm: .ci/mastra.sh installs node when
# missing and `npm ci`s the pinned packages; without them those tests are skipped, except in CI.
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
	bash .ci/mastra.sh "$$pg_url" || [ "$${CI:-}" != "true" ] || \
		{ echo "make test: node and the Mastra packages could not be installed, and CI needs them" >&2; exit 1; }; \
	SCORELAB_TEST_POSTGRES_URL="$$pg_url" $(PY) -m pytest

bench: $(VENV)/.installed
	for script in bench/[!_]*.py; do echo "== $$script"; $(PY) $$script || exit 1; done
