"""torch.distributions.GeneralizedPareto."""
import math
from numbers import Number

import glasstorch as torch
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GPD(loc, scale, concentration xi): survival (1 + xi z) ** (-1 / xi) of
    z = (x - loc) / scale (exp(-z) at xi = 0); ``rsample`` is the icdf of a uniform.

    As PyTorch's, ``log_prob`` / ``cdf`` compare the concentration with a default-dtype
    zero, so they need default-dtype parameters (PyTorch raises its dtype error
    otherwise, and so does this)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = torch.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = torch.Size(batch_shape)
        for name in ("loc", "scale", "concentration"):
            setattr(new, name, getattr(self, name).expand(batch_shape))
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self, zero):
        """(concentration == 0 within isclose, the concentration with those set to 1)."""
        eq_zero = torch.isclose(self.concentration, zero)
        return eq_zero, torch.where(eq_zero, torch.ones_like(self.concentration),
                                    self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, xi = self._safe_concentration(torch.tensor(0.0))
        y = 1 / xi + torch.ones_like(z)
        nonzero = torch.where(y == 0, y, y * torch.log1p(xi * z))
        return -self.scale.log() - torch.where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, xi = self._safe_concentration(torch.tensor(0.0))
        return torch.where(eq_zero, -z, -torch.log1p(xi * z) / xi)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, xi = self._safe_concentration(torch.zeros_like(self.concentration))
        log_u = torch.log1p(-value)
        nonzero = self.loc + self.scale / xi * torch.expm1(-xi * log_u)
        return torch.where(eq_zero, self.loc - self.scale * log_u, nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        xi = torch.where(valid, self.concentration, 0.5)
        return torch.where(valid, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        xi = torch.where(valid, self.concentration, 0.25)
        return torch.where(valid, self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi)), math.nan)

    def entropy(self):
        return torch.broadcast_to(torch.log(self.scale) + self.concentration + 1,
                                  self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torch.where(self.concentration < 0, lower - self.scale / self.concentration,
                            math.inf)
        return constraints.interval(lower, upper)
