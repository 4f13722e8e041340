"""torch.nn.utils (gradient clipping, parameters <-> vector) against real PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from .differential import differential, raised


def _params_with_grads(lib, shapes, seed=0, dtypes=None, scale=1.0):
    """Parameters of ``shapes`` with fixed values and gradients (same in both libraries)."""
    rng = np.random.default_rng(seed)
    params = []
    for i, shape in enumerate(shapes):
        dtype = getattr(lib, (dtypes or {}).get(i, "float32"))
        p = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape)).to(dtype))
        p.grad = lib.tensor(rng.standard_normal(shape) * scale).to(dtype)
        params.append(p)
    return params


NORM_TYPES = [2, 2.0, 1, 3.5, 0.5, "inf", float("inf"), -float("inf"), 0]


@pytest.mark.parametrize("norm_type", NORM_TYPES)
@pytest.mark.parametrize("max_norm", [0.1, 1e6])
def test_clip_grad_norm(norm_type, max_norm):
    def scenario(lib):
        params = _params_with_grads(lib, [(3, 2), (4,), (), (2, 2)])
        params.append(lib.nn.Parameter(lib.ones(2)))          # no grad: skipped
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        return total, [p.grad for p in params]
    differential(scenario)


@given(shapes=st.lists(st.lists(st.integers(1, 4), max_size=3).map(tuple), min_size=1,
                       max_size=4),
       seed=st.integers(0, 1000), max_norm=st.floats(0.01, 10), scale=st.floats(0.01, 100))
def test_clip_grad_norm_random(shapes, seed, max_norm, scale):
    def scenario(lib):
        params = _params_with_grads(lib, shapes, seed, scale=scale)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm)
        return total, [p.grad for p in params]
    differential(scenario)


def test_clip_grad_norm_mixed_dtypes_and_single_tensor():
    def scenario(lib):
        params = _params_with_grads(lib, [(3,), (2, 2), (5,)], dtypes={1: "float64"})
        total = lib.nn.utils.clip_grad_norm_(params, 0.5, foreach=False)
        single = _params_with_grads(lib, [(4,)], seed=3)[0]
        total_single = lib.nn.utils.clip_grad_norm_(single, 0.5)
        return total, [p.grad for p in params], total_single, single.grad
    differential(scenario)


def test_clip_grad_norm_from_module_and_empty():
    def scenario(lib):
        lib.manual_seed(0)
        net = lib.nn.Module()
        net.w = lib.nn.Parameter(lib.tensor([[1.0, -2.0], [3.0, 0.5]]))
        (net.w * net.w).sum().backward()
        total = lib.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        none = lib.nn.utils.clip_grad_norm_([], 1.0)
        empty_generator = lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        return total, net.w.grad, none, empty_generator
    differential(scenario)


def test_clip_grad_norm_nonfinite():
    def scenario(lib):
        params = _params_with_grads(lib, [(3,), (2,)])
        with lib.no_grad():
            params[1].grad[0] = float("inf")
        total = lib.nn.utils.clip_grad_norm_(params, 1.0)
        return total, [p.grad for p in params]
    differential(scenario)
    raised(differential(lambda lib: lib.nn.utils.clip_grad_norm_(
        [_nan_grad_param(lib)], 1.0, error_if_nonfinite=True), may_raise=True))


def _nan_grad_param(lib):
    p = lib.nn.Parameter(lib.ones(2))
    p.grad = lib.tensor([float("nan"), 1.0])
    return p


def test_get_total_norm_and_clip_with_norm():
    def scenario(lib):
        params = _params_with_grads(lib, [(3, 2), (4,)])
        grads = [p.grad for p in params]
        total = lib.nn.utils.get_total_norm(grads, norm_type=3.0)
        lib.nn.utils.clip_grads_with_norm_(params, 0.5, total)
        return total, [p.grad for p in params], lib.nn.utils.get_total_norm([])
    differential(scenario)


def test_clip_grad_norm_deprecated_alias():
    def scenario(lib):
        params = _params_with_grads(lib, [(3,)])
        return lib.nn.utils.clip_grad_norm(params, 0.1), params[0].grad
    differential(scenario)


def test_foreach_ops_and_their_errors():
    """The foreach ops clip_grad_norm_ calls: values, autograd and PyTorch's refusals."""
    def scenario(lib):
        a, b = lib.tensor([3.0, 4.0], requires_grad=True), lib.tensor([[1.0, 2.0]])
        norms = lib._foreach_norm([a, b])
        norms[0].backward()
        grads = [lib.tensor([1.0, 2.0]), lib.tensor([3.0])]
        lib._foreach_mul_(grads, lib.tensor(0.5))
        return norms, a.grad, grads, lib._foreach_norm([a.detach(), b], 1)
    differential(scenario)
    for call in (lambda lib: lib._foreach_norm([]),
                 lambda lib: lib._foreach_mul_([], lib.tensor(2.0)),
                 lambda lib: lib._foreach_mul_([lib.ones(2)], lib.ones(2)),
                 lambda lib: lib.nn.utils.clip_grad_norm_([_meta_param(lib)], 1.0, foreach=True)):
        raised(differential(call, may_raise=True), "RuntimeError")


def _meta_param(lib):
    p = lib.nn.Parameter(lib.ones(2, device="meta"))
    p.grad = lib.ones(2, device="meta")
    return p


@pytest.mark.parametrize("clip_value", [0.1, 1, 5.0])
def test_clip_grad_value(clip_value):
    def scenario(lib):
        params = _params_with_grads(lib, [(3, 2), (4,), ()], dtypes={1: "float64"})
        params.append(lib.nn.Parameter(lib.ones(2)))
        result = lib.nn.utils.clip_grad_value_(params, clip_value)
        single = _params_with_grads(lib, [(5,)], seed=1)[0]
        lib.nn.utils.clip_grad_value_(single, clip_value)
        return result, [p.grad for p in params], single.grad
    differential(scenario)


def test_clipping_records_no_graph():
    def scenario(lib):
        params = _params_with_grads(lib, [(3,)])
        params[0].grad.requires_grad_()
        total = lib.nn.utils.clip_grad_norm_(params, 0.1)
        return total.requires_grad, params[0].grad.grad_fn is None
    differential(scenario)


def test_parameters_to_vector_and_back():
    def scenario(lib):
        params = _params_with_grads(lib, [(3, 2), (4,), (), (1, 2, 2)])
        vec = lib.nn.utils.parameters_to_vector(params)
        vec.sum().backward()
        new = lib.arange(float(vec.numel())) * 2
        lib.nn.utils.vector_to_parameters(new, params)
        with lib.no_grad():
            new[0] = -5.0                 # the parameters view ``new``
        return vec, [p.grad for p in params], params, [type(p).__name__ for p in params]
    differential(scenario)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.vector_to_parameters([1.0, 2.0], [lib.nn.Parameter(lib.ones(2))]),
    lambda lib: lib.nn.utils.parameters_to_vector([]),
    lambda lib: lib.nn.utils.clip_grad_norm_(_params_with_grads(lib, [(2,)]), 1.0,
                                             norm_type="fro"),
])
def test_errors(call):
    raised(differential(call, may_raise=True))

