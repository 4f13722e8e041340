"""``out=`` in the Python API: every public function PyTorch lets write into
``out=`` does so here, with the same result, and refuses ``out=`` where PyTorch
has no such binding (its codegen-generated out variants).

The cases are the op samples (tests/opinfo.py) of every public function, kept
when PyTorch can call the function with the sample's arguments; each is then
run with ``out=`` in both libraries.
"""
import warnings

import pytest
import torch

import glasstorch

from . import samples  # noqa: F401  (loads every sample)
from .helpers import assert_same
from .opinfo import SAMPLES, Maker



def _public(lib, op_name):
    base = op_name.split("::")[1].split(".")[0]
    return getattr(lib, base, None)


def _call(lib, name, smp, out=None):
    make = Maker(lib, 7)
    args, kwargs = smp.fn(make, lib)
    if out is not None:
        kwargs = dict(kwargs, out=out(lib))
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _public(lib, name)(*args, **kwargs), kwargs.get("out")


def _empty_outs(result):
    """A factory for zero-size out= tensors of ``result``'s dtypes."""
    if isinstance(result, torch.Tensor):
        return lambda lib: lib.empty(0, dtype=getattr(lib, str(result.dtype).split(".")[1]))
    if isinstance(result, tuple) and result and all(isinstance(r, torch.Tensor) for r in result):
        dtypes = [str(r.dtype).split(".")[1] for r in result]
        return lambda lib: tuple(lib.empty(0, dtype=getattr(lib, d)) for d in dtypes)
    return None


def _cases():
    """(op, sample, out factory, whether PyTorch binds out=) for every sample
    PyTorch's public function accepts."""
    cases = []
    for name in sorted(SAMPLES):
        base, _, overload = name.split("::")[1].partition(".")
        if base.startswith("_") or any(a.is_out for a in getattr(
                getattr(torch.ops.aten, base), overload or "default")._schema.arguments):
            continue        # private bindings, and the out= overloads themselves
        if _public(torch, name) is None or _public(glasstorch, name) is None:
            continue
        for smp in SAMPLES[name][:2]:
            if smp.inplace:
                continue
            try:
                result, _ = _call(torch, name, smp)
            except Exception:       # noqa: BLE001 - the sample is for another overload's form
                continue
            outs = _empty_outs(result)
            if outs is None:
                continue
            try:
                _call(torch, name, smp, outs)
                binds = True
            except TypeError:
                binds = False
            except Exception:       # noqa: BLE001 - out= bound, this sample refused: not a case
                continue
            cases.append(pytest.param(name, smp, outs, binds, id=f"{smp.name}-{'out' if binds else 'no-out'}"))
    return cases


CASES = _cases()


def test_there_are_cases_of_both_kinds():
    assert sum(c.values[3] for c in CASES) > 300 and sum(not c.values[3] for c in CASES) > 20


@pytest.mark.parametrize("name,smp,outs,binds", CASES)
def test_out_matches_pytorch(name, smp, outs, binds):
    if not binds:
        with pytest.raises(TypeError):
            _call(glasstorch, name, smp, outs)
        return
    ours, our_out = _call(glasstorch, name, smp, outs)
    theirs, their_out = _call(torch, name, smp, outs)
    assert_same(our_out, their_out, atol=smp.atol, rtol=smp.rtol, values=not smp.random)
    if theirs is None:      # an out= overload returning () (split_copy.Tensor_out, ...)
        assert ours is None
    else:
        assert ours is our_out if isinstance(our_out, glasstorch.Tensor) else \
            all(a is b for a, b in zip(ours, our_out))


@pytest.mark.parametrize("call", [
    lambda L: L.arange(5, out=L.empty(0), dtype=L.int64),
    lambda L: L.zeros(2, out=L.empty(0), device="meta"),
    lambda L: L.ones(2, out=L.empty(0), dtype=L.float32),
    lambda L: L.matmul(L.ones(2, 2), L.ones(2, 2), out=L.empty(0, dtype=L.float64)),
    lambda L: L.matmul(L.ones(2, 2), L.ones(2, 2), out=L.empty(0, dtype=L.int64)),
])
def test_out_options_and_dtypes_are_checked_as_in_pytorch(call):
    """A factory's dtype/device given with out= must be out's; a hand-written
    out= kernel wants out's dtype to be the result's."""
    def outcome(lib):
        try:
            return ("returned", str(call(lib).dtype).split(".")[1])
        except RuntimeError as e:
            return ("raised", str(e))
    assert outcome(glasstorch) == outcome(torch)
