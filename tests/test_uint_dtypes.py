"""uint16, uint32 and uint64 against PyTorch 2.13: the dtypes, their promotion, and
the limited ("barebones") op support PyTorch gives them: what it computes, we
compute alike; what its CPU kernels refuse, we refuse with its error."""
import io

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import glasstorch
from tests.differential import differential, raised, returned

UNSIGNED = ["uint16", "uint32", "uint64"]
OTHERS = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]


def _bits(name):
    return int(name[4:])


def _outcome(fn):
    try:
        return ("returned", str(fn()))
    except Exception as e:  # noqa: BLE001 - the error is what we compare
        return ("raised", type(e).__name__, str(e))


@pytest.mark.parametrize("name", UNSIGNED)
def test_dtype_attributes(name):
    ours, theirs = getattr(glasstorch, name), getattr(torch, name)
    assert (repr(ours), ours.is_signed, ours.itemsize, ours.is_floating_point,
            ours.is_complex) == (repr(theirs), theirs.is_signed, theirs.itemsize,
                                 theirs.is_floating_point, theirs.is_complex)
    assert repr(glasstorch.iinfo(ours)) == repr(torch.iinfo(theirs))
    assert (glasstorch.iinfo(ours).min, glasstorch.iinfo(ours).max, glasstorch.iinfo(ours).bits) \
        == (torch.iinfo(theirs).min, torch.iinfo(theirs).max, torch.iinfo(theirs).bits)


@pytest.mark.parametrize("name", UNSIGNED)
def test_promote_types_every_pair(name):
    for other in OTHERS + UNSIGNED:
        for a, b in ((name, other), (other, name)):
            ours = _outcome(lambda: glasstorch.promote_types(getattr(glasstorch, a),
                                                             getattr(glasstorch, b)))
            theirs = _outcome(lambda: torch.promote_types(getattr(torch, a), getattr(torch, b)))
            assert ours == theirs, (a, b)
            assert glasstorch.can_cast(getattr(glasstorch, a), getattr(glasstorch, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


RESULT_TYPE_OPERANDS = [
    lambda t, d: (t.ones(2, dtype=d), 1), lambda t, d: (t.ones(2, dtype=d), 1.5),
    lambda t, d: (t.ones(2, dtype=d), True), lambda t, d: (t.ones(2, dtype=d), 1j),
    lambda t, d: (t.ones(2, dtype=d), t.tensor(1)), lambda t, d: (t.tensor(1, dtype=d), t.ones(2)),
    lambda t, d: (t.tensor(1, dtype=d), t.tensor([1])),
    lambda t, d: (t.ones(2, dtype=d), t.tensor([1])),
    lambda t, d: (t.ones(2, dtype=d), t.tensor([True])),
    lambda t, d: (t.tensor(1, dtype=d), t.tensor(2.0)),
    lambda t, d: (t.ones(2, dtype=d), t.ones(2, dtype=d)),
]


@pytest.mark.parametrize("name", UNSIGNED)
@pytest.mark.parametrize("case", range(len(RESULT_TYPE_OPERANDS)))
def test_result_type(name, case):
    def result(lib):
        return lib.result_type(*RESULT_TYPE_OPERANDS[case](lib, getattr(lib, name)))
    assert _outcome(lambda: result(glasstorch)) == _outcome(lambda: result(torch))


@pytest.mark.parametrize("name", UNSIGNED)
@given(data=st.data())
def test_tensor_values_in_range_round_trip(name, data):
    values = data.draw(st.lists(st.integers(0, 2 ** _bits(name) - 1), max_size=6))
    out = returned(differential(lambda t: t.tensor(values, dtype=getattr(t, name))))
    assert out[1] == name.join(["torch.", ""])
    ours = glasstorch.tensor(values, dtype=getattr(glasstorch, name))
    assert ours.tolist() == values
    assert repr(ours) == repr(torch.tensor(values, dtype=getattr(torch, name)))


@pytest.mark.parametrize("name", UNSIGNED)
@given(data=st.data())
def test_casts_both_ways(name, data):
    bits = _bits(name)
    unsigned = data.draw(st.lists(st.integers(0, 2 ** bits - 1), min_size=1, max_size=5))
    signed = data.draw(st.lists(st.integers(-2 ** 31, 2 ** 31 - 1), min_size=1, max_size=5))
    floats = data.draw(st.lists(st.floats(0, 60000, width=32), min_size=1, max_size=5))
    target = data.draw(st.sampled_from(["bool", "uint8", "int16", "int64", "float32",
                                        "float64"]))
    differential(lambda t: t.tensor(unsigned, dtype=getattr(t, name)).to(getattr(t, target)))
    differential(lambda t: t.tensor(signed).to(getattr(t, name)))
    differential(lambda t: t.tensor(floats).to(getattr(t, name)))


OUT_OF_RANGE = [-1, 2 ** 64, 2 ** 70, 2 ** 63, 1.5, 2 ** 16, 2 ** 32, -(2 ** 16)]


@pytest.mark.parametrize("name", UNSIGNED)
@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_tensor_value_limits(name, value):
    differential(lambda t: t.tensor([value], dtype=getattr(t, name)), may_raise=True)


def _small(t, d):
    return t.tensor([5, 2, 5], dtype=d)


# What PyTorch 2.13 computes for these dtypes.
SUPPORTED = {
    "zeros": lambda t, d: t.zeros(2, 3, dtype=d),
    "ones": lambda t, d: t.ones(3, dtype=d),
    "full": lambda t, d: t.full((2,), 7, dtype=d),
    "empty_shape": lambda t, d: t.empty(2, 3, dtype=d).shape,
    "zeros_like": lambda t, d: t.zeros_like(_small(t, d)),
    "full_like": lambda t, d: t.full_like(_small(t, d), 9),
    "randint": lambda t, d: t.randint(0, 9, (4,), dtype=d, generator=t.Generator().manual_seed(3)),
    "clone": lambda t, d: _small(t, d).clone(),
    "copy_": lambda t, d: t.zeros(3, dtype=d).copy_(t.tensor([3, 4, 5])),
    "contiguous": lambda t, d: t.tensor([[1, 2], [3, 4]], dtype=d).t().contiguous(),
    "index": lambda t, d: _small(t, d)[1],
    "index_tensor": lambda t, d: _small(t, d)[t.tensor([2, 0])],
    "mask_index": lambda t, d: _small(t, d)[t.tensor([True, False, True])],
    "view": lambda t, d: t.tensor([1, 2, 3, 4], dtype=d).view(2, 2),
    "reshape": lambda t, d: _small(t, d).reshape(3, 1),
    "cat": lambda t, d: t.cat([_small(t, d), _small(t, d)]),
    "stack": lambda t, d: t.stack([_small(t, d), _small(t, d)]),
    "item": lambda t, d: _small(t, d)[0].item(),
    "fill_": lambda t, d: t.zeros(2, dtype=d).fill_(3),
    "eq": lambda t, d: _small(t, d) == t.tensor([5, 3, 4], dtype=d),
    "ne_scalar": lambda t, d: _small(t, d) != 5,
    "mul": lambda t, d: _small(t, d) * _small(t, d),
    "div": lambda t, d: _small(t, d) / t.tensor([1, 3, 2], dtype=d),
    "add_float": lambda t, d: _small(t, d) + 1.5,
    "add_float_tensor": lambda t, d: _small(t, d) + t.ones(3),
    "bitwise_and": lambda t, d: _small(t, d) & t.tensor([1, 3, 4], dtype=d),
    "bitwise_or": lambda t, d: _small(t, d) | t.tensor([1, 3, 4], dtype=d),
    "bitwise_xor": lambda t, d: _small(t, d) ^ t.tensor([1, 3, 4], dtype=d),
    "sum": lambda t, d: _small(t, d).sum(),
    "prod": lambda t, d: _small(t, d).prod(),
    "sort": lambda t, d: _small(t, d).sort().values,
    "argsort": lambda t, d: _small(t, d).argsort(stable=True),
    "unique": lambda t, d: _small(t, d).unique(),
    "where": lambda t, d: t.where(t.tensor([True, False, True]), _small(t, d), t.ones(3, dtype=d)),
    "any": lambda t, d: _small(t, d).any(),
    "all": lambda t, d: _small(t, d).all(),
    "equal": lambda t, d: t.equal(_small(t, d), _small(t, d)),
    "sqrt": lambda t, d: t.tensor([4, 9], dtype=d).sqrt(),
    "cumsum": lambda t, d: _small(t, d).cumsum(0),
    "repeat": lambda t, d: _small(t, d).repeat(2),
    "roll": lambda t, d: _small(t, d).roll(1),
    "pad": lambda t, d: t.nn.functional.pad(_small(t, d), (1, 1)),
    "max_value": lambda t, d: t.tensor([0, 2 ** (8 * d.itemsize) - 1], dtype=d),
    "view_bytes": lambda t, d: t.tensor([1, 2, 3, 4, 5, 6, 7, 8], dtype=t.uint8).view(d),
    "element_size": lambda t, d: _small(t, d).element_size(),
    "type": lambda t, d: _small(t, d).type(),
    "is_signed": lambda t, d: _small(t, d).is_signed(),
    "mul_scalar": lambda t, d: _small(t, d) * 3,
    "div_scalar": lambda t, d: _small(t, d) / 2,
    "and_scalar": lambda t, d: _small(t, d) & 3,
    "floor": lambda t, d: _small(t, d).floor(),
    "round": lambda t, d: _small(t, d).round(),
    "sigmoid": lambda t, d: _small(t, d).sigmoid(),
    "log": lambda t, d: _small(t, d).log(),
    "reciprocal": lambda t, d: _small(t, d).reciprocal(),
    "cumprod": lambda t, d: _small(t, d).cumprod(0),
    "sort_descending": lambda t, d: _small(t, d).sort(descending=True, stable=True).values,
    "isfinite": lambda t, d: t.isfinite(_small(t, d)),
    "true_divide": lambda t, d: _small(t, d).true_divide(_small(t, d)),
    "cumsum_float": lambda t, d: _small(t, d).cumsum(0, dtype=t.float32),
    "sum_int64": lambda t, d: _small(t, d).sum(dtype=t.int64),
    "prod_dim": lambda t, d: _small(t, d).prod(0),
    "outer": lambda t, d: t.outer(_small(t, d), _small(t, d)),
    "diag": lambda t, d: t.diag(_small(t, d)),
    "tile": lambda t, d: _small(t, d).tile(2),
    "repeat_interleave": lambda t, d: _small(t, d).repeat_interleave(2),
    "fill_negative": lambda t, d: t.zeros(2, dtype=d).fill_(-1),
    "setitem_negative": lambda t, d: _set(t.zeros(2, dtype=d), 0, -1),
    "where_scalar": lambda t, d: t.where(t.tensor([True, False, True]), _small(t, d), 0),
    "nan_to_num": lambda t, d: _small(t, d).nan_to_num(),
    "signbit": lambda t, d: _small(t, d).signbit(),
    "index_select_matrix": lambda t, d: t.ones(2, 3, dtype=d).index_select(0, t.tensor([1])),
    "bucketize_float": lambda t, d: t.bucketize(t.ones(3), _small(t, d).sort().values),
}


def _set(x, index, value):
    x[index] = value
    return x


@pytest.mark.parametrize("name", UNSIGNED)
@pytest.mark.parametrize("op", sorted(SUPPORTED))
def test_supported_ops_compute_as_torch(name, op):
    differential(lambda t: SUPPORTED[op](t, getattr(t, name)))


# What PyTorch 2.13's CPU kernels refuse for these dtypes (NotImplementedError).
REFUSED = {
    "arange": lambda t, d: t.arange(5, dtype=d),
    "linspace": lambda t, d: t.linspace(0, 4, 5, dtype=d),
    "eye": lambda t, d: t.eye(2, dtype=d),
    "rand": lambda t, d: t.rand(3, dtype=d),
    "flip": lambda t, d: _small(t, d).flip(0),
    "lt": lambda t, d: _small(t, d) < _small(t, d),
    "ge_scalar": lambda t, d: _small(t, d) >= 2,
    "add": lambda t, d: _small(t, d) + _small(t, d),
    "add_scalar": lambda t, d: _small(t, d) + 1,
    "add_0dim": lambda t, d: _small(t, d) + t.tensor(1),
    "iadd": lambda t, d: _small(t, d).add_(1),
    "sub": lambda t, d: _small(t, d) - _small(t, d),
    "floordiv": lambda t, d: _small(t, d) // _small(t, d),
    "remainder": lambda t, d: _small(t, d) % _small(t, d),
    "neg": lambda t, d: -_small(t, d),
    "abs": lambda t, d: _small(t, d).abs(),
    "sign": lambda t, d: _small(t, d).sign(),
    "pow": lambda t, d: _small(t, d) ** 2,
    "bitwise_not": lambda t, d: ~_small(t, d),
    "lshift": lambda t, d: _small(t, d) << _small(t, d),
    "max": lambda t, d: _small(t, d).max(),
    "min": lambda t, d: _small(t, d).min(),
    "amax": lambda t, d: _small(t, d).amax(),
    "argmax": lambda t, d: _small(t, d).argmax(),
    "maximum": lambda t, d: t.maximum(_small(t, d), _small(t, d)),
    "masked_fill": lambda t, d: _small(t, d).masked_fill(t.tensor([True, False, True]), 1),
    "clamp": lambda t, d: _small(t, d).clamp(1, 3),
    "nonzero": lambda t, d: _small(t, d).nonzero(),
    "count_nonzero": lambda t, d: t.count_nonzero(_small(t, d)),
    "matmul": lambda t, d: t.ones(1, 2, dtype=d) @ t.ones(2, 1, dtype=d),
    "gather": lambda t, d: _small(t, d).gather(0, t.tensor([1])),
    "index_select": lambda t, d: _small(t, d).index_select(0, t.tensor([1])),
    "scatter": lambda t, d: _small(t, d).scatter(0, t.tensor([1]), _small(t, d)),
    "index_put_": lambda t, d: _small(t, d).index_put_((t.tensor([1]),), _small(t, d)[:1]),
    "masked_select": lambda t, d: _small(t, d).masked_select(t.tensor([True, False, True])),
    "tril": lambda t, d: t.ones(2, 2, dtype=d).tril(),
    "bincount": lambda t, d: t.bincount(_small(t, d)),
    "topk": lambda t, d: _small(t, d).topk(1),
    "relu": lambda t, d: _small(t, d).relu(),
    "median": lambda t, d: _small(t, d).median(),
    "median_dim": lambda t, d: _small(t, d).median(0),
    "mode": lambda t, d: _small(t, d).mode(),
    "kthvalue": lambda t, d: _small(t, d).kthvalue(1),
    "logical_and": lambda t, d: t.logical_and(_small(t, d), _small(t, d)),
    "logical_not": lambda t, d: t.logical_not(_small(t, d)),
    "index_add": lambda t, d: _small(t, d).index_add(0, t.tensor([0]), _small(t, d)[:1]),
    "index_fill": lambda t, d: _small(t, d).index_fill(0, t.tensor([0]), 1),
    "index_copy": lambda t, d: _small(t, d).index_copy(0, t.tensor([0]), _small(t, d)[:1]),
    "fmod": lambda t, d: _small(t, d).fmod(2),
    "rsub": lambda t, d: 10 - _small(t, d),
    "aminmax": lambda t, d: t.aminmax(_small(t, d)),
    "max_dim": lambda t, d: _small(t, d).max(0),
    "min_dim": lambda t, d: _small(t, d).min(0),
    "argmin": lambda t, d: _small(t, d).argmin(),
    "amin": lambda t, d: _small(t, d).amin(),
    "clamp_min": lambda t, d: _small(t, d).clamp(min=3),
    "clamp_max": lambda t, d: _small(t, d).clamp(max=3),
    "clamp_min_": lambda t, d: _small(t, d).clamp_(min=3),
    "trace": lambda t, d: t.ones(2, 2, dtype=d).trace(),
    "sum_dtype": lambda t, d: _small(t, d).sum(dtype=d),
    "prod_dtype": lambda t, d: _small(t, d).prod(dtype=d),
    "cumsum_dtype": lambda t, d: _small(t, d).cumsum(0, dtype=d),
    "masked_scatter": lambda t, d: _small(t, d).masked_scatter(t.tensor([True, False, True]),
                                                               _small(t, d)),
    "take": lambda t, d: _small(t, d).take(t.tensor([0])),
    "put_": lambda t, d: _small(t, d).put_(t.tensor([0]), _small(t, d)[:1]),
    "scatter_add": lambda t, d: _small(t, d).scatter_add(0, t.tensor([0]), _small(t, d)[:1]),
    "searchsorted": lambda t, d: t.searchsorted(_small(t, d).sort().values, _small(t, d)),
    "dot": lambda t, d: t.dot(_small(t, d), _small(t, d)),
    "square": lambda t, d: _small(t, d).square(),
    "cummax": lambda t, d: _small(t, d).cummax(0),
    "addcmul": lambda t, d: _small(t, d).addcmul(_small(t, d), _small(t, d)),
    "clamp_tensor_min": lambda t, d: t.clamp(_small(t, d), _small(t, d)),
    "clamp_tensor_max": lambda t, d: t.clamp(_small(t, d), max=_small(t, d)),
    "clamp_tensors": lambda t, d: t.clamp(_small(t, d), _small(t, d), _small(t, d)),
    "clamp_min_tensor": lambda t, d: t.clamp_min(_small(t, d), _small(t, d)),
    "cross": lambda t, d: t.cross(t.ones(3, 3, dtype=d), t.ones(3, 3, dtype=d), dim=0),
    "linalg_cross": lambda t, d: t.linalg.cross(t.ones(3, 3, dtype=d), t.ones(3, 3, dtype=d)),
    "bucketize": lambda t, d: t.bucketize(_small(t, d), _small(t, d).sort().values),
    "index_select_vector": lambda t, d: _small(t, d).index_select(0, t.tensor([1])),
}


@pytest.mark.parametrize("name", UNSIGNED)
@pytest.mark.parametrize("op", sorted(REFUSED))
def test_refused_ops_raise_torchs_error(name, op):
    outcome = differential(lambda t: REFUSED[op](t, getattr(t, name)), may_raise=True)
    assert "not implemented for 'UInt" in raised(outcome, "NotImplementedError")


@pytest.mark.parametrize("name", UNSIGNED)
def test_mixed_integer_operands_fail_to_promote(name):
    outcome = differential(lambda t: t.ones(2, dtype=getattr(t, name)) + t.ones(2, dtype=t.int64),
                           may_raise=True)
    raised(outcome, "RuntimeError")


@pytest.mark.parametrize("name", UNSIGNED)
def test_save_load_both_ways(name):
    values = [0, 1, 2 ** _bits(name) - 1]
    ours = glasstorch.tensor(values, dtype=getattr(glasstorch, name))
    theirs = torch.tensor(values, dtype=getattr(torch, name))
    buffer = io.BytesIO()
    torch.save({"t": theirs, "v": theirs[1:]}, buffer)
    loaded = glasstorch.load(io.BytesIO(buffer.getvalue()))
    assert loaded["t"].dtype is getattr(glasstorch, name) and loaded["t"].tolist() == values
    assert loaded["v"].untyped_storage().data_ptr() == loaded["t"].untyped_storage().data_ptr()
    buffer = io.BytesIO()
    glasstorch.save({"t": ours}, buffer)
    back = torch.load(io.BytesIO(buffer.getvalue()))["t"]
    assert back.dtype == getattr(torch, name) and back.tolist() == values
    assert np.array_equal(back.numpy(), theirs.numpy())
