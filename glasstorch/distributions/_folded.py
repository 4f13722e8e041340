"""What HalfNormal and HalfCauchy share: |X| for X symmetric about 0 with a scale
(torch/distributions/half_normal.py and half_cauchy.py, written once here)."""
import math

import glasstorch as torch
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = []


class _Folded(TransformedDistribution):
    """|X| for X ~ ``base_class(0, scale)``: twice the base density on [0, inf)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_class = None

    def __init__(self, scale, validate_args=None):
        base = self.base_class(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(type(self), _instance))

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return torch.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
