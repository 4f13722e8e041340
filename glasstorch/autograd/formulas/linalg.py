"""Linear-algebra gradients (FunctionsManual.cpp's svd_backward)."""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from .common import conj_if_complex, maybe_multiply, scalar_conj

__all__ = ["svd_singular_values_backward", "mm_mat1_backward", "mm_mat2_backward"]

aten = ops.aten


def svd_singular_values_backward(gS, U, Vh):
    """svd_backward's term for the singular values: ``U diag(gS) Vh``; the U and
    Vh terms are absent because those outputs are not differentiable here."""
    scaled = aten.mul.Tensor(U, aten.unsqueeze.default(gS, -2))
    return aten.matmul.default(scaled, Vh)


# -- matrix products: mm's gradients -------------------------------------------------------

def _column_major(sizes, strides) -> bool:
    return strides[0] == 1 and strides[1] == sizes[0]


def mm_mat1_backward(grad, mat2, mat1_sizes, mat1_strides, alpha):
    """grad @ mat2^H; computed as (mat2^* @ grad^T)^T when mat1 was column-major,
    so the gradient comes out column-major like mat1."""
    if _column_major(mat1_sizes, mat1_strides):
        result = aten.t.default(aten.mm.default(conj_if_complex(mat2), aten.t.default(grad)))
    else:
        result = aten.mm.default(grad, conj_if_complex(aten.t.default(mat2)))
    return maybe_multiply(result, scalar_conj(alpha))


def mm_mat2_backward(grad, mat1, mat2_sizes, mat2_strides, alpha):
    """mat1^H @ grad; as (grad^T @ mat1^*)^T when mat2 was column-major."""
    if _column_major(mat2_sizes, mat2_strides):
        result = aten.t.default(aten.mm.default(aten.t.default(grad), conj_if_complex(mat1)))
    else:
        result = aten.mm.default(conj_if_complex(aten.t.default(mat1)), grad)
    return maybe_multiply(result, scalar_conj(alpha))
