"""Running one scenario in both libraries and comparing what happened.

A scenario is a function of the library (``torch`` or ``glasstorch``, or an
adapter around it).  ``run`` describes its outcome independently of the library
— what it returned (tensors as dtype, shape, values, requires_grad, grad_fn name,
is_leaf) or what it raised (type and message) — plus the warnings it emitted;
``differential`` asserts both libraries give the same description.
"""
from __future__ import annotations

import warnings

import numpy as np
import torch

import glasstorch as gt

from .helpers import to_numpy


class Close:
    """Tensor values inside an observation, equal within float32 tolerance."""

    def __init__(self, array):
        self.array = np.asarray(array)

    def __eq__(self, other):
        return (isinstance(other, Close) and self.array.shape == other.array.shape
                and self.array.dtype.kind == other.array.dtype.kind
                and np.allclose(self.array, other.array, rtol=1e-5, atol=1e-6, equal_nan=True))

    def __repr__(self):
        return f"Close({self.array.tolist()})"


def node_name(node):
    return None if node is None else type(node).__name__


def observe(value):
    """A library-independent description of ``value``: a tensor becomes its
    dtype, shape, values, requires_grad, grad_fn name and is_leaf; a node its
    class name; a dtype its name; containers are described element by element."""
    if isinstance(value, (torch.Tensor, gt.Tensor)):
        values = None if value.device.type == "meta" else Close(to_numpy(value))
        return ("tensor", str(value.dtype), tuple(value.shape), values, value.requires_grad,
                node_name(value.grad_fn), value.is_leaf)
    if hasattr(value, "next_functions"):
        return ("node", type(value).__name__)
    if isinstance(value, (torch.dtype, gt.dtype)):
        return ("dtype", str(value))
    if isinstance(value, (list, tuple)):
        return tuple(observe(v) for v in value)
    if isinstance(value, dict):
        return {k: observe(v) for k, v in value.items()}
    return value


def run(fn, lib, *, warning_types=(UserWarning, FutureWarning), named=False):
    """``("returned", observation)`` or ``("raised", type, message)``, plus the
    warnings of ``warning_types`` emitted meanwhile (their messages, or
    (category name, message) pairs when ``named``)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = ("returned", observe(fn(lib)))
        except Exception as exc:  # noqa: BLE001 - the exception is what we compare
            outcome = ("raised", type(exc).__name__, str(exc))
    shown = tuple((w.category.__name__, str(w.message)) if named else str(w.message)
                  for w in caught if issubclass(w.category, warning_types))
    return outcome + (shown,)


def differential(fn, *, may_raise=False, normalize=None, **options):
    """Run ``fn(torch)`` and ``fn(glasstorch)``; assert they behave the same.

    Both raising is a failure unless ``may_raise``: a scenario meant to return
    a value that raises in both libraries (a typo, a missing attribute, a
    changed API) would otherwise pass without comparing anything.
    ``normalize`` maps each outcome before the comparison (e.g. to blank
    addresses or source locations in messages)."""
    theirs = run(fn, torch, **options)
    ours = run(fn, gt, **options)
    if normalize is not None:
        theirs, ours = normalize(theirs), normalize(ours)
    assert ours == theirs, f"\nglasstorch: {ours}\ntorch:      {theirs}"
    assert may_raise or theirs[0] == "returned", \
        f"both libraries raised {theirs[1]}: {theirs[2]} (pass may_raise=True if that is the point)"
    return theirs


def returned(outcome):
    assert outcome[0] == "returned", outcome
    return outcome[1]


def raised(outcome, kind=None, message=None):
    """The message of a raised outcome (checked against ``kind``/``message`` if given)."""
    assert outcome[0] == "raised", outcome
    if kind is not None:
        assert outcome[:3] == ("raised", kind, message if message is not None else outcome[2]), \
            outcome
    return outcome[2]


def normal_float32_ulps() -> int:
    """The stated accuracy of float32 ``normal_`` against PyTorch's, in ulps of the
    values' scale: 2, or 16 under ATen's DEFAULT capability, whose scalar float
    loop is the least accurate (tests/test_random.py measures both)."""
    return 16 if gt.backends.cpu.get_cpu_capability() == "DEFAULT" else 2


def assert_normal_float32_close(ours, theirs, err_msg=""):
    """float32 values drawn by ``normal_`` (nn.init, Embedding), within that accuracy."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    scale = np.float32(np.abs(theirs).max(initial=0))
    np.testing.assert_allclose(ours, theirs, rtol=0, err_msg=err_msg,
                               atol=normal_float32_ulps() * float(np.spacing(scale)))
