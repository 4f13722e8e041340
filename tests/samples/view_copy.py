"""Samples for functionalization's ops: view copies, scatters, zero
(glasstorch/_ops/kernels/view_copy.py).  Non-contiguous inputs where the copy
must still come out contiguous, and scatters whose self is not contiguous (the
output keeps self's strides)."""
from ..opinfo import sample


def _s(name, fn):
    sample(name)(fn)


_s("aten::view_copy", lambda make, lib: ((make(2, 3, 4), [4, -1]), {}))
_s("aten::view_copy", lambda make, lib: ((make(4, 6).t().unsqueeze(1), [3, 2, 1, 4]), {}))
_s("aten::view_copy.dtype", lambda make, lib: ((make(2, 4), lib.int32), {}))
_s("aten::_reshape_alias_copy", lambda make, lib: ((make(2, 6), [3, 4], [4, 1]), {}))
_s("aten::t_copy", lambda make, lib: ((make(3, 4),), {}))
_s("aten::t_copy", lambda make, lib: ((make(5),), {}))
_s("aten::transpose_copy.int", lambda make, lib: ((make(2, 3, 4), 0, -1), {}))
_s("aten::permute_copy", lambda make, lib: ((make(2, 3, 4, noncontiguous=True), [2, 0, 1]), {}))
_s("aten::unsqueeze_copy", lambda make, lib: ((make(3, 4), -1), {}))
_s("aten::squeeze_copy", lambda make, lib: ((make(3, 1, 4, 1),), {}))
_s("aten::squeeze_copy.dim", lambda make, lib: ((make(3, 1, 4), 1), {}))
_s("aten::squeeze_copy.dims", lambda make, lib: ((make(1, 3, 1, 4), [0, 2]), {}))
_s("aten::select_copy.int", lambda make, lib: ((make(3, 4, 5), 1, -1), {}))
_s("aten::slice_copy.Tensor", lambda make, lib: ((make(6, 4), 0, 1, 5, 2), {}))
_s("aten::slice_copy.Tensor", lambda make, lib: ((make(3, 8, noncontiguous=True), 1, -5), {}))
_s("aten::expand_copy", lambda make, lib: ((make(3, 1), [2, -1, 4]), {}))
_s("aten::as_strided_copy", lambda make, lib: ((make(3, 4), [2, 2], [1, 2], 1), {}))
_s("aten::unfold_copy", lambda make, lib: ((make(3, 8), 1, 3, 2), {}))
_s("aten::alias_copy", lambda make, lib: ((make(3, 4).t(),), {}))
_s("aten::detach_copy", lambda make, lib: ((make(3, 4),), {}))
_s("aten::lift_fresh_copy", lambda make, lib: ((make(3, 4),), {}))

_s("aten::slice_scatter", lambda make, lib: ((make(6, 4), make(2, 4), 0, 1, 5, 2), {}))
_s("aten::slice_scatter", lambda make, lib: ((make(4, 3).t(), make(3, 2), 1, -2), {}))
_s("aten::select_scatter", lambda make, lib: ((make(3, 4, 5), make(3, 5), 1, -1), {}))
_s("aten::diagonal_scatter", lambda make, lib: ((make(3, 4), make(3)), {}))
_s("aten::diagonal_scatter", lambda make, lib: ((make(3, 4, 5), make(4, 3), 1, 0, 2), {}))
_s("aten::as_strided_scatter", lambda make, lib: ((make(3, 4), make(2, 2), [2, 2], [1, 2], 1), {}))
_s("aten::zero", lambda make, lib: ((make(4, 3).t(),), {}))

# multi-output view copies: every piece contiguous, from non-contiguous inputs too
_s("aten::split_copy.Tensor", lambda make, lib: ((make(5, 4), 2), {}))
_s("aten::split_copy.Tensor", lambda make, lib: ((make(4, 6).t(), 4, -1), {}))
_s("aten::split_with_sizes_copy", lambda make, lib: ((make(3, 6), [1, 0, 5], 1), {}))
_s("aten::split_with_sizes_copy", lambda make, lib: ((make(5, 3, noncontiguous=True), [2, 3]), {}))
_s("aten::unbind_copy.int", lambda make, lib: ((make(3, 4),), {}))
_s("aten::unbind_copy.int", lambda make, lib: ((make(2, 3, 4).transpose(0, 2), 1), {}))
# their out= overloads return nothing, so these samples only check that both libraries
# (and Meta) accept the call; the written values are compared in tests/test_functionalize.py
_s("aten::split_copy.Tensor_out",
   lambda make, lib: ((make(5, 4), 2), {"out": [make(2, 4), make(2, 4), make(1, 4)]}))
_s("aten::split_with_sizes_copy.out",
   lambda make, lib: ((make(3, 6), [4, 2], 1), {"out": [make(0), make(3, 2)]}))
_s("aten::unbind_copy.int_out",
   lambda make, lib: ((make(3, 4), 1), {"out": [make(3) for _ in range(4)]}))
