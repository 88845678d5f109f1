"""Shared fixtures: the installed flexio package, fio and pandas (required in CI through
FLEXIO_REQUIRE_FIO=1 and FLEXIO_REQUIRE_PANDAS=1, skipped with the reason otherwise)."""

import os
import shutil

import pytest

import flexio


def _required(var):
    return os.environ.get(var) == "1"


@pytest.fixture(scope="session", autouse=True)
def _installed_package():
    # The tests are of the installed wheel, not of the source tree's python/flexio
    # (which has no extension module).
    import flexio._flexio as ext

    assert "site-packages" in flexio.__file__, f"flexio imported from {flexio.__file__}, not an installed wheel"
    assert ext.VERSION.startswith("flexio-")


@pytest.fixture
def fio():
    exe = shutil.which("fio")
    if exe is None:
        if _required("FLEXIO_REQUIRE_FIO"):
            pytest.fail("fio is not installed and FLEXIO_REQUIRE_FIO=1")
        pytest.skip("fio is not installed (FLEXIO_REQUIRE_FIO=1 makes this a failure)")
    return exe


@pytest.fixture
def pandas():
    try:
        import pandas as pd
    except ImportError:
        if _required("FLEXIO_REQUIRE_PANDAS"):
            pytest.fail("pandas is not installed and FLEXIO_REQUIRE_PANDAS=1")
        pytest.skip("pandas is not installed (FLEXIO_REQUIRE_PANDAS=1 makes this a failure)")
    return pd


@pytest.fixture
def null_job():
    """A short null-engine job's options."""
    return dict(name="nullrr", ioengine="null", rw="randread", bs="4k", size="16M")
