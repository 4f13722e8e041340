"""vmap against real ``torch.vmap``: the same values, shapes, dtypes, errors and
loop-fallback warnings, over a catalogue of ops (pointwise, reductions, views,
matrix products, nn.functional, indexing, convolution), in_dims/out_dims over
pytrees, nested vmap, chunk_size, randomness, and vmap over modules and over
``grad`` (per-sample gradients, which batch the backward ops).

Every scenario is a function of the library; ``check`` runs it in both and
compares.  glasstorch must not send an op to the per-example loop where torch
has a batching rule: its loop warnings must be among torch's.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import glasstorch as gt

from .helpers import assert_same

LOOP = "There is a performance drop because we have not yet implemented the batching rule"


def data(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def ints(*shape, high=5, seed=0):
    return np.random.default_rng(seed).integers(0, high, shape)


def perms(batch, k, n, seed=0):
    """``batch`` rows of ``k`` distinct indices below ``n`` (writes without duplicates)."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(n)[:k] for _ in range(batch)])


def T(lib, array):
    return lib.from_numpy(np.array(array))


def outcome(fn, lib):
    """(("returned", value) or ("raised", type name, message), loop-fallback warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("returned", fn(lib))
        except Exception as exc:  # noqa: BLE001 - the exception is what we compare
            result = ("raised", type(exc).__name__, str(exc))
    return result, {str(w.message).split(" (Triggered internally")[0] for w in caught
                    if LOOP in str(w.message)}


def assert_tree_same(ours, theirs, atol, rtol):
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), (ours, theirs)
        for k in theirs:
            assert_tree_same(ours[k], theirs[k], atol, rtol)
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), (ours, theirs)
        for o, t in zip(ours, theirs):
            assert_tree_same(o, t, atol, rtol)
    else:
        assert_same(ours, theirs, atol=atol, rtol=rtol, strides=False)


def check(fn, *, atol=1e-5, rtol=1e-5, raises=False):
    """``fn(torch)`` and ``fn(glasstorch)`` return the same tree of tensors, or
    raise the same exception type and message (then ``raises`` must be set)."""
    (theirs, their_loops), (ours, our_loops) = outcome(fn, torch), outcome(fn, gt)
    assert our_loops <= their_loops, f"glasstorch loops where torch does not: {our_loops - their_loops}"
    if theirs[0] == "raised" or ours[0] == "raised":
        assert ours == theirs, f"\nglasstorch: {ours}\ntorch:      {theirs}"
        assert raises, f"both raised: {theirs}"
        return theirs
    assert not raises, "torch returned"
    assert_tree_same(ours[1], theirs[1], atol, rtol)
    return theirs[1]


def vmapped(fn, *arrays, in_dims=0, out_dims=0, **options):
    """A scenario: ``vmap(fn)`` over ``arrays`` (numpy; None stays None)."""
    def scenario(lib):
        inputs = [None if a is None else T(lib, a) if isinstance(a, np.ndarray) else a
                  for a in arrays]
        return lib.vmap(lambda *xs: fn(lib, *xs), in_dims=in_dims, out_dims=out_dims,
                        **options)(*inputs)
    return scenario


# -- the op catalogue ------------------------------------------------------------------------

B = 3
CATALOGUE = [
    # pointwise and type promotion
    ("add", lambda lib, x, y: x + y, [data(B, 4), data(4, seed=1)], (0, None)),
    ("mul_bcast", lambda lib, x, y: x * y, [data(2, 4, B), data(B, 4, seed=1)], (-1, 0)),
    ("sub_alpha", lambda lib, x, y: lib.sub(x, y, alpha=2), [data(B, 4), data(B, 4, seed=1)], 0),
    ("div_scalar", lambda lib, x: x / 3 + 1.5, [data(B, 4)], 0),
    ("int_plus_float_scalar", lambda lib, x: x + 1.5, [ints(B, 4)], 0),
    ("int_times_batched_float0d", lambda lib, x, s: x * s, [ints(4, B), data(B)], (1, 0)),
    ("float_plus_batched_double0d", lambda lib, x, s: x + s,
     [data(B, 4), data(B, dtype=np.float64)], 0),
    ("batched_double0d_plus_0d", lambda lib, s, t: s + t, [data(B, dtype=np.float64), data(B)], 0),
    ("int0d_times_float", lambda lib, s, x: s * x, [ints(B), data(4, B)], (0, 1)),
    ("pow", lambda lib, x: x.abs() ** 1.5, [data(B, 4)], 0),
    ("where", lambda lib, c, x, y: lib.where(c > 0, x, y),
     [data(B, 4), data(B, 4, seed=1), data(4, seed=2)], (0, 0, None)),
    ("clamp", lambda lib, x: x.clamp(-0.5, 0.5), [data(B, 4)], 0),
    ("clamp_tensor", lambda lib, x, lo: lib.clamp(x, min=lo), [data(B, 4), data(B, 1)], 0),
    ("comparison", lambda lib, x, y: (x > y) & (x < 1), [data(B, 4), data(4, seed=1)], (0, None)),
    ("lerp", lambda lib, x, y: lib.lerp(x, y, 0.3), [data(B, 4), data(4, B)], (0, 1)),
    ("addcmul", lambda lib, x, y, z: lib.addcmul(x, y, z, value=0.5),
     [data(B, 4), data(4), data(B, 4)], (0, None, 0)),
    ("masked_fill", lambda lib, x: x.masked_fill(x > 0, 0.0), [data(B, 4)], 0),
    ("to_dtype", lambda lib, x: x.to(lib.float64).double().half().float(), [data(B, 4)], 0),
    ("zeros_like", lambda lib, x: lib.zeros_like(x) + lib.ones_like(x), [data(B, 4)], 0),
    ("nan_to_num", lambda lib, x: (x / 0).nan_to_num(), [data(B, 4)], 0),
    # in-place
    ("add_inplace_batched_self", lambda lib, x, y: x.clone().add_(y), [data(B, 4), data(4)],
     (0, None)),
    ("mul_inplace_both", lambda lib, x, y: x.clone().mul_(y), [data(B, 4), data(4, B)], (0, 1)),
    # reductions
    ("sum_all", lambda lib, x: x.sum(), [data(B, 3, 4)], 0),
    ("sum_dim", lambda lib, x: x.sum(-1, keepdim=True), [data(3, B, 4)], 1),
    ("sum_dims", lambda lib, x: x.sum((0, 1)), [data(3, B, 4)], 1),
    ("mean_dim", lambda lib, x: x.mean(0), [data(B, 3, 4)], 0),
    ("mean_dtype", lambda lib, x: x.mean(dtype=lib.float64), [data(B, 3)], 0),
    ("amax", lambda lib, x: x.amax(1), [data(B, 3, 4)], 0),
    ("max_dim", lambda lib, x: x.max(1), [data(B, 3, 4)], 0),
    ("max_all", lambda lib, x: x.max(), [data(3, 4, B)], 2),
    ("argmax_none", lambda lib, x: x.argmax(), [data(B, 3, 4)], 0),
    ("var_std", lambda lib, x: (x.var(1), x.std(0, correction=0)), [data(B, 3, 4)], 0),
    ("norm", lambda lib, x: (x.norm(), x.norm(dim=1), lib.linalg.vector_norm(x, 1)),
     [data(B, 3, 4)], 0),
    ("logsumexp", lambda lib, x: x.logsumexp(-1), [data(B, 3, 4)], 0),
    ("prod", lambda lib, x: (x.prod(), x.prod(1)), [data(B, 3, 4)], 0),
    ("cumsum", lambda lib, x: x.cumsum(0), [data(3, B, 4)], 1),
    ("any_all", lambda lib, x: ((x > 0).any(), (x > 0).all(1)), [data(B, 3, 4)], 0),
    ("sort_topk", lambda lib, x: (x.sort(-1)[0], x.topk(2).indices), [data(B, 3, 4)], 0),
    ("softmax", lambda lib, x: (x.softmax(-1), x.log_softmax(0)), [data(B, 3, 4)], 0),
    ("reduction_of_scalar", lambda lib, x: (x.sum(0), x.softmax(0), x.sum()), [data(B)], 0),
    # views
    ("view_reshape", lambda lib, x: (x.view(12), x.reshape(2, -1)), [data(B, 3, 4)], 0),
    ("reshape_noncontig", lambda lib, x: x.reshape(-1), [data(3, B, 4)], 1),
    ("permute_transpose_t", lambda lib, x: (x.permute(1, 0), x.transpose(0, 1), x.t(), x.mT),
     [data(3, 4, B)], -1),
    ("expand", lambda lib, x: x.expand(2, 3, 4), [data(B, 1, 4)], 0),
    ("expand_as", lambda lib, x, y: x.expand_as(y), [data(B, 4), data(3, 4)], (0, None)),
    ("squeeze_unsqueeze", lambda lib, x: (x.squeeze(), x.squeeze(0), x.unsqueeze(-1)),
     [data(B, 1, 4)], 0),
    ("flatten_unflatten", lambda lib, x: (x.flatten(), x.flatten(0, 1), x.unflatten(1, (2, 2))),
     [data(B, 3, 4)], 0),
    ("select_slice", lambda lib, x: (x[1], x[:, 1:3], x[..., ::2], x[None, 0, -1]),
     [data(B, 3, 4)], 0),
    ("split_chunk_unbind", lambda lib, x: (x.split(2, 1), x.chunk(2, 0), x.unbind(1)),
     [data(4, B, 4)], 1),
    ("movedim_diagonal", lambda lib, x: (x.movedim(0, -1), x.diagonal(), x.diagonal(1, 0, 1)),
     [data(B, 3, 4)], 0),
    ("flip_roll_repeat", lambda lib, x: (x.flip(0), x.roll(1, 1), x.roll(2), x.repeat(2, 1, 1)),
     [data(B, 3, 4)], 0),
    ("narrow_contiguous", lambda lib, x: x.narrow(1, 1, 2).contiguous(), [data(B, 3, 4)], 0),
    ("cat_stack", lambda lib, x, y: (lib.cat([x, y], 0), lib.stack([x, y], -1), lib.cat([x, y], -1)),
     [data(B, 3, 4), data(3, 4)], (0, None)),
    ("tril_triu", lambda lib, x: (x.tril(), x.triu(1)), [data(B, 3, 4)], 0),
    # matrix products
    ("mm", lambda lib, a, b: a @ b, [data(B, 3, 4), data(4, 5)], (0, None)),
    ("mm_right", lambda lib, a, b: lib.mm(a, b), [data(3, 4), data(4, B, 5)], (None, 1)),
    ("mv_dot", lambda lib, a, v: (lib.mv(a, v), lib.dot(v, v)), [data(B, 3, 4), data(4, B)], (0, 1)),
    ("bmm", lambda lib, a, b: lib.bmm(a, b), [data(B, 2, 3, 4), data(2, 4, 5)], (0, None)),
    ("matmul_nd", lambda lib, a, b: (a @ b, b @ a.mT), [data(B, 2, 3, 4), data(4, B)], (0, 1)),
    ("addmm", lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2),
     [data(5), data(B, 3, 4), data(4, 5)], (None, 0, None)),
    ("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
     [data(B, 2, 4), data(5, 4), data(B, 5)], (0, None, 0)),
    ("einsum", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [data(B, 3, 4), data(B, 4, 2)], 0),
    # nn.functional
    ("relu_gelu", lambda lib, x: (lib.relu(x), lib.nn.functional.gelu(x),
                                   lib.nn.functional.gelu(x, approximate="tanh")), [data(B, 5)], 0),
    ("activations", lambda lib, x: (lib.nn.functional.silu(x), lib.tanh(x), lib.sigmoid(x),
                                     lib.nn.functional.leaky_relu(x, 0.1)), [data(B, 5)], 0),
    ("layer_norm", lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (4,), w, b),
     [data(B, 3, 4), data(4), data(4)], (0, None, None)),
    ("layer_norm_batched_weight", lambda lib, x, w: lib.nn.functional.layer_norm(x, (4,), w),
     [data(B, 3, 4), data(B, 4)], 0),
    ("cross_entropy", lambda lib, x, t: lib.nn.functional.cross_entropy(x, t),
     [data(B, 4, 5), ints(B, 4)], 0),
    ("cross_entropy_unbatched_target", lambda lib, x, t: lib.nn.functional.cross_entropy(x, t),
     [data(B, 4, 5), ints(4)], (0, None)),
    ("mse_loss", lambda lib, x, y: lib.nn.functional.mse_loss(x, y), [data(B, 4), data(4)], (0, None)),
    ("embedding", lambda lib, i, w: lib.nn.functional.embedding(i, w), [ints(B, 4), data(5, 3)],
     (0, None)),
    ("embedding_batched_weight", lambda lib, i, w: lib.nn.functional.embedding(i, w),
     [ints(4), data(B, 5, 3)], (None, 0)),
    ("dropout_eval", lambda lib, x: lib.nn.functional.dropout(x, 0.5, training=False), [data(B, 4)], 0),
    ("conv2d_input", lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1),
     [data(B, 2, 3, 6, 6), data(4, 3, 3, 3)], (0, None)),
    ("conv2d_weight", lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2),
     [data(2, 3, 6, 6), data(B, 4, 3, 3, 3), data(B, 4)], (None, 0, 0)),
    ("conv2d_both_groups", lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=2),
     [data(B, 2, 4, 5, 5), data(4, 2, 2, 3, B)], (0, -1)),
    ("conv1d_unbatched_example", lambda lib, x, w: lib.nn.functional.conv1d(x, w),
     [data(B, 3, 7), data(2, 3, 3)], (0, None)),
    ("max_pool_avg_pool", lambda lib, x: (lib.nn.functional.max_pool2d(x, 2),
                                           lib.nn.functional.avg_pool2d(x, 2)), [data(B, 2, 3, 4, 4)], 0),
    # indexing
    ("index_tensor_batched_index", lambda lib, x, i: x[i], [data(5, 3), ints(B, 4)], (None, 0)),
    ("index_tensor_batched_self", lambda lib, x, i: x[i, 1:], [data(B, 5, 3), ints(4)], (0, None)),
    ("index_tensor_both", lambda lib, x, i, j: x[i, j], [data(B, 5, 3), ints(B, 4), ints(4, high=3)],
     (0, 0, None)),
    ("index_bool_mask_unbatched", lambda lib, x, m: x[:, m], [data(B, 2, 3), np.array([True, False, True])],
     (0, None)),
    ("gather", lambda lib, x, i: x.gather(1, i), [data(B, 3, 5), ints(B, 3, 2)], 0),
    ("gather_unbatched_index", lambda lib, x, i: x.gather(0, i), [data(B, 5), ints(3)], (0, None)),
    ("scatter_add", lambda lib, x, i, s: x.scatter_add(0, i, s),
     [data(B, 5), ints(B, 3), data(3)], (0, 0, None)),
    ("scatter_value", lambda lib, x, i: x.scatter(1, i, 0.0), [data(3, 5), ints(B, 3, 2)], (None, 0)),
    ("index_select", lambda lib, x, i: (x.index_select(1, i), lib.index_select(x, 0, i)),
     [data(B, 5, 5), ints(B, 3)], 0),
    ("index_put", lambda lib, x, i, v: x.clone().index_put_((i,), v, accumulate=True),
     [data(B, 5), ints(3), data(B, 3)], (0, None, 0)),
    ("setitem", lambda lib, x, v: _setitem(x, v), [data(B, 5), data(B)], 0),
    ("index_add", lambda lib, x, i, s: x.index_add(0, i, s), [data(B, 5, 2), ints(3), data(B, 3, 2)],
     (0, None, 0)),
    ("index_add_batched_index", lambda lib, x, i, s: x.index_add(1, i, s, alpha=2),
     [data(2, 5), ints(B, 3), data(2, 3, B)], (None, 0, 2)),
    ("index_copy_fill", lambda lib, x, i, v: (x.index_copy(0, i, x[:2] * 2), x.index_fill(1, i, v),
                                              x.index_fill(0, i, -1.0)),
     [data(B, 5, 5), np.array([3, 1]), data(B)], (0, None, 0)),
    ("index_fill_batched_index", lambda lib, x, i: x.clone().index_fill_(0, i, 7.0),
     [data(B, 5), ints(B, 2)], 0),
    ("index_slice_then_indices", lambda lib, x, i: (x[:, i], x[:, :, i], x[i, :, i], x[..., i, 0]),
     [data(B, 4, 5, 5), ints(B, 2, 3, high=4)], 0),
    ("setitem_indices", lambda lib, x, i: _setitem_index(x, i, 0.5), [data(B, 4, 4), perms(B, 3, 4)], 0),
    ("masked_select", lambda lib, x, m: lib.masked_select(x, m), [data(B, 2, 3), data(3) > 0],
     (0, None)),
    ("scatter_inplace", lambda lib, x, i, s: x.clone().scatter_(0, i, s, reduce="add"),
     [data(B, 5), ints(B, 3), data(3)], (0, 0, None)),
    ("scatter_reduce", lambda lib, x, i, s: x.scatter_reduce(0, i, s, "amax", include_self=False),
     [data(B, 5), ints(3), data(B, 3)], (0, None, 0)),
    ("gather_scalar", lambda lib, x, i: x.gather(0, i), [data(B), np.array(0)], (0, None)),
    ("new_factories", lambda lib, x: (x.new_zeros(2, 3), x.new_full((2,), 3.0), x.new_ones(())),
     [data(B, 4)], 0),
    ("tril_inplace", lambda lib, x: x.clone().tril_(-1), [data(B, 3, 3)], 0),
    ("nll_weight_ignore", lambda lib, x, t, w: lib.nn.functional.nll_loss(x, t, w, ignore_index=1),
     [data(B, 4, 5), ints(B, 4), np.abs(data(5))], (0, 0, None)),
    ("nll_spatial", lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, reduction="sum"),
     [data(B, 2, 5, 3), ints(2, 3)], (0, None)),
    ("losses", lambda lib, x, y: (lib.nn.functional.l1_loss(x, y),
                                  lib.nn.functional.smooth_l1_loss(x, y, reduction="sum"),
                                  lib.nn.functional.huber_loss(x, y, reduction="none"),
                                  lib.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid()),
                                  lib.nn.functional.binary_cross_entropy(x.sigmoid(), y.sigmoid())),
     [data(B, 4), data(4)], (0, None)),
    ("conv_transpose_batched_weight", lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2),
     [data(2, 4, 3, 3), data(B, 4, 3, 2, 2)], (None, 0)),
    ("conv1d_batched_bias", lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b),
     [data(B, 2, 3, 7), data(2, 3, 3), data(B, 2)], (0, None, 0)),
    ("pads", lambda lib, x: (lib.nn.functional.pad(x, (1, 2)), lib.nn.functional.pad(x, (1, 1, 2, 0), mode="reflect"),
                             lib.nn.functional.pad(x[0], (2, 1), mode="replicate")), [data(B, 2, 3, 4)], 0),
    ("attention", lambda lib, q, k: lib.nn.functional.scaled_dot_product_attention(q, k, k, is_causal=True),
     [data(B, 2, 4, 3), data(2, 4, 3)], (0, None)),
    ("trace_take_rot90", lambda lib, x, i: (x.trace(), x.take(i), x.rot90(1, (0, 1))),
     [data(B, 3, 3), ints(B, 2, high=9)], 0),
    ("view_scatters", lambda lib, x, s: (lib.select_scatter(x, s[0], 0, 1), lib.slice_scatter(x, s, 0, 1, 3),
                                         lib.diagonal_scatter(x, s[0, :3])),
     [data(B, 3, 4), data(2, 4)], (0, None)),
    ("pools", lambda lib, x: (lib.nn.functional.max_pool1d(x.flatten(-2), 2),
                              lib.nn.functional.adaptive_avg_pool2d(x, 2),
                              lib.nn.functional.interpolate(x, scale_factor=2)), [data(B, 2, 3, 4, 4)], 0),
]


def _setitem_index(x, i, v):
    x = x.clone()
    x[:, i] = v
    x[i] = x[i] * 2
    return x


def _setitem(x, v):
    x = x.clone()
    x[1:3] = v
    return x


@pytest.mark.parametrize("name, fn, arrays, in_dims", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_catalogue(name, fn, arrays, in_dims):
    check(vmapped(fn, *arrays, in_dims=in_dims), atol=1e-4, rtol=1e-4)


def test_index_put_after_a_slice_equals_the_loop():
    """``x[:, i] = v`` with batched ``i`` and ``v``: the oracle is torch's loop over
    the examples (torch.vmap's own result differs from that loop here)."""
    x, i, v = data(B, 4, 4, 3), perms(B, 4, 4), data(B, 4, 1, 3)
    batched = gt.vmap(_setitem_index)(T(gt, x), T(gt, i), T(gt, v))
    loop = torch.stack([_setitem_index(*(torch.from_numpy(a[b]) for a in (x, i, v))) for b in range(B)])
    assert_same(batched, loop, strides=False)


# -- hypothesis: shapes, values and in_dims ------------------------------------------------------

UNARY = ["sin", "exp", "abs", "neg", "tanh", "sigmoid", "relu", "floor", "sign", "square"]
BINARY = ["add", "sub", "mul", "maximum", "atan2", "eq", "lt"]
REDUCE = ["sum", "mean", "amax", "prod", "logsumexp", "softmax", "cumsum", "var"]


@st.composite
def batched_array(draw, shape, batch):
    """An array of logical ``shape`` with ``batch`` examples at a drawn dim, and that dim."""
    in_dim = draw(st.integers(-len(shape) - 1, len(shape)))
    values = draw(st.lists(st.floats(-3, 3, width=32), min_size=1, max_size=1))[0]
    seed = draw(st.integers(0, 2 ** 16))
    array = data(batch, *shape, seed=seed) + np.float32(values)
    return np.moveaxis(array, 0, in_dim), in_dim


shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3)


@given(st.sampled_from(UNARY), shapes, st.integers(1, 3), st.data())
def test_unary_pointwise(name, shape, batch, draw):
    x, d = draw.draw(batched_array(shape, batch))
    check(vmapped(lambda lib, t: getattr(lib, name)(t), x, in_dims=d))


@given(st.sampled_from(BINARY), shapes, st.integers(1, 3), st.data())
def test_binary_pointwise_broadcasting(name, shape, batch, draw):
    """Two operands of broadcastable logical shapes, each batched at any dim or not at all."""
    other = [draw.draw(st.sampled_from([s, 1])) for s in shape][draw.draw(st.integers(0, len(shape))):]
    x, dx = draw.draw(batched_array(shape, batch))
    y, dy = draw.draw(batched_array(other, batch))
    if draw.draw(st.booleans()):
        y, dy = np.asarray(y.take(0, axis=dy)), None
    check(vmapped(lambda lib, a, b: getattr(lib, name)(a, b), x, y, in_dims=(dx, dy)))


@given(st.sampled_from(REDUCE), shapes, st.integers(1, 3), st.booleans(), st.data())
def test_reductions(name, shape, batch, keepdim, draw):
    x, d = draw.draw(batched_array(shape, batch))
    dim = draw.draw(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))

    def fn(lib, t):
        if name in ("softmax", "cumsum"):
            return getattr(t, name)(dim)
        if name == "prod":
            return t.prod(dim, keepdim=keepdim)
        return getattr(t, name)(dim, keepdim=keepdim), getattr(t, name)() if name != "logsumexp" \
            else t.logsumexp([])
    check(vmapped(fn, x, in_dims=d), atol=1e-4, rtol=1e-4)


VIEWS = {
    "t_or_mT": lambda t: t.t() if t.dim() < 3 else t.mT,
    "flatten": lambda t: t.flatten(),
    "reshape": lambda t: t.reshape(-1, 1),
    "unsqueeze0": lambda t: t.unsqueeze(0),
    "unsqueeze_last": lambda t: t.unsqueeze(-1),
    "squeeze": lambda t: t.squeeze(),
    "flip": lambda t: t.flip(list(range(t.dim()))),
    "movedim": lambda t: t.movedim(0, -1) if t.dim() else t,
    "select_last": lambda t: t[..., 0] if t.dim() else t,
    "slice": lambda t: t[1:] if t.dim() else t,
    "expand": lambda t: t.expand(2, *t.shape),
    "repeat": lambda t: t.repeat(*([2] * t.dim())) if t.dim() else t,
    "unbind0": lambda t: t.unbind(0) if t.dim() else t,
    "contiguous_view": lambda t: t.contiguous().view(-1),
}


@given(st.sampled_from(sorted(VIEWS)), shapes, st.integers(1, 3), st.data())
def test_views(name, shape, batch, draw):
    x, d = draw.draw(batched_array(shape, batch))
    check(vmapped(lambda lib, t: VIEWS[name](t), x, in_dims=d))


@given(shapes, st.integers(1, 3), st.data())
def test_views_write_through_to_the_input(shape, batch, draw):
    """An in-place op through a view of a batched input changes the input."""
    x, d = draw.draw(batched_array(shape, batch))

    def scenario(lib):
        t = T(lib, x)
        lib.vmap(lambda u: u.unsqueeze(0).mul_(2), in_dims=d)(t)
        return t
    check(scenario)


@given(st.integers(2, 3), st.lists(st.sampled_from(["slice", "int", "batched", "fixed"]), min_size=1,
                                   max_size=3), st.booleans(), st.integers(0, 100))
def test_advanced_indexing_layouts_equal_the_loop(ndim, kinds, write, seed):
    """Reads and writes of ``x[idx]`` with full slices, ints and index tensors
    (batched or not) in any order, against torch's per-example loop: where the
    indexed dims land depends on where the index tensors sit."""
    kinds = (kinds + ["slice"] * ndim)[:ndim]
    if not any(k in ("batched", "fixed") for k in kinds):
        kinds[0] = "batched"
    x, batched_index = data(B, *([4] * ndim), seed=seed), ints(B, 2, high=4, seed=seed + 1)
    fixed_index = ints(2, high=4, seed=seed + 2)

    def run(lib, t, i):
        pick = {"slice": slice(None), "int": 1, "batched": i, "fixed": T(lib, fixed_index)}
        idx = tuple(pick[k] for k in kinds)
        if not write:
            return t[idx]
        t = t.clone()
        t[idx] = -1.0
        return t
    batched = gt.vmap(lambda t, i: run(gt, t, i))(T(gt, x), T(gt, batched_index))
    loop = torch.stack([run(torch, torch.from_numpy(x[b]), torch.from_numpy(batched_index[b]))
                        for b in range(B)])
    assert_same(batched, loop, strides=False)


# -- in_dims, out_dims, pytrees --------------------------------------------------------------

def test_pytree_inputs_and_outputs():
    def f(lib, inputs, scale):
        a, b = inputs["pair"]
        return {"sum": a + b * scale, "parts": (a.sin(), [b.cos()])}

    def scenario(lib):
        inputs = {"pair": (T(lib, data(3, 4)), T(lib, data(4, 3, seed=1)))}
        return lib.vmap(lambda i, s: f(lib, i, s), in_dims=({"pair": (0, 1)}, None))(inputs, 2.0)
    check(scenario)


@pytest.mark.parametrize("out_dims", [1, -1, (0, 1), (None, 2)])
def test_out_dims(out_dims):
    def scenario(lib):
        x = T(lib, data(3, 4, 5))
        w = T(lib, data(2))
        return lib.vmap(lambda t: (w * 2 if out_dims == (None, 2) else t.sum(-1), t * 2),
                        out_dims=out_dims)(x)
    check(scenario)


def test_unbatched_output_is_expanded_and_kwargs_pass_through():
    def scenario(lib):
        w = T(lib, data(4))
        return lib.vmap(lambda t, *, k: (w + k, t * k))(T(lib, data(3, 4)), k=2.0)
    check(scenario)


def test_nested_vmap_with_different_in_dims():
    def scenario(lib):
        x, y = T(lib, data(2, 3, 4)), T(lib, data(4, 3, seed=1))
        inner = lib.vmap(lambda a, b: (a * b).sum(), in_dims=(1, 0))
        outer = lib.vmap(inner, in_dims=(0, None))
        return outer(x, y), lib.vmap(lib.vmap(lambda a: a @ a.T, in_dims=1), in_dims=2)(
            T(lib, data(3, 5, 2, 4)))
    check(scenario)


def test_nested_vmap_matmul_and_layer_norm():
    def scenario(lib):
        x, w = T(lib, data(2, 3, 4, 5)), T(lib, data(3, 5, 6, seed=1))
        f = lambda a, b: lib.nn.functional.layer_norm(a @ b, (6,))  # noqa: E731
        return lib.vmap(lib.vmap(f, in_dims=(0, 0)), in_dims=(0, None))(x, w)
    check(scenario, atol=1e-4)


@pytest.mark.parametrize("chunk_size", [1, 2, 5])
def test_chunk_size(chunk_size):
    def scenario(lib):
        x, y = T(lib, data(5, 3)), T(lib, data(3, 5, seed=1))
        return lib.vmap(lambda a, b: (a * b, {"s": a.sum()}), in_dims=(0, 1), out_dims=(1, 0),
                        chunk_size=chunk_size)(x, y)
    check(scenario)


# -- errors ------------------------------------------------------------------------------------

ERRORS = {
    "item": lambda lib: lib.vmap(lambda t: t.sum().item())(T(lib, data(3, 4))),
    "float": lambda lib: lib.vmap(lambda t: float(t.sum()))(T(lib, data(3, 4))),
    "control_flow": lambda lib: lib.vmap(lambda t: t if t.sum() > 0 else -t)(T(lib, data(3, 4))),
    "is_nonzero": lambda lib: lib.vmap(lambda t: t.sum().is_nonzero())(T(lib, data(3, 4))),
    "nonzero": lambda lib: lib.vmap(lambda t: t.nonzero())(T(lib, data(3, 4))),
    "masked_select": lambda lib: lib.vmap(lambda t: t[t > 0])(T(lib, data(3, 4))),
    "equal": lambda lib: lib.vmap(lambda t: lib.equal(t, t))(T(lib, data(3, 4))),
    "mismatched_sizes": lambda lib: lib.vmap(lambda a, b: a + b)(T(lib, data(3)), T(lib, data(4))),
    "in_dims_type": lambda lib: lib.vmap(lambda a: a, in_dims=[0])(T(lib, data(3))),
    "in_dims_structure": lambda lib: lib.vmap(lambda a, b: a, in_dims=(0,))(T(lib, data(3)),
                                                                         T(lib, data(3))),
    "in_dim_out_of_range": lambda lib: lib.vmap(lambda a: a, in_dims=2)(T(lib, data(3, 2))),
    "in_dim_on_non_tensor": lambda lib: lib.vmap(lambda a, n: a, in_dims=(0, 0))(T(lib, data(3)), 2),
    "in_dim_not_int": lambda lib: lib.vmap(lambda a: a, in_dims=(0.5,))(T(lib, data(3))),
    "no_batched_input": lambda lib: lib.vmap(lambda a: a, in_dims=None)(T(lib, data(3))),
    "no_inputs": lambda lib: lib.vmap(lambda: 1)(),
    "non_tensor_output": lambda lib: lib.vmap(lambda a: 3)(T(lib, data(3))),
    "out_dims_structure": lambda lib: lib.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(T(lib, data(3))),
    "out_dim_none_batched": lambda lib: lib.vmap(lambda a: a, out_dims=None)(T(lib, data(3))),
    "inplace_add_on_unbatched": lambda lib: lib.vmap(lambda a: lib.zeros(2).add_(a))(T(lib, data(3, 2))),
    "inplace_mul_on_unbatched": lambda lib: lib.vmap(lambda a: lib.zeros(2).mul_(a))(T(lib, data(3, 2))),
    "inplace_copy_on_unbatched": lambda lib: lib.vmap(lambda a: lib.zeros(2).copy_(a))(T(lib, data(3, 2))),
    "fill_on_unbatched": lambda lib: lib.vmap(lambda a: lib.zeros(2).fill_(a[0]))(T(lib, data(3, 2))),
    "index_add_on_unbatched": lambda lib: lib.vmap(
        lambda a: lib.zeros(2).index_add_(0, T(lib, [1]), a[:1]))(T(lib, data(3, 2))),
    "bool_mask_batched": lambda lib: lib.vmap(lambda t, m: t[m])(T(lib, data(3, 4)), T(lib, data(3, 4) > 0)),
    "masked_select_batched_mask": lambda lib: lib.vmap(lambda t: lib.masked_select(t, t > 0))(
        T(lib, data(3, 4))),
    "allclose": lambda lib: lib.vmap(lambda t: lib.allclose(t, t))(T(lib, data(3, 4))),
    "unique": lambda lib: lib.vmap(lambda t: lib.unique(t))(T(lib, data(3, 4))),
    "random_error_mode": lambda lib: lib.vmap(lambda a: a + lib.rand(2))(T(lib, data(3, 2))),
    "dropout_error_mode": lambda lib: lib.vmap(lambda a: lib.nn.functional.dropout(a))(T(lib, data(3, 2))),
    "randomness_name": lambda lib: lib.vmap(lambda a: a, randomness="sometimes")(T(lib, data(3))),
    "chunk_size": lambda lib: lib.vmap(lambda a: a, chunk_size=0)(T(lib, data(3))),
    "rule_dim_range": lambda lib: lib.vmap(lambda a: a.sum(2))(T(lib, data(3, 2))),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check(ERRORS[name], raises=True)


# -- randomness -----------------------------------------------------------------------------------

def _draws(lib, randomness, fn):
    lib.manual_seed(0)
    return lib.vmap(fn, randomness=randomness)(lib.ones(4, 3))


def test_multinomial_draws_per_example():
    for lib in (torch, gt):
        out = _draws(lib, "different", lambda x: lib.multinomial(x.expand(2, 3), 2))
        assert tuple(out.shape) == (4, 2, 2) and out.dtype == lib.int64


RANDOM = {
    "rand": lambda lib: lambda x: lib.rand(3) + x * 0,
    "randn": lambda lib: lambda x: lib.randn(3) + x * 0,
    "dropout": lambda lib: lambda x: lib.nn.functional.dropout(x * 100, 0.5),
    "normal_": lambda lib: lambda x: (x * 0).normal_(),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
@pytest.mark.parametrize("randomness", ["same", "different"])
def test_randomness(name, randomness):
    """Shapes as torch's; "same" gives every example one draw, "different" one each."""
    for lib in (torch, gt):
        out = _draws(lib, randomness, RANDOM[name](lib))
        assert tuple(out.shape) == (4, 3)
        rows_equal = all(bool((out[0] == out[i]).all()) for i in range(1, 4))
        assert rows_equal == (randomness == "same"), (lib.__name__, out)


@pytest.mark.parametrize("randomness", ["same", "different"])
def test_random_like_of_a_batched_tensor(randomness):
    """``rand_like(x)`` reads only x's logical shape, so "same" allows a batched x."""
    for lib in (torch, gt):
        out = _draws(lib, randomness, lambda x: lib.rand_like(x))
        assert tuple(out.shape) == (4, 3)
        assert bool((out[0] == out[1]).all()) == (randomness == "same")


def test_argmax_keepdim_matches_the_unbatched_op():
    """``argmax(keepdim=True)`` over all dims keeps every dim, as the op does
    outside vmap; torch.vmap's rule drops them to one, so the oracle is the loop."""
    x = data(3, 2, 4)
    batched = gt.vmap(lambda t: t.argmax(keepdim=True))(T(gt, x))
    assert_same(batched, torch.stack([torch.from_numpy(e).argmax(keepdim=True) for e in x]),
                strides=False)


def test_randomness_in_place_rules():
    check(lambda lib: _draws(lib, "different", lambda x: lib.zeros(3).uniform_()), raises=True)
    check(lambda lib: _draws(lib, "same", lambda x: lib.bernoulli(x * 0.5)), raises=True)
    for lib in (torch, gt):
        out = _draws(lib, "same", lambda x: x.clone().uniform_())
        assert bool((out[0] == out[1]).all())


# -- modules, per-sample gradients -------------------------------------------------------------

def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 8), lib.nn.GELU(),
                             lib.nn.LayerNorm(8), lib.nn.Linear(8, 3))


def _copy_params(src, dst):
    with gt.no_grad():
        for (_, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
            p.copy_(gt.from_numpy(q.detach().numpy().copy()))


def _models(lib, reference=None):
    """The MLP, with torch's parameters when ``reference`` (a torch MLP) is given."""
    model = _mlp(lib)
    if reference is not None:
        _copy_params(model, reference)
    return model


def _module_scenario(body):
    reference = _mlp(torch)
    return lambda lib: body(lib, _models(lib, reference if lib is gt else None) if lib is gt
                            else reference)


def test_vmap_over_a_module_call():
    check(_module_scenario(lambda lib, m: lib.vmap(m)(T(lib, data(5, 2, 4)))), atol=1e-5)


def test_functional_call_with_batched_params():
    def body(lib, m):
        params = {k: v.detach().unsqueeze(0).expand(3, *v.shape) * T(lib, data(3)).reshape(
            3, *([1] * v.dim())) for k, v in m.named_parameters()}
        x = T(lib, data(2, 4))
        return lib.vmap(lambda p: lib.func.functional_call(m, p, (x,)))(params)
    check(_module_scenario(body), atol=1e-5)


def test_ensemble_with_stack_module_state():
    reference = [_mlp(torch) for _ in range(1)] + [torch.nn.Sequential(*_mlp(torch)) for _ in range(2)]
    for i, model in enumerate(reference):
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(1 + i)

    def scenario(lib):
        models = reference if lib is torch else [_models(gt, r) for r in reference]
        models = [lib.nn.Sequential(*m) for m in models]
        params, buffers = lib.func.stack_module_state(models)
        x = T(lib, data(2, 4))
        return lib.vmap(lambda p, b: lib.func.functional_call(models[0], (p, b), (x,)),
                        in_dims=(0, 0))(params, buffers)
    check(scenario, atol=1e-5)


def test_per_sample_gradients_batch_the_backward_ops():
    """vmap(grad(loss)): the backward formulas' ops (threshold_backward,
    gelu_backward, native_layer_norm_backward, nll_loss_backward, mm, sum ...)
    all run batching rules."""
    def body(lib, m):
        params = {k: v.detach() for k, v in m.named_parameters()}

        def loss(p, x, y):
            out = lib.func.functional_call(m, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0)) + out.softmax(-1).pow(2).mean()
        return lib.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, T(lib, data(6, 4)),
                                                                  T(lib, ints(6, high=3)))
    check(_module_scenario(body), atol=1e-5, rtol=1e-4)


def test_per_sample_gradients_of_embedding_and_conv():
    def scenario(lib):
        emb, conv = T(lib, data(7, 4)), T(lib, data(2, 1, 3, 3))

        def loss(e, c, idx, img):
            h = lib.nn.functional.embedding(idx, e).sum()
            y = lib.nn.functional.conv2d(img.unsqueeze(0), c, padding=1)
            return h + lib.nn.functional.mse_loss(y, lib.zeros_like(y)) + y.relu().amax()
        return lib.vmap(lib.func.grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))(
            emb, conv, T(lib, ints(3, 5, high=7)), T(lib, data(3, 1, 5, 5)))
    check(scenario, atol=1e-5, rtol=1e-4)


GRADS = {
    "activations": lambda lib, F, a: (F.elu(a) + F.softplus(a) + F.leaky_relu(a) + F.hardtanh(a)
                                      + F.logsigmoid(a) + F.hardswish(a) + F.mish(a) + F.silu(a)
                                      + F.gelu(a) + F.hardsigmoid(a) + F.softshrink(a)).sum(),
    "reductions": lambda lib, F, a: a.amax() + a.logsumexp(-1).sum() + a.var() + a.norm()
                                    + a.amin(0).sum() + a.mean(),
    "views": lambda lib, F, a: (a[1] * 2).sum() + a[:, 1:3].exp().sum() + a.diagonal().sum()
                               + a.unfold(1, 2, 1).sum() + a.t()[0].sum() + a.unbind(0)[0].sum(),
    "indexing": lambda lib, F, a: a[:, [0, 2]].sum() + a.gather(1, T(lib, [[0], [1], [2], [0]])).pow(2).sum()
                                  + a.index_select(0, T(lib, [1])).sum() + a.take(T(lib, [3, 5])).sum(),
    "matmuls": lambda lib, F, a: (a @ a.mT).sum() + lib.einsum("ij,kj->ik", a, a).sin().sum()
                                 + F.linear(a, a).sum(),
    "attention": lambda lib, F, a: F.scaled_dot_product_attention(a, a, a, is_causal=True).sum(),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_per_sample_gradients_batch_the_backward_ops_of(name):
    check(lambda lib: lib.vmap(lib.func.grad(lambda a: GRADS[name](lib, lib.nn.functional, a)))(
        T(lib, data(3, 4, 4))), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("name", ["max_dim", "trace", "prod"])
def test_per_sample_gradients_through_in_place_backward_kernels(name):
    """Composite backward kernels that write into fresh zeros go out of place for
    subclass-like (batched) gradients, as ATen's do (is_tensor_subclass_like)."""
    f = {"max_dim": lambda a: a.max(-1)[0].sum(), "trace": lambda a: a.trace(),
         "prod": lambda a: a.prod()}[name]
    check(lambda lib: lib.vmap(lib.func.grad(f))(T(lib, data(3, 4, 4))))


def test_per_sample_gradients_of_the_losses_and_pooling():
    def scenario(lib):
        F = lib.nn.functional

        def loss(w, x, y):
            h = F.max_pool2d(F.conv2d(x.unsqueeze(0), w), 2).flatten()
            return (F.l1_loss(h, y) + F.smooth_l1_loss(h, y, reduction="sum")
                    + F.binary_cross_entropy_with_logits(h, y.sigmoid())
                    + F.nll_loss(h.reshape(2, 2).log_softmax(-1), (y[:2] > 0).long(),
                                 T(lib, [0.3, 2.0]), reduction="sum"))
        return lib.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            T(lib, data(1, 1, 2, 2)), T(lib, data(4, 1, 5, 5)), T(lib, data(4, 4, seed=1)))
    check(scenario, atol=1e-5, rtol=1e-4)


def test_ensemble_gradients_batch_the_weight_side():
    """vmap over stacked weights of grad: the weights' own gradients are batched
    (convolution_backward in the group form, layer norm's weight gradient)."""
    def scenario(lib):
        F = lib.nn.functional

        def loss(w, g, e, x, idx):
            h = F.conv2d(x, w, padding=1).mean((2, 3))
            h = F.layer_norm(h, (3,), g) + F.embedding(idx, e, padding_idx=0).sum(0)
            return F.cross_entropy(h, T(lib, [0, 2]))
        return lib.vmap(lib.func.grad(loss, argnums=(0, 1, 2)), in_dims=(0, 0, 0, None, None))(
            T(lib, data(3, 3, 2, 3, 3)), T(lib, data(3, 3)), T(lib, data(3, 5, 3)),
            T(lib, data(2, 2, 4, 4)), T(lib, np.array([0, 3, 3])))
    check(scenario, atol=1e-5, rtol=1e-4)


def test_per_sample_gradients_of_the_gpt_equal_the_loop():
    from benchmarks.bench_train import _gpt_module
    example = _gpt_module("glasstorch")
    gt.manual_seed(0)
    model = example.GPT(example.GPTConfig(vocab_size=20, block_size=8, n_layer=1, n_head=2,
                                          n_embd=16, dropout=0.0))
    params = {k: v.detach() for k, v in model.named_parameters()}
    idx = T(gt, np.random.default_rng(8).integers(0, 20, (3, 8)))

    def loss(p, i):
        return gt.func.functional_call(model, p, (i.unsqueeze(0), i.unsqueeze(0)))[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # no op may take the loop
        batched = gt.vmap(gt.func.grad(loss), in_dims=(None, 0))(params, idx)
    for b in range(3):
        single = gt.func.grad(loss)(params, idx[b])
        for k in params:
            assert_same(batched[k][b], single[k], atol=1e-5, rtol=1e-4, strides=False)


# -- the fallback and the coverage report -------------------------------------------------------

def test_loop_fallback_warns_and_is_correct():
    """histc has no batching rule in torch either: both loop, with the same warning."""
    (theirs, their_loops), (ours, our_loops) = [
        outcome(vmapped(lambda lib, t: lib.histc(t, bins=4, min=-2, max=2), data(3, 10)), lib)
        for lib in (torch, gt)]
    assert our_loops == their_loops and len(their_loops) == 1
    assert_same(ours[1], theirs[1], strides=False)


def test_fallback_warning_can_be_switched_off():
    gt._C._functorch._set_vmap_fallback_warning_enabled(False)
    try:
        outcome_, loops = outcome(vmapped(lambda lib, t: lib.histc(t, bins=4), data(3, 10)), gt)
    finally:
        gt._C._functorch._set_vmap_fallback_warning_enabled(True)
    assert outcome_[0] == "returned" and not loops


def test_coverage_counts_rules():
    from glasstorch._functorch.batch_rules import coverage
    rules, total = coverage()
    assert 0 < rules <= total


@pytest.mark.parametrize("offset", [None, 1])
@pytest.mark.parametrize("in_dim", [0, 1])
def test_as_strided_views_each_example_at_its_place(offset, in_dim):
    check(lambda lib: lib.vmap(lambda a: a.as_strided((2, 2), (2, 1), offset), in_dims=in_dim)(
        lib.arange(24.).reshape(3, 8) if in_dim == 0 else lib.arange(24.).reshape(8, 3)))


# -- normalization, distances, one_hot, upsampling backward ----------------------------------------

def _F(lib):
    return lib.nn.functional


NN_CATALOGUE = [
    ("batch_norm_train", lambda lib, x, w: _F(lib).batch_norm(x, None, None, w, None, training=True),
     [data(B, 4, 2, 5), data(2)], (0, None)),
    ("batch_norm_eval_unbatched_stats", lambda lib, x, m, v: _F(lib).batch_norm(x, m, v, bias=m),
     [data(4, 2, B), data(2), np.abs(data(2)) + 0.5], (2, None, None)),
    ("batch_norm_eval_batched_stats_and_weight",
     lambda lib, x, m, w: _F(lib).batch_norm(x, m, m.abs() + 1, w), [data(4, 2), data(B, 2), data(2, B)],
     (None, 0, 1)),
    ("instance_norm", lambda lib, x: _F(lib).instance_norm(x), [data(B, 2, 3, 4)], 0),
    ("group_norm", lambda lib, x, w, b: _F(lib).group_norm(x, 2, w, b),
     [data(2, 4, 5, B), data(4), data(4)], (-1, None, None)),
    ("group_norm_batched_weight", lambda lib, x, w: _F(lib).group_norm(x, 2, w),
     [data(2, 4, 5), data(B, 4)], (None, 0)),
    ("aminmax", lambda lib, x: (lib.aminmax(x), lib.aminmax(x, keepdim=True), lib.aminmax(x, dim=-1),
                                lib.aminmax(x[0, 0], dim=0, keepdim=True)), [data(3, B, 4)], 1),
    ("one_hot", lambda lib, i: _F(lib).one_hot(i - 1, 4), [ints(B, 3, high=6)], 0),
    ("diag_embed", lambda lib, x: (lib.diag_embed(x), lib.diag_embed(x, 1, 0, 2)), [data(2, B, 3)], 1),
    ("cross", lambda lib, a, b: (lib.linalg.cross(a, b), lib.cross(a, b, dim=0)),
     [data(B, 3, 3), data(3, 3, seed=1)], (0, None)),
    ("vdot", lambda lib, a, b: lib.vdot(a, b), [data(B, 4), data(4, B, seed=1)], (0, 1)),
    ("cdist", lambda lib, a, b: (lib.cdist(a, b), lib.cdist(b, a, p=1)),
     [data(B, 4, 2), data(3, 5, 2, seed=1)], (0, None)),
]


@pytest.mark.parametrize("name, fn, arrays, in_dims", NN_CATALOGUE, ids=[c[0] for c in NN_CATALOGUE])
def test_nn_catalogue(name, fn, arrays, in_dims):
    check(vmapped(fn, *arrays, in_dims=in_dims), atol=1e-4, rtol=1e-4)


NN_ERRORS = {
    "batch_norm_unbatched_running_stats": lambda lib: lib.vmap(lambda x: _F(lib).batch_norm(
        x, lib.zeros(2), lib.ones(2), training=True))(T(lib, data(B, 4, 2))),
    "batch_norm_module_in_training": lambda lib: lib.vmap(lib.nn.BatchNorm1d(2))(T(lib, data(B, 4, 2))),
    "one_hot_without_num_classes": lambda lib: lib.vmap(_F(lib).one_hot)(T(lib, ints(B, 3))),
    "cross_ranks": lambda lib: lib.vmap(lib.linalg.cross)(T(lib, data(B, 2, 3)), T(lib, data(B, 3))),
}


@pytest.mark.parametrize("name", sorted(NN_ERRORS))
def test_nn_errors(name):
    check(NN_ERRORS[name], raises=True)


def test_batch_norm_updates_batched_running_stats():
    """Training with batched running stats: each example's stats are updated
    in place with its own batch statistics."""
    def scenario(lib):
        x, mean, var = T(lib, data(B, 4, 2, 3)), lib.zeros(B, 2), lib.ones(B, 2)
        out = lib.vmap(lambda a, m, v: _F(lib).batch_norm(a, m, v, training=True, momentum=0.3))(
            x, mean, var)
        return out, mean, var
    check(scenario, atol=1e-5)


def _norm_model(lib, training):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3), lib.nn.BatchNorm2d(4, track_running_stats=not training),
                              lib.nn.ReLU(), lib.nn.GroupNorm(2, 4), lib.nn.Flatten(), lib.nn.Linear(16, 3))
    if not training:
        with lib.no_grad():
            model[1].running_mean.uniform_(-0.5, 0.5)
            model[1].running_var.uniform_(0.5, 2)
    return model.train(training)


@pytest.mark.parametrize("training", [False, True])
def test_per_sample_gradients_through_batch_norm_and_group_norm(training):
    """vmap(grad) of a conv/BatchNorm/GroupNorm model (train mode without
    running stats: torch refuses unbatched ones): the norms' backward ops are
    batched by their rules, the weight gradients come out per example."""
    reference = _norm_model(torch, training)

    def scenario(lib):
        model = reference if lib is torch else _norm_model(gt, training)
        if lib is gt:
            _copy_params(model, reference)
            for b, r in zip(model.buffers(), reference.buffers()):
                b.copy_(gt.from_numpy(r.numpy().copy()))
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = dict(model.named_buffers())

        def loss(p, x, y):
            out = lib.func.functional_call(model, (p, buffers), (x.unsqueeze(0),))
            return _F(lib).cross_entropy(out, y.unsqueeze(0))
        return lib.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, T(lib, data(3, 2, 4, 4)), T(lib, ints(3, high=3)))
    check(scenario, atol=1e-4, rtol=1e-4)


def test_per_sample_gradients_of_instance_norm_cdist_and_upsampling():
    def scenario(lib):
        F = _F(lib)

        def loss(w, x):
            h = F.instance_norm(x.unsqueeze(0), weight=w, use_input_stats=True)
            up = F.interpolate(h, scale_factor=2) + F.interpolate(h, scale_factor=2, mode="bilinear")
            line = F.interpolate(h[0], scale_factor=2, mode="linear") + F.interpolate(h[0], size=8)
            return up.pow(2).mean() + line.sin().sum() + lib.cdist(h[0, 0], h[0, 1]).sum()
        return lib.vmap(lib.func.grad(loss, argnums=(0, 1)), in_dims=(None, 0))(
            T(lib, data(2) + 1), T(lib, data(B, 2, 3, 4)))
    check(scenario, atol=1e-4, rtol=1e-4)
