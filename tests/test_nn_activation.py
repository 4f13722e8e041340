"""Activation layers and functionals against real PyTorch: module reprs, outputs and
gradients (tests/nn_differential.check_module), the functionals' values over random
shapes and dtypes, in-place variants, and errors (type + message)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch

from .differential import differential, raised
from .helpers import assert_same
from .nn_differential import check_module, same_inputs

seeds = st.integers(0, 2**31 - 1)


# -- modules -------------------------------------------------------------------------------

MODULES = [
    ("ReLU", (), {}), ("ReLU6", (), {}), ("LeakyReLU", (0.2,), {}), ("ELU", (), {"alpha": 0.7}),
    ("SELU", (), {}), ("CELU", (1.5,), {}), ("GELU", (), {}), ("GELU", ("tanh",), {}),
    ("SiLU", (), {}), ("Mish", (), {}), ("Sigmoid", (), {}), ("Tanh", (), {}),
    ("Hardtanh", (-0.5, 2.0), {}), ("Hardswish", (), {}), ("Hardsigmoid", (), {}),
    ("LogSigmoid", (), {}), ("Softplus", (), {"beta": 2.0, "threshold": 3.0}),
    ("Softsign", (), {}), ("Softshrink", (0.3,), {}), ("Hardshrink", (), {}),
    ("Tanhshrink", (), {}), ("Threshold", (0.1, -3.0), {}), ("GLU", (), {}),
    ("GLU", (1,), {}), ("Softmax", (1,), {}), ("LogSoftmax", (-1,), {}), ("Softmin", (0,), {}),
    ("Softmax2d", (), {}), ("PReLU", (), {}), ("PReLU", (4,), {"init": 0.1}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES,
                         ids=[f"{n}{a}{k}" for n, a, k in MODULES])
def test_activation_module(name, args, kwargs):
    check_module(lambda lib: getattr(lib.nn, name)(*args, **kwargs),
                 same_inputs((3, 4, 2, 6)))


INPLACE = [("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.1,)), ("ELU", (0.5,)), ("SELU", ()),
           ("CELU", (2.0,)), ("SiLU", ()), ("Mish", ()), ("Hardtanh", (-2.0, 2.0)),
           ("Hardswish", ()), ("Hardsigmoid", ()), ("Threshold", (0.5, 0.0))]


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_activation_module(name, args):
    """inplace=True: same repr, and the input itself holds the result."""
    def scenario(lib):
        module = getattr(lib.nn, name)(*args, inplace=True)
        x = lib.tensor(np.linspace(-4, 4, 12, dtype=np.float32).reshape(3, 4))
        out = module(x)
        return repr(module), out is x, x, x._version
    differential(scenario)


def test_inplace_activation_keeps_autograd_history():
    def scenario(lib):
        leaf = lib.tensor(np.linspace(-2, 2, 6, dtype=np.float32), requires_grad=True)
        y = leaf * 2
        lib.nn.ELU(inplace=True)(y)
        y.sum().backward()
        return y, leaf.grad
    differential(scenario)


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_softmax_modules_implicit_dim_warning(dim):
    """dim=None: PyTorch's legacy implicit dim and its deprecation warning."""
    def scenario(lib):
        x = lib.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10)
        return [getattr(lib.nn, n)(dim)(x) for n in ("Softmax", "Softmin", "LogSoftmax")]
    differential(scenario)


def test_prelu_module_initialisation_and_state():
    def scenario(lib):
        m = lib.nn.PReLU(3, init=0.3, dtype=lib.float64)
        return repr(m), dict(m.state_dict()), [n for n, _ in m.named_parameters()]
    differential(scenario)


def test_activation_modules_on_other_dtypes():
    for dtype in ("float64", "bfloat16"):
        names = ("SELU", "CELU", "LogSigmoid", "Softshrink", "Hardshrink", "GLU")
        # (PReLU's weight in float64 only: check_module copies state through numpy)
        for name in names + (("PReLU",) if dtype == "float64" else ()):
            options = {"dtype": dtype} if name == "PReLU" else {}
            check_module(lambda lib: getattr(lib.nn, name)(
                             **{k: getattr(lib, v) for k, v in options.items()}),
                         lambda lib: (lib.tensor(np.linspace(-3, 3, 16, dtype=np.float32)
                                                 .reshape(2, 8)).to(getattr(lib, dtype)),),
                         atol=2e-2 if dtype == "bfloat16" else 1e-6, rtol=2e-2,
                         backward=dtype == "float64")


ERRORS = [
    lambda lib: lib.nn.Hardtanh(1.0, 0.5),
    lambda lib: lib.nn.Softmax2d()(lib.zeros(2, 3)),
    lambda lib: lib.nn.GLU()(lib.zeros(2, 3)),
    lambda lib: lib.nn.GLU()(lib.tensor(1.0)),
    lambda lib: lib.nn.PReLU(3)(lib.zeros(2, 4)),
    lambda lib: lib.nn.PReLU(3)(lib.tensor(1.0)),
    lambda lib: lib.nn.Softshrink(-1.0)(lib.zeros(2)),
    lambda lib: lib.nn.Softshrink()(lib.zeros(2, dtype=lib.int64)),
    lambda lib: lib.nn.Hardshrink()(lib.zeros(2, dtype=lib.int64)),
    lambda lib: lib.nn.CELU(0.0)(lib.zeros(2)),
    lambda lib: lib.nn.LogSigmoid()(lib.zeros(2, dtype=lib.int64)),
    lambda lib: lib.nn.GELU("bogus")(lib.zeros(2)),
    lambda lib: lib.nn.ReLU(inplace=True)(lib.zeros(2, requires_grad=True)),
    lambda lib: lib.nn.functional.hardtanh(lib.zeros(2), 1.0, 0.0),
    lambda lib: lib.nn.functional.glu(lib.zeros(2, 4), 2),
    lambda lib: lib.nn.functional.prelu(lib.zeros(2, 3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.nn.functional.prelu(lib.zeros(2, 3), lib.ones(3, 1)),
    lambda lib: lib.ops.aten._prelu_kernel(lib.zeros(2, 3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.nn.functional.softshrink(lib.zeros(2, dtype=lib.float16), 70000),
    lambda lib: lib.nn.functional.softshrink(lib.zeros(2, dtype=lib.float64), float("nan")),
    lambda lib: lib.ops.aten.log_sigmoid_backward(lib.zeros(2), lib.zeros(2, dtype=lib.float64),
                                                  lib.zeros(2)),
    lambda lib: lib.ops.aten.glu_backward(lib.zeros(3, 3), lib.zeros(3, 4), 1),
    lambda lib: lib.ops.aten.glu_backward(lib.zeros(3, 2, dtype=lib.float64), lib.zeros(3, 4), 1),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_activation_errors(case):
    raised(differential(ERRORS[case], may_raise=True))


def test_hardtanh_deprecated_keywords_warn():
    differential(lambda lib: repr(lib.nn.Hardtanh(min_value=-2.0, max_value=3.0)),
                 named=True)


# -- functionals: values over random shapes, dtypes, layouts --------------------------------

FUNCTIONALS = {
    "logsigmoid": ((), {}),
    "softshrink": ((0.7,), {}),
    "hardshrink": ((), {"lambd": 0.25}),
    "tanhshrink": ((), {}),
    "softsign": ((), {}),
    "selu": ((), {}),
    "celu": ((0.6,), {}),
    "gelu": ((), {"approximate": "tanh"}),
    "softplus": ((), {"beta": 0.5, "threshold": 2.0}),
    "softmin": ((-1,), {}),
    "normalize": ((), {"p": 3.0, "dim": -1}),
}


@given(st.sampled_from(sorted(FUNCTIONALS)), st.lists(st.integers(1, 4), min_size=1, max_size=3),
       st.sampled_from(["float32", "float64"]), st.booleans(), seeds)
def test_functionals_match_pytorch(torch, name, shape, dtype, transposed, seed):
    args, kwargs = FUNCTIONALS[name]
    values = np.random.default_rng(seed).uniform(-4, 4, size=shape).astype(dtype)

    def run(lib):
        x = lib.tensor(values, requires_grad=True)
        # (transposed only when no dim is 1: see the report on size-1 strides of binary ops)
        y = x.t() if transposed and x.dim() == 2 and 1 not in shape else x
        out = getattr(lib.nn.functional, name)(y, *args, **kwargs)
        out.backward(lib.ones_like(out))
        return out, x.grad
    (out, grad), (t_out, t_grad) = run(glasstorch), run(torch)
    assert type(out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    assert_same(out.detach(), t_out.detach(), atol=1e-6, rtol=1e-5)
    assert_same(grad, t_grad, atol=1e-6, rtol=1e-5)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2), seeds)
def test_glu_any_dim(torch, shape, dim_seed, seed):
    dim = dim_seed % len(shape)
    shape[dim] *= 2
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    results = []
    for lib in (glasstorch, torch):
        x = lib.tensor(values, requires_grad=True)
        out = lib.nn.functional.glu(x, dim)
        (out * out).sum().backward()
        results.append((out.detach(), x.grad))
    assert_same(results[0], results[1], atol=1e-6, rtol=1e-5)


@given(st.integers(1, 4), st.integers(0, 3), st.booleans(), seeds)
def test_prelu_channels(torch, channels, extra_dims, single, seed):
    rng = np.random.default_rng(seed)
    shape = (2, channels) + (3,) * extra_dims
    values = rng.standard_normal(shape).astype(np.float32)
    weight = rng.uniform(0, 1, size=1 if single else channels).astype(np.float32)
    results = []
    for lib in (glasstorch, torch):
        x, w = lib.tensor(values, requires_grad=True), lib.tensor(weight, requires_grad=True)
        out = lib.nn.functional.prelu(x, w)
        out.backward(lib.ones_like(out) * 0.5)
        results.append((out.detach(), x.grad, w.grad, type(out.grad_fn).__name__))
    assert results[0][3] == results[1][3]
    assert_same(results[0][:3], results[1][:3], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", ["selu", "celu", "elu", "leaky_relu", "hardtanh", "relu6",
                                  "threshold", "silu", "mish", "hardswish", "hardsigmoid",
                                  "relu"])
def test_functional_inplace_variants(name):
    extra = {"threshold": (0.5, -1.0)}.get(name, ())

    def scenario(lib):
        x = lib.tensor(np.linspace(-3, 3, 8, dtype=np.float32))
        base = x.clone()
        out = getattr(lib.nn.functional, name)(x, *extra, inplace=True)
        return out is x, x, base._version, x._version
    differential(scenario)


@pytest.mark.parametrize("name", ["selu_", "celu_", "threshold_", "elu_", "leaky_relu_",
                                  "hardtanh_"])
def test_functional_underscore_variants(name):
    extra = {"threshold_": (0.5, -1.0)}.get(name, ())

    def scenario(lib):
        x = lib.tensor(np.linspace(-3, 3, 8, dtype=np.float32))
        return getattr(lib.nn.functional, name)(x, *extra) is x, x
    differential(scenario)


def test_normalize_out_and_zero_rows():
    def scenario(lib):
        x = lib.tensor([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0]])
        out = lib.empty(2, 3)
        result = lib.nn.functional.normalize(x, dim=1, out=out)
        return result is out, out, lib.nn.functional.normalize(x, p=1, dim=0)
    differential(scenario)


def test_celu_and_selu_inplace_gradients():
    """celu_/selu_ record CeluBackward1/EluBackward1 (their backward reads the result)."""
    def scenario(lib):
        leaf = lib.tensor(np.linspace(-2, 2, 5), requires_grad=True)
        a, b = leaf * 1.0, leaf * 1.0
        lib.celu_(a, 0.5)
        lib.selu_(b)
        (a + b).sum().backward()
        return a, b, leaf.grad
    differential(scenario)


def test_log_sigmoid_extremes():
    def scenario(lib):
        x = lib.tensor([-100.0, -30.0, 0.0, 30.0, 100.0, float("inf"), -float("inf")],
                       requires_grad=True)
        y = lib.nn.functional.logsigmoid(x)
        y.sum().backward()
        return y, x.grad
    differential(scenario)


def test_double_backward_of_new_activations():
    """Second derivatives through the backward ops' formulas, against PyTorch."""
    def scenario(lib):
        x = lib.tensor(np.linspace(-2, 2, 8).reshape(2, 4), requires_grad=True)
        w = lib.tensor([0.2, 0.4, -0.1, 0.3], dtype=lib.float64, requires_grad=True)
        outs = [lib.nn.functional.logsigmoid(x), lib.nn.functional.glu(x, 1),
                lib.nn.functional.prelu(x, w), lib.nn.functional.softshrink(x, 0.3),
                lib.celu(x, 0.7)]
        results = []
        for out in outs:
            (g,) = lib.autograd.grad((out * out).sum(), x, create_graph=True)
            (gg,) = lib.autograd.grad(g.sum(), x, allow_unused=True)
            results.append((g, gg))
        return results
    differential(scenario)
