"""Shared pytest setup."""

from __future__ import annotations

import os

import pytest

from mobile_opt.backends.opencl.devices import register_pip_vendors

# the ICD loader reads OCL_ICD_VENDORS at the first platform query of the session:
# make the pip-installed Intel runtime visible before any test asks
register_pip_vendors()


@pytest.fixture(autouse=True, scope="session")
def derived_weight_dir(tmp_path_factory: pytest.TempPathFactory):
    """Weights that passes derive go to a per-session scratch folder, not under $HOME."""
    folder = tmp_path_factory.mktemp("derived-weights")
    previous = os.environ.get("MOBILE_OPT_WEIGHT_DIR")
    os.environ["MOBILE_OPT_WEIGHT_DIR"] = str(folder)
    yield folder
    if previous is None:
        del os.environ["MOBILE_OPT_WEIGHT_DIR"]
    else:
        os.environ["MOBILE_OPT_WEIGHT_DIR"] = previous


@pytest.fixture(scope="session")
def pocl_device():
    """
    The PoCL CPU device that OpenCL tests run on. Without one the tests skip
    locally, but fail under CI=true: CI must never pass by not running them.
    """
    from mobile_opt.backends.opencl.devices import DeviceError, choose_device

    try:
        return choose_device("pocl").device
    except DeviceError as e:
        problem = str(e)
    if os.environ.get("CI") == "true":
        pytest.fail(problem)
    pytest.skip(problem)


@pytest.fixture(scope="session")
def hexagon_toolchain():
    """
    llvm-mc-19, ld.lld-19 and qemu-hexagon. Missing tools skip the Hexagon tests
    locally but fail them under CI=true.
    """
    from mobile_opt.backends.hexagon.harness import APT_PACKAGES, missing_tools

    missing = missing_tools()
    if not missing:
        return
    problem = (
        f"{', '.join(missing)} not found: apt-get install "
        + " ".join(sorted({APT_PACKAGES[m] for m in missing}))
    )
    if os.environ.get("CI") == "true":
        pytest.fail(problem)
    pytest.skip(problem)
