"""Shared by the Python tests: one Library per session (libtensorgl from $TENSORGL_LIB, or the
install the imported package belongs to), the plugins under test and the random seed.

Run by ctest (python_tests), or by hand from a build tree:
    PYTHONPATH=<build>/python TENSORGL_LIB=<build>/lib/libtensorgl.so /usr/bin/python3 -m pytest tests/python
"""
import os
import random
import zlib

import numpy as np
import pytest

import tensorgl as tg

# Plugins the package tests run on (every one must load and have a device: not skipped).
PLUGINS = [p.strip() for p in os.environ.get("TGL_TEST_PLUGINS", "cpu,gles").split(",") if p.strip()]
SEED = int(os.environ.get("TGL_TEST_SEED", random.SystemRandom().randrange(1 << 31)))
SEED_NOTE = " (TGL_TEST_SEED=%d)" % SEED  # for failure messages


def pytest_report_header(config):
    return "tensorgl %s from %s; plugins %s; TGL_TEST_SEED=%d" % (tg.__version__, os.path.dirname(tg.__file__),
                                                                  ",".join(PLUGINS), SEED)


@pytest.fixture(scope="session")
def lib():
    return tg.default_library()


@pytest.fixture
def rng(request):
    """A random stream per test from TGL_TEST_SEED and the test's name (the seed shows in the header)."""
    return np.random.default_rng([SEED, zlib.crc32(request.node.name.encode())])


def assert_sums_close(got, ref, terms_abs_sum, rel):
    """Sums of f32 terms (got) against references (float64): each may cancel towards 0, while its
    rounding is relative to the terms' magnitudes, so |got - ref| is held to `rel` of the sum of
    |terms| (terms_abs_sum, elementwise), not to the result itself."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    err, bound = np.abs(got - ref), rel * np.asarray(terms_abs_sum, np.float64)
    bad = ~(err <= bound)
    assert not bad.any(), "%d of %d sums off by more than %g of their terms' magnitude: got %s, want %s, " \
        "allowed %s%s" % (bad.sum(), bad.size, rel, got[bad][:4], ref[bad][:4], bound[bad][:4], SEED_NOTE)
