"""torch.distributions.HalfNormal."""
import math

from ._folded import _Folded
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(_Folded):
    """|X| for X ~ Normal(0, scale)."""
    base_class = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
