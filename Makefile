# The two commands: `make run` serves on http://127.0.0.1:8000, `make test` runs every test.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint fmt install bench-quick clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# Pin torch first: the CPU build 2.13.0 is what the project's range is meant to take.
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/gpu-advisor serve --host $(HOST) --port $(PORT)

test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check app tests benchmarks migrations
	$(VENV)/bin/mypy

fmt: $(STAMP)
	$(VENV)/bin/ruff check --fix app tests benchmarks migrations
	$(VENV)/bin/ruff format app tests benchmarks migrations

bench-quick: $(STAMP)
	$(VENV)/bin/gpu-advisor bench --profile quick

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
