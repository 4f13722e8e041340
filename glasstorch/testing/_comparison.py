"""``torch.testing._comparison``: ``assert_close`` and the deprecated ``assert_allclose``.

The inputs are walked together: sequences element by element, mappings key by
key (their keys must match), and every pair of leaves is compared by the
first kind that accepts both: None, booleans, Python/numpy numbers, then
tensor-likes (tensors, or anything ``as_tensor`` takes when both sides are of
related types).  Tensors must agree in shape, layout, device and dtype (each
check can be turned off; then both are brought to a common device and dtype),
and their values must satisfy ``isclose`` with the dtype's default tolerances.
The failure messages are PyTorch's, word for word.  (Quantized, sparse and
8-bit float tensors do not exist in glasstorch, so their branches are absent.)
"""
from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings

import numpy as np

from .._core import dtype as _dt
from .._tensor import Size, Tensor

__all__ = ["assert_close", "assert_allclose"]


class _Failure(Exception):
    """PyTorch's ErrorMeta: the exception type and message a failed comparison
    raises, and the ``id`` (keys/indices) of the item where it happened."""

    def __init__(self, type, msg: str, *, id=()) -> None:
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += ("\n\nThe failure occurred for item "
                              f"{''.join(str([item]) for item in self.id)}")
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    """A comparison kind does not handle these inputs: try the next one."""


_DTYPE_PRECISIONS = {
    _dt.float16: (0.001, 1e-5),
    _dt.bfloat16: (0.016, 1e-5),
    _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7),
    _dt.complex64: (1.3e-6, 1e-5),
    _dt.complex128: (1e-7, 1e-7),
}


def default_tolerances(*inputs, dtype_precisions=None):
    """``(rtol, atol)``: the largest defaults among the inputs' dtypes (0 for
    integral and boolean ones)."""
    dtypes = []
    for input in inputs:
        if isinstance(input, Tensor):
            dtypes.append(input.dtype)
        elif isinstance(input, _dt.dtype):
            dtypes.append(input)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(input)} "
                            "instead.")
    precisions = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[precisions.get(dtype, (0.0, 0.0)) for dtype in dtypes])
    return max(rtols), max(atols)


def _tolerances(*inputs, rtol, atol, id):
    if (rtol is None) ^ (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                       f"but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _mismatch_msg(identifier, default_identifier, extra, abs_diff, abs_diff_idx, atol,
                  rel_diff, rel_diff_idx, rtol) -> str:
    """The "... are not close!" report: the extra line, then the greatest
    absolute and relative differences (with where and what was allowed)."""
    equality = rtol == 0 and atol == 0

    def diff_line(kind, diff, idx, tol):
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_diff_idx, atol)
    msg += diff_line("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual, expected, *, rtol, atol, identifier=None) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier, "Scalars", f"Expected {expected} but got {actual}.",
                         abs_diff, None, atol, rel_diff, None, rtol)


def _tensor_mismatch_msg(actual, expected, matches, *, rtol, atol, identifier=None) -> str:
    from .. import abs as abs_, int64, max as max_, sum as sum_

    def unravel(flat_index):
        index = []
        for size in reversed(matches.shape):
            flat_index, mod = divmod(flat_index, size)
            index.append(mod)
        return tuple(reversed(index))

    numel = matches.numel()
    mismatches = numel - int(sum_(matches))
    extra = f"Mismatched elements: {mismatches} / {numel} ({mismatches / numel:.1%})"
    actual_flat, expected_flat, matches_flat = actual.flatten(), expected.flatten(), \
        matches.flatten()
    if not actual.dtype.is_floating_point and not actual.dtype.is_complex:
        actual_flat, expected_flat = actual_flat.to(int64), expected_flat.to(int64)
    abs_diff = abs_(actual_flat - expected_flat)
    abs_diff[matches_flat] = 0
    max_abs, max_abs_idx = max_(abs_diff, 0)
    rel_diff = abs_diff / abs_(expected_flat)
    rel_diff[matches_flat] = 0
    max_rel, max_rel_idx = max_(rel_diff, 0)
    return _mismatch_msg(identifier, "Tensor-likes", extra, max_abs.item(),
                         unravel(int(max_abs_idx)), atol, max_rel.item(),
                         unravel(int(max_rel_idx)), rtol)


# -- the kinds of leaves: each checks that it handles the pair (else _Unsupported)
# and settles its tolerances, then returns the comparison to run ----------------------

def _none_pair(actual, expected, id, **options):
    if not (actual is None or expected is None):
        raise _Unsupported

    def compare():
        if not (actual is None and expected is None):
            raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id=id)
    return compare


def _boolean_pair(actual, expected, id, **options):
    if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)

    def compare():
        if actual is not expected:
            raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}",
                           id=id)
    return compare


_NUMBER_DTYPES = {int: _dt.int64, float: _dt.float64, complex: _dt.complex128}


def _number_pair(actual, expected, id, *, rtol=None, atol=None, equal_nan=False, **options):
    """Python and numpy scalars; ``check_dtype`` does not apply to them
    (assert_close compares numbers of different types by value)."""
    if not all(isinstance(x, (int, float, complex, np.number)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances(*(_NUMBER_DTYPES[type(x)] for x in (actual, expected)),
                             rtol=rtol, atol=atol, id=id)

    def compare():
        if actual == expected or equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
            return
        raise _Failure(AssertionError,
                       _scalar_mismatch_msg(actual, expected, rtol=rtol, atol=atol), id=id)
    return compare


def _tensor_pair(actual, expected, id, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False):
    from .. import as_tensor
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    try:
        actual, expected = (x if isinstance(x, Tensor) else as_tensor(x)
                            for x in (actual, expected))
    except Exception:
        raise _Unsupported from None
    rtol, atol = _tolerances(actual, expected, rtol=rtol, atol=atol, id=id)

    def mismatch(name, ours, theirs):
        raise _Failure(AssertionError, f"The values for attribute '{name}' do not match: "
                       f"{ours} != {theirs}.", id=id)

    def compare():
        a, e = actual, expected
        if a.shape != e.shape:
            mismatch("shape", a.shape, e.shape)
        if a.layout != e.layout:
            if check_layout:
                mismatch("layout", a.layout, e.layout)
        elif check_stride and a.stride() != e.stride():
            mismatch("stride()", a.stride(), e.stride())
        if check_device and a.device != e.device:
            mismatch("device", a.device, e.device)
        if check_dtype and a.dtype != e.dtype:
            mismatch("dtype", a.dtype, e.dtype)
        if "meta" in (a.device.type, e.device.type):
            return
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            unsigned = (_dt.uint16, _dt.uint32, _dt.uint64)
            dtype = _dt.promote_types(*(_dt.int64 if x.dtype in unsigned else x.dtype
                                        for x in (a, e)))
            a, e = a.to(dtype), e.to(dtype)
        _compare_values(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, id=id)
    return compare


def _compare_values(actual, expected, *, rtol, atol, equal_nan, id) -> None:
    from .. import all as all_, isclose
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if all_(matches):
        return
    if actual.shape == Size([]):
        msg = _scalar_mismatch_msg(actual.item(), expected.item(), rtol=rtol, atol=atol)
    else:
        msg = _tensor_mismatch_msg(actual, expected, matches, rtol=rtol, atol=atol)
    raise _Failure(AssertionError, msg, id=id)


_PAIRS = (_none_pair, _boolean_pair, _number_pair, _tensor_pair)


def _comparisons(actual, expected, id, options):
    """The comparison of every pair of leaves, in order (sequences by index,
    mappings by sorted key); structural mismatches (lengths, keys, types no
    kind handles) and bad tolerances raise here, before any value is compared."""
    sequence = collections.abc.Sequence
    if isinstance(actual, sequence) and not isinstance(actual, str) and \
            isinstance(expected, sequence) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                           f"{len(actual)} != {len(expected)}", id=id)
        return [c for i in range(len(actual))
                for c in _comparisons(actual[i], expected[i], (*id, i), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Failure(AssertionError,
                           "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: "
                           f"{sorted(expected_keys - actual_keys)}\n"
                           f"Additional keys in the actual mapping: "
                           f"{sorted(actual_keys - expected_keys)}", id=id)
        keys = actual_keys
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        return [c for key in keys
                for c in _comparisons(actual[key], expected[key], (*id, key), options)]
    for pair in _PAIRS:
        try:
            return [pair(actual, expected, id, **options)]
        except _Unsupported:
            continue
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type "
                   f"{type(actual)} and {type(expected)}.", id=id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """``torch.testing.assert_close``: raise (AssertionError, with PyTorch's
    report) unless ``actual`` and ``expected`` are close, item by item."""
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        comparisons = _comparisons(actual, expected, (), options)
    except _Failure as failure:
        raise failure.to_error() from None
    for compare in comparisons:
        try:
            compare()
        except _Failure as failure:
            raise failure.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg="") -> None:
    """``torch.testing.assert_allclose`` (deprecated): assert_close with looser
    float defaults, NaNs equal and dtypes not checked; non-tensors are made tensors."""
    from .. import tensor
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed "
                  "in a future release. Please use `torch.testing.assert_close()` instead. You "
                  "can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected, dtype_precisions={
            _dt.float16: (1e-3, 1e-3), _dt.float32: (1e-4, 1e-5), _dt.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
