"""torch.distributions.MultivariateNormal, and the batched triangular helpers the
Gaussian distributions and their KL divergences share."""
import math

import glasstorch as torch
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector products, the batch dims of ``bmat`` and ``bvec`` broadcast."""
    return torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x over the last dim of ``bx``: the squared norm of L^-1 x.
    ``bL``'s batch dims broadcast against ``bx``'s."""
    solved = torch.linalg.solve_triangular(bL, bx.unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1 without inverting P: the flipped Cholesky
    factor of the flipped P is an upper factor of P, whose inverse is solved for."""
    flipped = torch.linalg.cholesky(torch.flip(P, (-2, -1)))
    upper_inv = torch.transpose(torch.flip(flipped, (-2, -1)), -2, -1)
    identity = torch.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return torch.linalg.solve_triangular(upper_inv, identity, upper=False)


def _scale_tril_from(covariance_matrix, precision_matrix, scale_tril):
    """The unbroadcast lower Cholesky factor of the covariance, from whichever of the
    three parameterizations was given (MultivariateNormal's and Wishart's)."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return torch.linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


def _expand_matrices(dist, new, cov_shape):
    """Copy the matrix parameterizations ``dist`` holds onto ``new``, expanded."""
    for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(cov_shape))


def _half_log_det(scale_tril):
    """log |L L^T| / 2 for a lower Cholesky factor L."""
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


class MultivariateNormal(Distribution):
    """N(loc, Sigma), Sigma given as ``covariance_matrix``, ``precision_matrix`` or
    its lower Cholesky factor ``scale_tril`` (exactly one); everything is computed
    from the Cholesky factor.  ``rsample`` is loc + L eps."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("scale_tril", scale_tril),
                                           ("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix))
                 if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name}{' matrix' if name == 'scale_tril' else ''} must be at "
                             f"least two-dimensional, with optional leading batch dimensions")
        batch_shape = torch.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_from(covariance_matrix, precision_matrix,
                                                          scale_tril)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        _expand_matrices(self, new, batch_shape + self.event_shape + self.event_shape)
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape,
                                                validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return torch.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return torch.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril.pow(2).sum(-1)
                .expand(self._batch_shape + self._event_shape))

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return (-0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M)
                - _half_log_det(self._unbroadcasted_scale_tril))

    def entropy(self):
        H = (0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi))
             + _half_log_det(self._unbroadcasted_scale_tril))
        return H.expand(self._batch_shape) if len(self._batch_shape) else H
