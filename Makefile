# The two commands: `make run` serves on http://127.0.0.1:8000, `make test` runs every test.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000
# Exact versions of everything `make` installs (runtime, postgres, bench and dev extras).
LOCK := requirements-dev.lock

.PHONY: run test lint fmt install lock bench-quick clean

$(STAMP): pyproject.toml setup.py $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# The lock pins torch==2.13.0: pip takes the CPU build of that release lying on disk.
	$(PY) -m pip install -q -r $(LOCK)
	# The project itself, editable, built with the setuptools the lock just installed.
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/gpu-advisor db upgrade
	$(VENV)/bin/gpu-advisor serve --host $(HOST) --port $(PORT)

# Two processes (pytest-xdist): CI has two cores; a module's tests stay together so its
# shared app (tests/conftest.py: read_client) is built once.
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadscope

lint: $(STAMP)
	$(VENV)/bin/ruff check app tests benchmarks migrations
	$(VENV)/bin/ruff format --check app tests benchmarks migrations
	$(VENV)/bin/mypy

fmt: $(STAMP)
	$(VENV)/bin/ruff check --fix app tests benchmarks migrations
	$(VENV)/bin/ruff format app tests benchmarks migrations

# Re-resolve the lock files after changing dependencies in pyproject.toml:
# requirements.lock (web image), requirements-bench.lock (bench/worker image),
# requirements-dev.lock (make, CI). torch is written without the local "+cpu" label so
# the same pin takes the CPU build here and PyPI's CUDA build in the bench image.
PIP_COMPILE = $(VENV)/bin/pip-compile -q --no-build-isolation --strip-extras --allow-unsafe \
	--no-emit-index-url --no-emit-find-links --no-emit-trusted-host pyproject.toml
lock: $(STAMP)
	$(PIP_COMPILE) --extra postgres -o requirements.lock
	$(PIP_COMPILE) --extra postgres --extra bench -o requirements-bench.lock
	$(PIP_COMPILE) --extra postgres --extra bench --extra dev -o requirements-dev.lock
	sed -i 's/^torch==\([0-9.]*\)+cpu$$/torch==\1/' requirements-bench.lock requirements-dev.lock

bench-quick: $(STAMP)
	$(VENV)/bin/gpu-advisor bench --profile quick

clean:
	rm -rf $(VENV) var build *.egg-info .pytest_cache .mypy_cache .ruff_cache
