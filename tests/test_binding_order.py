"""Overload order of the Python bindings, against real PyTorch.

PyTorch's parser tries a function's signatures in torchgen's order (Note
[Overload order] in glasstorch/_dispatcher/binding.py).  The order shows in two
places: the signatures an "invalid combination of arguments" TypeError lists,
and which overload a call binds when several accept it (``x.std()`` binds
``std.correction``), which a TorchDispatchMode sees.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import glasstorch as gt
import glasstorch.utils._python_dispatch  # noqa: F401 - gt.utils._python_dispatch below
import torch.utils._python_dispatch  # noqa: F401


def _overloaded():
    """(label, torch callable, glasstorch callable, is method) for every public
    function, _C._nn function, C-bound torch.nn.functional name and Tensor method
    that glasstorch declares with more than one overload."""
    cases = []
    modules = (("torch", torch, gt), ("_C._nn", torch._C._nn, gt._C._nn),
               ("nn.functional", torch.nn.functional, gt.nn.functional))
    for label, torch_module, gt_module in modules:
        for name in sorted(dir(gt_module)):
            ours, theirs = getattr(gt_module, name, None), getattr(torch_module, name, None)
            if _overload_count(ours) > 1 and type(theirs).__name__ == "builtin_function_or_method":
                cases.append((f"{label}.{name}", theirs, ours, False))
    for name in sorted(dir(gt.Tensor)):
        ours, theirs = getattr(gt.Tensor, name, None), getattr(torch.Tensor, name, None)
        if _overload_count(ours) > 1 and type(theirs).__name__ == "method_descriptor":
            cases.append((f"Tensor.{name}", theirs, ours, True))
    return cases


def _overload_count(fn) -> int:
    signatures = getattr(fn, "_signatures", None)
    return len(signatures) if isinstance(signatures, list) else 0


def _listed_signatures(fn, lib, method):
    """The signature lines of the TypeError that too many arguments provoke
    (no signature is then plausible, so every one is listed)."""
    args = [object()] * 30
    with pytest.raises(TypeError, match="received an invalid combination of arguments") as info:
        fn(*([lib.ones(2)] if method else []), *args)
    return [line[3:] for line in str(info.value).splitlines() if line.startswith(" * ")]


def _without_defaults(line):
    """A signature line with its default values removed: a float default prints
    as PyTorch's yaml spells it (``float std = 1``), which our schema cannot tell."""
    return re.sub(r" = [^,)]*", "", line)


CASES = _overloaded()

def test_the_catalogue_covers_the_overloaded_bindings():
    labels = {label for label, *_ in CASES}
    assert len(CASES) > 150
    assert {"torch.std", "torch.var", "torch.where", "torch.max", "Tensor.std", "Tensor.view",
            "torch.randint", "nn.functional.conv2d"} <= labels


@pytest.mark.parametrize("label,theirs,ours,method", CASES, ids=[case[0] for case in CASES])
def test_invalid_combination_lists_signatures_in_torch_order(label, theirs, ours, method):
    expected = [_without_defaults(line) for line in _listed_signatures(theirs, torch, method)]
    got = [_without_defaults(line) for line in _listed_signatures(ours, gt, method)]
    assert set(got) <= set(expected), f"{label}: signatures torch does not list"
    assert got == [line for line in expected if line in got]


def test_listed_signatures_read_as_torch_prints_them():
    """Full text, defaults included, for every overloaded binding but the ones
    whose float defaults PyTorch's yaml spells as ints."""
    differ = {}
    for label, theirs, ours, method in CASES:
        expected = set(_listed_signatures(theirs, torch, method))
        extra = [line for line in _listed_signatures(ours, gt, method) if line not in expected]
        if extra:
            differ[label] = extra
    assert differ == {"torch.normal": [
        "(Tensor mean, float std = 1.0, *, torch.Generator generator = None, Tensor out = None)"],
        "torch.trapz": ["(Tensor y, *, float dx = 1.0, int dim = -1)"]}


def test_torch_std_lists_unbiased_last():
    lines = _listed_signatures(gt.std, gt, False)
    assert lines == [
        "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, "
        "Tensor out = None)",
        "(Tensor input, tuple of ints dim = None, *, Number correction = None, "
        "bool keepdim = False, Tensor out = None)",
        "(Tensor input, bool unbiased = True)"]


# -- which overload a call binds ----------------------------------------------------

CALLS = {
    "x.std()": lambda L, x, y, c, i: x.std(),
    "x.var()": lambda L, x, y, c, i: x.var(),
    "torch.std(x)": lambda L, x, y, c, i: L.std(x),
    "x.std(0)": lambda L, x, y, c, i: x.std(0),
    "x.std(0, True)": lambda L, x, y, c, i: x.std(0, True),
    "x.var(1, unbiased=False)": lambda L, x, y, c, i: x.var(1, unbiased=False),
    "x.std(correction=0)": lambda L, x, y, c, i: x.std(correction=0),
    "torch.var_mean(x)": lambda L, x, y, c, i: L.var_mean(x),
    "torch.std_mean(x, 0)": lambda L, x, y, c, i: L.std_mean(x, 0),
    "x.sum()": lambda L, x, y, c, i: x.sum(),
    "x.sum(1)": lambda L, x, y, c, i: x.sum(1),
    "x.mean()": lambda L, x, y, c, i: x.mean(),
    "x.max()": lambda L, x, y, c, i: x.max(),
    "torch.max(x, 1)": lambda L, x, y, c, i: L.max(x, 1),
    "torch.max(x, y)": lambda L, x, y, c, i: L.max(x, y),
    "x.min(0)": lambda L, x, y, c, i: x.min(0),
    "x.add(1)": lambda L, x, y, c, i: x.add(1),
    "x.add(y)": lambda L, x, y, c, i: x.add(y),
    "x.add(y, alpha=2)": lambda L, x, y, c, i: x.add(y, alpha=2),
    "x.sub(2.5)": lambda L, x, y, c, i: x.sub(2.5),
    "x.mul(y)": lambda L, x, y, c, i: x.mul(y),
    "x.pow(2)": lambda L, x, y, c, i: x.pow(2),
    "torch.pow(2, x)": lambda L, x, y, c, i: L.pow(2, x),
    "x.eq(0)": lambda L, x, y, c, i: x.eq(0),
    "torch.where(c, x, 0.)": lambda L, x, y, c, i: L.where(c, x, 0.),
    "torch.where(c, 1., x)": lambda L, x, y, c, i: L.where(c, 1., x),
    "torch.where(c, x, y)": lambda L, x, y, c, i: L.where(c, x, y),
    "torch.clamp(x, 0., 1.)": lambda L, x, y, c, i: L.clamp(x, 0., 1.),
    "torch.clamp(x, y)": lambda L, x, y, c, i: L.clamp(x, y),
    "x.div(2, rounding_mode='floor')": lambda L, x, y, c, i: x.div(2, rounding_mode="floor"),
    "x.sort()": lambda L, x, y, c, i: x.sort(),
    "x.sort(stable=True)": lambda L, x, y, c, i: x.sort(stable=True),
    "x.argsort()": lambda L, x, y, c, i: x.argsort(),
    "x.all()": lambda L, x, y, c, i: x.all(),
    "x.any(1)": lambda L, x, y, c, i: x.any(1),
    "x.scatter(0, i, 1.)": lambda L, x, y, c, i: x.scatter(0, i, 1.),
    "x.scatter(0, i, y)": lambda L, x, y, c, i: x.scatter(0, i, y),
    "x.view(-1)": lambda L, x, y, c, i: x.view(-1),
    "x.view(3, 2)": lambda L, x, y, c, i: x.view(3, 2),
    "torch.movedim(x, 0, 1)": lambda L, x, y, c, i: L.movedim(x, 0, 1),
    "x.repeat_interleave(2)": lambda L, x, y, c, i: x.repeat_interleave(2),
    "torch.fill(x, 2.)": lambda L, x, y, c, i: L.fill(x, 2.),
    "x.bitwise_and(1)": lambda L, x, y, c, i: (x > 0).bitwise_and(True),
    "torch.remainder(x, 2)": lambda L, x, y, c, i: L.remainder(x, 2),
    "torch.xlogy(x, 2.)": lambda L, x, y, c, i: L.xlogy(x, 2.),
    "x.clone().random_(5)": lambda L, x, y, c, i: x.clone().random_(5).shape,
    "torch.quantile(x, 0.5)": lambda L, x, y, c, i: L.quantile(x, 0.5),
}


def _logged_calls(lib, call):
    log = []

    class Logger(lib.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args, kwargs=None):
            log.append((str(func), _describe(args), _describe(kwargs or {})))
            return func(*args, **(kwargs or {}))

    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((2, 3)).astype(np.float32))
    y = lib.tensor(rng.standard_normal((2, 3)).astype(np.float32))
    c = x > y
    i = lib.tensor([[0, 1, 0], [1, 0, 1]])
    with Logger():
        call(lib, x, y, c, i)
    return log


def _describe(value):
    """Arguments as the mode sees them: a tensor by dtype and shape, a number as
    itself, anything else (dtype, device, memory format) by its str."""
    if isinstance(value, (torch.Tensor, gt.Tensor)):
        return ("Tensor", str(value.dtype), tuple(value.shape))
    if isinstance(value, (list, tuple)):
        return tuple(_describe(v) for v in value)
    if isinstance(value, dict):
        return {k: _describe(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return value
    return str(value)


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_call_reaches_the_overload_torch_reaches(call):
    assert _logged_calls(gt, CALLS[call]) == _logged_calls(torch, CALLS[call])


def test_std_without_arguments_binds_std_correction():
    assert _logged_calls(gt, CALLS["x.std()"]) == [
        ("aten.std.correction", (("Tensor", "torch.float32", (2, 3)),), {})]
