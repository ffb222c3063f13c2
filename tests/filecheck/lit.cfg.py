# -*- Python -*-
# lit configuration of mobile-opt's filecheck tests.
#
# Run from the repository root:   lit -v tests/filecheck
#
# RUN lines call the console tools by name (`mobile-opt`, `mobile-translate`,
# `xdsl-opt`, `filecheck`) and the Python that runs lit as `%python`. Each name is
# substituted by the script installed next to that Python, so the tests exercise
# the same installation as `lit` itself, whatever PATH says; where no script is
# installed the module is run with `%python -m`.

import os
import re
import shutil
import sys

import lit.formats

config.name = "mobile-opt"

# lit's internal shell: portable, and it provides `not`, `env`, `cat`, `rm`,
# `mkdir`, `echo`, `cd` and `diff` without a POSIX shell.
config.test_format = lit.formats.ShTest(execute_external=False)

config.suffixes = [".mlir", ".py"]

# Inputs/ holds helper scripts and data, not tests; Output/ is lit's scratch space.
config.excludes = ["Inputs", "Output", "lit.cfg.py", "lit.site.cfg.py", "__pycache__"]

config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root

_bin_dir = os.path.dirname(sys.executable)


def _tool(name: str, module: str) -> str:
    """The installed console script `name`, or `python -m module` if there is none."""
    for folder in (_bin_dir, None):
        found = shutil.which(name, path=folder) if folder else shutil.which(name)
        if found:
            return found
    return f'"{sys.executable}" -m {module}'


_TOOLS = [
    ("mobile-translate", "mobile_opt.tools.mobile_translate"),
    ("mobile-opt", "mobile_opt.tools.mobile_opt"),
    ("xdsl-opt", "xdsl.tools.xdsl_opt"),
    ("filecheck", "filecheck"),
]

# `%python` must be replaced before lit's own `%p` (the test's folder), which it
# is: lit applies the configured substitutions before its built-in ones.
config.substitutions.append(("%python", f'"{sys.executable}"'))
# helper scripts shared by the tests: make_model.py, exit_status.py, list_dir.py
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
for name, module in _TOOLS:
    # only a whole word in command position: not `%t.mobile-opt.mlir` or `--mobile-opt-x`
    pattern = r"(?<![\w./%-])" + re.escape(name) + r"(?![\w.-])"
    config.substitutions.append((pattern, _tool(name, module)))

# The tests run in a clean environment; pass through what the tools need.
for var in (
    "HOME",
    "PATH",
    "MOBILE_OPT_WEIGHT_DIR",
    "CI",
    "PYTHONPATH",
    "PYENV_VERSION",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "TMPDIR",
):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# Python's own noise must not reach the checked output.
config.environment["PYTHONWARNINGS"] = "ignore"
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
# Weights that passes derive go to a per-run scratch folder unless the caller picks one.
config.environment.setdefault(
    "MOBILE_OPT_WEIGHT_DIR", os.path.join(config.test_exec_root, "Output", "weights")
)
