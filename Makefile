# One command each: `make demo` (the main job), `make test` (everything), `make lint`, `make bench`.
# Both set up a virtual environment in .venv on first use; nothing else is needed but python3 >= 3.11
# (make test also installs the system packages the editor tests use: scripts/system-deps.sh).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test system-deps lint typecheck pytest bench serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(STAMP)

# The main job: route a message with the built-in defaults and show the decision and its chain.
# A config and data folder that do not exist: your own routing.yaml, profiles or learned
# patterns must not change what the demo shows (nothing is created there).
DEMO_ENV := SWITCHMAN_CONFIG_DIR=$(CURDIR)/.demo-builtin/config SWITCHMAN_DATA_DIR=$(CURDIR)/.demo-builtin/data
demo: $(STAMP)
	$(DEMO_ENV) $(BIN)/switchman route "write a commit message for the login fix" --assume-configured
	$(DEMO_ENV) $(BIN)/switchman route "review the architecture of the auth service" --assume-configured --unavailable anthropic:claude-opus-4-7

# Every check there is: lint, types, unit + end-to-end tests (Neovim and VS Code included).
test: system-deps lint typecheck pytest

# Neovim, chromium, ripgrep, ... for the editor tests: installed with apt-get as root, else named.
system-deps:
	@bash scripts/system-deps.sh

lint: $(STAMP)
	$(BIN)/ruff check engine server tests bench

# mypy cannot follow the editable-install import hook that maps engine/ -> switchman.engine,
# so it reads the sources through a tree of symlinks with the installed names.
typecheck: $(STAMP)
	mkdir -p .typecheck/switchman
	ln -sfn ../../engine .typecheck/switchman/engine
	ln -sfn ../../server .typecheck/switchman/server
	MYPYPATH=.typecheck $(BIN)/mypy -p switchman.engine -p switchman.server
	MYPYPATH=.typecheck $(BIN)/mypy tests bench

# Two pytest-xdist workers (about twice as fast on CI's 2 cores); the editor end-to-end tests stay
# one after another on one of them (the loadgroup scheduler in tests/conftest.py).
# `make pytest PYTEST_WORKERS=0` runs everything in one process, as before.
PYTEST_WORKERS ?= 2
pytest: $(STAMP) system-deps
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

# Every benchmark, each figure beside its reference measured in the same run (a few minutes;
# nothing is downloaded: the editing one compares with yaml-language-server once it is
# installed by `.venv/bin/python bench/bench_editing.py --install-yaml-ls`, and says so until).
bench: $(STAMP)
	$(BIN)/python bench/bench_routing.py
	PYTHONPATH=. $(BIN)/python bench/bench_daemon.py
	PYTHONPATH=. $(BIN)/python bench/bench_load.py
	$(BIN)/python bench/bench_editing.py --edits 300
	PYTHONPATH=. $(BIN)/python bench/bench_delegation.py
	PYTHONPATH=. $(BIN)/python bench/bench_hostile.py
	$(BIN)/python bench/bench_session_watch.py

serve: $(STAMP)
	$(BIN)/switchman serve

clean:
	rm -rf $(VENV) .typecheck .mypy_cache .ruff_cache .pytest_cache build *.egg-info
