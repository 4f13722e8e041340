"""Exponential families (torch.distributions.ExponentialFamily): densities
p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)), whose entropy is computed
from the log normalizer F by autograd (a Bregman divergence)."""
import glasstorch as torch
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give ``_natural_params``, ``_log_normalizer`` and
    ``_mean_carrier_measure``; ``entropy`` (and KL between two members of one
    family) follow."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = torch.autograd.grad(log_norm.sum(), params, create_graph=True)
        result += log_norm
        for p, g in zip(params, grads):
            result -= (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
