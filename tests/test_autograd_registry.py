"""Registry-wide autograd checks, on every op sample (tests/samples/):

* whether the outputs require grad, and the grad_fn's name, equal PyTorch's
  (an op PyTorch differentiates and we don't is a missing formula);
* gradients for random output gradients equal PyTorch's (autograd.grad with
  allow_unused, so "no gradient" must match too);
* gradcheck in float64 passes (finite differences against our own formulas).
"""
import re

import numpy as np
import pytest

import glasstorch
from glasstorch._dispatcher.dispatcher import dispatcher

from .helpers import to_numpy
from .opinfo import Maker, data_seeds
from .test_op_registry import CASES, _op

SEEDS = data_seeds(3, 4321)


def _functional(name):
    schema = dispatcher.find(name).schema
    return not any(a.is_write for a in schema.arguments)


FUNCTIONAL_CASES = [(n, s) for n, s in CASES if _functional(n) and not s.random]


def _tensors(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from _tensors(a)
        elif hasattr(a, "requires_grad"):
            yield a


def _prepare(lib, name, smp, seed, dtype=None):
    """The sample's arguments with every floating tensor made a leaf requiring grad."""
    make = Maker(lib, seed)
    args, kwargs = smp.fn(make, lib)
    inputs = []

    def convert(a):
        if isinstance(a, list):
            return [convert(x) for x in a]
        if isinstance(a, tuple):
            return tuple(convert(x) for x in a)
        if hasattr(a, "requires_grad") and (a.is_floating_point() or a.is_complex()):
            if dtype is not None and a.is_floating_point():
                a = a.to(dtype)
            a = a.detach().requires_grad_(True)
            inputs.append(a)
        return a
    args = [convert(a) for a in args]
    kwargs = {k: convert(v) for k, v in kwargs.items()}
    return args, kwargs, inputs


def _outputs(result):
    if isinstance(result, (list, tuple)):
        return [r for r in result if hasattr(r, "requires_grad")]
    return [result] if hasattr(result, "requires_grad") else []


# Samples with a floating (or complex) tensor argument: the others have nothing
# to differentiate.
GRAD_CASES = [(n, s) for n, s in FUNCTIONAL_CASES if _prepare(glasstorch, n, s, SEEDS[0])[2]]


@pytest.mark.parametrize("name,smp", GRAD_CASES, ids=[s.name for _, s in GRAD_CASES])
def test_gradients_match_pytorch(name, smp):
    for seed in SEEDS:
        try:
            _check_gradients(name, smp, seed)
        except (AssertionError, pytest.fail.Exception) as e:
            raise AssertionError(f"data seed {seed}: {e}") from None


def _check_gradients(name, smp, seed):
    """Forward errors, outputs requiring grad, node names and gradients against PyTorch's."""
    import torch
    t_args, t_kwargs, t_inputs = _prepare(torch, name, smp, seed)
    g_args, g_kwargs, g_inputs = _prepare(glasstorch, name, smp, seed)
    try:
        t_out = _outputs(_op(torch, name)(*t_args, **t_kwargs))
    except RuntimeError as e:   # e.g. "not differentiable with respect to argument 'weight'"
        with pytest.raises(RuntimeError, match=re.escape(str(e))):
            _op(glasstorch, name)(*g_args, **g_kwargs)
        return
    g_out = _outputs(_op(glasstorch, name)(*g_args, **g_kwargs))
    t_diff = [i for i, o in enumerate(t_out) if o.requires_grad]
    g_diff = [i for i, o in enumerate(g_out) if o.requires_grad]
    assert g_diff == t_diff, f"outputs requiring grad {g_diff} != {t_diff}"
    if not t_diff:
        return
    t_name = type(t_out[t_diff[0]].grad_fn).__name__
    g_name = type(g_out[g_diff[0]].grad_fn).__name__
    assert g_name == t_name, f"grad_fn {g_name} != {t_name}"
    rng = np.random.default_rng(seed)
    seeds = [rng.uniform(-2, 2, size=tuple(t_out[i].shape)) for i in t_diff]
    g_seeds = [glasstorch.tensor(s).to(g_out[i].dtype) for s, i in zip(seeds, g_diff)]
    try:
        t_grads = torch.autograd.grad(
            [t_out[i] for i in t_diff], t_inputs,
            [torch.tensor(s).to(t_out[i].dtype) for s, i in zip(seeds, t_diff)],
            allow_unused=True)
    except RuntimeError as e:   # a derivative PyTorch does not implement: the same error
        with pytest.raises(RuntimeError, match=re.escape(str(e))):
            glasstorch.autograd.grad([g_out[i] for i in g_diff], g_inputs, g_seeds,
                                     allow_unused=True)
        return
    g_grads = glasstorch.autograd.grad([g_out[i] for i in g_diff], g_inputs, g_seeds,
                                       allow_unused=True)
    for k, (g, t) in enumerate(zip(g_grads, t_grads)):
        assert (g is None) == (t is None), \
            f"input {k}: gradient is {g} here, {t} in PyTorch"
        if t is None:
            continue
        assert tuple(g.shape) == tuple(t.shape), f"input {k}: grad shape"
        assert str(g.dtype) == str(t.dtype), f"input {k}: grad dtype"
        low = t.dtype in (torch.float16, torch.bfloat16)
        np.testing.assert_allclose(
            to_numpy(g), to_numpy(t), atol=max(smp.atol, 5e-2 if low else 1e-4),
            rtol=max(smp.rtol, 5e-2 if low else 1e-4), equal_nan=True,
            err_msg=f"gradient of input {k}")


# Samples placed on purpose at points where the function is not differentiable
# (ties, zeros of abs/sign-like ops, jumps), where finite differences disagree
# with any one-sided gradient; their gradients are still compared with PyTorch's
# above.
NOT_SMOOTH = ("tie", "zero", "nan", "inf", "floor", "ceil", "round", "trunc", "frac", "sign",
              "sgn", "remainder", "fmod", "floor_divide", "threshold", "hardtanh", "clamp",
              "clip", "relu", "maximum", "minimum", "fmax", "fmin", "max", "min", "amax",
              "amin", "median", "mode", "sort", "topk", "abs", "hardsigmoid", "hardswish",
              "leaky_relu", "elu", "dropout", "bernoulli", "where", "norm", "l1", "huber",
              "smooth_l1", "pool", "copysign", "nan_to_num", "scatter", "kink",
              "draw")   # samplers: each finite-difference step redraws


def _smooth(name, smp):
    text = smp.name.lower()
    return not any(word in text for word in NOT_SMOOTH)


def _gradcheck_setup(name, smp):
    """``(fn, inputs)`` for gradcheck on the sample in float64, the arguments the op
    is not differentiable in held fixed; None when there is nothing to check: no
    float64 output requiring grad (casts, complex results), a first derivative
    PyTorch does not implement either (test_gradients_match_pytorch compares
    those errors), or no input that gets a gradient."""
    args, kwargs, inputs = _prepare(glasstorch, name, smp, SEEDS[0], dtype=glasstorch.float64)
    op = _op(glasstorch, name)
    schema = dispatcher.find(name).schema
    for _ in range(len(schema.arguments)):
        try:
            outputs = [o for o in _outputs(op(*args, **kwargs)) if o.requires_grad]
            break
        except RuntimeError as e:   # a weight the op is not differentiable in: hold it fixed
            match = re.search(r"not differentiable with respect to argument '(\w+)'", str(e))
            if not match:
                raise
            position = [a.name for a in schema.arguments].index(match[1])
            fixed = args[position] if position < len(args) else kwargs[match[1]]
            fixed.requires_grad_(False)
            inputs = [t for t in inputs if t is not fixed]
    if not outputs or any(o.dtype is not glasstorch.float64 for o in outputs):
        return None
    try:
        grads = glasstorch.autograd.grad(outputs, inputs, [glasstorch.ones_like(o) for o in outputs],
                                         allow_unused=True)
    except RuntimeError as e:
        if "not implemented" in str(e):   # as in PyTorch (e.g. silu_backward's derivative)
            return None
        raise
    # inputs the op is not differentiable in (nll_loss's weight ...) are held fixed
    inputs = [t for t, g in zip(inputs, grads) if g is not None]
    if not inputs:
        return None

    def substitute(value, table):
        if isinstance(value, list):
            return [substitute(v, table) for v in value]
        if isinstance(value, tuple):
            return tuple(substitute(v, table) for v in value)
        return table.get(id(value), value)

    def fn(*xs):
        if smp.gradcheck_inputs is not None:
            xs = smp.gradcheck_inputs(xs)
        table = {id(t): x for t, x in zip(inputs, xs)}
        out = op(*substitute(args, table), **{k: substitute(v, table) for k, v in kwargs.items()})
        return tuple(o for o in _outputs(out) if o.requires_grad)
    return fn, tuple(inputs)


# Ops with no float64 kernel, in PyTorch too (oneDNN's, the scalar grid sampler
# fallback's); their float32 gradients are compared with PyTorch's above
NO_FLOAT64 = ("aten::mkldnn_convolution", "aten::_grid_sampler_2d_cpu_fallback",
              "aten::_grid_sampler_2d_cpu_fallback_backward")


def _has_gradcheck_work(name, smp):
    if name in NO_FLOAT64:
        return False
    try:
        return _gradcheck_setup(name, smp) is not None
    except Exception:   # noqa: BLE001 - kept, so that the test shows the error
        return True


GRADCHECK_CASES = [(n, s) for n, s in GRAD_CASES if _smooth(n, s) and _has_gradcheck_work(n, s)]


@pytest.mark.parametrize("name,smp", GRADCHECK_CASES, ids=[s.name for _, s in GRADCHECK_CASES])
def test_gradcheck_float64(name, smp):
    """Our formulas against finite differences of our own forward, in float64."""
    fn, inputs = _gradcheck_setup(name, smp)
    assert glasstorch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


# The list of common ops: second derivatives against finite differences
# of our own first derivatives (float64).
GRADGRAD = {
    "add": lambda T, a, b: a + b * 2.5,
    "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / (b.abs() + 1),
    "matmul": lambda T, a, b: a @ b.t(),
    "exp": lambda T, a, b: a.exp(),
    "tanh": lambda T, a, b: a.tanh(),
    "sigmoid": lambda T, a, b: a.sigmoid(),
    "softmax": lambda T, a, b: T.softmax(a, -1),
    "log_softmax": lambda T, a, b: T.log_softmax(a, 0),
    "layer_norm": lambda T, a, b: T.nn.functional.layer_norm(a, (4,), b[0], b[1]),
    "sum": lambda T, a, b: (a * b).sum(),
    "mean": lambda T, a, b: (a * a).mean(1),
}


@pytest.mark.parametrize("name", list(GRADGRAD))
def test_gradgradcheck_common_ops(name):
    rng = np.random.default_rng(5)
    a, b = (glasstorch.tensor(rng.uniform(-1, 1, size=(3, 4)), requires_grad=True)
            for _ in range(2))
    fn = GRADGRAD[name]
    assert glasstorch.autograd.gradcheck(lambda x, y: fn(glasstorch, x, y), (a, b))
    assert glasstorch.autograd.gradgradcheck(lambda x, y: fn(glasstorch, x, y), (a, b))


@pytest.mark.parametrize("args", [(), (1,), (2, 1), ("fro",), (3, (0, 1)), (float("inf"),),
                                  (2, 0, True)])
def test_norm_routes_to_vector_norm_like_pytorch(args):
    """torch.norm / Tensor.norm go through linalg.vector_norm, in both libraries:
    same values, node (LinalgVectorNormBackward0) and gradients."""
    import torch
    values = np.random.default_rng(2).uniform(-2, 2, size=(3, 4))
    results = []
    for lib in (glasstorch, torch):
        x = lib.tensor(values, requires_grad=True)
        out = x.norm(*args)
        out.sum().backward()
        assert lib.norm(x.detach(), *args).tolist() == out.tolist()
        results.append((out.tolist(), type(out.grad_fn).__name__, x.grad.tolist()))
    assert results[0][1] == results[1][1] == "LinalgVectorNormBackward0"
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12)
    assert glasstorch.linalg.vector_norm(glasstorch.tensor(values)).item() == \
        pytest.approx(torch.linalg.vector_norm(torch.tensor(values)).item(), rel=1e-12)


def test_kernel_below_autograd_follows_new_registrations():
    """The autograd kernel memoizes the kernel below it per key set; a new
    registration (and its removal) must take effect on the next call."""
    x = glasstorch.tensor([0.0, 1.0])
    assert x.sigmoid().tolist() == [0.5, pytest.approx(0.7310585786)]
    lib = glasstorch.library.Library("aten", "IMPL")
    try:
        lib.impl("sigmoid", lambda t: glasstorch.zeros_like(t), "CPU")
        assert x.sigmoid().tolist() == [0.0, 0.0]
    finally:
        lib._destroy()
    assert x.sigmoid().tolist() == [0.5, pytest.approx(0.7310585786)]
