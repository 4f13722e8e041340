"""torch.functional: Python-level functions of the torch namespace whose calling
convention no schema expresses (``torch.einsum(eq, a, b)`` takes operands as
varargs; the op ``aten::einsum`` takes a ``Tensor[]``; ``torch.norm`` picks a
``torch.linalg`` function from its arguments).

Note [varargs overrides]: torch's varargs functions here (``einsum``,
``meshgrid``) check ``has_torch_function(tensors)``, which looks at each
argument but not into a list.  So ``einsum(eq, [a, b])`` and
``meshgrid([a, b])`` reach their bodies with no mode active: einsum calls
itself again with the operands spread (recorded as ``einsum(eq, a, b)``),
meshgrid calls the C binding (recorded as ``torch.meshgrid([a, b])``).
``_overridden`` makes that check; the other public functions get the
wrappers of ``install_module_overrides`` (bottom of the file)."""
from __future__ import annotations

import sys

from ._core.tls import overrides as _overrides
from ._dispatcher.dispatcher import ops
from ._dispatcher import torch_function as _torch_function
from ._indexing import _tupled
from ._ops import registry as _registry
from ._tensor import Tensor

__all__ = ["einsum", "norm", "unique", "unique_consecutive", "meshgrid", "tensordot", "block_diag", "cartesian_prod",
           "atleast_1d", "atleast_2d", "atleast_3d", "cdist", "split", "broadcast_tensors",
           "stft", "chain_matmul", "lu"]

_VARARGS = ("einsum", "meshgrid")
_meshgrid = _tupled(_registry.FUNCTIONS["torch"]["meshgrid"], "meshgrid")
_broadcast_tensors = _tupled(_registry.FUNCTIONS["torch"]["broadcast_tensors"],
                             "broadcast_tensors")


def _overridden(tensors) -> bool:
    """torch's ``has_torch_function(tensors)`` (see Note [varargs overrides])."""
    top = tuple(t for t in tensors if type(t) not in (list, tuple))
    return (_overrides.on or _torch_function.foreign_override(top, None)) and \
        _torch_function.has_torch_function(top)


def _assert(condition, message):
    """``torch._assert``: an ``assert`` that tracing records (a Proxy condition
    hands the call to ``__torch_function__``; a plain tensor never does)."""
    if type(condition) is not Tensor and _overridden((condition,)):
        return _torch_function.handle_torch_function(_assert, (condition,), condition, message,
                                                     _python_level=True)
    assert condition, message


_assert.__module__ = "torch"    # torch defines it at its top level: FX writes torch._assert


def split(tensor, split_size_or_sections, dim=0):
    """``torch.split``: see ``Tensor.split``."""
    return tensor.split(split_size_or_sections, dim)


def broadcast_tensors(*tensors):
    """``torch.broadcast_tensors(a, b, ...)``: views of each, expanded to one shape."""
    return _broadcast_tensors(_varargs(tensors))


def einsum(*args):
    """``einsum(equation, *operands)`` or ``einsum(equation, [operands])``
    -> ``aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None)``."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    equation, operands = args[0], args[1:]
    if not isinstance(equation, str):
        raise TypeError("einsum(): the sublist format is not supported; pass an equation string")
    if _overridden(operands):
        return _torch_function.handle_torch_function(einsum, operands, equation, *operands,
                                                     _python_level=True)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    for t in operands:
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): argument 'tensors' must be tuple of Tensors, not "
                            f"{type(t).__name__}")
    return ops.aten.einsum.default(equation, list(operands))


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm`` / ``Tensor.norm``: for strided tensors PyTorch routes it to
    ``linalg.vector_norm`` (so autograd records LinalgVectorNormBackward0), with
    ``p="fro"`` meaning the 2-norm over at most two dims; any other string (or
    "fro" over more dims) goes to ``linalg.matrix_norm``, which takes "nuc" and
    raises for the rest."""
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(p, str) and not (p == "fro" and (dim is None or len(dim) <= 2)):
        dim = list(range(input.dim())) if dim is None else dim
        if out is not None:
            return ops.aten.linalg_matrix_norm.str_ord_out(input, p, dim, keepdim, dtype=dtype,
                                                           out=out)
        return ops.aten.linalg_matrix_norm.str_ord(input, p, dim, keepdim, dtype=dtype)
    p = 2.0 if p is None else 2 if p == "fro" else p
    if out is not None:
        return ops.aten.linalg_vector_norm.out(input, p, dim, keepdim, dtype=dtype, out=out)
    return ops.aten.linalg_vector_norm.default(input, p, dim, keepdim, dtype=dtype)


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)


Tensor.norm = _tensor_norm


# -- unique, meshgrid, tensordot, block_diag, cartesian_prod, cdist ... (kernels/sorting.py, shape.py, blas.py, distance.py)

def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Distinct elements (or slices along ``dim``) in ascending order; with the
    inverse indices and/or counts when asked (``aten::_unique2`` / ``unique_dim``)."""
    if dim is not None:
        output, inverse, counts = ops.aten.unique_dim.default(
            input, dim, sorted=sorted, return_inverse=return_inverse,
            return_counts=return_counts)
    else:
        output, inverse, counts = ops.aten._unique2.default(
            input, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts)
    return _asked(output, inverse, counts, return_inverse, return_counts)


def _asked(output, inverse, counts, return_inverse, return_counts):
    """The output, followed by the inverse indices and the counts when asked for."""
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def _tensor_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return unique(self, sorted=sorted, return_inverse=return_inverse,
                  return_counts=return_counts, dim=dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The first of every run of equal consecutive elements (or slices along
    ``dim``), with the inverse indices and/or run lengths when asked
    (``aten::unique_consecutive``)."""
    output, inverse, counts = ops.aten.unique_consecutive.default(
        input, return_inverse=return_inverse, return_counts=return_counts, dim=dim)
    return _asked(output, inverse, counts, return_inverse, return_counts)


def _tensor_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    return unique_consecutive(self, return_inverse=return_inverse, return_counts=return_counts,
                              dim=dim)


Tensor.unique = _tensor_unique
Tensor.unique_consecutive = _tensor_unique_consecutive


def _varargs(tensors):
    """``f(a, b)`` and ``f([a, b])`` both mean the list [a, b]."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids; PyTorch warns (once) when ``indexing`` is not given."""
    if _overridden(tensors):
        return _torch_function.handle_torch_function(meshgrid, tensors, *tensors,
                                                     indexing=indexing, _python_level=True)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]    # passed on as given: FX records torch.meshgrid((a,), ...)
    kwargs = {} if indexing is None else {"indexing": indexing}
    return _meshgrid(tensors, **kwargs)


def tensordot(a, b, dims=2, out=None):
    """Contract the last ``dims`` dims of ``a`` with the first of ``b``, or the two
    given dim lists (``aten::tensordot`` takes the lists)."""
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    dims_a, dims_b = [], []
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            count = int(dims.item())
            if count < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(range(-count, 0)), list(range(count))
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if out is None:
        return ops.aten.tensordot.default(a, b, dims_a, dims_b)
    result = ops.aten.tensordot.default(a, b, dims_a, dims_b)
    ops.aten.resize_.default(out, list(result.shape))
    return ops.aten.copy_.default(out, result)


def block_diag(*tensors):
    """The inputs (0-d, 1-d or 2-d) as blocks along the diagonal of a zero matrix."""
    return ops.aten.block_diag.default(list(tensors))


def cartesian_prod(*tensors):
    """Every combination of one element per input, as rows."""
    return ops.aten.cartesian_prod.default(list(tensors))


def _atleast(name):
    def atleast(*tensors):
        if len(tensors) == 1:
            tensors = tensors[0]
        if isinstance(tensors, Tensor):
            return getattr(ops.aten, name).default(tensors)
        return tuple(getattr(ops.aten, name).Sequence(list(tensors)))
    atleast.__name__ = atleast.__qualname__ = name
    atleast.__doc__ = f"``torch.{name}(t)`` or ``torch.{name}(a, b, ...)`` (a tuple)."
    return atleast


atleast_1d, atleast_2d, atleast_3d = (_atleast(f"atleast_{n}d") for n in (1, 2, 3))


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between row sets; ``compute_mode`` names when p=2 uses matmul."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return ops.aten.cdist.default(x1, x2, p, _CDIST_MODES[compute_mode])


# -- linear algebra (ops in kernels/linalg.py) -------------------------------------------

def chain_matmul(*matrices, out=None):
    """The product of the matrices, in the cheapest order (deprecated for
    ``torch.linalg.multi_dot``, which takes a list)."""
    if out is None:
        return ops.aten.chain_matmul.default(list(matrices))
    return ops.aten.chain_matmul.out(list(matrices), out=out)


def lu(A, pivot=True, get_infos=False, out=None):
    """``torch.lu``: LU factors and pivots (and LAPACK's infos with ``get_infos``),
    from ``_lu_with_info``."""
    result = ops.aten._lu_with_info.default(A, pivot=pivot, check_errors=not get_infos)
    result = result if get_infos else result[:2]
    if out is None:
        return result
    for o, r in zip(out, result):
        if o.shape != r.shape:
            ops.aten.resize_.default(o, list(r.shape))
        o.copy_(r)
    return tuple(out)


def _tensor_lu(self, pivot=True, get_infos=False):
    """``Tensor.lu``: torch.lu without ``out`` (torch/_tensor.py's method)."""
    return lu(self, pivot=pivot, get_infos=get_infos)


Tensor.lu = _tensor_lu


# -- spectral (ops in kernels/spectral.py) ----------------------------------------------

def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """``torch.stft`` / ``Tensor.stft``: Python in torch too (its positional order puts
    ``center`` and ``pad_mode`` where ``aten::stft`` has ``normalized``); the
    signal padded by n_fft // 2 on each side when ``center``, then ``aten::stft``."""
    return ops.aten.stft.center(input, n_fft, hop_length, win_length, window, center, pad_mode,
                                normalized, onesided, return_complex, align_to_window)


def _tensor_istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
                  normalized=False, onesided=None, length=None, return_complex=False):
    return ops.aten.istft.default(self, n_fft, hop_length, win_length, window, center,
                                  normalized, onesided, length, return_complex)


Tensor.stft = stft
Tensor.istft = _tensor_istft


# Every public function here takes part in ``__torch_function__`` (torch/functional.py's
# ``has_torch_function`` preambles; see ``_dispatcher/torch_function.py``).
_torch_function.install_module_overrides(sys.modules[__name__],
                                         names=set(__all__).difference(_VARARGS))
