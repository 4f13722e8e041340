"""The top-level functions and Tensor attributes of issue 16 against torch:
aliases (values, grad_fn, errors naming the target op), the new elementwise,
shape and indexing ops (hypothesis over shapes, float64 gradcheck), the legacy
tensor types, constants and process-wide switches."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch

from .differential import differential


def arr(seed, shape, low=-3, high=3, dtype=np.float32):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def T(lib, array, **kwargs):
    return lib.tensor(array, **kwargs)


# -- aliases: same values, same grad_fn (the target's), same errors --------------------------

ALIAS_CALLS = [
    lambda lib, a, b: lib.multiply(a, b),
    lambda lib, a, b: a.multiply(2),
    lambda lib, a, b: lib.multiply(3, b),
    lambda lib, a, b: lib.subtract(a, b, alpha=2),
    lambda lib, a, b: a.subtract(1.5),
    lambda lib, a, b: lib.divide(a, b),
    lambda lib, a, b: lib.divide(a, b, rounding_mode="floor"),
    lambda lib, a, b: a.divide(2, rounding_mode="trunc"),
    lambda lib, a, b: lib.divide(a, b, rounding_mode="bad"),
    lambda lib, a, b: lib.true_divide(a, b),
    lambda lib, a, b: lib.absolute(a),
    lambda lib, a, b: lib.negative(a),
    lambda lib, a, b: lib.fix(a * 2),
    lambda lib, a, b: lib.arctan2(a, b),
    lambda lib, a, b: lib.arcsin(a.tanh()),
    lambda lib, a, b: lib.arccos(a.tanh()),
    lambda lib, a, b: lib.arctan(a),
    lambda lib, a, b: lib.arcsinh(a),
    lambda lib, a, b: lib.arccosh(a.abs() + 1),
    lambda lib, a, b: lib.arctanh(a.tanh() * 0.5),
    lambda lib, a, b: lib.greater(a, b),
    lambda lib, a, b: a.greater_equal(0),
    lambda lib, a, b: lib.less(a, b),
    lambda lib, a, b: lib.less_equal(a, 0.5),
    lambda lib, a, b: lib.not_equal(a, b),
    lambda lib, a, b: lib.greater(a.to(lib.complex64), b),
    lambda lib, a, b: lib.row_stack([a, b]),
    lambda lib, a, b: lib.row_stack([]),
    lambda lib, a, b: lib.swapaxes(a, 0, 1),
]


@pytest.mark.parametrize("call", ALIAS_CALLS)
def test_aliases_match_torch(call):
    def scenario(lib):
        a = T(lib, arr(0, (3, 4)), dtype=lib.float64, requires_grad=True)
        b = T(lib, arr(1, (4,), 0.5, 2), dtype=lib.float64)
        return call(lib, a, b)
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("method,args", [
    ("multiply_", (2,)), ("subtract_", (1, 3)), ("divide_", (2,)), ("absolute_", ()),
    ("negative_", ()), ("fix_", ()), ("arctan2_", ("other",)), ("arcsin_", ()),
    ("greater_", ("other",)), ("less_equal_", (0.0,)), ("not_equal_", ("other",)),
    ("swapaxes_", (0, 1)), ("swapdims_", (1, 0)),
])
def test_inplace_aliases_match_torch(method, args):
    def scenario(lib):
        x = T(lib, arr(2, (3, 3), -0.9, 0.9))
        other = T(lib, arr(3, (3, 3)))
        result = getattr(x, method)(*[other if a == "other" else a for a in args])
        return result is x, x, x._version
    differential(scenario)


def test_alias_out_and_inplace_functions():
    def scenario(lib):
        a, b = T(lib, arr(4, (2, 3))), T(lib, arr(5, (2, 3)))
        out = lib.empty(2, 3, dtype=lib.float64)
        flags = lib.empty(0, dtype=lib.bool)
        lib.multiply(a, b, out=out)
        lib.greater(a, b, out=flags)
        x = a.clone().tanh()
        return out, flags, lib.arccos_(x), x, lib.negative_(b.clone()), lib.fix_(a.clone())
    differential(scenario)


def test_alias_grad_fn_names():
    def scenario(lib):
        a = T(lib, arr(6, (3,)), requires_grad=True)
        return [f(a).grad_fn.name() for f in (lambda a: a.multiply(2), lambda a: a.divide(a),
                                             lambda a: lib.subtract(a, 1),
                                             lambda a: lib.arctan2(a, a))]
    differential(scenario)


# -- elementwise ops ----------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.lists(st.integers(0, 4), max_size=3),
       op=st.sampled_from(["gcd", "lcm"]), dtype=st.sampled_from(["int64", "int32", "uint8"]))
def test_gcd_lcm(seed, shape, op, dtype):
    def scenario(lib):
        a = T(lib, arr(seed, shape, -50, 50).astype(np.int64)).to(getattr(lib, dtype))
        b = T(lib, arr(seed + 1, shape[-1:], -50, 50).astype(np.int64))
        return getattr(lib, op)(a, b), getattr(a.clone(), op + "_")(b.to(a.dtype))
    differential(scenario, may_raise=dtype == "uint8")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.lists(st.integers(1, 4), max_size=3),
       dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]))
def test_nextafter_heaviside_ldexp(seed, shape, dtype):
    def scenario(lib):
        d = getattr(lib, dtype)
        x = T(lib, arr(seed, shape)).round().to(d)
        y = T(lib, arr(seed + 1, shape)).to(d)
        e = T(lib, arr(seed + 2, shape, -4, 4).astype(np.int64))
        return (lib.nextafter(x, y), lib.nextafter(x, x), lib.heaviside(x, y),
                lib.ldexp(x, e), x.clone().ldexp_(e))
    differential(scenario)


@pytest.mark.parametrize("call", [
    lambda lib: lib.gcd(lib.ones(2), lib.ones(2)),
    lambda lib: lib.gcd(lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool)),
    lambda lib: lib.lcm(lib.tensor([2 ** 40]), lib.tensor([3 ** 20])),
    lambda lib: lib.heaviside(lib.tensor([-1., 0., 2., float("nan")]), lib.tensor([1])),
    lambda lib: lib.heaviside(lib.tensor([1j]), lib.tensor([1j])),
    lambda lib: lib.heaviside(lib.tensor([-1., 0., float("nan")]), lib.tensor(0.5)),
    lambda lib: lib.nextafter(lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib.nextafter(lib.tensor([0.0, -0.0]), lib.tensor([-1.0, 1.0])),
    lambda lib: lib.ldexp(lib.tensor([1, 2]), lib.tensor([3, -1])),
    lambda lib: lib.float_power(lib.tensor([1, 2]), 2),
    lambda lib: lib.float_power(2, lib.tensor([1, -2])),
    lambda lib: lib.float_power(lib.tensor([1., 2.]), 1j),
    lambda lib: lib.tensor([1., 2.]).float_power_(2),
    lambda lib: lib.float_power(lib.tensor([1., 2.]), 2, out=lib.empty(2)),
    lambda lib: lib.isin(lib.tensor([1, 2, 3]), lib.tensor([1., 2.5])),
    lambda lib: lib.isin(lib.tensor([1, 2, 3]), 2, invert=True),
    lambda lib: lib.isin(2, lib.tensor([1, 2])),
    lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([True])),
    lambda lib: lib.isin(lib.tensor([1j]), lib.tensor([1j])),
    lambda lib: lib.isreal(lib.tensor([1 + 0j, 1 + 1j])),
    lambda lib: lib.isreal(lib.tensor([1, 2])),
    lambda lib: lib.tensor([1 + 2j, 3 - 1j]).imag,
    lambda lib: lib.tensor([1.0]).imag,
    lambda lib: lib.imag(lib.tensor([1, 2])),
])
def test_elementwise_values_and_errors(call):
    differential(call, may_raise=True)


def test_gradients_against_torch():
    cases = [
        lambda lib, x, y: lib.nextafter(x, y),
        lambda lib, x, y: lib.ldexp(x, lib.tensor([0, 1, 2, 3])),
        lambda lib, x, y: lib.float_power(x.abs(), y),
        lambda lib, x, y: lib.take_along_dim(x, lib.tensor([3, 0, 0])),
        lambda lib, x, y: lib.inner(x, y),
        lambda lib, x, y: lib.diagflat(x, 1),
        lambda lib, x, y: lib.column_stack([x, y]),
        lambda lib, x, y: lib.dstack([x, y]),
        lambda lib, x, y: lib.fliplr(lib.stack([x, y])),
        lambda lib, x, y: x.clone().cumsum_(0),
        lambda lib, x, y: x.clone().cumprod_(0),
        lambda lib, x, y: lib.multiply(x, y),
        lambda lib, x, y: lib.arctan2(x, y),
    ]
    for case in cases:
        for lib in (torch, glasstorch):
            x = T(lib, arr(7, (4,)), dtype=lib.float64, requires_grad=True)
            y = T(lib, arr(8, (4,), 0.5, 2), dtype=lib.float64, requires_grad=True)
            assert lib.autograd.gradcheck(lambda x, y: case(lib, x, y), (x, y))

        def scenario(lib):
            x = T(lib, arr(7, (4,)), dtype=lib.float64, requires_grad=True)
            y = T(lib, arr(8, (4,), 0.5, 2), dtype=lib.float64, requires_grad=True)
            out = case(lib, x, y)
            out.sum().backward()
            return out, x.grad, y.grad
        differential(scenario)


# -- shape and indexing ops -----------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       dim=st.integers(-3, 3), k=st.integers(1, 4), with_dim=st.booleans())
def test_take_along_dim(seed, shape, dim, k, with_dim):
    def scenario(lib):
        x = T(lib, arr(seed, shape))
        if not with_dim:
            index = T(lib, (arr(seed, (k,), 0, x.numel())).astype(np.int64))
            return lib.take_along_dim(x, index), x.take_along_dim(index)
        d = dim % len(shape)
        index_shape = [1 if i != d else k for i in range(len(shape))]
        index = T(lib, arr(seed + 1, index_shape, 0, shape[d]).astype(np.int64))
        return lib.take_along_dim(x, index, dim)
    differential(scenario, may_raise=with_dim and not -len(shape) <= dim < len(shape))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.lists(st.integers(0, 3), max_size=4))
def test_argwhere_fliplr_flipud_diagflat(seed, shape):
    def scenario(lib):
        x = T(lib, arr(seed, shape, -1, 2)).round()
        return (lib.argwhere(x), x.argwhere(), lib.diagflat(x), lib.diagflat(x, -2),
                lib.flipud(x), lib.fliplr(x))
    differential(scenario, may_raise=len(shape) < 2)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 3), ndims=st.lists(st.integers(0, 3),
                                                                           min_size=1, max_size=3))
def test_column_stack_dstack_inner(seed, n, ndims):
    def scenario(lib):
        parts = [T(lib, arr(seed + i, (n,) * d if d < 2 else (n, 2) + (1,) * (d - 2)))
                 for i, d in enumerate(ndims)]
        return (lib.column_stack(parts), lib.dstack(parts), lib.inner(parts[0], parts[-1]))
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("call", [
    lambda lib: lib.fliplr(lib.ones(3)),
    lambda lib: lib.flipud(lib.tensor(1.)),
    lambda lib: lib.column_stack([]),
    lambda lib: lib.dstack([]),
    lambda lib: lib.take_along_dim(lib.ones(2, 3), lib.tensor([[0.]]), 1),
    lambda lib: lib.take_along_dim(lib.ones(2, 3), lib.tensor([[0]]), 3),
    lambda lib: lib.take_along_dim(lib.ones(2, 3), lib.tensor([0]), 1),
    lambda lib: lib.take_along_dim(lib.ones(2, 3), lib.tensor([[1], [2]]), 1, out=lib.empty(0)),
    lambda lib: lib.inner(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.adjoint(lib.ones(3)),
    lambda lib: lib.tensor([[1 + 1j, 2j], [3, 4 - 1j]]).adjoint(),
    lambda lib: lib.tensor([[1 + 1j, 2j], [3, 4 - 1j]]).H,
    lambda lib: lib.ones(2, 3, 4).mH.shape,
    lambda lib: lib.ones(2, 3, 4).H,
    lambda lib: lib.ones(3).mH,
    lambda lib: lib.tensor(2.).H,
    lambda lib: lib.arange(6.).view(2, 3).cumsum_(1),
    lambda lib: lib.arange(6.).view(2, 3).cumprod_(dim=0),
    lambda lib: (lib.is_conj(lib.ones(2)), lib.is_neg(lib.ones(2)), lib.ones(2).is_conj(),
                 lib.resolve_neg(lib.ones(2)), lib.is_signed(lib.ones(2, dtype=lib.uint8))),
    lambda lib: lib.conj_physical_(lib.tensor([1 + 2j])),
    lambda lib: lib.ones(2).conj_physical_(),
])
def test_shape_ops_values_and_errors(call):
    differential(call, may_raise=True)


# -- legacy tensor types ---------------------------------------------------------------------------

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
          "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_tensor_types(name):
    def scenario(lib):
        cls = getattr(lib, name)
        made = cls(2, 3)
        data = cls([1, 0, 2])
        return (cls.__name__, cls.dtype, cls.is_cuda, cls.is_sparse, tuple(made.shape),
                made.dtype, data, cls().shape, cls(lib.Size([4])).shape,
                isinstance(data, cls), isinstance(lib.ones(1), cls),
                isinstance(data.to("meta"), cls), issubclass(cls, lib.Tensor),
                type(data) is lib.Tensor, lib.ones(2).type(cls).dtype,
                lib.ones(2).type(f"torch.{name}").dtype, data.type())
    differential(scenario)


@pytest.mark.parametrize("call", [
    lambda lib: lib.FloatTensor(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.DoubleTensor(lib.ones(2)),
    lambda lib: lib.LongTensor(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.FloatTensor("a"),
    lambda lib: lib.FloatTensor(-1),
    lambda lib: lib.ones(2).type("torch.NoTensor"),
    lambda lib: (lib.ones(2, 3).new(4).shape, lib.ones(2, 3).new(4).dtype),
    lambda lib: lib.ones(2, 3, dtype=lib.int32).new([1, 2]),
    lambda lib: lib.ones(2).new(),
    lambda lib: lib.ones(2).new(lib.ones(3)),
])
def test_legacy_constructor_errors(call):
    differential(call, may_raise=True)


@pytest.mark.parametrize("arg", ["DoubleTensor", "torch.DoubleTensor", "LongTensor",
                                 "torch.Foo", 3])
def test_set_default_tensor_type(arg):
    def scenario(lib):
        lib.set_warn_always(True)       # the warning is TORCH_WARN_ONCE: every time here
        try:
            lib.set_default_tensor_type(getattr(lib, arg) if arg in LEGACY else arg)
            return lib.get_default_dtype(), lib.tensor([1.0]).dtype
        finally:
            lib.set_default_dtype(lib.float32)
            lib.set_warn_always(False)
    differential(scenario, may_raise=True)


# -- constants, switches, Tensor attributes ---------------------------------------------------------

def test_constants_and_flags():
    def scenario(lib):
        values = [lib.e, lib.pi, lib.inf, lib.nan, lib.newaxis, lib.has_lapack, lib.has_spectral,
                  lib.get_device(lib.ones(1)), lib.is_distributed(lib.ones(1)),
                  lib.ones(1).is_distributed(), lib.is_warn_always_enabled()]
        lib.set_warn_always(True)
        values.append(lib.is_warn_always_enabled())
        lib.set_warn_always(False)
        return [str(v) for v in values]
    differential(scenario)


@pytest.mark.parametrize("mode", ["warn", "error", "default", 0, 1, 2, True, "x", 3, 1.0])
def test_deterministic_debug_mode(mode):
    def scenario(lib):
        try:
            lib.set_deterministic_debug_mode(mode)
            return (lib.get_deterministic_debug_mode(), lib.are_deterministic_algorithms_enabled(),
                    lib.is_deterministic_algorithms_warn_only_enabled())
        finally:
            lib.use_deterministic_algorithms(False)
    differential(scenario, may_raise=True)


def test_interop_threads_refuse_non_positive():
    differential(lambda lib: lib.set_num_interop_threads(0), may_raise=True)
    assert glasstorch.get_num_interop_threads() >= 1
    assert glasstorch.set_flush_denormal(False) is False     # numpy cannot flush denormals
    assert glasstorch.init_num_threads() is None


@pytest.mark.parametrize("call", [
    lambda lib: [getattr(lib.ones(1), f"is_{d}") for d in
                 ("xpu", "mps", "ipu", "xla", "mtia", "maia", "nested")],
    lambda lib: lib.ones(2).is_pinned(),
    lambda lib: lib.ones(2).pin_memory(),
    lambda lib: lib.ones(2).record_stream(None),
    lambda lib: lib.ones(2, 3).storage_type().__name__,
    lambda lib: lib.ones(2, dtype=lib.int64).storage_type().__name__,
    lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1).dim_order(),
    lambda lib: lib.empty(2, 1, 3).dim_order(),
    lambda lib: lib.empty(2, 1, 3).dim_order(ambiguity_check=True),
    lambda lib: lib.ones(2, 3).dim_order(ambiguity_check=True),
    lambda lib: lib.ones(2, 3).dim_order(ambiguity_check=3),
    lambda lib: lib.ones(2, 3, 4, 5).dim_order(ambiguity_check=[lib.contiguous_format]),
    lambda lib: lib.ones(2, 3).resize(3, 2).shape,
    lambda lib: lib.ones(2, 3).resize_as(lib.ones(6)).shape,
    lambda lib: lib.arange(6.).view(2, 3).apply_(lambda v: v * 2),
    lambda lib: lib.ones(2, requires_grad=True).apply_(lambda v: v),
    lambda lib: lib.ones(2).map_(lib.ones(2) * 3, lambda a, b: a + b),
    lambda lib: lib.ones(2, 2).map2_(lib.ones(2), lib.ones(2, 1) * 3, lambda a, b, c: a + b * c),
    lambda lib: lib.ones(2).is_set_to(lib.ones(2)),
    lambda lib: (lambda x: x.is_set_to(x))(lib.ones(2)),
    lambda lib: lib.ones(2, 3).real.shape,
    lambda lib: (lambda c: (setattr(c, "imag", lib.ones(2)), c)[1])(lib.zeros(2, dtype=lib.complex64)),
    lambda lib: (lambda c: (setattr(c, "real", lib.ones(2) * 2), c)[1])(lib.zeros(2, dtype=lib.complex64)),
])
def test_tensor_attributes(call):
    differential(call, may_raise=True)
