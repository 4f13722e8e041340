"""Lazy modules, DataParallel (no accelerator) and nn.factory_kwargs against real PyTorch."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import glasstorch as gt

from .differential import differential

LAZY = [("LazyLinear", (3,), (2, 4)), ("LazyLinear", (2,), (5,)),
        ("LazyConv1d", (2, 3), (1, 3, 6)), ("LazyConv1d", (2, 3), (3, 6)),
        ("LazyConv2d", (4, 2), (2, 3, 4, 4)), ("LazyConv3d", (2, 1), (1, 2, 2, 2, 2)),
        ("LazyConvTranspose1d", (2, 3), (1, 3, 4)), ("LazyConvTranspose2d", (2, 2), (1, 3, 3, 3)),
        ("LazyConvTranspose3d", (2, 1), (1, 2, 2, 2, 2)),
        ("LazyBatchNorm1d", (), (4, 3)), ("LazyBatchNorm2d", (), (2, 3, 2, 2)),
        ("LazyBatchNorm3d", (), (2, 3, 2, 2, 1)), ("LazyInstanceNorm1d", (), (2, 3, 4)),
        ("LazyInstanceNorm2d", (), (2, 3, 4, 4)), ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2))]


def _tensors(m):
    return sorted((k, repr(v) if "Uninitialized" in type(v).__name__ else tuple(v.shape))
                  for k, v in m.state_dict().items())


@pytest.mark.parametrize("name,args,shape", LAZY)
def test_initialize_on_first_call(name, args, shape):
    def scenario(lib):
        lib.manual_seed(0)
        m = getattr(lib.nn, name)(*args)
        before = (repr(m), type(m).__name__, _tensors(m), m.has_uninitialized_params(),
                  [type(p).__name__ for p in m.parameters()])
        x = lib.randn(*shape)
        y = m(x)
        y.sum().backward()
        after = (repr(m), type(m).__name__, _tensors(m), hasattr(m, "_initialize_hook"),
                 [type(p).__name__ for p in m.parameters()], m.state_dict(), y,
                 [p.grad for p in m.parameters()])
        return before, after, m(x)
    differential(scenario)


@pytest.mark.parametrize("name,args,source", [
    ("LazyLinear", (3,), lambda lib: lib.nn.Linear(5, 3)),
    ("LazyConv2d", (2, 3), lambda lib: lib.nn.Conv2d(4, 2, 3)),
    ("LazyBatchNorm1d", (), lambda lib: lib.nn.BatchNorm1d(6))])
def test_load_state_dict_materializes(name, args, source):
    def scenario(lib):
        lib.manual_seed(0)
        src = source(lib)
        m = getattr(lib.nn, name)(*args)
        result = m.load_state_dict(src.state_dict())
        still_lazy = (type(m).__name__, m.has_uninitialized_params())
        lazy_copy = getattr(lib.nn, name)(*args)
        lazy_into_lazy = repr(lazy_copy.load_state_dict(getattr(lib.nn, name)(*args)
                                                        .state_dict()))
        return repr(result), still_lazy, m.state_dict(), lazy_into_lazy
    differential(scenario)


@pytest.mark.parametrize("case", ["conv_dims", "groups", "uninit_shape", "weight_norm",
                                  "spectral_norm", "not_implemented", "linear_mismatch"])
def test_lazy_errors(case):
    def scenario(lib):
        if case == "conv_dims":
            lib.nn.LazyConv2d(4, 3)(lib.ones(3, 3))
        elif case == "groups":
            lib.nn.LazyConv1d(4, 1, groups=2)(lib.ones(1, 3, 2))
        elif case == "uninit_shape":
            return lib.nn.LazyLinear(3).weight.shape
        elif case == "weight_norm":
            lib.nn.utils.weight_norm(lib.nn.LazyLinear(3))
        elif case == "spectral_norm":
            lib.nn.utils.spectral_norm(lib.nn.LazyLinear(3))
        elif case == "not_implemented":
            class Half(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
                pass
            Half()(lib.ones(1))
        elif case == "linear_mismatch":
            m = lib.nn.LazyLinear(2)
            m(lib.ones(1, 3))
            m(lib.ones(1, 4))
    outcome = differential(scenario, may_raise=True)
    assert outcome[0] == "raised"


def test_uninitialized_tensors():
    def scenario(lib):
        p = lib.nn.UninitializedParameter()
        b = lib.nn.UninitializedBuffer()
        p.materialize((2, 3))
        b.materialize(4, dtype=lib.float64)
        fresh = lib.nn.UninitializedBuffer(requires_grad=True)
        return (type(p).__name__, p.shape, p.requires_grad, type(b).__name__, b.shape, b.dtype,
                repr(fresh), fresh.requires_grad, lib.nn.parameter.is_lazy(fresh),
                lib.nn.parameter.is_lazy(b))
    differential(scenario)


@given(out=st.integers(1, 4), inp=st.integers(1, 5), seed=st.integers(0, 100))
def test_lazy_linear_matches_linear_init(out, inp, seed):
    def scenario(lib):
        lib.manual_seed(seed)
        m = lib.nn.LazyLinear(out, dtype=lib.float64)
        m(lib.zeros(1, inp, dtype=lib.float64))
        return m.weight, m.bias
    differential(scenario)


def test_data_parallel_without_accelerator():
    def scenario(lib):
        lib.manual_seed(0)
        dp = lib.nn.DataParallel(lib.nn.Linear(3, 2), device_ids=[0], dim=1)
        y = dp(lib.ones(2, 3))
        y.sum().backward()
        try:
            lib.nn.parallel.data_parallel(lib.nn.Linear(3, 2), lib.ones(2, 3))
        except RuntimeError as e:
            err = str(e)
        return (repr(dp), list(dp.state_dict()), dp.device_ids, hasattr(dp, "dim"), y,
                dp.module.weight.grad, err)
    differential(scenario)


@pytest.mark.parametrize("kwargs", [None, {}, {"device": "cpu", "dtype": 1},
                                    {"factory_kwargs": {"dtype": 2}, "device": "meta"},
                                    {"dtype": 1, "factory_kwargs": {"dtype": 2}},
                                    {"other": 1}])
def test_factory_kwargs(kwargs):
    differential(lambda lib: lib.nn.factory_kwargs(kwargs), may_raise=True)


def test_list_with_default(torch):
    from torch.nn.modules.utils import _list_with_default as theirs

    from glasstorch.nn.modules.utils import _list_with_default as ours
    for size, defaults in [([None, 3], [1, 2, 5, 6]), (4, [1]), ([None], [7, 8])]:
        assert ours(size, defaults) == theirs(size, defaults)
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        ours([1, 2], [5, 6])
    assert gt.nn.modules.utils.__all__ == torch.nn.modules.utils.__all__
