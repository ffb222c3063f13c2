"""Shared pytest setup."""

from __future__ import annotations

import os

import pytest


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
