"""torch.distributions.Wishart."""
import math
import warnings
from numbers import Number

import glasstorch as torch
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _expand_matrices, _half_log_det, _scale_tril_from
from .utils import lazy_property

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: sum_{i<p} digamma(x - i / 2), for x > (p - 1) / 2."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = torch.arange(p, dtype=x.dtype, device=x.device).div(2).expand(x.shape + (-1,))
    return torch.digamma(x.unsqueeze(-1) - halves).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=torch.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart(df, Sigma) over p x p positive definite matrices, Sigma given as
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (exactly one).
    ``rsample`` is the Bartlett decomposition: sqrt(Chi2(df - i)) on the diagonal,
    standard normals below it."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix),
                                           ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_from(covariance_matrix, precision_matrix,
                                                          scale_tril)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        """Chi2(df - i) for i < p: the squared diagonal of the Bartlett factor."""
        L = self._unbroadcasted_scale_tril
        steps = torch.arange(L.shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        _expand_matrices(self, new, cov_shape)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = torch.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return torch.cholesky_solve(identity, L).expand(self._matrix_shape())

    def _per_batch(self, x):
        """A batch-shaped tensor viewed to broadcast against matrices."""
        return x.view(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._per_batch(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = torch.nan
        return self._per_batch(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        outer = diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2)
        return self._per_batch(self.df) * (V.pow(2) + outer)

    def _bartlett_sampling(self, sample_shape=torch.Size()):
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(
            dim1=-2, dim2=-1)
        i, j = torch.tril_indices(p, p, offset=-1)
        noise[..., i, j] = torch.randn(torch.Size(sample_shape) + self._batch_shape
                                       + (p * (p - 1) // 2,), dtype=noise.dtype,
                                       device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _any_in_batch(self, flags):
        return flags.amax(self._batch_dims) if self._batch_shape else flags

    def rsample(self, sample_shape=torch.Size(), max_try_correction=None):
        """Bartlett samples, redrawn up to ``max_try_correction`` (10) times.

        PyTorch 2.13 flags the first samples by ``support.check`` (true for the
        *valid* ones) before redrawing the flagged ones, so it redraws (and warns
        "Singular sample detected.") whenever any sample is positive definite; this
        does the same, so seeded samples stay equal to PyTorch's."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        redraw = self._any_in_batch(self.support.check(sample))
        if redraw.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(redraw[redraw].shape)
                sample[redraw] = sample_new
                still_singular = self._any_in_batch(~self.support.check(sample_new))
                redraw[redraw.clone()] = still_singular
                if not redraw.any():
                    break
        return sample

    def _log_det_term(self):
        """p log(2) / 2 + log |Sigma| / 2."""
        return self._event_shape[-1] * _log_2 / 2 + _half_log_det(self._unbroadcasted_scale_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        trace = torch.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * self._log_det_term() - torch.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * torch.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * self._log_det_term() + torch.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-torch.linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + torch.mvlgamma(y + (p + 1) / 2, p=p))
