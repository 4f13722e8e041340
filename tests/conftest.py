"""Shared fixtures: real PyTorch as the oracle, hypothesis profiles sized for CI.

Profiles are named ``glasstorch-*``: Hypothesis registers its own ``ci`` profile
and loads it when ``CI`` is set; re-registering that name makes its settings
chain recurse.  CI runs are derandomized (the same examples every run, so a
green CI is reproducible); local runs explore new examples each time.
"""
import os

import pytest
from hypothesis import HealthCheck, settings

_COMMON = dict(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("glasstorch-dev", **_COMMON)
settings.register_profile("glasstorch-ci", derandomize=True, database=None, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or
                      ("glasstorch-ci" if os.environ.get("CI") else "glasstorch-dev"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cpu_paths: a result that depends on the CPU code path (ATen's capability, "
        "oneDNN's ISA, numpy's SIMD dispatch); tests/test_cpu_paths.py re-runs these tests "
        "under each other path")


@pytest.fixture(scope="session")
def torch():
    import torch as real_torch
    return real_torch


@pytest.fixture(scope="session")
def gt():
    import glasstorch
    return glasstorch


@pytest.fixture
def compiled_graphs(monkeypatch):
    """Every Inductor CompiledGraph made in the test, in order (Dynamo reset first)."""
    import glasstorch
    from glasstorch._inductor import compile_fx
    seen = []
    real = compile_fx.CompiledGraph.__init__

    def recording(self, gm, name):
        real(self, gm, name)
        seen.append(self)
    monkeypatch.setattr(compile_fx.CompiledGraph, "__init__", recording)
    glasstorch._dynamo.reset()
    return seen
