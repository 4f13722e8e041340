"""Samples for torch.linalg's decompositions, solves and inverses and their older
spellings (glasstorch/_ops/kernels/linalg.py).

Matrices are built from ``make``'s values with the library's own ops, so both
libraries see the same inputs: well-conditioned ones (``_square``: A + n I), and
Hermitian positive-definite ones (``_spd``: A A^H + n I) where the op needs them.
Samples whose outputs are only defined up to a sign or phase (eigenvectors and
singular vectors; LAPACK builds may pick either) compare shape, dtype and strides
(``random=True``); their values and gradients are compared up to that gauge in
tests/test_linalg_decompositions.py.
"""
from ..opinfo import sample


def _square(make, lib, *shape, dtype="float64", noncontiguous=False):
    a = make(*shape, dtype=dtype, noncontiguous=noncontiguous)
    return a + shape[-1] * lib.eye(shape[-1], dtype=a.dtype, device=a.device)


def _spd(make, lib, *shape, dtype="float64"):
    a = make(*shape, dtype=dtype)
    return a @ a.mH + shape[-1] * lib.eye(shape[-1], dtype=a.dtype, device=a.device)


def _hermitian_first(xs):
    """gradcheck through (A + A^H) / 2: the op reads one triangle of a Hermitian A."""
    return ((xs[0] + xs[0].mH) / 2,) + tuple(xs[1:])


def _lower(position):
    def lower(xs):
        return tuple(x.tril() if i == position else x for i, x in enumerate(xs))
    return lower


def _int32(lib, values, like):
    return lib.tensor(values, dtype=lib.int32, device=like.device)


# -- LU -----------------------------------------------------------------------------------

@sample("aten::linalg_lu_factor_ex")
def lu_factor_ex_tall_batch(make, lib):
    return (make(2, 5, 3, dtype="float64"),), {}


@sample("aten::linalg_lu_factor")
def lu_factor_wide_complex(make, lib):
    return (make(3, 4, dtype="complex128"),), {}


@sample("aten::_lu_with_info")
def lu_with_info(make, lib):
    return (make(4, 4),), {}


@sample("aten::linalg_lu")
def lu_wide(make, lib):
    return (make(2, 3, 5, dtype="float64"),), {}


@sample("aten::lu_unpack")
def lu_unpack_tall(make, lib):
    LU = make(4, 3, dtype="float64")
    return (LU, _int32(lib, [3, 3, 3], LU)), {}


@sample("aten::linalg_lu_solve")
def lu_solve_broadcast(make, lib):
    LU, pivots = lib.linalg.lu_factor(_square(make, lib, 2, 3, 3))
    return (LU, pivots, make(3, 2, dtype="float64")), {}


@sample("aten::linalg_lu_solve")
def lu_solve_right_adjoint_complex(make, lib):
    LU, pivots = lib.linalg.lu_factor(_square(make, lib, 3, 3, dtype="complex128"))
    return (LU, pivots, make(2, 3, dtype="complex128")), {"left": False, "adjoint": True}


@sample("aten::lu_solve")
def lu_solve_old(make, lib):
    LU, pivots = lib.linalg.lu_factor(_square(make, lib, 4, 4))
    return (make(4, 2, dtype="float64"), LU, pivots), {}


# -- determinants ---------------------------------------------------------------------------

@sample("aten::_linalg_det")
def det_factors_batch(make, lib):
    return (make(2, 3, 3, dtype="float64"),), {}


@sample("aten::_linalg_det")
def det_factors_noncontiguous(make, lib):
    return (make(3, 3, dtype="float64", noncontiguous=True),), {}


@sample("aten::linalg_det")
def det_complex(make, lib):
    return (make(3, 3, dtype="complex128"),), {}


@sample("aten::det")
def det_old(make, lib):
    return (make(2, 4, 4, dtype="float64"),), {}


@sample("aten::_linalg_slogdet")
def slogdet_factors(make, lib):
    return (make(2, 3, 3, dtype="float64"),), {}


@sample("aten::linalg_slogdet")
def slogdet_complex(make, lib):
    return (make(3, 3, dtype="complex128"),), {}


@sample("aten::slogdet")
def slogdet_old(make, lib):
    return (make(4, 4, dtype="float64"),), {}


@sample("aten::logdet")
def logdet_spd(make, lib):
    return (_spd(make, lib, 2, 3, 3),), {}


# -- inverses and solves ------------------------------------------------------------------------

@sample("aten::linalg_inv_ex")
def inv_ex_batch(make, lib):
    return (_square(make, lib, 2, 3, 3),), {}


@sample("aten::linalg_inv")
def inv_complex(make, lib):
    return (_square(make, lib, 3, 3, dtype="complex128"),), {}


@sample("aten::inverse")
def inverse_old(make, lib):
    return (_square(make, lib, 4, 4, noncontiguous=True),), {}


@sample("aten::_linalg_solve_ex")
def solve_ex_factors(make, lib):
    return (_square(make, lib, 2, 3, 3), make(2, 3, 2, dtype="float64")), {}


@sample("aten::linalg_solve_ex")
def solve_ex_right(make, lib):
    return (_square(make, lib, 3, 3), make(2, 3, dtype="float64")), {"left": False}


@sample("aten::linalg_solve")
def solve_vector_broadcast(make, lib):
    return (_square(make, lib, 2, 3, 3), make(3, dtype="float64")), {}


@sample("aten::linalg_solve")
def solve_complex(make, lib):
    return (_square(make, lib, 3, 3, dtype="complex128"), make(3, 2, dtype="complex128")), {}


# -- Cholesky ---------------------------------------------------------------------------------
# (their gradients read one triangle of a Hermitian input: gradcheck goes through a
# symmetrization in tests/test_linalg_decompositions.py; the registry compares
# their gradients with PyTorch's)

@sample("aten::linalg_cholesky_ex", gradcheck_inputs=_hermitian_first)
def cholesky_ex_batch_hermitian(make, lib):
    return (_spd(make, lib, 2, 3, 3),), {}


@sample("aten::linalg_cholesky", gradcheck_inputs=_hermitian_first)
def cholesky_upper_complex_hermitian(make, lib):
    return (_spd(make, lib, 3, 3, dtype="complex128"),), {"upper": True}


@sample("aten::cholesky", gradcheck_inputs=_hermitian_first)
def cholesky_old_hermitian(make, lib):
    return (_spd(make, lib, 4, 4),), {}


@sample("aten::cholesky_inverse", gradcheck_inputs=lambda xs: (xs[0].triu(),))
def cholesky_inverse_upper_triangular(make, lib):
    return (lib.linalg.cholesky(_spd(make, lib, 3, 3), upper=True),), {"upper": True}


@sample("aten::cholesky_solve", gradcheck_inputs=_lower(1))
def cholesky_solve_broadcast_triangular(make, lib):
    return (make(2, 3, 2, dtype="float64"), lib.linalg.cholesky(_spd(make, lib, 3, 3))), {}


@sample("aten::_cholesky_solve_helper", gradcheck_inputs=_lower(1))
def cholesky_solve_helper_triangular(make, lib):
    return (make(3, 2, dtype="float64"), lib.linalg.cholesky(_spd(make, lib, 3, 3)), False), {}


# -- QR and Householder ---------------------------------------------------------------------

@sample("aten::linalg_qr")
def qr_reduced_tall(make, lib):
    return (make(2, 5, 3, dtype="float64"),), {}


@sample("aten::linalg_qr")
def qr_complete_wide(make, lib):
    return (make(3, 4, dtype="float64"),), {"mode": "complete"}


@sample("aten::linalg_qr")
def qr_r_complex(make, lib):
    return (make(4, 3, dtype="complex128"),), {"mode": "r"}


@sample("aten::qr")
def qr_old_wide(make, lib):
    return (make(3, 4, dtype="float64"),), {"some": False}


@sample("aten::geqrf")
def geqrf_tall(make, lib):
    return (make(2, 4, 3, dtype="float64"),), {}


@sample("aten::linalg_householder_product")
def householder_product(make, lib):
    return (make(2, 4, 3, dtype="float64"), make(2, 2, dtype="float64", low=-1, high=1)), {}


@sample("aten::orgqr")
def orgqr_complex(make, lib):
    return (make(4, 3, dtype="complex128"), make(3, dtype="complex128", low=-1, high=1)), {}


@sample("aten::ormqr")
def ormqr_right_transpose(make, lib):
    return (make(4, 3, dtype="float64"), make(3, dtype="float64", low=-1, high=1),
            make(2, 4, dtype="float64")), {"left": False, "transpose": True}


# -- eigendecompositions and SVD ----------------------------------------------------------------

@sample("aten::_linalg_eigh", random=True)
def eigh_vectors_hermitian(make, lib):
    return (_spd(make, lib, 2, 3, 3),), {}


@sample("aten::linalg_eigh", random=True)
def eigh_upper_complex_hermitian(make, lib):
    return (_spd(make, lib, 3, 3, dtype="complex128"), "U"), {}


@sample("aten::linalg_eigvalsh", gradcheck_inputs=_hermitian_first)
def eigvalsh_batch_hermitian(make, lib):
    return (_spd(make, lib, 2, 4, 4),), {}


@sample("aten::linalg_eig", random=True)
def eig_vectors(make, lib):
    return (make(2, 3, 3, dtype="float64"),), {}


@sample("aten::_linalg_eigvals", random=True)
def eigvals_unordered(make, lib):
    return (make(3, 3, dtype="float64"),), {}


@sample("aten::linalg_eigvals", random=True)
def eigvals_complex_unordered(make, lib):
    return (make(3, 3, dtype="complex128"),), {}


@sample("aten::_linalg_svd", random=True)
def svd_factors_full(make, lib):
    return (make(2, 4, 3, dtype="float64"), True), {}


@sample("aten::linalg_svd", random=True)
def svd_reduced_wide(make, lib):
    return (make(3, 5, dtype="float64"), False), {}


@sample("aten::svd", random=True)
def svd_old_values(make, lib):
    return (make(4, 3, dtype="float64"),), {"compute_uv": False}


# -- least squares, LDL, triangular solves ------------------------------------------------------

@sample("aten::linalg_lstsq")
def lstsq_gelsd_tall(make, lib):
    return (make(2, 5, 3, dtype="float64"), make(2, 5, 2, dtype="float64")), {"driver": "gelsd"}


@sample("aten::linalg_lstsq")
def lstsq_default_vector(make, lib):
    return (make(4, 3, dtype="float64"), make(4, dtype="float64")), {}


@sample("aten::linalg_lstsq")
def lstsq_gels_complex(make, lib):
    return (make(4, 3, dtype="complex128"), make(4, 2, dtype="complex128")), {"driver": "gels"}


@sample("aten::linalg_ldl_factor_ex")
def ldl_factor_ex_symmetric(make, lib):
    a = make(2, 4, 4, dtype="float64")
    return (a + a.mT,), {}


@sample("aten::linalg_ldl_factor")
def ldl_factor_hermitian(make, lib):
    a = make(3, 3, dtype="complex128")
    return (a + a.mH,), {"hermitian": True}


@sample("aten::linalg_ldl_solve")
def ldl_solve_symmetric(make, lib):
    a = make(3, 3, dtype="float64")
    LD, pivots = lib.linalg.ldl_factor(a + a.mT + 6 * lib.eye(3, dtype=a.dtype, device=a.device))
    return (LD, pivots, make(3, 2, dtype="float64")), {}


@sample("aten::linalg_solve_triangular")
def solve_triangular_upper_batch(make, lib):
    return (_square(make, lib, 2, 3, 3).triu(), make(3, 2, dtype="float64")), {"upper": True}


@sample("aten::linalg_solve_triangular")
def solve_triangular_right_unit(make, lib):
    return (make(3, 3, dtype="float64").tril(), make(2, 3, dtype="float64")), \
        {"upper": False, "left": False, "unitriangular": True}


@sample("aten::triangular_solve")
def triangular_solve_transpose(make, lib):
    return (make(3, 2, dtype="float64"), _square(make, lib, 3, 3).tril(), False, True), {}


# -- matrix functions and composites ----------------------------------------------------------------

@sample("aten::linalg_matrix_exp")
def matrix_exp_batch(make, lib):
    return (make(2, 3, 3, dtype="float64", low=-1, high=1),), {}


@sample("aten::matrix_exp")
def matrix_exp_large_norm(make, lib):
    return (make(3, 3, dtype="float64", low=-4, high=4),), {}


@sample("aten::matrix_exp_backward")
def matrix_exp_backward(make, lib):
    return (make(3, 3, dtype="float64", low=-1, high=1), make(3, 3, dtype="float64")), {}


@sample("aten::linalg_pinv.atol_rtol_tensor")
def pinv_tensor_tolerances(make, lib):
    a = make(2, 4, 3, dtype="float64")
    return (a,), {"atol": lib.tensor(0.01, dtype=lib.float64, device=a.device)}


@sample("aten::linalg_pinv.atol_rtol_float", gradcheck_inputs=_hermitian_first)
def pinv_float_hermitian(make, lib):
    return (_spd(make, lib, 3, 3),), {"rtol": 1e-10, "hermitian": True}


@sample("aten::linalg_pinv")
def pinv_rcond(make, lib):
    return (make(3, 5, dtype="float64"), 1e-8), {}


@sample("aten::linalg_pinv.rcond_tensor")
def pinv_rcond_tensor(make, lib):
    a = make(3, 4, dtype="float64")      # (an integer rcond: a floating one requiring grad
    return (a, lib.tensor(0, device=a.device)), {}     # is refused, by both libraries)


@sample("aten::pinverse")
def pinverse_old(make, lib):
    return (make(4, 3, dtype="float64"),), {}


@sample("aten::linalg_matrix_rank.atol_rtol_tensor")
def matrix_rank_tensor(make, lib):
    a = make(2, 4, 2, dtype="float64")
    return (a @ a.mT,), {"rtol": lib.tensor(1e-8, dtype=lib.float64, device=a.device)}


@sample("aten::linalg_matrix_rank.atol_rtol_float")
def matrix_rank_hermitian(make, lib):
    a = make(4, 2, dtype="float64")
    return (a @ a.mT,), {"hermitian": True}


@sample("aten::linalg_matrix_rank")
def matrix_rank_tol(make, lib):
    return (make(3, 4, dtype="float64"), 0.5), {}


@sample("aten::linalg_matrix_rank.tol_tensor")
def matrix_rank_tol_tensor(make, lib):
    a = make(2, 3, 3, dtype="float64")
    return (a, lib.tensor([0.1, 100.0], dtype=lib.float64, device=a.device)), {}


@sample("aten::linalg_cond")
def cond_two(make, lib):
    return (make(2, 3, 3, dtype="float64"),), {}


@sample("aten::linalg_cond")
def cond_inf(make, lib):
    return (_square(make, lib, 3, 3), float("inf")), {}


@sample("aten::linalg_cond.p_str")
def cond_fro_norm(make, lib):
    return (_square(make, lib, 3, 3), "fro"), {}


@sample("aten::linalg_matrix_power")
def matrix_power_negative(make, lib):
    return (_square(make, lib, 2, 3, 3), -3), {}


@sample("aten::matrix_power")
def matrix_power_five_int(make, lib):
    return (make(3, 3, dtype="int64", low=-2, high=3), 5), {}


@sample("aten::linalg_multi_dot")
def multi_dot_vectors(make, lib):
    return ([make(3, dtype="float64"), make(3, 5, dtype="float64"), make(5, 2, dtype="float64"),
             make(2, dtype="float64")],), {}


@sample("aten::linalg_multi_dot")
def multi_dot_matrices(make, lib):
    return ([make(2, 6), make(6, 3), make(3, 4)],), {}


@sample("aten::chain_matmul")
def chain_matmul(make, lib):
    return ([make(2, 3, dtype="float64"), make(3, 4, dtype="float64"),
             make(4, 2, dtype="float64")],), {}


@sample("aten::linalg_vander")
def vander_batch(make, lib):
    return (make(2, 3, dtype="float64"),), {"N": 4}


@sample("aten::linalg_vecdot")
def vecdot_complex(make, lib):
    return (make(2, 3, dtype="complex128"), make(3, dtype="complex128")), {"dim": -1}


@sample("aten::linalg_tensorinv")
def tensorinv(make, lib):
    return (_square(make, lib, 6, 6).reshape(2, 3, 6),), {"ind": 2}


@sample("aten::linalg_tensorsolve")
def tensorsolve_dims(make, lib):
    return (_square(make, lib, 6, 6).reshape(6, 2, 3), make(2, 3, dtype="float64")), \
        {"dims": [0]}


@sample("aten::linalg_diagonal")
def linalg_diagonal_offset(make, lib):
    return (make(2, 3, 4),), {"offset": 1}


@sample("aten::linalg_matmul")
def linalg_matmul(make, lib):
    return (make(2, 3, 4), make(4, 2)), {}


@sample("aten::_linalg_check_errors")
def check_errors_clean(make, lib):
    return (lib.zeros(3, dtype=lib.int32), "linalg.inv"), {"is_matrix": False}


# -- out= overloads declared on their own (they go through the structured op's out=) ----------

@sample("aten::linalg_inv.out")
def inv_out(make, lib):
    return (_square(make, lib, 2, 3, 3),), {"out": make(0, dtype="float64")}


@sample("aten::inverse.out")
def inverse_out(make, lib):
    return (_square(make, lib, 3, 3),), {"out": make(0, dtype="float64")}


@sample("aten::lu_solve.out")
def lu_solve_out(make, lib):
    LU, pivots = lib.linalg.lu_factor(_square(make, lib, 3, 3))
    return (make(3, 2, dtype="float64"), LU, pivots), {"out": make(0, dtype="float64")}


@sample("aten::orgqr.out")
def orgqr_out(make, lib):
    return (make(4, 3, dtype="float64"), make(2, dtype="float64", low=-1, high=1)), \
        {"out": make(0, dtype="float64")}


@sample("aten::qr.Q")
def qr_out(make, lib):
    return (make(4, 3, dtype="float64"),), {"Q": make(0, dtype="float64"),
                                            "R": make(0, dtype="float64")}
