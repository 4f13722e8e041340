"""torch.distributions.VonMises: the circular normal distribution."""
import math

import glasstorch as torch
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _eval_poly(y, coef):
    """sum_k coef[k] y**k by Horner's rule."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


# Abramowitz & Stegun 9.8.1-9.8.4: polynomial approximations of I0 and I1, in
# (x / 3.75)**2 below 3.75 and of exp(-x) sqrt(x) I(x) in 3.75 / x above.
_COEF_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
               [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411])
_COEF_LARGE = ([0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
                0.02635537, -0.01647633, 0.00392377],
               [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
                -0.02895312, 0.01787654, -0.00420059])


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0, order 0 or 1 (the approximations above)."""
    if order != 0 and order != 1:
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = x / 3.75
    y = y * y
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return torch.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's (1979) wrapped-Cauchy rejection sampler: three uniforms per
    round for every element, until each has accepted once."""
    done = torch.zeros(x.shape, dtype=torch.bool, device=loc.device)
    while not done.all():
        u1, u2, u3 = torch.rand((3,) + x.shape, dtype=loc.dtype, device=loc.device).unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """VonMises(loc, concentration) on the circle; samples lie in [-pi, pi), drawn
    in float64 whatever the parameters' dtype."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, torch.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return (log_prob - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self):
        return self.loc.to(torch.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(torch.double)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        # for tiny kappa the closed form cancels catastrophically
        return torch.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    @torch.no_grad()
    def sample(self, sample_shape=torch.Size()):
        x = torch.empty(self._extended_shape(sample_shape), dtype=self._loc.dtype,
                        device=self.loc.device)
        return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                 x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            return type(self)(self.loc.expand(batch_shape),
                              self.concentration.expand(batch_shape),
                              validate_args=validate_args)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(kappa) / I0(kappa)."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
