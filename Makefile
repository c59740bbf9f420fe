# recon — run `make help` for the list of targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
# uv from PATH, else the one pip installs into this Python (setup installs it when missing).
UV := $(shell command -v uv 2>/dev/null || echo "$(PYTHON) -m uv")
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.recon-synced
export UV_COMPILE_BYTECODE := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 90

.PHONY: help setup demo screenshot test test-fast test-scale test-deps lint format bench bench-dlt clean

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-10s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml uv.lock
	@command -v uv >/dev/null 2>&1 || $(PYTHON) -m uv --version >/dev/null 2>&1 || \
		{ echo "uv not found: installing it with pip"; $(PYTHON) -m pip install --quiet uv; }
	$(UV) sync --locked
	@touch $(STAMP)

setup: $(STAMP) ## Create .venv from uv.lock (installs uv with pip if missing; idempotent)
	@# recon's own modules as bytecode too (uv compiles only the installed packages; with
	@# PYTHONDONTWRITEBYTECODE=1 each command compiled them again: ~0.2 CPU-s a night)
	@$(BIN)/python -m compileall -q src pipelines > /dev/null

demo: setup ## Run the nightly job against the bundled sandbox API and show where the results are
	$(BIN)/recon nightly --sandbox

# The README's picture: the first screen (1280 x 1400) of the newest report, by headless Chromium.
SCREENSHOT := docs/report.png
REPORT_HTML := reports/latest/report.html
CHROMIUM := $(shell command -v chromium || command -v chromium-browser || command -v google-chrome 2>/dev/null)

screenshot: ## Regenerate docs/report.png from reports/latest/report.html (headless Chromium; `make demo` first if no report)
	@if [ -z "$(CHROMIUM)" ]; then \
		echo "screenshot: Chromium is not installed (no chromium, chromium-browser or google-chrome on PATH):"; \
		echo "  install it with \`make test-deps\` (apt-get, as root) or \`apt-get install -y chromium\`, then run \`make screenshot\` again"; \
		exit 1; fi
	@[ -f $(REPORT_HTML) ] || $(MAKE) --no-print-directory demo
	@# --no-sandbox: Chromium refuses to start as root without it; the page is a local file
	@"$(CHROMIUM)" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
		--window-size=1280,1400 --screenshot="$(abspath $(SCREENSHOT))" "file://$$(readlink -f $(REPORT_HTML))" \
		>/dev/null 2>&1 || { echo "screenshot: Chromium failed on $(REPORT_HTML)"; exit 1; }
	@echo "screenshot: $(SCREENSHOT) ($$(du -k $(SCREENSHOT) | cut -f1) KB) from $$(readlink -f $(REPORT_HTML))"

# What the browser and PostgreSQL tests need from the system, by Debian package name.
TEST_DEPS_PACKAGES := chromium postgresql
# `make test` and `make test-fast` leave out the scale tests; `make test-fast` also everything
# that starts a server, a browser, a database or a full nightly.
FAST_MARKERS := not slow and not integration and not browser and not database and not scale
# Extra pytest options for the test targets, e.g. `make test-fast PYTEST_ARGS=--durations=40`.
PYTEST_ARGS ?=

# pytest keeps each test module's assertion-rewritten code in __pycache__ only when Python may
# write bytecode; with PYTHONDONTWRITEBYTECODE=1 (set on these machines and in CI) every worker
# rewrote every test module on every run (~2.5 CPU-s a worker). The test targets allow it.
TEST_BYTECODE := PYTHONDONTWRITEBYTECODE=
# Three workers on two cores: a worker of `make test` keeps ~0.8 of a core busy on average (it
# waits on its servers, subprocesses, the sandbox's latency and the hostile API's stalls), so
# two left ~20% of the machine idle; the third fills it (night/, reliability/, accounts/,
# bank/, warehouse/, one after the other while other jobs ran: 501 s with two workers, 396 s
# with three, for 7% more CPU).
TEST_WORKERS ?= 3
TEST_ALL = $(TEST_BYTECODE) $(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup -m "not scale" $(PYTEST_ARGS)

test: setup test-deps ## Lint and run every test but the scale ones (unit, contract, integration, slow, browser, database)
	@# lint beside the tests, not before them: mypy holds one core for ~10 s on a fresh clone
	@# while the tests keep both busy. Its output follows the tests'; a lint failure still fails.
	$(info $(TEST_ALL))
	$(info beside it: $(LINT))
	@lint_log=$$(mktemp); { $(LINT); } >"$$lint_log" 2>&1 & linting=$$!; \
		$(TEST_ALL); tested=$$?; \
		wait $$linting; linted=$$?; cat "$$lint_log"; rm -f "$$lint_log"; \
		if [ $$linted != 0 ]; then echo "make test: lint failed"; fi; \
		[ $$tested = 0 ] && [ $$linted = 0 ]

test-fast: setup ## The fast tests only (no server, browser, database, full nightly or scale test; < 90 s)
	$(TEST_BYTECODE) $(BIN)/pytest -n 2 -m "$(FAST_MARKERS)" $(PYTEST_ARGS)

test-scale: setup ## The heavy scale tests: the 200k and 1M-payment load runs, 20 kill -9s, kill -9 through Prefect (minutes; CI runs it beside `make test`)
	RECON_RELIABILITY_LOAD=1 $(BIN)/pytest -n 2 --dist loadgroup -m scale $(PYTEST_ARGS)

test-deps: ## Install Chromium and PostgreSQL for the browser and database tests (apt-get, as root; once)
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	if [ -z "$$missing" ]; then echo "test-deps: $(TEST_DEPS_PACKAGES) present"; \
	elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "test-deps: cannot install$$missing here (needs apt-get as root): their tests will be SKIPPED"; \
	else \
		echo "test-deps: installing$$missing"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

LINT := $(BIN)/ruff check src pipelines tests benchmarks && \
	$(BIN)/ruff format --check src pipelines tests benchmarks && $(BIN)/mypy src pipelines

lint: setup ## ruff (lint + format check) and mypy --strict on src/ and pipelines/
	$(LINT)

format: setup ## Apply ruff's formatting and safe fixes
	$(BIN)/ruff check --fix src pipelines tests benchmarks
	$(BIN)/ruff format src pipelines tests benchmarks

bench: setup ## Benchmarks: ceiling vs recon vs dlt, the night, matching 1M x 1M, four accounts, the fixed cost with a standing Prefect server, real volume (1M payments with ~13% findings, 1M books x 1M payments, every analyst command)
	@# dlt, the peer recon is measured against, is in the `bench` dependency group only
	$(UV) sync --locked --inexact --group bench
	$(BIN)/python -m benchmarks.run
	$(BIN)/python -m benchmarks.matching_bench
	$(BIN)/python -m benchmarks.accounts --repeat 3
	$(BIN)/python -m benchmarks.workbench_bench --findings 1000000
	@# issue 37: a night's fixed cost with a standing Prefect server (PREFECT_API_URL), ≤ 3 s
	$(BIN)/python -m benchmarks.fixed_cost --standing
	@# issue 38: nights that look like production, and the analysts' commands on them (minutes)
	$(BIN)/python -m benchmarks.volume --payments 1000000

clean: ## Remove the venv, caches and local run output
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache data reports/*/ reports/index.html reports/latest
