"""torch.distributions.LKJCholesky: the LKJ distribution over correlation matrices,
on their lower Cholesky factors (Lewandowski, Kurowicka and Joe, 2009)."""
import math

import glasstorch as torch
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Cholesky factors L of dim x dim correlation matrices with density
    proportional to det(L L^T) ** (concentration - 1).  ``sample`` is the onion
    method: row i's squared length off the diagonal is a Beta draw, its direction
    a normalized Gaussian."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # row i (from 1) has squared off-diagonal length Beta(i / 2, eta + (dim - 2 - i) / 2);
        # row 0's first entry is a dummy, never used
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=self.concentration.dtype,
                              device=self.concentration.device)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), torch.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=torch.Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                               device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)     # row 0 is 0 / 0 above
        w = torch.sqrt(y) * u_hypersphere
        diag = torch.clamp(1 - torch.sum(w ** 2, dim=-1), min=torch.finfo(w.dtype).tiny).sqrt()
        w += torch.diag_embed(diag)
        return w

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log of prod_{i>=1} L_ii ** (2 (eta - 1) + dim - 1 - i), normalized by the
        # LKJ constant (Lewandowski et al. 2009, eq. 16)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = torch.sum(order * diag.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = (0.5 * dm1 * math.log(math.pi) + torch.mvlgamma(alpha - 0.5, dm1)
                      - torch.lgamma(alpha) * dm1)
        return unnormalized - normalizer
