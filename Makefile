# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP_INSTALL := $(PY) -m pip install --disable-pip-version-check -q

.PHONY: run test test-fast lint format clean-db browser-deps cluster-deps

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.base-installed: requirements/base.txt | $(VENV)/bin/python
	$(PIP_INSTALL) -r requirements/base.txt
	touch $@

$(VENV)/.dev-installed: requirements/base.txt requirements/dev.txt | $(VENV)/bin/python
	$(PIP_INSTALL) -r requirements/dev.txt
	touch $(VENV)/.base-installed $@

# Starts the embedded database, migrates, serves web + worker; Ctrl-C stops all of it.
run: $(VENV)/.base-installed
	$(PY) manage.py serve

# Debian's chromium and a CJK font for the browser tests: installed when missing and possible,
# otherwise the command to run is printed and `make test` stops before anything else.
browser-deps:
	@sh scripts/browser-deps.sh

# Debian's redis-server, haproxy and pgbouncer for the cluster drill, the same way.
cluster-deps:
	@sh scripts/cluster-deps.sh

# The official TypeScript MCP SDK for the suite's harness, as its lock pins it (node 20 and npm).
MCP_TS := tests/mcp_ts
$(MCP_TS)/node_modules: $(MCP_TS)/package.json $(MCP_TS)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is missing: install Node.js 20+ with npm (apt-get install nodejs npm), then run make test again." >&2; exit 1; }
	cd $(MCP_TS) && npm ci --no-audit --no-fund
	touch $@

# Test processes side by side (pytest-xdist): the suite mostly waits on served processes, so
# four workers keep two cores busy (a fresh clone: 10 min 43 s, against 11 min 48 s with three).
# Tests that share a module's served process stay on one worker (tests/conftest.py marks them
# for --dist loadgroup). TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 4
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadgroup

# The whole test suite on the embedded database (and the reduced cluster drill, as root), with
# the 25 slowest tests at the end so that a slow new test is seen at once.
test: browser-deps cluster-deps $(VENV)/.dev-installed $(MCP_TS)/node_modules
	$(PY) -m pytest $(PYTEST_PARALLEL) --durations=25

# The inner loop: the in-process tests only (no test marked slow), in under three minutes.
test-fast: browser-deps $(VENV)/.dev-installed $(MCP_TS)/node_modules
	$(PY) -m pytest $(PYTEST_PARALLEL) -m "not slow" --durations=10

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	cd watcher && ../$(VENV)/bin/lint-imports

format: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
