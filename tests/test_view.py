"""Views and shape ops against real PyTorch: sizes, strides, storage offsets,
storage sharing and writes through views, on random chains of view ops over
non-contiguous inputs; memory formats; errors (type and message)."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import glasstorch as gt

from .helpers import assert_same, same_storage, to_numpy


def both(array):
    return gt.tensor(array), torch.tensor(array)


def arange(*shape, dtype=np.float32):
    return both(np.arange(math.prod(shape), dtype=dtype).reshape(shape))


def check_view(ours, theirs, base_ours=None, base_theirs=None):
    assert tuple(ours.shape) == tuple(theirs.shape)
    if theirs.numel() > 1:  # strides of empty / one-element tensors carry no meaning
        assert ours.stride() == theirs.stride(), (ours.stride(), theirs.stride(), theirs.shape)
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours._is_view() == theirs._is_view()
    if base_ours is not None:
        assert same_storage(ours, base_ours) == same_storage(theirs, base_theirs)
    np.testing.assert_array_equal(to_numpy(ours), to_numpy(theirs))


# -- the seed examples -------------------------------------------------------------

def test_seed_stride_examples():
    a = gt.tensor(np.arange(24, dtype=np.float32)).view(2, 3, 4)
    assert a.stride() == (12, 4, 1)
    b = a.transpose(0, 2)
    assert b.shape == (4, 3, 2) and b.stride() == (1, 4, 12) and not b.is_contiguous()
    assert b.data_ptr() == a.data_ptr() and b._base is a._base
    c = a.narrow(1, 1, 2)
    assert c.shape == (2, 2, 4) and c.stride() == (12, 4, 1) and c.storage_offset() == 4
    d = a.unsqueeze(0)
    assert d.shape == (1, 2, 3, 4) and d.stride() == (24, 12, 4, 1)
    assert same_storage(a, b) and same_storage(a, c) and same_storage(a, d)
    y = b.contiguous()
    assert y.is_contiguous() and not same_storage(y, a) and y.stride() == (6, 2, 1)
    assert a.contiguous() is a


def test_channels_last():
    ours, theirs = arange(2, 3, 4, 5)
    o = ours.contiguous(memory_format=gt.channels_last)
    t = theirs.contiguous(memory_format=torch.channels_last)
    assert o.stride() == t.stride() == (60, 1, 15, 3)
    assert not o.is_contiguous() and o.is_contiguous(memory_format=gt.channels_last)
    np.testing.assert_array_equal(to_numpy(o), to_numpy(t))
    # clone preserves a dense layout; contiguous() goes back to NCHW
    assert o.clone().stride() == t.clone().stride()
    assert o.contiguous().stride() == (60, 20, 5, 1)
    assert o.contiguous(memory_format=gt.channels_last) is o
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        gt.tensor(np.zeros((2, 3), np.float32)).contiguous(memory_format=gt.channels_last)


# -- random chains of view ops -------------------------------------------------------

def _draw_op(data, shape):
    """(name, function(lib, tensor)) for one op valid-or-not on ``shape``."""
    ndim = len(shape)
    dim = st.integers(-max(ndim, 1), max(ndim, 1) - 1)
    choices = ["unsqueeze", "view", "reshape", "flatten", "squeeze", "expand"]
    if ndim:
        choices += ["transpose", "permute", "narrow", "slice", "select", "movedim", "split",
                    "unbind", "unflatten"]
    if ndim <= 2:
        choices.append("t")
    if ndim >= 2:
        choices += ["diagonal", "unfold"]
    op = data.draw(st.sampled_from(choices))
    if op == "transpose":
        d0, d1 = data.draw(dim), data.draw(dim)
        return op, lambda L, x: x.transpose(d0, d1)
    if op == "t":
        return op, lambda L, x: x.t()
    if op == "permute":
        perm = data.draw(st.permutations(list(range(ndim))))
        return op, lambda L, x: x.permute(*perm)
    if op == "unsqueeze":
        d = data.draw(st.integers(-ndim - 1, ndim))
        return op, lambda L, x: x.unsqueeze(d)
    if op == "squeeze":
        if ndim and data.draw(st.booleans()):
            d = data.draw(dim)
            return op, lambda L, x: x.squeeze(d)
        return op, lambda L, x: x.squeeze()
    if op == "narrow":
        d = data.draw(dim)
        n = shape[d]
        start = data.draw(st.integers(-n, n))
        length = data.draw(st.integers(0, max(n - (start % n if n else 0), 0)))
        return op, lambda L, x: x.narrow(d, start, length)
    if op == "slice":
        d = data.draw(st.integers(0, ndim - 1))
        start = data.draw(st.none() | st.integers(-5, 5))
        stop = data.draw(st.none() | st.integers(-5, 5))
        step = data.draw(st.integers(1, 3))
        return op, lambda L, x: x[(slice(None),) * d + (slice(start, stop, step),)]
    if op == "select":
        d = data.draw(dim)
        i = data.draw(st.integers(-shape[d], max(shape[d] - 1, 0)))
        return op, lambda L, x: x.select(d, i)
    if op == "movedim":
        src, dst = data.draw(dim), data.draw(dim)
        return op, lambda L, x: x.movedim(src, dst)
    if op == "split":
        size = data.draw(st.integers(1, 3))
        d = data.draw(dim)
        k = data.draw(st.integers(0, 5))
        return op, lambda L, x: x.split(size, d)[k % len(x.split(size, d))]
    if op == "unbind":
        d = data.draw(dim)
        if shape[d] == 0:
            return op, lambda L, x: x.unsqueeze(0)
        k = data.draw(st.integers(0, shape[d] - 1))
        return op, lambda L, x: x.unbind(d)[k]
    if op == "unflatten":
        d = data.draw(dim)
        return op, lambda L, x: x.unflatten(d, (1, -1))
    if op == "diagonal":
        off = data.draw(st.integers(-2, 2))
        d1, d2 = data.draw(dim), data.draw(dim)
        return op, lambda L, x: x.diagonal(off, d1, d2)
    if op == "unfold":
        d = data.draw(dim)
        size = data.draw(st.integers(0, 3))
        step = data.draw(st.integers(1, 2))
        return op, lambda L, x: x.unfold(d, size, step)
    if op == "expand":
        new = [data.draw(st.sampled_from([n, -1] if n != 1 else [1, 2, 3, -1])) for n in shape]
        lead = data.draw(st.lists(st.integers(0, 2), min_size=0 if ndim else 1, max_size=1))
        return op, lambda L, x: x.expand(*lead, *new)
    numel = math.prod(shape)
    candidates = [[-1], [numel], list(shape[::-1]), [1] + list(shape)]
    if ndim >= 2:
        candidates.append(list(shape[:-2]) + [-1])
        candidates.append([shape[0], -1])
    new_shape = data.draw(st.sampled_from(candidates))
    if op == "view":
        return op, lambda L, x: x.view(new_shape)
    if op == "reshape":
        return op, lambda L, x: x.reshape(new_shape)
    s, e = data.draw(dim), data.draw(dim)
    return op, lambda L, x: x.flatten(s, e)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4)


@given(shape=shapes, data=st.data(), dtype=st.sampled_from([np.float32, np.int64]))
def test_random_view_chains(shape, data, dtype):
    values = np.arange(math.prod(shape), dtype=dtype).reshape(shape)
    base_o, base_t = both(values)
    ours, theirs = base_o, base_t
    for _ in range(data.draw(st.integers(1, 6))):
        name, fn = _draw_op(data, tuple(theirs.shape))
        try:
            new_t = fn(torch, theirs)
        except Exception as e:  # same error type and message
            with pytest.raises(type(e)) as info:
                fn(gt, ours)
            assert str(info.value) == str(e).split("\n")[0] or str(e).startswith(str(info.value)), \
                (name, str(info.value), str(e))
            return
        ours = fn(gt, ours)
        theirs = new_t
        check_view(ours, theirs, base_o, base_t)
    # a write through the (possibly expanded) view is seen by the base
    if theirs.numel() and torch._debug_has_internal_overlap(theirs) == 0:
        fill = np.full(tuple(theirs.shape), 7, dtype=dtype)
        ours.copy_(gt.tensor(fill))
        theirs.copy_(torch.tensor(fill))
        np.testing.assert_array_equal(to_numpy(base_o), to_numpy(base_t))


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_view_and_reshape_on_noncontiguous(shape, data):
    """computeStride: view works on non-contiguous input exactly where PyTorch's does."""
    values = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    o, t = both(values)
    perm = data.draw(st.permutations(list(range(len(shape)))))
    o, t = o.permute(*perm), t.permute(*perm)
    numel = math.prod(shape)
    divisors = [d for d in range(1, numel + 1) if numel % d == 0]
    first = data.draw(st.sampled_from(divisors))
    target = [first, -1]
    try:
        vt = t.view(target)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as info:
            o.view(target)
        assert str(info.value) == str(e)
        ro, rt = o.reshape(target), t.reshape(target)
        check_view(ro, rt)
        assert not same_storage(ro, o)
    else:
        vo = o.view(target)
        check_view(vo, vt, o, t)
        check_view(o.reshape(target), t.reshape(target), o, t)


@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=4), data=st.data())
def test_clone_and_contiguous_strides(shape, data):
    values = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    o, t = both(values)
    perm = data.draw(st.permutations(list(range(len(shape)))))
    step = data.draw(st.integers(1, 2))
    o, t = o.permute(*perm)[::step], t.permute(*perm)[::step]
    for fmt_o, fmt_t in ((None, None), (gt.contiguous_format, torch.contiguous_format),
                         (gt.preserve_format, torch.preserve_format)):
        kw_o = {} if fmt_o is None else {"memory_format": fmt_o}
        kw_t = {} if fmt_t is None else {"memory_format": fmt_t}
        assert_same(o.clone(**kw_o), t.clone(**kw_t))
    co, ct = o.contiguous(), t.contiguous()
    assert_same(co, ct)
    assert (co is o) == (ct is t)


# -- joins and copies ----------------------------------------------------------------

@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=3), data=st.data())
def test_cat_stack_random(shape, data):
    n = data.draw(st.integers(1, 3))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    arrays = []
    for i in range(n):
        s = list(shape)
        s[dim] = data.draw(st.integers(0, 3))
        arrays.append(np.arange(math.prod(s), dtype=np.float32).reshape(s) + 100 * i)
    os_ = [gt.tensor(a) for a in arrays]
    ts = [torch.tensor(a) for a in arrays]
    if data.draw(st.booleans()):  # non-contiguous inputs
        os_ = [x.transpose(0, -1).contiguous().transpose(0, -1) for x in os_]
        ts = [x.transpose(0, -1).contiguous().transpose(0, -1) for x in ts]
    assert_same(gt.cat(os_, dim), torch.cat(ts, dim))
    same = [os_[0]] * n, [ts[0]] * n
    sdim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    assert_same(gt.stack(same[0], sdim), torch.stack(same[1], sdim))


def test_cat_legacy_empty_and_promotion():
    o = gt.cat([gt.tensor(np.ones((2, 3), np.float32)), gt.tensor(np.zeros(0, np.float64))])
    t = torch.cat([torch.ones(2, 3), torch.zeros(0, dtype=torch.float64)])
    assert_same(o, t)


def test_copy_broadcast_cast_and_meta():
    o, t = arange(2, 3)
    src_o = gt.tensor(np.array([1.7, -2.5, 3.2]))
    src_t = torch.tensor([1.7, -2.5, 3.2])
    io = gt.tensor(np.zeros((2, 3), np.int32))
    it = torch.zeros(2, 3, dtype=torch.int32)
    assert_same(io.copy_(src_o), it.copy_(src_t))
    m = gt.tensor(np.zeros((2, 3), np.float32)).to("meta")
    assert m.copy_(o) is m
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        o.copy_(m)


def test_copy_overlapping_shift():
    o, t = arange(6)
    o[1:] = o[:-1].clone()
    t[1:] = t[:-1].clone()
    assert_same(o, t)


def test_resize_grows_storage():
    o = gt.tensor(np.arange(6, dtype=np.float32))
    o.resize_(2, 5)
    assert o.shape == (2, 5) and o.stride() == (5, 1)
    assert o.untyped_storage().nbytes() >= 40
    np.testing.assert_array_equal(to_numpy(o).reshape(-1)[:6], np.arange(6))
    o.resize_(3)
    assert o.shape == (3,) and o.untyped_storage().nbytes() >= 40


def test_split_family_returns_tuples():
    o, t = arange(7, 2)
    for fo, ft in ((gt.split(o, 3), torch.split(t, 3)), (gt.split(o, [2, 5]), torch.split(t, [2, 5])),
                   (o.split([3, 4]), t.split([3, 4])), (gt.chunk(o, 3), torch.chunk(t, 3)),
                   (o.unbind(1), t.unbind(1)), (gt.tensor_split(o, 3), torch.tensor_split(t, 3)),
                   (gt.hsplit(o, 2), torch.hsplit(t, 2))):
        assert type(fo) is tuple and type(ft) is tuple
        assert_same(list(fo), list(ft))
        assert all(same_storage(x, o) for x in fo)


def test_broadcast_helpers():
    assert gt.broadcast_shapes((2, 1), (3,), 1) == torch.broadcast_shapes((2, 1), (3,), 1)
    with pytest.raises(RuntimeError) as e:
        gt.broadcast_shapes((2, 3), (4, 3))
    assert str(e.value) == ("Attempting to broadcast a dimension of length 4 at -2! Mismatching "
                            "argument at index 1 had (4, 3); but expected shape should be "
                            "broadcastable to [2, 3]")
    a, b = gt.broadcast_tensors(gt.tensor(np.zeros((2, 1))), gt.tensor(np.zeros(3)))
    assert a.shape == b.shape == (2, 3) and a.stride() == (1, 0) and b.stride() == (0, 1)


def test_T_and_mT():
    o, t = arange(2, 3, 4)
    assert o.mT.stride() == t.mT.stride()
    o2, t2 = arange(3, 4)
    assert o2.T.stride() == t2.T.stride()


# -- errors: same type and message as PyTorch ---------------------------------------------

ERRORS = {
    "view_size": lambda L, x: x.view(4),
    "view_two_inferred": lambda L, x: x.view(-1, -1),
    "view_negative": lambda L, x: x.view(-2, 3),
    "view_not_viewable": lambda L, x: x.t().view(6),
    "view_dtype_stride": lambda L, x: x.t().view(L.int16),
    "view_dtype_size": lambda L, x: x.view(L.float64),
    "expand_mismatch": lambda L, x: x.expand(4, 3),
    "expand_too_few": lambda L, x: x.expand(3),
    "expand_leading_minus_one": lambda L, x: x.expand(-1, 2, 3),
    "narrow_too_long": lambda L, x: x.narrow(1, 2, 2),
    "narrow_start": lambda L, x: x.narrow(1, 4, 0),
    "select_range": lambda L, x: x.select(1, 3),
    "permute_len": lambda L, x: x.permute(0),
    "permute_dup": lambda L, x: x.permute(0, 0),
    "dim_range": lambda L, x: x.squeeze(5),
    "transpose_range": lambda L, x: x.transpose(0, 2),
    "t_3d": lambda L, x: x.unsqueeze(0).t(),
    "unfold_size": lambda L, x: x.unfold(1, 4, 1),
    "unfold_step": lambda L, x: x.unfold(1, 2, 0),
    "diagonal_same": lambda L, x: x.diagonal(0, 0, 0),
    "movedim_len": lambda L, x: x.movedim((0, 1), (1,)),
    "movedim_repeat": lambda L, x: x.movedim((0, 0), (1, 0)),
    "split_zero": lambda L, x: x.split(0),
    "split_negative": lambda L, x: x.split(-1),
    "split_sizes_sum": lambda L, x: x.split([1, 2]),
    "chunk_zero": lambda L, x: x.chunk(0),
    "unflatten_product": lambda L, x: x.unflatten(1, (2, 2)),
    "flatten_order": lambda L, x: x.flatten(1, 0),
    "as_strided_offset": lambda L, x: x.as_strided((2, 2), (1, 1), -1),
    "as_strided_bounds": lambda L, x: x.as_strided((20, 2), (1, 1)),
    "flip_dup": lambda L, x: x.flip(0, 0),
    "repeat_few": lambda L, x: x.repeat(2),
    "roll_align": lambda L, x: x.roll(1, (0, 1)),
    "tril_1d": lambda L, x: L.tril(x[0]),
    "cat_size": lambda L, x: L.cat([x, L.tensor(np.zeros((2, 4), np.float32))]),
    "cat_size_dim1": lambda L, x: L.cat([x, L.tensor(np.zeros((3, 4), np.float32))], 1),
    "cat_ndim": lambda L, x: L.cat([x, L.tensor(np.zeros(3, np.float32))]),
    "cat_zero_dim": lambda L, x: L.cat([x[0, 0], x]),
    "cat_dim": lambda L, x: L.cat([x, x], 2),
    "cat_empty_list": lambda L, x: L.cat([]),
    "stack_empty": lambda L, x: L.stack([]),
    "stack_sizes": lambda L, x: L.stack([x, L.tensor(np.zeros((2, 4), np.float32))]),
    "copy_shape": lambda L, x: x.copy_(L.tensor(np.zeros((2, 2), np.float32))),
    "copy_bigger": lambda L, x: x[0].copy_(L.tensor(np.zeros((2, 3), np.float32))),
    "contiguous_rank": lambda L, x: x.contiguous(memory_format=L.channels_last),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    fn = ERRORS[name]
    o, t = arange(2, 3)
    with pytest.raises(Exception) as theirs:
        fn(torch, t)
    with pytest.raises(type(theirs.value)) as ours:
        fn(gt, o)
    assert str(ours.value) == str(theirs.value)
