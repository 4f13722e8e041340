"""Registry-wide checks, one generic test for every op (OpInfo-style):

* every aten op has samples (or a documented exemption);
* on each sample, glasstorch's CPU result equals PyTorch's (values, dtype,
  shape, strides);
* the Meta device gives the CPU result's shape, dtype and strides.
"""
import importlib
import pkgutil

import pytest

import glasstorch
from glasstorch._dispatcher.dispatcher import dispatcher

from . import samples as sample_pkg
from .helpers import assert_same
from .opinfo import EXEMPT, SAMPLES, Maker

for _info in pkgutil.iter_modules(sample_pkg.__path__):
    importlib.import_module(f"{sample_pkg.__name__}.{_info.name}")

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


@pytest.mark.parametrize("name,smp", CASES, ids=[s.name for _, s in CASES])
def test_matches_pytorch_and_meta(name, smp, torch):
    ours, _ = _run(glasstorch, name, smp, seed=7)
    theirs, _ = _run(torch, name, smp, seed=7)
    assert_same(ours, theirs, atol=smp.atol, rtol=smp.rtol, values=not smp.random)
    meta, _ = _run(glasstorch, name, smp, seed=7, device="meta")
    assert_same(meta, ours, values=False)
