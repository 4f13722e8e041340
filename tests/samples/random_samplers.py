"""Samples for the per-element samplers torch.distributions calls (ATen's
Distributions.cpp: _standard_gamma, _sample_dirichlet, poisson, binomial, their
gradient helpers) and cauchy_.  With an explicit generator the values are compared
too: glasstorch's samplers consume PyTorch's mt19937 stream draw for draw."""
from ..opinfo import sample


def _gen(lib, seed=0):
    return lib.Generator().manual_seed(seed)


@sample("aten::cauchy_", inplace=True)
def cauchy_(make, lib):
    return (make(3, 4, dtype="float64"), 0.5, 2.0), {"generator": _gen(lib)}


@sample("aten::_standard_gamma")
def standard_gamma_draw(make, lib):
    return (make(4, 5, low=0.05, high=12),), {"generator": _gen(lib)}


@sample("aten::_standard_gamma")
def standard_gamma_double_draw(make, lib):
    return (make(7, dtype="float64", low=0.01, high=3, noncontiguous=True),), \
        {"generator": _gen(lib, 3)}


@sample("aten::_standard_gamma_grad", rtol=1e-4)
def standard_gamma_grad(make, lib):
    return (make(3, 6, low=0.1, high=15), make(3, 6, low=0.05, high=20)), {}


@sample("aten::_sample_dirichlet")
def sample_dirichlet(make, lib):
    return (make(3, 4, low=0.1, high=4),), {"generator": _gen(lib)}


@sample("aten::_dirichlet_grad", rtol=1e-4, atol=1e-4)
def dirichlet_grad(make, lib):
    return (make(2, 5, dtype="float64", low=0.01, high=0.99), make(2, 5, dtype="float64",
            low=0.2, high=8), make(2, 5, dtype="float64", low=9, high=20)), {}


@sample("aten::poisson")
def poisson_draw(make, lib):
    return (make(4, 6, low=0, high=40),), {"generator": _gen(lib)}


@sample("aten::binomial")
def binomial(make, lib):
    count = make(3, 5, low=0, high=200).floor()
    return (count, make(3, 5, low=0, high=1)), {"generator": _gen(lib)}


@sample("aten::binomial")
def binomial_broadcast(make, lib):
    count = make(2, 4, dtype="float64", low=0, high=50).floor()
    return (count, make(4, dtype="float64", low=0, high=1)), {"generator": _gen(lib, 5)}
