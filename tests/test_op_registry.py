"""Registry-wide checks, one generic test for every op (OpInfo-style):

* every aten op has samples (or a documented exemption);
* on each sample, glasstorch's CPU result equals PyTorch's (values, dtype,
  shape, strides);
* the Meta device gives the CPU result's shape, dtype and strides.
"""

import pytest

import glasstorch
from glasstorch._dispatcher.dispatcher import dispatcher

from . import samples  # noqa: F401  (loads every sample)
from .helpers import assert_same
from .opinfo import EXEMPT, SAMPLES, Maker, data_seeds


ALL_OPS = sorted(n for n in dispatcher.operators if n.startswith("aten::"))
CASES = [(name, s) for name in sorted(SAMPLES) for s in SAMPLES[name]]


def _op(lib, name):
    base, _, overload = name.split("::")[1].partition(".")
    return getattr(getattr(lib.ops.aten, base), overload or "default")


def test_every_op_has_samples():
    missing = [n for n in ALL_OPS if n not in SAMPLES and n not in EXEMPT]
    assert not missing, f"ops without samples: {missing}"


def test_samples_name_real_ops():
    unknown = [n for n in SAMPLES if n not in dispatcher.operators]
    assert not unknown, f"samples for undeclared ops: {unknown}"


def _run(lib, name, smp, seed, device="cpu"):
    make = Maker(lib, seed, device)
    args, kwargs = smp.fn(make, lib)
    result = _op(lib, name)(*args, **kwargs)
    return (args[0] if smp.inplace else result), args


def _shares_input(result, args):
    """Whether a tensor result aliases the storage of the first tensor argument."""
    first = next((a for a in args if hasattr(a, "untyped_storage")), None)
    if first is None or not hasattr(result, "untyped_storage") or result.numel() == 0:
        return None
    return result.untyped_storage().data_ptr() == first.untyped_storage().data_ptr()


SEEDS = data_seeds(7, 1234)


@pytest.mark.parametrize("name,smp", CASES, ids=[s.name for _, s in CASES])
def test_matches_pytorch_and_meta(name, smp):
    """Values, dtype, shape, strides; storage sharing (views alias, copies don't,
    exactly as in PyTorch); and Meta agreeing with CPU on shape, dtype, strides,
    or raising PyTorch's own error where torch has no Meta kernel (lstsq)."""
    import torch
    for seed in SEEDS:
        try:
            ours, our_args = _run(glasstorch, name, smp, seed)
            theirs, their_args = _run(torch, name, smp, seed)
            assert_same(ours, theirs, atol=smp.atol, rtol=smp.rtol, values=not smp.random)
            if not smp.inplace:
                assert _shares_input(ours, our_args) == _shares_input(theirs, their_args), \
                    "aliases its input in one library but not in the other"
            try:
                meta, _ = _run(glasstorch, name, smp, seed, device="meta")
            except NotImplementedError as no_meta:      # only where torch has no Meta kernel
                with pytest.raises(NotImplementedError) as theirs_on_meta:
                    _run(torch, name, smp, seed, device="meta")
                assert str(no_meta) == str(theirs_on_meta.value)
            else:
                assert_same(meta, ours, values=False)
        except AssertionError as e:
            raise AssertionError(f"data seed {seed}: {e}") from None
