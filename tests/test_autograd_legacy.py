"""torch.autograd's remaining names against real PyTorch: the gradient-layout
policy switch and the legacy NestedIOFunction."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .differential import differential


@pytest.mark.parametrize("enable", [True, False, None])
def test_enforce_grad_layout_policy(enable):
    def run(lib):
        p = lib.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
        q = lib.empty(3, 4).t().requires_grad_()
        if enable is None:      # as a decorator
            @lib.autograd.enforce_grad_layout_policy(False)
            def step():
                (p * 2).sum().backward()
                (q * 3).sum().backward()
            step()
        else:
            with lib.autograd.enforce_grad_layout_policy(enable):
                (p * 2).sum().backward()
                (q * 3).sum().backward()
        (q * 3).sum().backward()    # accumulation: .grad keeps its layout
        return p.grad.stride(), q.grad.stride(), p.grad.tolist(), q.grad.tolist()
    # (the layout warning is once per process: compared in a fresh one below)
    differential(run, warning_types=())


_LAYOUT_WARNING = """
import warnings, {lib} as lib
warnings.simplefilter("always")
q = lib.empty(3, 4).t().requires_grad_()
with warnings.catch_warnings(record=True) as caught:
    with lib.autograd.enforce_grad_layout_policy(False):
        (q * 3).sum().backward()
    (q * 3).sum().backward()
    (q * 3).sum().backward()
print([str(w.message) for w in caught])
"""


def test_layout_warning_once_per_process():
    def run(lib):
        return subprocess.run([sys.executable, "-c", _LAYOUT_WARNING.format(lib=lib)],
                              capture_output=True, text=True, check=True).stdout
    assert run("glasstorch") == run("torch")


def test_nested_io_function_is_the_legacy_protocol():
    def run(lib):
        class Mul(lib.autograd.function.NestedIOFunction):
            def forward_extended(self, a, b):
                return a * b

            def backward_extended(self, g):
                return g, g
        x = lib.ones(2, requires_grad=True)
        outcomes = []
        for call in (lambda: Mul()(x, x), lambda: Mul.apply(x, x)):
            try:
                call()
            except AttributeError as exc:
                outcomes.append(str(exc))
        return outcomes, issubclass(lib.autograd.NestedIOFunction, lib.autograd.Function)
    differential(run, warning_types=())
