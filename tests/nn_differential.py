"""One module, built in both libraries with the same weights, compared end to end.

``check_module(build, inputs)`` builds ``build(torch)`` and ``build(glasstorch)``,
copies torch's state_dict into ours (through numpy), then asserts: the same
repr, the same state_dict keys, shapes and dtypes, the same outputs, and after
``backward`` with the same random output gradients, the same gradients for every
floating input and every parameter.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import glasstorch as gt

from .helpers import to_numpy


def copy_state(theirs, ours) -> None:
    """Load ``theirs``' (a torch module) state_dict into ``ours``, bit for bit."""
    state = {k: gt.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat(v)]
    return [value] if isinstance(value, (torch.Tensor, gt.Tensor)) else []


def _assert_close(ours, theirs, what, atol, rtol):
    a, b = to_numpy(ours), to_numpy(theirs)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], \
        f"{what}: dtype {ours.dtype} != {theirs.dtype}"
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a.astype(np.float64) if a.dtype.kind != "b" else a,
                               b.astype(np.float64) if b.dtype.kind != "b" else b,
                               atol=atol, rtol=rtol, err_msg=what)


def check_module(build, inputs, *, atol=1e-5, rtol=1e-4, backward=True, train=True,
                 seed=0, check_repr=True):
    """``build(lib)`` makes the module; ``inputs(lib)`` the forward arguments (a
    tuple), made from the same numpy values for both libraries (see
    ``same_inputs``).  Returns (ours, theirs) modules for further checks."""
    torch.manual_seed(seed)
    gt.manual_seed(seed)
    theirs, ours = build(torch), build(gt)
    theirs.train(train)
    ours.train(train)
    if check_repr:
        assert repr(ours) == repr(theirs)
    t_state, o_state = theirs.state_dict(), ours.state_dict()
    assert list(o_state) == list(t_state)
    for k in t_state:
        assert tuple(o_state[k].shape) == tuple(t_state[k].shape), k
        assert str(o_state[k].dtype).split(".")[-1] == str(t_state[k].dtype).split(".")[-1], k
    copy_state(theirs, ours)

    t_in, o_in = inputs(torch), inputs(gt)
    for a, b in zip(_flat(t_in), _flat(o_in)):
        if a.is_floating_point() and backward:
            a.requires_grad_()
            b.requires_grad_()
    t_out, o_out = theirs(*t_in), ours(*o_in)
    t_outs, o_outs = _flat(t_out), _flat(o_out)
    assert len(t_outs) == len(o_outs)
    for i, (a, b) in enumerate(zip(o_outs, t_outs)):
        _assert_close(a, b, f"output {i}", atol, rtol)
    for k, v in theirs.state_dict().items():  # running stats and other buffers updated by forward
        _assert_close(ours.state_dict()[k], v, f"state {k} after forward", atol, rtol)
    if not backward:
        return ours, theirs

    rng = np.random.default_rng(seed + 1)
    pairs = [(a, b) for a, b in zip(t_outs, o_outs) if a.requires_grad]
    grads = [rng.standard_normal(a.shape).astype(np.float32) for a, _ in pairs]
    torch.autograd.backward([a for a, _ in pairs],
                            [torch.from_numpy(g).to(a.dtype) for g, (a, _) in zip(grads, pairs)])
    gt.autograd.backward([b for _, b in pairs],
                         [gt.from_numpy(g).to(b.dtype) for g, (_, b) in zip(grads, pairs)])
    for i, (a, b) in enumerate(zip(_flat(t_in), _flat(o_in))):
        if a.grad is not None or b.grad is not None:
            assert a.grad is not None and b.grad is not None, f"input {i} grad presence"
            _assert_close(b.grad, a.grad, f"input {i} grad", atol, rtol)
    t_params, o_params = dict(theirs.named_parameters()), dict(ours.named_parameters())
    assert list(o_params) == list(t_params)
    for name, p in t_params.items():
        q = o_params[name]
        assert (p.grad is None) == (q.grad is None), f"{name}.grad presence"
        if p.grad is not None:
            _assert_close(q.grad, p.grad, f"{name}.grad", atol, rtol)
    return ours, theirs


def same_inputs(*specs, seed=0):
    """``inputs`` for ``check_module``: each spec is a shape (float32 normal
    values) or ``(shape, dtype, low, high)`` for integer tensors."""
    def make(lib):
        rng = np.random.default_rng(seed)
        out = []
        for spec in specs:
            if spec and isinstance(spec[0], tuple):
                shape, dtype, low, high = spec
                out.append(lib.from_numpy(rng.integers(low, high, size=shape).astype(dtype)))
            else:
                out.append(lib.from_numpy(rng.standard_normal(spec).astype(np.float32)))
        return tuple(out)
    return make


def run_functional(fn, *arrays, grad=True):
    """``fn(lib, *tensors)`` under both libraries (glasstorch first): per library
    the outputs, the floating inputs' gradients for one fixed random gradient of
    the first output, and the outputs' grad_fn names."""
    results = []
    for lib in (gt, torch):
        tensors = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        out = fn(lib, *tensors)
        outs = out if isinstance(out, tuple) else (out,)
        grads = None
        if grad and outs[0].requires_grad:
            seed = np.random.default_rng(1).standard_normal(tuple(outs[0].shape))
            outs[0].backward(lib.tensor(seed, dtype=outs[0].dtype))
            grads = [t.grad.numpy() if t.grad is not None else None for t in tensors]
        results.append(([o.detach().numpy() for o in outs], grads,
                        [type(o.grad_fn).__name__ if o.grad_fn is not None else None
                         for o in outs]))
    return results


def check_functional(fn, *arrays, atol=1e-6, grad=True, check_fn=True):
    """``fn`` gives the same outputs (shape, dtype, values), gradients and, with
    ``check_fn``, grad_fn names in both libraries."""
    (g_out, g_grad, g_fn), (t_out, t_grad, t_fn) = run_functional(fn, *arrays, grad=grad)
    assert g_fn == t_fn or not check_fn
    for g, t in zip(g_out, t_out):
        assert g.shape == t.shape and g.dtype == t.dtype
        np.testing.assert_allclose(g, t, atol=atol, rtol=1e-5, equal_nan=True)
    assert (g_grad is None) == (t_grad is None)
    for g, t in zip(g_grad or [], t_grad or []):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(g, t, atol=atol, rtol=1e-5, equal_nan=True)


def check_same_error(fn):
    """``fn(torch)`` raises; ``fn(glasstorch)`` raises the same type and message."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(gt)
    assert str(got.value) == str(expected.value)


def gradcheck_functional(fn, *arrays, gradgrad=False):
    """float64 gradcheck (and gradgradcheck) of ``fn(glasstorch, ...)`` in its
    floating inputs."""
    inputs = tuple(gt.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays)
    f = lambda *xs: fn(gt, *xs)   # noqa: E731
    assert gt.autograd.gradcheck(f, inputs)
    if gradgrad:
        assert gt.autograd.gradgradcheck(f, inputs)
