"""torch.distributions.HalfCauchy."""
import math

import glasstorch as torch
from ._folded import _Folded
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale)."""
    base_class = Cauchy

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                          device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        """(HalfCauchy reads ``value`` in the scale's dtype, HalfNormal does not)"""
        return super().log_prob(torch.as_tensor(value, dtype=self.scale.dtype,
                                                device=self.scale.device))
