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

.PHONY: help setup demo test test-fast lint format bench bench-dlt clean

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-10s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml uv.lock
	@command -v uv >/dev/null 2>&1 || $(PYTHON) -m uv --version >/dev/null 2>&1 || \
		{ echo "uv not found: installing it with pip"; $(PYTHON) -m pip install --quiet uv; }
	$(UV) sync --locked
	@touch $(STAMP)

setup: $(STAMP) ## Create .venv from uv.lock (installs uv with pip if missing; idempotent)

demo: setup ## Run the nightly job against the bundled sandbox API and show where the results are
	$(BIN)/recon nightly --sandbox

test: setup lint ## Lint, then run every test (unit, contract, integration, slow, the 1M-payment load)
	RECON_RELIABILITY_LOAD=1 $(BIN)/pytest -n 2 --dist loadgroup

test-fast: setup ## Run the fast tests only (no slow or integration ones)
	$(BIN)/pytest -m "not slow and not integration" -n 2

lint: setup ## ruff (lint + format check) and mypy --strict on src/ and pipelines/
	$(BIN)/ruff check src pipelines tests benchmarks
	$(BIN)/ruff format --check src pipelines tests benchmarks
	$(BIN)/mypy src pipelines

format: setup ## Apply ruff's formatting and safe fixes
	$(BIN)/ruff check --fix src pipelines tests benchmarks
	$(BIN)/ruff format src pipelines tests benchmarks

bench: setup ## Benchmarks: ceiling vs recon vs dlt (dlt only after `uv sync --locked --group bench`)
	$(BIN)/python -m benchmarks.run

clean: ## Remove the venv, caches and local run output
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache data reports/*/ reports/index.html reports/latest
