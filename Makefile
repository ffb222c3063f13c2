# `make test` is the one command that installs what the tests need and runs them all;
# `.ci/run` calls exactly it.
PYTHON ?= python3
HEXAGON_TOOLS = clang-19 llvm-mc-19 ld.lld-19 llvm-nm-19 qemu-hexagon
HEXAGON_PACKAGES = qemu-user clang-19 lld-19 llvm-19

.PHONY: install install-test install-hexagon test lit pytest

install:
	$(PYTHON) -m pip install -q -e .

# the DSP path's toolchain (Debian): LLVM 19's Hexagon assembler and linker, QEMU user mode
install-hexagon:
	@missing=""; for t in $(HEXAGON_TOOLS); do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing: apt-get install $(HEXAGON_PACKAGES)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q $(HEXAGON_PACKAGES); \
	fi

install-test: install-hexagon
	$(PYTHON) -m pip install -q -e ".[dev]"

lit:
	lit -q tests/filecheck

pytest:
	$(PYTHON) -m pytest -q

test: install-test lit pytest
