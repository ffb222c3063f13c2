# `make test` is the one command that installs what the tests need and runs them all;
# `.ci/run` calls exactly it.
PYTHON ?= python3
HEXAGON_TOOLS = clang-19 llvm-mc-19 ld.lld-19 llvm-nm-19 qemu-hexagon
HEXAGON_PACKAGES = qemu-user clang-19 lld-19 llvm-19
# Debian's PoCL (LLVM 15) beside the pip one: pocl-binary-distribution's LLVM 14 cannot
# compile for CPUs newer than it (AMD family 26), where the OpenCL tests need this one
POCL_ICD = /etc/OpenCL/vendors/pocl.icd
POCL_PACKAGE = pocl-opencl-icd

.PHONY: install install-test install-apt front-door test layers lit pytest docs docs-gen

install:
	$(PYTHON) -m pip install -q -e .

# Debian's packages the tests need: the DSP path's toolchain (LLVM 19's Hexagon
# assembler and linker, QEMU user mode) and a PoCL that compiles on any x86-64 CPU
install-apt:
	@missing=""; for t in $(HEXAGON_TOOLS); do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	packages=""; [ -z "$$missing" ] || packages="$(HEXAGON_PACKAGES)"; \
	[ -f $(POCL_ICD) ] || packages="$$packages $(POCL_PACKAGE)"; \
	if [ -n "$$packages" ]; then \
		echo "installing:$$packages"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q $$packages; \
	fi

# the README's main job in a fresh virtual environment with no extras, as a new user runs it
front-door:
	PYTHON=$(PYTHON) bash .ci/front-door

install-test: install-apt
	$(PYTHON) -m pip install -q -e ".[dev]"

# the import-linter contract of pyproject.toml: imports point down the layers. The tree is
# the `mobile_opt` package; its link `mobile_opt -> .` in the tree, which lint-imports finds
# first (it puts the working folder on the path), makes this tree the one checked, whatever
# an installed mobile_opt points at (or where none is installed)
layers:
	lint-imports

lit:
	lit -q tests/filecheck

pytest:
	$(PYTHON) -m pytest -q

# the MkDocs site (mkdocs.yml, docs/) into site/; --strict fails on any warning, such as a
# broken link or a page missing from the tree
docs:
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict --quiet

# the generated pages: the dialect and CLI references from the code, the results pages from
# bench/results/*.json (tests/test_docs.py fails while the committed ones are stale)
docs-gen:
	cd docs/gen && $(PYTHON) dialects.py && $(PYTHON) cli.py && $(PYTHON) results.py

test: front-door install-test layers lit docs pytest
