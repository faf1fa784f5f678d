"""Shared by the Python tests: the binding and sample on sys.path, and one Library per session."""
import os
import sys

import pytest

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                 "samples", "python")))

import tensorgl as tg  # noqa: E402


@pytest.fixture(scope="session")
def lib():
    return tg.Library()
