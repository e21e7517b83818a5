"""Fixtures shared by strata's pytest suites; helpers live in support.py."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)
