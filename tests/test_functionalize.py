"""torch.func.functionalize compared with PyTorch's, on a catalogue of functions.

Each function runs as ``functionalize(f, remove=...)(*inputs)`` in both
libraries under a logging TorchDispatchMode entered outside the call: the ops
that reach it (the functionalized program, in PyTorch's order), the returned
values and the inputs afterwards (input mutations copied back) must be
PyTorch's, and the values must also be the unfunctionalized ``f``'s.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch._subclasses.functional_tensor import FunctionalTensor, FunctionalTensorMode

from .helpers import op_logger, to_numpy


def _run(lib, f, arrays, remove):
    """(logged ops, outputs, inputs afterwards) of functionalize(f) in ``lib``."""
    inputs = [lib.tensor(a) for a in arrays]
    with op_logger(lib)() as log:
        out = lib.func.functionalize(lambda *xs: f(lib, *xs), remove=remove)(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    assert not any(type(o).__name__ == "FunctionalTensor" for o in outs)
    return log.ops, [to_numpy(o) for o in outs], [to_numpy(x) for x in inputs]


def _eager(lib, f, arrays):
    inputs = [lib.tensor(a) for a in arrays]
    out = f(lib, *inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [to_numpy(o) for o in outs], [to_numpy(x) for x in inputs]


def check(f, arrays, remove="mutations"):
    ops, outs, ins = _run(gt, f, arrays, remove)
    t_ops, t_outs, t_ins = _run(torch, f, arrays, remove)
    assert ops == t_ops
    for ours, theirs in zip(outs + ins, t_outs + t_ins):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
    eager_outs, eager_ins = _eager(gt, f, arrays)
    for ours, eager in zip(outs + ins, eager_outs + eager_ins):
        np.testing.assert_allclose(ours, eager, rtol=1e-6, atol=1e-6)
    # nothing mutates but the final copy_ into inputs (and no view survives
    # remove="mutations_and_views" but the ops torch keeps too)
    body = [op for op in ops if op != "aten.copy_.default"]
    assert not any(op.split(".")[1].endswith("_") for op in body), body
    return ops


def _r(*shape, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(np.float32)


# -- the catalogue: (name, f(lib, *inputs), input arrays) -----------------------------------

def _index_put(lib, x, idx):
    x.index_put_((idx,), lib.ones(()) * 5)
    return x.sum()


def _under_no_grad(lib, x):
    with lib.no_grad():
        x.mul_(2)
    return x + 1


def _two_inputs(lib, x, y):
    x.add_(y)
    y.mul_(2)
    return x - y


CATALOGUE = [
    ("inplace_on_input", lambda lib, x: x.add_(1), [_r(2, 3)]),
    ("inplace_on_intermediate", lambda lib, x: (x + 1).mul_(2), [_r(2, 3)]),
    ("view_of_input_mutated", lambda lib, x: (x.view(-1).add_(1), x * 2)[1], [_r(2, 3)]),
    ("view_of_intermediate_mutated",
     lambda lib, x: (lambda a: (a[0:2].zero_(), a)[1])(x.clone()), [_r(3, 3)]),
    ("chained_views_fill",
     lambda lib, x: x.view(2, 3).transpose(0, 1)[1:2].select(1, 0).fill_(5), [_r(6)]),
    ("t_select_mul", lambda lib, x: (x.t()[1].mul_(3), x)[1], [_r(2, 3)]),
    ("aliasing_outputs",
     lambda lib, x: (lambda a: (a.view(-1).add_(1), a, a.view(-1), a.t())[1:])(x + 0),
     [_r(2, 3)]),
    ("out_into_fresh_tensor",
     lambda lib, x: (lambda y: (lib.add(x.view(-1), 1, out=y), y)[1])(lib.empty(6)), [_r(2, 3)]),
    ("out_into_input", lambda lib, x: (lib.mul(x, 2, out=x), x)[1], [_r(2, 3)]),
    ("index_put_", _index_put, [_r(4, 3), np.array([0, 2])]),
    ("copy_broadcasting",
     lambda lib, x: (lambda y: (y.copy_(x[0]), y)[1])(lib.zeros(2, 3)), [_r(2, 3)]),
    ("fill_on_input", lambda lib, x: (x.fill_(2.5), x.sum())[1], [_r(2, 3)]),
    ("zero_on_view_of_input", lambda lib, x: (x[:, 1].zero_(), x)[1], [_r(2, 3)]),
    ("mutation_under_no_grad", _under_no_grad, [_r(2, 3)]),
    ("returns_view_of_input", lambda lib, x: x.t(), [_r(2, 3)]),
    ("stale_view_taken_after_write", lambda lib, x: (x[0].add_(1), x[1])[1], [_r(2, 3)]),
    ("stale_view_taken_before_write",
     lambda lib, x: (lambda a, b: (a.add_(1), b)[1])(x[0], x[1]), [_r(2, 3)]),
    ("base_written_view_returned", lambda lib, x: (lambda a: (x.add_(1), a)[1])(x.view(-1)),
     [_r(2, 3)]),
    ("unsqueeze_squeeze_writes",
     lambda lib, x: (x.unsqueeze(0).add_(1), x.squeeze().add_(1), x)[2], [_r(2, 3)]),
    ("inplace_with_view_argument", lambda lib, x: (lambda y: (x.add_(y.t()), y)[1])(x.t()),
     [_r(3, 3)]),
    ("diagonal_add", lambda lib, x: (x.diagonal().add_(1), x)[1], [_r(3, 3)]),
    ("views_without_writes",
     lambda lib, x: x.unsqueeze(0).squeeze(0).permute(1, 0).expand(2, 3, 2).sum(), [_r(2, 3)]),
    ("factory_written_from_input", lambda lib, x: lib.ones(3).add_(x[0]).mul_(x[1]), [_r(2, 3)]),
    ("two_inputs", _two_inputs, [_r(2, 3), _r(2, 3, seed=1)]),
    ("inplace_then_view_then_inplace",
     lambda lib, x: (lambda a: (a.mul_(2), a[1:].t().add_(1), a.sub_(3), a)[3])(x.clone()),
     [_r(3, 2)]),
]

# Multi-output views: with remove="mutations_and_views" they become split_copy /
# split_with_sizes_copy / unbind_copy, whose outputs are replayed one by one.
MULTI_OUTPUT = [
    ("split_write", lambda lib, x: (x.split(1)[0].mul_(2), x.split(1)[1])[1], [_r(2, 3)]),
    ("split_last_dim_write", lambda lib, x: (x.split(2, -1)[1].mul_(2), x)[1], [_r(2, 3)]),
    ("unbind_write", lambda lib, x: (x.unbind(0)[1].mul_(2), x)[1], [_r(2, 3)]),
    ("chunk_write_then_read_sibling",
     lambda lib, x: (lambda a, b: (a.add_(b), b.t(), x)[1:])(*x.chunk(2, 1)), [_r(3, 4)]),
    ("split_with_sizes_of_intermediate",
     lambda lib, x: (lambda y: (y.split([1, 2], 1)[1].zero_(), y)[1])(x * 2), [_r(2, 3)]),
    ("unbind_last_dim_all_written",
     lambda lib, x: ([p.mul_(i + 1) for i, p in enumerate(x.unbind(-1))], x)[1], [_r(3, 2)]),
]


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
@pytest.mark.parametrize("name,f,arrays", CATALOGUE + MULTI_OUTPUT,
                         ids=[c[0] for c in CATALOGUE + MULTI_OUTPUT])
def test_catalogue_matches_pytorch(name, f, arrays, remove):
    check(f, arrays, remove)


def _pieces(lib, x, size, dim):
    """(name, the copy's pieces, its public function, its arguments) per multi-output copy."""
    aten = lib.ops.aten
    sizes = [size, x.shape[dim] - size]
    return [("split_copy", aten.split_copy.Tensor(x, size, dim), lib.split_copy, (size, dim)),
            ("split_with_sizes_copy", aten.split_with_sizes_copy.default(x, sizes, dim),
             lib.split_with_sizes_copy, (sizes, dim)),
            ("unbind_copy", aten.unbind_copy.int(x, dim), lib.unbind_copy, (dim,))]


def _multi_copies(lib, rows, cols, size, dim, transposed):
    """Each piece as (values, strides, aliases x), then each out= list's values."""
    x = lib.tensor(_r(rows, cols))
    x = x.t() if transposed else x
    found = []
    for name, pieces, public, args in _pieces(lib, x, min(size, x.shape[dim]), dim):
        found.append([(to_numpy(p).tolist(), p.stride(),
                       p.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
                      for p in pieces])
        # split_copy's out= does not resize: its outs come in the pieces' shapes
        outs = [lib.empty(p.shape if name == "split_copy" else 0) for p in pieces]
        assert public(x, *args, out=outs) is None
        found.append([to_numpy(o).tolist() for o in outs])
    return found


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 5), cols=st.integers(1, 4), size=st.integers(1, 3),
       dim=st.sampled_from([0, 1, -1]), transposed=st.booleans())
def test_multi_output_view_copies_any_shape(rows, cols, size, dim, transposed):
    """split_copy / split_with_sizes_copy / unbind_copy give torch's pieces
    (values, contiguous strides, no aliasing), and their out= overloads write
    the same pieces into a list and return None."""
    assert _multi_copies(gt, rows, cols, size, dim, transposed) == \
        _multi_copies(torch, rows, cols, size, dim, transposed)


@pytest.mark.parametrize("call", [
    lambda L, x: L.split_copy(x, 2, out=[L.empty(2, 3)]),
    lambda L, x: L.split_copy(x, 2, out=[L.empty(0), L.empty(0)]),
    lambda L, x: L.split_with_sizes_copy(x, [1, 3], out=[L.empty(1, 3)] * 3),
    lambda L, x: L.split_with_sizes_copy(x, [1, 3], out=[L.empty(0, dtype=L.int64),
                                                         L.empty(0)]),
    lambda L, x: L.unbind_copy(x, 1, out=[L.empty(4)] * 2),
    lambda L, x: L.unbind_copy(x, out=[L.empty(0, dtype=L.float64)] * 4),
])
def test_list_out_errors_match_pytorch(call):
    """Wrong number of outs, a wrong dtype, and split_copy's out= not resizing."""
    messages = []
    for lib in (gt, torch):
        with pytest.raises(RuntimeError) as info:
            call(lib, lib.tensor(_r(4, 3)))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("call", [
    lambda L, x, outs: L.split_copy(x, 3, out=outs(L.zeros(3, 2, dtype=L.int64), L.zeros(3, 2))),
    lambda L, x, outs: L.split_with_sizes_copy(x, [3, 1], out=outs(L.zeros(2, 3).t(),
                                                                   L.zeros(5))),
    lambda L, x, outs: L.unbind_copy(x, -1, out=outs(L.zeros(4), L.zeros(2, 3))),
])
def test_list_out_values_and_resize_warnings_match_pytorch(call):
    """split_copy copies into its outs as they are (casting, broadcasting); the
    others keep an out of the right shape and resize the rest, warning when it
    held data: the values, strides and warnings are torch's."""
    seen = []
    for lib in (gt, torch):
        kept = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(lib, lib.tensor(_r(4, 2)), lambda *outs: kept.extend(outs) or kept)
        seen.append(([(to_numpy(o).tolist(), o.stride(), str(o.dtype)[-5:]) for o in kept],
                     [str(w.message).split(" (Triggered internally")[0] for w in caught]))
    assert seen[0] == seen[1]
    assert seen[0][0]


def test_catalogue_is_large_and_varied():
    assert len(CATALOGUE) >= 20


def test_write_through_view_replays_like_pytorch():
    """The example the Note names: select, add, select_scatter, select, copy_."""
    ops = check(lambda lib, x: (x[0].add_(1), x)[1], [_r(2, 3)])
    assert ops == ["aten.select.int", "aten.add.Tensor", "aten.select_scatter.default",
                   "aten.select.int", "aten.copy_.default"]
    ops = check(lambda lib, x: (x[0].add_(1), x)[1], [_r(2, 3)], "mutations_and_views")
    assert ops[0] == "aten.select_copy.int"


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(2, 5), start=st.integers(0, 1),
       index=st.integers(0, 1), remove=st.sampled_from(["mutations", "mutations_and_views"]))
def test_chained_views_any_shape(rows, cols, start, index, remove):
    def f(lib, x):
        y = x.view(cols, rows).transpose(0, 1)[:, start:].select(1, index % (cols - start))
        y.mul_(3)
        return x, y
    check(f, [_r(rows * cols)], remove)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 4), m=st.integers(1, 4), offset=st.integers(-1, 1),
       remove=st.sampled_from(["mutations", "mutations_and_views"]))
def test_diagonal_write_any_shape(n, m, offset, remove):
    check(lambda lib, x: (x.diagonal(offset).mul_(-1), x.t())[1], [_r(n, m)], remove)


def test_bad_remove_raises_pytorchs_error():
    with pytest.raises(RuntimeError) as ours:
        gt.func.functionalize(lambda x: x, remove="views")
    with pytest.raises(RuntimeError) as theirs:
        torch.func.functionalize(lambda x: x, remove="views")
    assert str(ours.value) == str(theirs.value)


def test_mode_and_tensor_directly():
    """FunctionalTensorMode by hand, as AOTAutograd uses it: the wrapped input
    is never written; its value after sync is what the program computed."""
    x = gt.arange(6.0).view(2, 3)
    mode = FunctionalTensorMode()
    with mode:
        fx = FunctionalTensor.to_functional(x)
        fx[1].add_(10)
        view = fx.t()
    assert isinstance(view, FunctionalTensor)
    np.testing.assert_array_equal(to_numpy(x), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(to_numpy(fx.from_functional()),
                                  [[0, 1, 2], [13, 14, 15]])
    np.testing.assert_array_equal(to_numpy(view.from_functional()),
                                  [[0, 13], [1, 14], [2, 15]])
    assert repr(fx).startswith("FunctionalTensor(tensor(")


def test_mutation_without_functional_variant_is_refused():
    with pytest.raises(NotImplementedError, match="no functional variant"):
        gt.func.functionalize(lambda x: gt.ops.aten._amp_update_scale_(
            x, gt.zeros((), dtype=gt.int32), gt.zeros(()), 2.0, 0.5, 1))(gt.ones(()))


def _make_fx_or_skip():
    return pytest.importorskip("glasstorch.fx.experimental.proxy_tensor").make_fx


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
@pytest.mark.parametrize("name,f,arrays", CATALOGUE + MULTI_OUTPUT,
                         ids=[c[0] for c in CATALOGUE + MULTI_OUTPUT])
def test_make_fx_code_matches_pytorch(name, f, arrays, remove):
    make_fx = _make_fx_or_skip()
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx
    ours = make_fx(gt.func.functionalize(lambda *xs: f(gt, *xs), remove=remove))(
        *[gt.tensor(a) for a in arrays])
    theirs = torch_make_fx(torch.func.functionalize(lambda *xs: f(torch, *xs), remove=remove))(
        *[torch.tensor(a) for a in arrays])
    assert ours.code == theirs.code


# -- autograd through functionalized code (AOTAutograd's joint graph) ------------------------
#
# FunctionalTensor.to_functional mirrors requires_grad, so autograd records on
# the wrappers above the mode and the backward's ops are functionalized too.
# (torch.func.functionalize does not: there the inputs never require grad.)

def _joint_graph(lib, f, primals, tangents, mutated=()):
    """make_fx of ``(primals, tangents) -> (outputs, autograd.grad(outputs, the
    primals that require grad, tangents))`` run under a FunctionalTensorMode;
    inputs at the ``mutated`` positions get their new value by ``copy_``."""
    ft = __import__(f"{lib.__name__}._subclasses.functional_tensor", fromlist=["_"])
    make_fx = __import__(f"{lib.__name__}.fx.experimental.proxy_tensor",
                         fromlist=["_"]).make_fx

    def joint(primals, tangents):
        with ft.FunctionalTensorMode():
            p = [ft.FunctionalTensor.to_functional(a) for a in primals]
            t = [ft.FunctionalTensor.to_functional(a) for a in tangents]
            outs = f(lib, *p)
            outs = list(outs) if isinstance(outs, tuple) else [outs]
            grads = lib.autograd.grad(outs, [a for a in p if a.requires_grad], t)
        for i in mutated:
            primals[i].copy_(p[i].from_functional())
        return [o.from_functional() for o in outs], [g.from_functional() for g in grads]

    make = [lib.tensor(a, requires_grad=g) for a, g in primals]
    return make_fx(joint)(make, [lib.tensor(a) for a in tangents]).code


def _inplace_intermediate(lib, x, w):
    y = x @ w
    y.relu_()
    return y.sum(-1)


def _buffer_mutation(lib, x, running):
    running.mul_(0.9).add_(x.detach().mean(0), alpha=0.1)
    return (x - running).tanh()


def _views_of_written_base(lib, x):
    y = x * 2
    y.add_(1)
    v = y.t()
    return v[1:].reshape(-1).exp(), y.view(-1)[::2]


def _mm_relu_softmax(lib, x, w1, w2):
    h = (x @ w1).relu()
    return (h @ w2).softmax(-1)


def _layer_norm_chain(lib, x, weight, bias):
    h = lib.nn.functional.layer_norm(x, (4,), weight, bias)
    h.mul_(2)
    return h.sigmoid().sum(0)


def _split_unbind_after_write(lib, x):
    y = x.clone()
    y.mul_(2)
    a, b = y.split(2, 1)
    return lib.stack((a * b).unbind(0), 1).sin()


JOINTS = [
    ("inplace_on_intermediate", _inplace_intermediate,
     [(_r(3, 4), True), (_r(4, 5, seed=1), True)], [_r(3)], ()),
    ("mutated_input_without_grad", _buffer_mutation,
     [(_r(3, 4), True), (_r(4, seed=1), False)], [_r(3, 4, seed=2)], (1,)),
    ("views_of_written_base", _views_of_written_base, [(_r(3, 3), True)],
     [_r(6), _r(5, seed=1)], ()),
    ("mm_relu_softmax", _mm_relu_softmax,
     [(_r(2, 3), False), (_r(3, 4, seed=1), True), (_r(4, 5, seed=2), True)], [_r(2, 5)], ()),
    ("layer_norm_then_inplace", _layer_norm_chain,
     [(_r(3, 4), True), (_r(4, seed=1), True), (_r(4, seed=2), True)], [_r(4)], ()),
    ("split_unbind_after_write", _split_unbind_after_write, [(_r(3, 4), True)], [_r(2, 3)], ()),
]


@pytest.mark.parametrize("name,f,primals,tangents,mutated", JOINTS,
                         ids=[j[0] for j in JOINTS])
def test_joint_graph_matches_pytorch(name, f, primals, tangents, mutated):
    ours = _joint_graph(gt, f, primals, tangents, mutated)
    assert ours == _joint_graph(torch, f, primals, tangents, mutated)
    assert "torch.ops.aten" in ours


def test_to_functional_mirrors_requires_grad_and_functionalize_does_not():
    """Inside torch.func.functionalize the inputs do not require grad (PyTorch's
    functorch wrappers carry no autograd meta), so autograd.grad raises there as
    in PyTorch; FunctionalTensor.to_functional's wrappers do require grad."""
    seen = []
    for lib in (gt, torch):
        ft = __import__(f"{lib.__name__}._subclasses.functional_tensor", fromlist=["_"])
        x = lib.ones(2, requires_grad=True)
        inside = lib.func.functionalize(lambda a: (a.requires_grad, a.is_leaf))(x)
        with pytest.raises(RuntimeError) as info:
            lib.func.functionalize(lambda a: lib.autograd.grad([(a * 2).sum()], [a]))(x)
        with ft.FunctionalTensorMode():
            fx = ft.FunctionalTensor.to_functional(x)
            grad, = lib.autograd.grad([(fx * fx).sum()], [fx])
        # (PyTorch's wrapper is also a non-leaf, with an Error grad_fn; glasstorch's is a leaf)
        seen.append((inside, str(info.value), fx.requires_grad,
                     to_numpy(grad.from_functional()).tolist()))
    assert seen[0] == seen[1]
    assert seen[0][2] is True


# -- writes through the other view inverses ---------------------------------------------------

INVERSES = [
    ("detach_write", lambda lib, x: (x.detach().mul_(2), x + 1)[1], [_r(2, 3)]),
    ("as_strided_write",
     lambda lib, x: (x.as_strided((2, 2), (1, 3), 1).add_(5), x)[1], [_r(2, 3)]),
    ("unfold_write_disjoint_windows", lambda lib, x: (x.unfold(1, 2, 2).mul_(-1), x)[1],
     [_r(2, 4)]),
    ("diagonal_offset_dims_write",
     lambda lib, x: (x.diagonal(1, 0, 2).add_(10), x.diagonal(-1, 2, 1).mul_(2), x)[2],
     [_r(3, 2, 4)]),
]


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
@pytest.mark.parametrize("name,f,arrays", INVERSES, ids=[c[0] for c in INVERSES])
def test_view_inverses_match_pytorch(name, f, arrays, remove):
    check(f, arrays, remove)


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_write_through_expand_matches_pytorch(remove):
    """Eager refuses this write (overlapping memory); functionalized, the
    expanded value is summed back onto the base (sum_to), as in PyTorch."""
    f = lambda lib, x: (lambda y: (y.expand(3, 2, 4).add_(1), y)[1])(x.clone())  # noqa: E731
    ops, outs, _ = _run(gt, f, [_r(2, 1)], remove)
    t_ops, t_outs, _ = _run(torch, f, [_r(2, 1)], remove)
    assert ops == t_ops
    np.testing.assert_allclose(outs[0], t_outs[0], rtol=1e-6)


def test_reapply_views_flag_matches_pytorch():
    """The thread-local flag: False by default, set answers the old value, and a
    view keeps the flag it was taken with (from_functional after the mode)."""
    from glasstorch._subclasses import functional_tensor as ft
    assert ft._functionalization_reapply_views_tls() is \
        torch._C._functionalization_reapply_views_tls() is False
    assert ft._functionalize_enable_reapply_views(True) is False
    assert ft._functionalization_reapply_views_tls() is True
    assert ft._functionalize_enable_reapply_views(False) is True
    inside = []
    for lib in (gt, torch):
        for remove in ("mutations", "mutations_and_views"):
            flag = (ft._functionalization_reapply_views_tls if lib is gt
                    else torch._C._functionalization_reapply_views_tls)
            lib.func.functionalize(lambda x: inside.append(flag()) or x, remove=remove)(
                lib.ones(2))
    assert inside[:2] == inside[2:]
