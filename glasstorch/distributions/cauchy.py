"""torch.distributions.Cauchy."""
import math

import glasstorch as torch
from . import constraints
from ._params import expand_params, set_broadcast
from .distribution import Distribution

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy(loc, scale); ``rsample`` scales a cauchy_ draw.  No mean or variance."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        batch_shape = set_broadcast(self, ("loc", "scale"), (loc, scale))
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Cauchy, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        return torch.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype,
                          device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return torch.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype,
                          device=self.loc.device)

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new_empty(shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
