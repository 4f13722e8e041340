"""torch.distributions.StudentT."""
import math

import glasstorch as torch
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, shifted by ``loc`` and scaled by
    ``scale``; ``rsample`` is loc + scale * N(0, 1) / sqrt(Chi2(df) / df), the
    normal drawn first."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = torch.Size(batch_shape)
        for name in ("df", "loc", "scale"):
            setattr(new, name, getattr(self, name).expand(batch_shape))
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        mean = self.loc.clone(memory_format=torch.contiguous_format)
        mean[self.df <= 1] = torch.nan
        return mean

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        var = df.clone(memory_format=torch.contiguous_format)
        finite = df > 2
        var[finite] = self.scale[finite].pow(2) * df[finite] / (df[finite] - 2)
        var[(df <= 2) & (df > 1)] = torch.inf
        var[df <= 1] = torch.nan
        return var

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (X * torch.rsqrt(Z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                    + torch.lgamma(0.5 * self.df) - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y ** 2.0 / self.df) - log_norm

    def entropy(self):
        half_df = 0.5 * self.df
        half_df1 = 0.5 * (self.df + 1)
        log_beta = torch.lgamma(half_df) + math.lgamma(0.5) - torch.lgamma(half_df1)
        return (self.scale.log()
                + half_df1 * (torch.digamma(half_df1) - torch.digamma(half_df))
                + 0.5 * self.df.log() + log_beta)
