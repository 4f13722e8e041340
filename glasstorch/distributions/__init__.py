"""torch.distributions: parameterized probability distributions, their
constraints and transforms, and KL divergences between them.

Samplers call the same random ops in the same order as PyTorch's, so a seeded
``sample`` gives PyTorch's numbers.  Present so far: the distributions imported
below; the others of PyTorch's ``__all__`` are not written yet.
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "Gamma", "Geometric",
           "HalfCauchy", "HalfNormal", "Independent", "Laplace", "LogNormal", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson", "Uniform",
           "TransformedDistribution", "biject_to", "kl_divergence", "register_kl",
           "transform_to"] + transforms.__all__
