"""``torch.special``: the registry's ``python_module: special`` functions under
their ``torch.special`` names (``special_gammaln`` -> ``gammaln``).  Kernels in
glasstorch/_ops/kernels/special.py; many names are CompositeImplicitAutograd
aliases of top-level ops (``expit`` -> ``sigmoid``, ``psi`` -> ``digamma``)."""
from ._ops import registry as _registry

# torch's list
__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
           "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
           "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
           "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

globals().update({name[len("special_"):]: fn
                  for name, fn in _registry.FUNCTIONS["special"].items()
                  if name.startswith("special_")})
