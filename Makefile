# Every target creates .venv when it is missing and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: demo test bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $@

demo: $(STAMP)
	$(BIN)/python examples/demo.py

# Branch coverage of src/, the CLI and MCP server processes the tests start included.
COVERAGE_FLOOR := 88
FORKED_TESTS := tests/security/test_child_isolation.py tests/security/test_hardening_process_*.py \
	tests/security/test_nested_*.py tests/process/test_fork.py

test: $(DEV_STAMP)
	$(BIN)/lint-imports --no-cache
	rm -rf .coverage && mkdir -p .coverage
	$(BIN)/coverage run -m pytest
	# The isolation and hostile tests again, every launch forked from the fork server.
	PYTHONPATH=tests $(BIN)/coverage run -m pytest -q -p kits.forkmode $(FORKED_TESTS)
	$(BIN)/coverage combine --quiet
	$(BIN)/coverage report --fail-under=$(COVERAGE_FLOOR)

bench: $(DEV_STAMP)
	$(BIN)/python bench/run.py

lint: $(DEV_STAMP)
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(BIN)/vulture

clean:
	rm -rf $(VENV) .coverage .pytest_cache .mypy_cache .ruff_cache .hypothesis build src/*.egg-info
