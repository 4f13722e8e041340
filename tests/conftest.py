"""Shared fixtures: real PyTorch as the oracle, hypothesis profiles sized for CI."""
import os

import pytest
from hypothesis import settings, HealthCheck

settings.register_profile("ci", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=10, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def torch():
    import torch as real_torch
    return real_torch


@pytest.fixture(scope="session")
def gt():
    import glasstorch
    return glasstorch
