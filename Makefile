# `make test` is the one command that installs what the tests need and runs them all;
# `.ci/run` calls exactly it.
PYTHON ?= python3

.PHONY: install install-test test lit pytest

install:
	$(PYTHON) -m pip install -q -e .

install-test:
	$(PYTHON) -m pip install -q -e ".[dev]"

lit:
	lit -q tests/filecheck

pytest:
	$(PYTHON) -m pytest -q

test: install-test lit pytest
