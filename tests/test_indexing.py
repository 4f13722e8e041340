"""Python indexing (``x[...]``, ``x[...] = v``, iteration) and the indexing ops
against real PyTorch: basic indexing returns views with PyTorch's metadata;
advanced indexing gives PyTorch's shapes, strides and values; errors match."""
import math
import warnings

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


def convert(index, lib):
    """The same index for a library (numpy arrays become that library's tensors)."""
    if isinstance(index, tuple):
        return tuple(convert(i, lib) for i in index)
    if isinstance(index, np.ndarray):
        return lib.tensor(index)
    return index


# -- basic indexing: views ---------------------------------------------------------

def test_seed_getitem_views():
    o, t = arange(2, 3, 4)
    for index in (slice(1, 3), 0, -1, (Ellipsis, None), (slice(None), slice(None, None, 2)),
                  (1, slice(None), 2), (None, 0, None), Ellipsis, (), slice(None)):
        vo, vt = o[index], t[index]
        assert tuple(vo.shape) == tuple(vt.shape), index
        assert vo.stride() == vt.stride(), index
        assert vo.storage_offset() == vt.storage_offset(), index
        assert same_storage(vo, o) and vo._is_view()
        np.testing.assert_array_equal(to_numpy(vo), to_numpy(vt))
    assert o[...] is not o


@st.composite
def basic_index(draw, shape):
    """A tuple of ints / slices / None / one Ellipsis valid for ``shape``."""
    items = []
    dim = 0
    used_ellipsis = False
    while dim < len(shape) and draw(st.integers(0, 3)):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis"]))
        if kind == "int" and shape[dim] > 0:
            items.append(draw(st.integers(-shape[dim], shape[dim] - 1)))
            dim += 1
        elif kind == "slice":
            items.append(slice(draw(st.none() | st.integers(-6, 6)),
                               draw(st.none() | st.integers(-6, 6)),
                               draw(st.none() | st.integers(1, 3))))
            dim += 1
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis" and not used_ellipsis:
            items.append(Ellipsis)
            used_ellipsis = True
            dim = len(shape) - sum(1 for i in items if isinstance(i, (int, slice)))
    return tuple(items)


@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=4), data=st.data())
def test_basic_indexing_random(shape, data):
    o, t = arange(*shape)
    if len(shape) >= 2 and data.draw(st.booleans()):  # non-contiguous input
        o, t = o.transpose(0, -1), t.transpose(0, -1)
    index = data.draw(basic_index(tuple(t.shape)))
    try:
        vt = t[index]
    except IndexError as e:  # (the strategy can overshoot after an ellipsis)
        with pytest.raises(IndexError) as info:
            o[index]
        assert str(info.value) == str(e)
        return
    vo = o[index]
    assert tuple(vo.shape) == tuple(vt.shape)
    if vt.numel() > 1:
        assert vo.stride() == vt.stride()
    assert vo.storage_offset() == vt.storage_offset()
    assert same_storage(vo, o)
    np.testing.assert_array_equal(to_numpy(vo), to_numpy(vt))
    # writes through the view land in the base
    if vt.numel():
        o[index] = 5
        t[index] = 5
        np.testing.assert_array_equal(to_numpy(o), to_numpy(t))
        value = np.arange(vt.numel(), dtype=np.float32).reshape(tuple(vt.shape)) - 9
        o[index] = gt.tensor(value)
        t[index] = torch.tensor(value)
        np.testing.assert_array_equal(to_numpy(o), to_numpy(t))


# -- advanced indexing ----------------------------------------------------------------

@st.composite
def advanced_index(draw, shape):
    """A tuple mixing slices, None, ints, long index arrays (broadcastable) and masks."""
    items = []
    dim = 0
    bshape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    have_tensor = False
    while dim < len(shape):
        kind = draw(st.sampled_from(["slice", "long", "long", "mask", "none", "int", "stop"]))
        if kind == "stop" and have_tensor:
            break
        if kind == "slice":
            items.append(slice(None, None, draw(st.integers(1, 2))))
            dim += 1
        elif kind == "none":
            items.append(None)
        elif kind == "int" and shape[dim] > 0:
            items.append(draw(st.integers(-shape[dim], shape[dim] - 1)))
            dim += 1
        elif kind == "long" and shape[dim] > 0:
            k = draw(st.integers(0, len(bshape) - 1))
            sub = bshape[k:]
            values = draw(st.lists(st.integers(-shape[dim], shape[dim] - 1),
                                   min_size=math.prod(sub), max_size=math.prod(sub)))
            items.append(np.array(values, dtype=np.int64).reshape(sub))
            dim += 1
            have_tensor = True
        elif kind == "mask" and not have_tensor:
            ndims = draw(st.integers(1, len(shape) - dim))
            mshape = shape[dim:dim + ndims]
            n = math.prod(mshape)
            values = draw(st.lists(st.booleans(), min_size=n, max_size=n))
            # a mask's count must broadcast with the other index tensors: keep it alone
            items.append(np.array(values, dtype=np.bool_).reshape(mshape))
            dim += ndims
            have_tensor = True
            break
    if not have_tensor:
        items.append(np.zeros((1,), np.int64))
    return tuple(items)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_advanced_indexing_random(shape, data):
    o, t = arange(*shape)
    if len(shape) >= 2 and data.draw(st.booleans()):
        o, t = o.transpose(0, -1), t.transpose(0, -1)
    index = data.draw(advanced_index(tuple(t.shape)))
    try:
        rt = t[convert(index, torch)]
    except (IndexError, RuntimeError) as e:
        with pytest.raises(type(e)) as info:
            o[convert(index, gt)]
        assert str(info.value) == str(e)
        return
    ro = o[convert(index, gt)]
    assert_same(ro, rt)
    assert not same_storage(ro, o)
    # setitem goes through index_put_ (constant values: duplicate indices can't disagree)
    if rt.numel():
        value = np.full(tuple(rt.shape), 50, dtype=np.float32)
        t[convert(index, torch)] = torch.tensor(value)
        o[convert(index, gt)] = gt.tensor(value)
        np.testing.assert_array_equal(to_numpy(o), to_numpy(t))
        t[convert(index, torch)] = -1.0
        o[convert(index, gt)] = -1.0
        np.testing.assert_array_equal(to_numpy(o), to_numpy(t))


def test_list_and_mask_indexing():
    o, t = arange(4, 5)
    assert_same(o[[0, 2]], t[[0, 2]])
    assert_same(o[[[0, 1], [3, 2]]], t[[[0, 1], [3, 2]]])
    mask = np.arange(20).reshape(4, 5) % 3 == 0
    assert_same(o[gt.tensor(mask)], t[torch.tensor(mask)])
    assert_same(o[gt.tensor(mask[:, 0])], t[torch.tensor(mask[:, 0])])
    assert_same(o[True], t[True])
    assert_same(o[False], t[False])
    assert_same(o[gt.tensor(2)], t[torch.tensor(2)])
    assert_same(o[1, [0, 1]], t[1, [0, 1]])
    assert_same(o[..., 0, ...], t[..., 0, ...])
    assert_same(o[:, [0, 1], None], t[:, [0, 1], None])
    idx = np.array([[0, 1], [2, 3]])
    assert_same(o[gt.tensor(idx), 1:], t[torch.tensor(idx), 1:])


def test_setitem_variants():
    o, t = arange(3, 4)
    for lib, x in ((gt, o), (torch, t)):
        x[0] = 7
        x[1:, 1] = lib.tensor(np.array([-1.0, -2.0], np.float32))
        x[x.shape[0] - 1] = lib.tensor(np.ones((1, 4), np.float32))  # leading 1s stripped
        x[lib.tensor(np.array([[True, False, True, False]] * 3))] = 0.5
        x[[0, 2], [3, 3]] = lib.tensor(np.array([9.0, 8.0], np.float32))
        x[..., 2] = 3
    assert_same(o, t)
    o2, t2 = arange(5)
    o2.index_put_((gt.tensor(np.array([0, 0, 3])),), gt.tensor(np.ones(3, np.float32)),
                  accumulate=True)
    t2.index_put_((torch.tensor([0, 0, 3]),), torch.ones(3), accumulate=True)
    assert_same(o2, t2)


def test_iteration():
    o, t = arange(3, 2)
    rows_o, rows_t = list(o), list(t)
    assert len(rows_o) == 3
    assert_same(rows_o, rows_t)
    assert all(same_storage(r, o) for r in rows_o)
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(gt.tensor(1.0))


def test_hot_path_is_one_slice_op():
    from glasstorch._dispatcher.dispatcher import dispatch_trace
    o, _ = arange(5, 2)
    with dispatch_trace() as trace:
        o[1:3]
    assert "slice" in str(trace) and "index" not in str(trace)


# -- data-dependent ops ----------------------------------------------------------------

@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3), data=st.data())
def test_nonzero_masked_select(shape, data):
    n = math.prod(shape)
    values = np.array(data.draw(st.lists(st.integers(-1, 1), min_size=n, max_size=n)),
                      np.float32).reshape(shape)
    o, t = both(values)
    assert_same(gt.nonzero(o), torch.nonzero(t))
    assert_same(o.masked_select(o > 0), t.masked_select(t > 0))


def test_meta_data_dependent_ops_raise():
    m = gt.tensor(np.zeros(3, np.float32)).to("meta")
    with pytest.raises(NotImplementedError):
        m.nonzero()
    with pytest.raises(NotImplementedError):
        m.masked_select(gt.tensor(np.ones(3, bool)).to("meta"))


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_gather_scatter_random(shape, data):
    o, t = arange(*shape)
    dim = data.draw(st.integers(0, len(shape) - 1))
    ishape = [data.draw(st.integers(1, s)) for s in shape]
    n = math.prod(ishape)
    idx = np.array(data.draw(st.lists(st.integers(0, shape[dim] - 1), min_size=n, max_size=n)),
                   np.int64).reshape(ishape)
    io, it = both(idx)
    assert_same(o.gather(dim, io), t.gather(dim, it))
    src = np.arange(n, dtype=np.float32).reshape(ishape) * 10
    so, sr = both(src)
    assert_same(o.scatter_add(dim, io, so), t.scatter_add(dim, it, sr))
    assert_same(o.scatter(dim, io, so, reduce="multiply"), t.scatter(dim, it, sr, reduce="multiply"))
    assert_same(o.index_select(dim, io.reshape(-1)), t.index_select(dim, it.reshape(-1)))


# -- errors ------------------------------------------------------------------------------

ERRORS = {
    "out_of_bounds": lambda L, x: x[5],
    "out_of_bounds_dim1": lambda L, x: x[:, 5],
    "out_of_bounds_tensor": lambda L, x: x[L.tensor(np.array([5]))],
    "float_index": lambda L, x: x[1.0],
    "too_many": lambda L, x: x[0, 0, 0],
    "negative_step": lambda L, x: x[::-1],
    "zero_step": lambda L, x: x[::0],
    "mask_shape": lambda L, x: x[L.tensor(np.array([[True]]))],
    "float_tensor_index": lambda L, x: x[L.tensor(np.array([0.0]))],
    "zero_dim_index": lambda L, x: x[0, 0][0],
    "index_put_shape": lambda L, x: x.index_put_((L.tensor(np.array([0])),),
                                                 L.tensor(np.zeros(2, np.float32))),
    "index_put_dtype": lambda L, x: x.index_put_((L.tensor(np.array([0])),),
                                                 L.tensor(np.zeros(3, np.float64))),
    "index_select_vector": lambda L, x: x.index_select(0, L.tensor(np.array([[0]]))),
    "index_select_dtype": lambda L, x: x.index_select(0, L.tensor(np.array([0.0]))),
    "index_select_range": lambda L, x: x.index_select(0, L.tensor(np.array([2]))),
    "gather_range": lambda L, x: x.gather(0, L.tensor(np.array([[2]]))),
    "gather_ndim": lambda L, x: x.gather(0, L.tensor(np.array([2]))),
    "gather_dtype": lambda L, x: x.gather(0, L.tensor(np.array([[0]], np.int16))),
    "scatter_add_dtype": lambda L, x: x.scatter_add(0, L.tensor(np.array([[0]], np.int16)), x),
    "scatter_range": lambda L, x: x.scatter(0, L.tensor(np.array([[2]])), 1.0),
    "scatter_reduce_arg": lambda L, x: x.scatter(0, L.tensor(np.array([[0]])), 1.0,
                                                 reduce="foo"),
    "take_range": lambda L, x: x.take(L.tensor(np.array([6]))),
    "masked_select_dtype": lambda L, x: x.masked_select(L.tensor(np.array([1, 0, 1]))),
    "setitem_float_index": lambda L, x: x.__setitem__(1.5, 0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    fn = ERRORS[name]
    o, t = arange(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            fn(torch, t)
        with pytest.raises(type(theirs.value)) as ours:
            fn(gt, o)
    assert str(ours.value) == str(theirs.value)


def test_setitem_scalar_is_range_checked_like_pytorch():
    """x[i] = value converts with c10::checked_convert, as PyTorch's valueToTensor."""
    for value in (1000, -1, -300, 2.7, -2.5):
        ours, theirs = gt.zeros(3, dtype=gt.uint8), torch.zeros(3, dtype=torch.uint8)
        try:
            theirs[0] = value
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)):
                ours[0] = value
            continue
        ours[0] = value
        assert ours.tolist() == theirs.tolist(), value


@pytest.mark.parametrize("call", [
    lambda L: L.flip(L.tensor(1.), [0]),
    lambda L: L.ones(2, 2, 2).t_(),
    lambda L: L.tensor(1.).index_select(0, L.tensor([0, 0])),
    lambda L: L.tensor(1.).index_select(0, L.tensor([0])),
    lambda L: L.tensor(1.).index_put_((L.tensor([0, 0]),), L.tensor([1., 2.])),
    lambda L: L.ones(2).index_put_((L.tensor([0]), L.tensor([0])), L.tensor(1.)),
    lambda L: L.tensor(1.)[L.tensor([0])],
])
def test_zero_dim_and_in_place_edge_errors(torch, call):
    """0-d inputs and in-place transposes give PyTorch's result or exception
    (never a numpy error)."""
    outcomes = []
    for lib in (torch, gt):
        try:
            outcomes.append(("ok", call(lib).tolist()))
        except Exception as e:  # noqa: BLE001 - the exception is what we compare
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]
