"""Tensor printing: ``repr(tensor)`` / ``str(tensor)`` exactly as PyTorch writes them.

PyTorch's rules (torch/_tensor_str.py), restated over numpy arrays:

* One formatter per tensor (two for complex: real parts and imaginary parts)
  decides the layout of every element from the values that will be shown:

    - integers and bools print with ``str``;
    - floats look only at the nonzero finite values.  If all of them are whole
      numbers the tensor is in "int mode" (``1.``, ``-0.``, ``nan``); scientific
      notation is chosen when max/min > 1000, max > 1e8 or min < 1e-4 (unless
      ``sci_mode`` forces it); otherwise fixed point with ``precision`` digits.
    - every element is left-padded to the widest one.

* 1-d rows wrap to ``linewidth``; N-d tensors nest brackets, separate rows by
  ``dim - 1`` newlines and indent to line up under the opening bracket.
* More than ``threshold`` elements: each dimension longer than 2*edgeitems
  shows only its first and last ``edgeitems`` entries around ``...``, and the
  formatter only sees the entries that are shown.
* Suffixes follow the contents: ``device=``, ``size=`` (empty, meta or
  edgeitems=0 tensors), ``dtype=`` (when it cannot be inferred from the
  printed values), ``grad_fn=<...>`` or ``requires_grad=True``.  They move to a
  new line when the last line would grow past ``linewidth``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any

import numpy as np

from ._core import dtype as dt
from ._core.dtype import get_default_dtype
from ._core.layout import sparse_coo, strided
from ._tensor import Tensor

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr", "PRINT_OPTS"]


# -- options -----------------------------------------------------------------------


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """``torch.set_printoptions``.  A profile resets four options first; explicit
    arguments then override it.  ``sci_mode`` is always assigned (None = automatic)."""
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options (same arguments as ``set_printoptions``)."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# -- element formatting --------------------------------------------------------------


class _Formatter:
    """Chooses one layout (width, int mode, sci mode) for a set of values.

    ``values`` is a numpy array of the elements that will be printed; floating
    arrays arrive as float64 (exact for every narrower float type)."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)

        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(str(value)))
            return

        finite_nonzero = flat[np.isfinite(flat) & (flat != 0)]
        if finite_nonzero.size == 0:
            return  # nothing to measure: int mode, fixed point, width 1
        magnitudes = np.abs(finite_nonzero)
        lo = float(magnitudes.min())
        hi = float(magnitudes.max())
        self.int_mode = bool(np.all(finite_nonzero == np.ceil(finite_nonzero)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        precision = PRINT_OPTS.precision
        values_list = finite_nonzero.tolist()
        if self.sci_mode:
            widths = (len(f"{v:.{precision}e}") for v in values_list)
        elif self.int_mode:
            # whole floats get a trailing '.', hence the +1
            widths = (len(f"{v:.0f}") + 1 for v in values_list)
        else:
            widths = (len(f"{v:.{precision}f}") for v in values_list)
        self.max_width = max(self.max_width, max(widths))

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating_dtype:
            precision = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _format_value(value, real_fmt: _Formatter, imag_fmt: _Formatter | None) -> str:
    """One element; complex values join their parts as ``a+bj`` / ``a-bj``."""
    if imag_fmt is None:
        return real_fmt.format(value)
    real_str = real_fmt.format(value.real)
    imag_str = (imag_fmt.format(value.imag) + "j").lstrip()
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


# -- layout --------------------------------------------------------------------------


def _vector_str(row: np.ndarray, indent: int, summarize: bool, real_fmt, imag_fmt) -> str:
    element_length = real_fmt.width() + 2  # ", " between elements
    if imag_fmt is not None:
        element_length += imag_fmt.width() + 1  # the imaginary part and its 'j'
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))

    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and row.shape[0] > 2 * edge:
        data = ([_format_value(v, real_fmt, imag_fmt) for v in row[:edge].tolist()]
                + [" ..."]
                + [_format_value(v, real_fmt, imag_fmt) for v in row[-edge:].tolist()])
    else:
        data = [_format_value(v, real_fmt, imag_fmt) for v in row.tolist()]

    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(array: np.ndarray, indent: int, summarize: bool, real_fmt, imag_fmt) -> str:
    ndim = array.ndim
    if ndim == 0:
        return _format_value(array.item(), real_fmt, imag_fmt)
    if ndim == 1:
        return _vector_str(array, indent, summarize, real_fmt, imag_fmt)

    edge = PRINT_OPTS.edgeitems
    size = array.shape[0]
    if summarize and size > 2 * edge:
        head = [_nested_str(array[i], indent + 1, summarize, real_fmt, imag_fmt)
                for i in range(edge)]
        tail = [_nested_str(array[i], indent + 1, summarize, real_fmt, imag_fmt)
                for i in range(size - edge, size)]
        slices = head + ["..."] + tail
    else:
        slices = [_nested_str(array[i], indent + 1, summarize, real_fmt, imag_fmt)
                  for i in range(size)]
    separator = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(slices) + "]"


def _summarized_data(array: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows (what the formatter measures).

    Each dimension longer than 2*edgeitems keeps its first and last edgeitems.
    With edgeitems == 0 an N-d tensor (N >= 2) shows nothing; a 1-d one is
    measured whole (PyTorch's ``t[:0]`` + ``t[-0:]`` is the entire row)."""
    if array.ndim == 0:
        return array
    edge = PRINT_OPTS.edgeitems
    if array.ndim >= 2 and not edge:
        return array[tuple(slice(0, 0) for _ in range(array.ndim))]
    index = []
    for size in array.shape:
        if edge and size > 2 * edge:
            index.append(np.concatenate([np.arange(edge), np.arange(size - edge, size)]))
        else:
            index.append(np.arange(size))
    return array[np.ix_(*index)]


def _printable_array(t) -> np.ndarray:
    """The values as numpy in a type Python formatting is exact for."""
    array = np.asarray(t._cpu_array())
    if t.dtype.is_complex:
        return array.astype(np.complex128)
    if t.dtype.is_floating_point:
        return array.astype(np.float64)
    return array


def _tensor_str(t, indent: int) -> str:
    """The bracketed contents of a tensor with data."""
    if t.numel() == 0:
        return "[]"
    summarize = t.numel() > PRINT_OPTS.threshold
    array = _printable_array(t)
    shown = _summarized_data(array) if summarize else array
    if t.dtype.is_complex:
        real_fmt = _Formatter(shown.real, True)
        imag_fmt = _Formatter(shown.imag, True)
        return _nested_str(array, indent, summarize, real_fmt, imag_fmt)
    real_fmt = _Formatter(shown, bool(t.dtype.is_floating_point))
    return _nested_str(array, indent, summarize, real_fmt, None)


def _add_suffixes(tensor_str: str, suffixes, indent: int, force_newline: bool) -> str:
    parts = [tensor_str]
    # PyTorch's measure of the last line (it counts two more than the text)
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _is_parameter_class(cls) -> bool:
    return any(c.__name__ == "Parameter" for c in cls.__mro__)


def _grad_fn_name(t) -> str | None:
    try:
        grad_fn = getattr(t, "grad_fn", None)
    except RuntimeError:
        return "Invalid"
    if grad_fn is None:
        return None
    name = getattr(grad_fn, "name", None)
    if callable(name):
        return str(name()).rsplit("::", 1)[-1]
    return type(grad_fn).__name__


def _sparse_str(t, indent, suffixes, has_default_dtype, no_values, custom) -> str:
    """A sparse tensor's body, ``_str_intern``'s sparse branches: its component
    tensors by name (``indices=`` / ``crow_indices=`` ...), then size and nnz."""
    suffixes.append("size=" + str(tuple(t.shape)))
    if not no_values:
        suffixes.append("nnz=" + str(t._nnz()))
    if not has_default_dtype:
        suffixes.append("dtype=" + repr(t.dtype))
    if custom is not None:
        return custom
    if t.is_sparse:
        parts = (("indices", t._indices()), ("values", t._values()))
    elif t.is_sparse_csr:
        parts = (("crow_indices", t.crow_indices()), ("col_indices", t.col_indices()),
                 ("values", t.values()))
    else:
        parts = (("ccol_indices", t.ccol_indices()), ("row_indices", t.row_indices()),
                 ("values", t.values()))
    pieces = []
    for name, part in parts:
        prefix = name + "=tensor("
        body = "..." if no_values else _tensor_str(part.detach(), indent + len(prefix))
        if no_values or part.numel() == 0:
            body += ", size=" + str(tuple(part.shape))
        pieces.append(prefix + body + ")")
    return (",\n" + " " * indent).join(pieces)


def tensor_repr(t, *, tensor_contents=None) -> str:
    """``repr(tensor)``: PyTorch's ``_str_intern`` for strided tensors."""
    cls = type(t)
    # Tensor and Parameter print as ``tensor(``; other subclasses use their name.
    plain = cls is Tensor or cls.__name__ == "Parameter" or not isinstance(t, Tensor)
    prefix = "tensor(" if plain else f"{cls.__name__}("
    indent = len(prefix)
    suffixes = []
    custom_contents = tensor_contents is not None
    tensor_str = tensor_contents if custom_contents else None

    device = t.device
    if device.type != "cpu":
        suffixes.append("device='" + str(device) + "'")

    default = get_default_dtype()
    default_complex = dt.complex128 if default is dt.float64 else dt.complex64
    has_default_dtype = t.dtype in (default, default_complex, dt.int64, dt.bool_)
    shape = tuple(t.shape)

    from ._subclasses.fake_tensor import FakeTensor
    layout = getattr(t, "layout", strided)      # (stand-ins that print like tensors have none)
    if layout is not strided:
        tensor_str = _sparse_str(t, indent, suffixes, has_default_dtype,
                                 device.type == "meta" or isinstance(t, FakeTensor),
                                 tensor_str if custom_contents else None)
    elif device.type == "meta" or isinstance(t, FakeTensor):   # no values to show
        suffixes.append("size=" + str(shape))
        if t.dtype != default:
            suffixes.append("dtype=" + repr(t.dtype))
        if not custom_contents:
            tensor_str = "..."
    elif t.numel() == 0:
        # NumPy style: the shape is shown unless it is (0,); no value shows the dtype
        if t.dim() != 1:
            suffixes.append("size=" + str(shape))
        if t.dtype != default:
            suffixes.append("dtype=" + repr(t.dtype))
        if not custom_contents:
            tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(shape))
        if not has_default_dtype:
            suffixes.append("dtype=" + repr(t.dtype))
        if not custom_contents:
            tensor_str = _tensor_str(t, indent)

    if layout is not strided:
        suffixes.append("layout=" + repr(layout))
    grad_fn_name = _grad_fn_name(t)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif getattr(t, "requires_grad", False):
        suffixes.append("requires_grad=True")

    text = _add_suffixes(prefix + tensor_str, suffixes, indent, force_newline=layout is sparse_coo)
    if not plain and (_is_parameter_class(cls) or getattr(t, "_is_param", False)):
        text = f"Parameter({text})"
    return text


Tensor._repr_impl = tensor_repr
