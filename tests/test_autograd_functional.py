"""torch.autograd.functional against real PyTorch: jacobian, hessian, vjp, jvp,
hvp, vhp on polynomials, matmul chains, a small MLP and functions of several
inputs returning tuples; the nesting of the returned tuples; create_graph
(grad_fn on the results, gradients flowing back to the caller's inputs);
strict mode and the argument checks (error types and messages);
vectorize=True (batched autograd.grad through vmap) and forward mode.

Each scenario is a function of the library (``torch`` or ``glasstorch``);
``differential`` runs it with both and compares dtypes, shapes, values,
requires_grad, grad_fn names, or the error raised.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glasstorch as gt

from .differential import differential, raised


def data(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


X3, Y2, M34, M42 = data(3), data(2, seed=1), data(3, 4, seed=2), data(4, 2, seed=3)


def T(lib, array, **kwargs):
    return lib.tensor(np.array(array), **kwargs)


# -- the functions ---------------------------------------------------------------------
# Each takes the library and returns (func, inputs); inputs is a tensor or a tuple.

def poly(lib):
    return (lambda x: x ** 3 - 2 * x ** 2 + 0.5 * x), T(lib, X3)


def poly_sum(lib):
    return (lambda x: (x ** 3 - x).sum()), T(lib, X3)


def matmul_chain(lib):
    a, b = T(lib, M34), T(lib, M42)
    return (lambda x: (x.unsqueeze(0) @ a @ b).tanh().squeeze(0)), T(lib, X3)


def matrix_input(lib):
    b = T(lib, M42)
    return (lambda m: (m @ b).sin()), T(lib, M34)


def mlp(lib):
    """A small MLP (Linear-Tanh-Linear, fixed weights) as a function of its input."""
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(T(lib, data(*p.shape, seed=10 + i)))
    return model, T(lib, X3)


def mlp_loss(lib):
    model, x = mlp(lib)
    return (lambda x: model(x).pow(2).sum()), x


def two_in_tuple_out(lib):
    return (lambda x, y: (x * y.sum(), (x.exp() * 2).sum() + y.prod(), x.outer(y))), \
        (T(lib, X3), T(lib, Y2))


def two_in_scalar(lib):
    return (lambda x, y: (x.sin() * y.sum() ** 2).sum()), (T(lib, X3), T(lib, Y2))


def unused_input(lib):
    return (lambda x, y: x ** 2), (T(lib, X3), T(lib, Y2))


def tuple_of_one(lib):
    return (lambda x: (x.exp(),)), (T(lib, X3),)


def float64(lib):
    return (lambda x: (x ** 2).cumsum(0)), T(lib, X3.astype(np.float64))


FUNCTIONS = [poly, matmul_chain, matrix_input, mlp, two_in_tuple_out, unused_input,
             tuple_of_one, float64]
SCALAR_FUNCTIONS = [poly_sum, mlp_loss, two_in_scalar]


def ones_like_all(lib, tensors):
    if isinstance(tensors, tuple):
        return tuple(lib.ones_like(t) * (i + 1) for i, t in enumerate(tensors))
    return lib.ones_like(tensors) * 0.5


def outputs_of(func, inputs):
    return func(*inputs) if isinstance(inputs, tuple) else func(inputs)


# -- values, shapes, nesting -----------------------------------------------------------

@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("make", FUNCTIONS, ids=lambda f: f.__name__)
def test_jacobian(make, create_graph):
    def scenario(lib):
        func, inputs = make(lib)
        return lib.autograd.functional.jacobian(func, inputs, create_graph=create_graph)
    differential(scenario)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("make", FUNCTIONS, ids=lambda f: f.__name__)
def test_vjp(make, create_graph):
    def scenario(lib):
        func, inputs = make(lib)
        v = ones_like_all(lib, outputs_of(func, inputs))
        return lib.autograd.functional.vjp(func, inputs, v, create_graph=create_graph)
    differential(scenario)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("make", FUNCTIONS, ids=lambda f: f.__name__)
def test_jvp(make, create_graph):
    def scenario(lib):
        func, inputs = make(lib)
        return lib.autograd.functional.jvp(func, inputs, ones_like_all(lib, inputs),
                                           create_graph=create_graph)
    differential(scenario)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("make", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("api", ["hessian", "hvp", "vhp"])
def test_second_order(api, make, create_graph):
    def scenario(lib):
        func, inputs = make(lib)
        fn = getattr(lib.autograd.functional, api)
        if api == "hessian":
            return fn(func, inputs, create_graph=create_graph)
        return fn(func, inputs, ones_like_all(lib, inputs), create_graph=create_graph)
    differential(scenario)


def test_v_may_be_left_out_for_one_element():
    def scenario(lib):
        f = lib.autograd.functional
        x = T(lib, [0.7])
        return (f.vjp(lambda x: (x ** 3).sum(), x), f.jvp(lambda x: x.exp(), x),
                f.hvp(lambda x: x.sin().sum(), x), f.vhp(lambda x: x.sin().sum(), x))
    differential(scenario)


def test_hessian_nesting_follows_the_inputs():
    """A bare tensor gives one tensor; a tuple of one gives ((H,),)."""
    def scenario(lib):
        f = lambda x: (x ** 3).sum()
        h = lib.autograd.functional.hessian
        return h(f, T(lib, X3)), h(f, (T(lib, X3),))
    out = differential(scenario)[1]
    assert out[0][0] == "tensor" and out[1][0][0][0] == "tensor"


def test_jacobian_is_taken_with_respect_to_the_arguments_not_captured_tensors():
    """func closes over the very tensor it is given; only the argument counts
    (PyTorch makes fresh input objects for that reason)."""
    def scenario(lib):
        x = T(lib, X3, requires_grad=True)
        return lib.autograd.functional.jacobian(lambda inp: inp * x, x)
    differential(scenario)


@pytest.mark.parametrize("api", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
def test_create_graph_reaches_the_callers_inputs(api):
    """With create_graph, a result is a function of the caller's tensors that
    require grad: differentiating it again gives third derivatives."""
    def scenario(lib):
        f = lib.autograd.functional
        x = T(lib, X3, requires_grad=True)
        fn = lambda x: (x ** 4).sum() * x.sin().sum()  # noqa: E731
        if api in ("jacobian", "hessian"):
            res = getattr(f, api)(fn, x, create_graph=True)
        else:
            v = lib.tensor(2.) if api == "vjp" else lib.ones(3) * 0.3
            res = getattr(f, api)(fn, x, v, create_graph=True)[1]
        (g,) = lib.autograd.grad(res.sum(), x)
        return res, g, x.grad
    differential(scenario)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_mode_of_the_results(create_graph):
    """Under no_grad: the forward still records (grad enabled inside); the
    results have history only with create_graph."""
    def scenario(lib):
        f = lib.autograd.functional
        x = T(lib, X3, requires_grad=True)
        fn = lambda x: (x ** 3).sum()  # noqa: E731
        with lib.no_grad():
            res = (f.jacobian(fn, x, create_graph=create_graph),
                   f.vjp(fn, x, create_graph=create_graph),
                   f.hvp(fn, x, lib.ones(3), create_graph=create_graph),
                   f.jvp(fn, x, lib.ones(3), create_graph=create_graph))
        return res, lib.is_grad_enabled()
    differential(scenario)


def test_unused_input_gives_zeros_of_its_dtype():
    def scenario(lib):
        x, y = T(lib, X3), T(lib, data(2, dtype=np.float64))
        f = lib.autograd.functional
        return (f.jacobian(lambda x, y: x * 2, (x, y)),
                f.vjp(lambda x, y: x * 2, (x, y), lib.ones(3)),
                f.hessian(lambda x, y: (x ** 3).sum(), (x, y)))
    differential(scenario)


# -- vectorize=True (batched autograd.grad through vmap) -------------------------------

@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("make", FUNCTIONS, ids=lambda f: f.__name__)
def test_jacobian_vectorized(make, create_graph):
    def scenario(lib):
        func, inputs = make(lib)
        return lib.autograd.functional.jacobian(func, inputs, create_graph=create_graph,
                                                vectorize=True)
    differential(scenario)


@pytest.mark.parametrize("make", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_vectorized(make):
    differential(lambda lib: lib.autograd.functional.hessian(*make(lib), vectorize=True))


def test_grad_is_grads_batched():
    """Each row of the batched grad_outputs gives one vector-Jacobian product;
    unused inputs stay None."""
    def scenario(lib):
        x, y, z = T(lib, X3, requires_grad=True), T(lib, Y2, requires_grad=True), \
            T(lib, [1.], requires_grad=True)
        out = (x.outer(y) * 3).sin()
        seeds = T(lib, data(5, 3, 2, seed=4))
        return lib.autograd.grad(out, (x, y, z), seeds, is_grads_batched=True,
                                 allow_unused=True)
    differential(scenario)


def test_grad_is_grads_batched_shape_mismatch():
    def scenario(lib):
        x = T(lib, X3, requires_grad=True)
        return lib.autograd.grad(x * 2, x, lib.ones(4, 2), is_grads_batched=True)
    raised(differential(scenario, may_raise=True), "RuntimeError")


# -- forward mode: forward_ad under vmap over the basis tangents -------------------------

@pytest.mark.parametrize("make", FUNCTIONS, ids=lambda f: f.__name__)
def test_jacobian_forward_mode(make):
    def scenario(lib):
        func, inputs = make(lib)
        return lib.autograd.functional.jacobian(func, inputs, vectorize=True,
                                                strategy="forward-mode")
    differential(scenario)


@pytest.mark.parametrize("make", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_forward_over_reverse(make):
    differential(lambda lib: lib.autograd.functional.hessian(
        *make(lib), vectorize=True, outer_jacobian_strategy="forward-mode"))


# -- strict mode -----------------------------------------------------------------------

STRICT_CASES = {
    # output does not require grad
    "vjp_constant_output": lambda lib, f: f.vjp(lambda x: lib.ones(3), T(lib, X3), lib.ones(3),
                                                strict=True),
    # all outputs independent of input 1
    "vjp_unused_input": lambda lib, f: f.vjp(lambda x, y: x * 2, (T(lib, X3), T(lib, Y2)),
                                             lib.ones(3), strict=True),
    # linear: the vjp has no graph although create_graph asks for one
    "vjp_linear_create_graph": lambda lib, f: f.vjp(lambda x: x * 2, T(lib, X3), lib.ones(3),
                                                    strict=True, create_graph=True),
    "jvp_unused_input": lambda lib, f: f.jvp(lambda x, y: x * 2, (T(lib, X3), T(lib, Y2)),
                                             (lib.ones(3), lib.ones(2)), strict=True),
    "jvp_linear_create_graph": lambda lib, f: f.jvp(lambda x: x * 2, T(lib, X3), lib.ones(3),
                                                    strict=True, create_graph=True),
    "jacobian_unused_input": lambda lib, f: f.jacobian(lambda x, y: (y.sum(), x * 2),
                                                       (T(lib, X3), T(lib, Y2)), strict=True),
    "jacobian_linear_create_graph": lambda lib, f: f.jacobian(
        lambda x, y: (x ** 2, y * 2), (T(lib, X3), T(lib, Y2)), strict=True, create_graph=True),
    "jacobian_constant_output": lambda lib, f: f.jacobian(lambda x: (x, lib.zeros(2)),
                                                          T(lib, X3), strict=True),
    # the gradient of a linear function does not depend on the input
    "hessian_linear": lambda lib, f: f.hessian(lambda x: (x * 3).sum(), T(lib, X3),
                                               strict=True),
    "hessian_unused_input": lambda lib, f: f.hessian(lambda x, y: (x ** 3).sum(),
                                                     (T(lib, X3), T(lib, Y2)), strict=True),
    "hvp_linear": lambda lib, f: f.hvp(lambda x: (x * 3).sum(), T(lib, X3), lib.ones(3),
                                       strict=True),
    "vhp_linear": lambda lib, f: f.vhp(lambda x: (x * 3).sum(), T(lib, X3), lib.ones(3),
                                       strict=True),
    "hvp_unused_input": lambda lib, f: f.hvp(lambda x, y: (x ** 3).sum(),
                                             (T(lib, X3), T(lib, Y2)),
                                             (lib.ones(3), lib.ones(2)), strict=True),
    "jacobian_strict_vectorize": lambda lib, f: f.jacobian(lambda x: x ** 2, T(lib, X3),
                                                           strict=True, vectorize=True),
}


@pytest.mark.parametrize("case", sorted(STRICT_CASES))
def test_strict_errors(case):
    outcome = differential(lambda lib: STRICT_CASES[case](lib, lib.autograd.functional),
                           may_raise=True)
    assert "strict" in raised(outcome, "RuntimeError")


def test_strict_accepts_a_well_behaved_function():
    def scenario(lib):
        f = lib.autograd.functional
        fn = lambda x, y: ((x ** 3).sum() * y.exp().sum())  # noqa: E731
        xs = (T(lib, X3), T(lib, Y2))
        v = (lib.ones(3), lib.ones(2))
        return (f.jacobian(fn, xs, strict=True), f.hessian(fn, xs, strict=True),
                f.vjp(fn, xs, strict=True), f.jvp(fn, xs, v, strict=True),
                f.hvp(fn, xs, v, strict=True, create_graph=True),
                f.vhp(fn, xs, v, strict=True))
    differential(scenario)


# -- argument checks -------------------------------------------------------------------

CHECK_CASES = {
    "inputs_list": lambda lib, f: f.jacobian(lambda x: x, [T(lib, X3)]),
    "inputs_int": lambda lib, f: f.vjp(lambda x: x, 3, 1),
    "inputs_tuple_with_float": lambda lib, f: f.jvp(lambda x, y: x, (T(lib, X3), 1.0)),
    "outputs_list": lambda lib, f: f.jacobian(lambda x: [x], T(lib, X3)),
    "outputs_float": lambda lib, f: f.vjp(lambda x: 2.0, T(lib, X3)),
    "outputs_tuple_with_int": lambda lib, f: f.jvp(lambda x: (x, 1), T(lib, X3), lib.ones(3)),
    "v_list": lambda lib, f: f.vjp(lambda x: x, T(lib, X3), [lib.ones(3)]),
    "v_tuple_too_long": lambda lib, f: f.jvp(lambda x, y: x, (T(lib, X3), T(lib, Y2)),
                                             (lib.ones(3),)),
    "v_tuple_for_one_tensor": lambda lib, f: f.vjp(lambda x: x, T(lib, X3),
                                                   (lib.ones(3), lib.ones(3))),
    "v_wrong_size": lambda lib, f: f.hvp(lambda x: x.sum(), T(lib, X3), lib.ones(4)),
    "v_entry_wrong_size": lambda lib, f: f.vhp(lambda x, y: x.sum(), (T(lib, X3), T(lib, Y2)),
                                               (lib.ones(3), lib.ones(3))),
    "v_none_vjp": lambda lib, f: f.vjp(lambda x: x, T(lib, X3)),
    "v_none_jvp": lambda lib, f: f.jvp(lambda x: x.sum(), T(lib, X3)),
    "v_none_hvp": lambda lib, f: f.hvp(lambda x: x.sum(), (T(lib, [1.]), T(lib, [2.]))),
    "hvp_tuple_output": lambda lib, f: f.hvp(lambda x: (x.sum(),), T(lib, X3), lib.ones(3)),
    "vhp_vector_output": lambda lib, f: f.vhp(lambda x: x * 2, T(lib, X3), lib.ones(3)),
    "hessian_tuple_output": lambda lib, f: f.hessian(lambda x: (x.sum(),), T(lib, X3)),
    "hessian_vector_output": lambda lib, f: f.hessian(lambda x: x ** 2, T(lib, X3)),
    "hessian_bad_strategy": lambda lib, f: f.hessian(lambda x: x.sum(), T(lib, X3),
                                                     outer_jacobian_strategy="both"),
    "jacobian_bad_strategy": lambda lib, f: f.jacobian(lambda x: x, T(lib, X3),
                                                       strategy="sideways"),
    "forward_mode_create_graph": lambda lib, f: f.jacobian(
        lambda x: x, T(lib, X3), create_graph=True, strategy="forward-mode"),
    "forward_mode_strict": lambda lib, f: f.jacobian(lambda x: x, T(lib, X3), strict=True,
                                                     strategy="forward-mode"),
    "forward_mode_unvectorized": lambda lib, f: f.jacobian(lambda x: x, T(lib, X3),
                                                           strategy="forward-mode"),
    "forward_mode_hessian_unvectorized": lambda lib, f: f.hessian(
        lambda x: x.sum(), T(lib, X3), outer_jacobian_strategy="forward-mode"),
}


@pytest.mark.parametrize("case", sorted(CHECK_CASES))
def test_argument_checks(case):
    differential(lambda lib: CHECK_CASES[case](lib, lib.autograd.functional), may_raise=True)


def test_signatures():
    import inspect
    import torch
    for name in ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]:
        ours = inspect.signature(getattr(gt.autograd.functional, name))
        theirs = inspect.signature(getattr(torch.autograd.functional, name))
        assert str(ours) == str(theirs), name
    assert gt.autograd.functional.__all__ == torch.autograd.functional.__all__


# -- hypothesis: shapes and values -----------------------------------------------------

shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


@settings(max_examples=15, deadline=None)
@given(shape_x=shapes, shape_y=shapes, seed=st.integers(0, 2 ** 16),
       create_graph=st.booleans())
def test_jacobian_and_hessian_hypothesis(shape_x, shape_y, seed, create_graph):
    # float64: tanh near +-1 loses float32's digits to cancellation
    x, y = data(*shape_x, seed=seed, dtype=np.float64), data(*shape_y, seed=seed + 1,
                                                             dtype=np.float64)

    def scenario(lib):
        f = lib.autograd.functional
        xs = (T(lib, x), T(lib, y))
        def fn(a, b):
            return (a.sin() * b.sum() + a ** 2, (a.exp().sum() * b).tanh())
        def scalar(a, b):
            return (a.cos() * (b ** 2).sum()).sum() + (a.sum() * b).sum() ** 2
        return (f.jacobian(fn, xs, create_graph=create_graph),
                f.hessian(scalar, xs, create_graph=create_graph),
                f.vjp(fn, xs, tuple(lib.ones_like(o) for o in fn(*xs))),
                f.hvp(scalar, xs, xs))
    differential(scenario)
