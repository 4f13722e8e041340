"""The rest of torch.distributions against PyTorch's: MultivariateNormal (three
parameterizations), LowRankMultivariateNormal, Multinomial, NegativeBinomial,
StudentT, FisherSnedecor, Gumbel, Weibull, Pareto, Kumaraswamy, VonMises,
ContinuousBernoulli, LogisticNormal, LKJCholesky, Wishart, InverseGamma,
GeneralizedPareto, RelaxedBernoulli, RelaxedOneHotCategorical (and their
logit/log-space bases), MixtureSameFamily: moments, log_prob / cdf / icdf / entropy
over hypothesis-drawn parameters, seeded samples (the same random ops in the same
order: the same numbers, and the generator left where PyTorch's is), gradients of
rsample / log_prob / entropy, expand, every KL pair PyTorch registers for them,
validation errors and warnings, reprs."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glasstorch
from .helpers import assert_same
from .test_distributions import CASES as BASE_CASES
from .test_distributions import _Shim, _both, _close, _pos, _real, _t, _unit

torch = pytest.importorskip("torch")


def _int(draw, shape, hi):
    return np.floor(_pos(draw, shape, 0, hi + 0.99))


def _spd(draw, shape, n=3):
    """Symmetric positive definite matrices of ``shape + (n, n)``."""
    a = _real(draw, shape + (n, n))
    return a @ np.swapaxes(a, -1, -2) + 0.5 * np.eye(n)


def _simplex(draw, shape):
    x = _pos(draw, shape)
    return x / x.sum(-1, keepdims=True)


def _corr_cholesky(draw, shape, n=3):
    m = np.tril(_real(draw, shape + (n, n)), -1) + np.eye(n) * _pos(draw, shape + (n, 1))
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def _mvn(kind):
    def build(L, p):
        matrix = {"covariance_matrix": p["m"], "precision_matrix": p["m"],
                  "scale_tril": p["m"]}[kind]
        return L.distributions.MultivariateNormal(_t(L, p["loc"]), **{kind: _t(L, matrix)})

    def params(d, s):
        m = _spd(d, s)
        return {"loc": _real(d, s + (3,)),
                "m": np.linalg.cholesky(m) if kind == "scale_tril" else m}
    return build, params, lambda d, s, p: _real(d, s + (3,))


def _rb(L):
    return L.distributions.relaxed_bernoulli


def _rc(L):
    return L.distributions.relaxed_categorical


CASES = {
    # name: (builder(lib, p), params(draw, batch shape), value(draw, batch shape, p))
    "MultivariateNormal": _mvn("covariance_matrix"),
    "MultivariateNormalPrecision": _mvn("precision_matrix"),
    "MultivariateNormalTril": _mvn("scale_tril"),
    "LowRankMultivariateNormal": (
        lambda L, p: L.distributions.LowRankMultivariateNormal(
            _t(L, p["loc"]), _t(L, p["W"]), _t(L, p["D"])),
        lambda d, s: {"loc": _real(d, s + (3,)), "W": _real(d, s + (3, 2)),
                      "D": _pos(d, s + (3,))},
        lambda d, s, p: _real(d, s + (3,))),
    "Multinomial": (lambda L, p: L.distributions.Multinomial(6, probs=_t(L, p["a"])),
                    lambda d, s: {"a": _simplex(d, s + (3,))},
                    lambda d, s, p: _int(d, s + (3,), 2)),
    "MultinomialLogits": (lambda L, p: L.distributions.Multinomial(4, logits=_t(L, p["a"])),
                          lambda d, s: {"a": _real(d, s + (3,))},
                          lambda d, s, p: _int(d, s + (3,), 1)),
    "NegativeBinomial": (
        lambda L, p: L.distributions.NegativeBinomial(_t(L, p["n"]), probs=_t(L, p["a"])),
        lambda d, s: {"n": _pos(d, s, 0.3, 6), "a": _unit(d, s)},
        lambda d, s, p: _int(d, s, 8)),
    "NegativeBinomialLogits": (
        lambda L, p: L.distributions.NegativeBinomial(_t(L, p["n"]), logits=_t(L, p["a"])),
        lambda d, s: {"n": _pos(d, s, 0.3, 6), "a": _real(d, s)},
        lambda d, s, p: _int(d, s, 8)),
    "StudentT": (lambda L, p: L.distributions.StudentT(_t(L, p["df"]), _t(L, p["a"]),
                                                       _t(L, p["b"])),
                 lambda d, s: {"df": _pos(d, s, 0.5, 6), "a": _real(d, s), "b": _pos(d, s)},
                 lambda d, s, p: _real(d, s)),
    "FisherSnedecor": (lambda L, p: L.distributions.FisherSnedecor(_t(L, p["a"]), _t(L, p["b"])),
                       lambda d, s: {"a": _pos(d, s, 0.5, 8), "b": _pos(d, s, 0.5, 10)},
                       lambda d, s, p: _pos(d, s)),
    "Gumbel": (lambda L, p: L.distributions.Gumbel(_t(L, p["a"]), _t(L, p["b"])),
               lambda d, s: {"a": _real(d, s), "b": _pos(d, s)}, lambda d, s, p: _real(d, s)),
    "Weibull": (lambda L, p: L.distributions.Weibull(_t(L, p["a"]), _t(L, p["b"])),
                lambda d, s: {"a": _pos(d, s), "b": _pos(d, s, 0.4, 4)},
                lambda d, s, p: _pos(d, s)),
    "Pareto": (lambda L, p: L.distributions.Pareto(_t(L, p["a"]), _t(L, p["b"])),
               lambda d, s: {"a": _pos(d, s), "b": _pos(d, s, 0.5, 5)},
               lambda d, s, p: p["a"] + _pos(d, s, 0.0, 3)),
    "Kumaraswamy": (lambda L, p: L.distributions.Kumaraswamy(_t(L, p["a"]), _t(L, p["b"])),
                    lambda d, s: {"a": _pos(d, s, 0.5, 5), "b": _pos(d, s, 0.5, 5)},
                    lambda d, s, p: _unit(d, s)),
    "VonMises": (lambda L, p: L.distributions.VonMises(_t(L, p["a"]), _t(L, p["b"])),
                 lambda d, s: {"a": _real(d, s), "b": _pos(d, s, 0.05, 8)},
                 lambda d, s, p: _real(d, s)),
    "ContinuousBernoulli": (
        lambda L, p: L.distributions.ContinuousBernoulli(probs=_t(L, p["a"])),
        lambda d, s: {"a": _unit(d, s)}, lambda d, s, p: _unit(d, s)),
    "ContinuousBernoulliNearHalf": (      # inside the Taylor-expanded region
        lambda L, p: L.distributions.ContinuousBernoulli(probs=_t(L, p["a"])),
        lambda d, s: {"a": _pos(d, s, 0.4991, 0.5009)}, lambda d, s, p: _unit(d, s)),
    "ContinuousBernoulliLogits": (
        lambda L, p: L.distributions.ContinuousBernoulli(logits=_t(L, p["a"])),
        lambda d, s: {"a": _real(d, s)}, lambda d, s, p: _unit(d, s)),
    "LogisticNormal": (lambda L, p: L.distributions.LogisticNormal(_t(L, p["a"]), _t(L, p["b"])),
                       lambda d, s: {"a": _real(d, s + (2,)), "b": _pos(d, s + (2,), 0.2, 2)},
                       lambda d, s, p: _simplex(d, s + (3,))),
    "LKJCholesky": (lambda L, p: L.distributions.LKJCholesky(3, _t(L, p["a"])),
                    lambda d, s: {"a": _pos(d, s, 0.3, 4)},
                    lambda d, s, p: _corr_cholesky(d, s)),
    "Wishart": (lambda L, p: L.distributions.Wishart(_t(L, p["df"]),
                                                     covariance_matrix=_t(L, p["m"])),
                lambda d, s: {"df": _pos(d, s, 3.0, 8), "m": _spd(d, s)},
                lambda d, s, p: _spd(d, s)),
    "WishartTril": (lambda L, p: L.distributions.Wishart(_t(L, p["df"]),
                                                         scale_tril=_t(L, p["m"])),
                    lambda d, s: {"df": _pos(d, s, 3.0, 8),
                                  "m": np.linalg.cholesky(_spd(d, s))},
                    lambda d, s, p: _spd(d, s)),
    "InverseGamma": (lambda L, p: L.distributions.InverseGamma(_t(L, p["a"]), _t(L, p["b"])),
                     lambda d, s: {"a": _pos(d, s, 0.5, 6), "b": _pos(d, s)},
                     lambda d, s, p: _pos(d, s)),
    "GeneralizedPareto": (      # float32: PyTorch's log_prob needs default-dtype parameters
        lambda L, p: L.distributions.GeneralizedPareto(
            _t(L, p["a"], "float32"), _t(L, p["b"], "float32"), _t(L, p["c"], "float32")),
        lambda d, s: {"a": _real(d, s), "b": _pos(d, s), "c": _pos(d, s, -0.4, 0.4)},
        lambda d, s, p: p["a"] + 2 * p["b"] * _unit(d, s)),
    "RelaxedBernoulli": (
        lambda L, p: L.distributions.RelaxedBernoulli(_t(L, p["t"]), probs=_t(L, p["a"])),
        lambda d, s: {"t": _pos(d, (), 0.2, 2), "a": _unit(d, s)},
        lambda d, s, p: _unit(d, s)),
    "LogitRelaxedBernoulli": (
        lambda L, p: _rb(L).LogitRelaxedBernoulli(_t(L, p["t"]), logits=_t(L, p["a"])),
        lambda d, s: {"t": _pos(d, (), 0.2, 2), "a": _real(d, s)},
        lambda d, s, p: _real(d, s)),
    "RelaxedOneHotCategorical": (
        lambda L, p: L.distributions.RelaxedOneHotCategorical(_t(L, p["t"]),
                                                              probs=_t(L, p["a"])),
        lambda d, s: {"t": _pos(d, (), 0.2, 2), "a": _simplex(d, s + (3,))},
        lambda d, s, p: _simplex(d, s + (3,))),
    "ExpRelaxedCategorical": (
        lambda L, p: _rc(L).ExpRelaxedCategorical(_t(L, p["t"]), logits=_t(L, p["a"])),
        lambda d, s: {"t": _pos(d, (), 0.2, 2), "a": _real(d, s + (3,))},
        lambda d, s, p: np.log(_simplex(d, s + (3,)))),
    "MixtureSameFamily": (
        lambda L, p: L.distributions.MixtureSameFamily(
            L.distributions.Categorical(probs=_t(L, p["w"])),
            L.distributions.Normal(_t(L, p["a"]), _t(L, p["b"]))),
        lambda d, s: {"w": _simplex(d, s + (3,)), "a": _real(d, s + (3,)),
                      "b": _pos(d, s + (3,))},
        lambda d, s, p: _real(d, s)),
    "MixtureOfMultivariateNormals": (
        lambda L, p: L.distributions.MixtureSameFamily(
            L.distributions.Categorical(logits=_t(L, p["w"])),
            L.distributions.MultivariateNormal(_t(L, p["a"]), scale_tril=_t(L, p["m"]))),
        lambda d, s: {"w": _real(d, s + (2,)), "a": _real(d, s + (2, 3)),
                      "m": np.linalg.cholesky(_spd(d, s + (2,)))},
        lambda d, s, p: _real(d, s + (3,))),
}

SHAPES = [(), (2,)]


def _draw(name, shape):
    builder, params, value = CASES[name]

    @st.composite
    def draw(d):
        p = params(d, shape)
        return p, np.asarray(value(d, shape, p), dtype=np.float64)
    return draw()


def _fixed(name, shape, seed=0):
    rng = np.random.default_rng(seed)
    p = CASES[name][1](rng, shape)
    return p, np.asarray(CASES[name][2](rng, shape, p), dtype=np.float64)


def _same_outcome(theirs_fn, ours_fn, rtol=1e-6, atol=1e-8):
    """Both succeed with close values, or both raise the same exception type."""
    try:
        theirs = theirs_fn()
    except Exception as e:           # noqa: BLE001 -- the type is what is compared
        with pytest.raises(type(e)):
            ours_fn()
        return
    _close(ours_fn(), theirs, rtol=rtol, atol=atol)


def _value(L, dist, value):
    """``value`` as a tensor in the distribution's dtype."""
    dtype = "float32" if type(dist).__name__ == "GeneralizedPareto" else "float64"
    return _t(L, value, dtype)


def _check_methods(name, data):
    p, value = data
    t_d, g_d = _both(lambda L: CASES[name][0](L, p))
    assert (g_d.batch_shape, g_d.event_shape) == (t_d.batch_shape, t_d.event_shape)
    assert repr(g_d) == repr(t_d)
    assert repr(g_d.support) == repr(t_d.support)
    assert (g_d.has_rsample, g_d.has_enumerate_support) == (t_d.has_rsample,
                                                            t_d.has_enumerate_support)
    assert {k: repr(c) for k, c in g_d.arg_constraints.items()} == \
        {k: repr(c) for k, c in t_d.arg_constraints.items()}
    rtol = 1e-4 if name == "GeneralizedPareto" else 1e-6
    for attr in ("mean", "mode", "variance", "stddev"):
        _same_outcome(lambda: getattr(t_d, attr), lambda: getattr(g_d, attr), rtol)
    _same_outcome(lambda: t_d.log_prob(_value(torch, t_d, value)),
                  lambda: g_d.log_prob(_value(glasstorch, g_d, value)), rtol)
    _same_outcome(t_d.entropy, g_d.entropy, rtol)
    _same_outcome(lambda: t_d.cdf(_value(torch, t_d, value)),
                  lambda: g_d.cdf(_value(glasstorch, g_d, value)), rtol)
    q = np.linspace(0.1, 0.9, int(np.prod(t_d.batch_shape))).reshape(t_d.batch_shape)
    _same_outcome(lambda: t_d.icdf(_value(torch, t_d, q)),
                  lambda: g_d.icdf(_value(glasstorch, g_d, q)), rtol)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_methods_match_torch(name, shape, data):
    _check_methods(name, data.draw(_draw(name, shape)))


def _sample_rtol(name):
    """Samples agree to rounding: float32 transcendentals (log1p, expm1) differ from
    ATen's vectorized ones by an ulp or two."""
    return 1e-5 if name == "GeneralizedPareto" else 1e-11


def _check_samples(name, p, shapes=((4,), (2,))):
    t_d, g_d = _both(lambda L: CASES[name][0](L, p))
    rtol = _sample_rtol(name)
    for seed in (0, 7):
        torch.manual_seed(seed)
        glasstorch.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # Wishart's "Singular sample detected."
            assert_same(g_d.sample(shapes[0]), t_d.sample(shapes[0]), rtol=rtol, atol=0)
            if t_d.has_rsample:
                assert_same(g_d.rsample(shapes[1]), t_d.rsample(shapes[1]), rtol=rtol, atol=0)
        # the generator ends where PyTorch's does
        assert_same(glasstorch.rand(3, dtype=glasstorch.float64),
                    torch.rand(3, dtype=torch.float64), rtol=0, atol=0)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=2, deadline=None)
@given(data=st.data())
def test_seeded_samples_equal_torch(name, shape, data):
    _check_samples(name, data.draw(_draw(name, shape))[0])


@pytest.mark.parametrize("name", ["VonMises", "GeneralizedPareto", "LKJCholesky"])
def test_float32_samples_equal_torch(name):
    """VonMises samples in float64 and casts; the others draw in the parameters' dtype."""
    p = _fixed(name, (3,))[0]

    def build(L):
        if name == "GeneralizedPareto":
            return CASES[name][0](L, p)
        shim = _Shim(L, {k: _t(L, v, "float32") for k, v in p.items()}, p)
        return CASES[name][0](shim, p)
    t_d, g_d = _both(build)
    torch.manual_seed(1)
    glasstorch.manual_seed(1)
    assert_same(g_d.sample((6,)), t_d.sample((6,)), rtol=1e-5, atol=0)


# -- gradients -------------------------------------------------------------------------

_GRAD_CASES = [n for n in CASES if n != "GeneralizedPareto"]


def _grad_loss(L, dist, value):
    """rsample (seeded), log_prob and entropy, weighted and summed.  (Wishart's
    rsample has no usable gradient in PyTorch: test_wishart_rsample_backward.)"""
    total = (dist.log_prob(_t(L, value)) * 0.7).sum()
    if dist.has_rsample and not isinstance(dist, L.distributions.Wishart):
        L.manual_seed(5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sample = dist.rsample((3,))
        weights = L.linspace(-1, 1, sample.numel(), dtype=sample.dtype).reshape(sample.shape)
        total = total + (sample * weights).sum()
    try:
        total = total + dist.entropy().sum()
    except NotImplementedError:
        pass
    return total


@pytest.mark.parametrize("name", _GRAD_CASES)
def test_gradients_match_torch(name):
    """d(rsample, log_prob, entropy) / d(parameters) equal torch's in float64."""
    p, value = _fixed(name, (2,))
    grads = []
    for L in (torch, glasstorch):
        leaves = {k: _t(L, v).requires_grad_() for k, v in p.items()}
        dist = CASES[name][0](_Shim(L, leaves, p), p)
        _grad_loss(L, dist, value).backward()
        grads.append([leaves[k].grad for k in sorted(leaves)])
    for t, g in zip(*grads):
        if t is None:
            assert g is None
        else:
            _close(g, t, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["MultivariateNormalTril", "LowRankMultivariateNormal",
                                  "WishartTril", "LKJCholesky", "StudentT", "ContinuousBernoulli"])
def test_log_prob_gradcheck(name):
    """float64 gradcheck of log_prob in the parameters and the value.  Scale
    factors enter through ``tril`` (cholesky_solve's gradient, like PyTorch's, is
    not confined to the triangle it reads), not as full covariances (cholesky reads
    one triangle, its gradient is symmetric)."""
    p, value = _fixed(name, ())
    keys = sorted(p)

    def fn(*args):
        params = {k: a.tril() if k == "m" else a for k, a in zip(keys, args[:-1])}
        return CASES[name][0](_Shim(glasstorch, params, p), p).log_prob(args[-1])
    args = [_t(glasstorch, p[k]).requires_grad_() for k in keys]
    args.append(_t(glasstorch, value).requires_grad_(name not in ("LKJCholesky", "WishartTril")))
    # finite differences step off the support (the upper triangles), so no validation
    glasstorch.distributions.Distribution.set_default_validate_args(False)
    try:
        assert glasstorch.autograd.gradcheck(fn, args)
    finally:
        glasstorch.distributions.Distribution.set_default_validate_args(True)


def test_wishart_rsample_backward_fails_as_in_torch():
    """PyTorch's redraw overwrites the mask its index_put saved for backward, so a
    backward through Wishart.rsample raises; here too."""
    for L in (torch, glasstorch):
        df = L.tensor(4.0, dtype=L.float64, requires_grad=True)
        L.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sample = L.distributions.Wishart(df, L.eye(3, dtype=L.float64)).rsample((2,))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            sample.sum().backward()


def test_generalized_pareto_gradients_match_torch():
    p, value = _fixed("GeneralizedPareto", (3,))
    grads = []
    for L in (torch, glasstorch):
        leaves = [_t(L, p[k], "float32").requires_grad_() for k in "abc"]
        dist = L.distributions.GeneralizedPareto(*leaves)
        L.manual_seed(2)
        (dist.rsample((2,)).sum() + dist.log_prob(_t(L, value, "float32")).sum()
         + dist.cdf(_t(L, value, "float32")).sum()).backward()
        grads.append([x.grad for x in leaves])
    for g, t in zip(grads[1], grads[0]):
        _close(g, t, rtol=1e-4, atol=1e-6)


# -- expand ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_expand_matches_torch(name):
    p, value = _fixed(name, (3,))
    t_d, g_d = _both(lambda L: CASES[name][0](L, p).expand((2, 3)))
    assert (g_d.batch_shape, g_d.event_shape) == (t_d.batch_shape, t_d.event_shape)
    assert type(g_d).__name__ == type(t_d).__name__
    assert g_d._validate_args == t_d._validate_args
    _same_outcome(lambda: t_d.mean, lambda: g_d.mean)
    _same_outcome(lambda: t_d.log_prob(_value(torch, t_d, value)),
                  lambda: g_d.log_prob(_value(glasstorch, g_d, value)), rtol=1e-5)
    torch.manual_seed(3)
    glasstorch.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(g_d.sample(), t_d.sample(), rtol=_sample_rtol(name), atol=0)


# -- KL --------------------------------------------------------------------------------

KL_CASES = dict(BASE_CASES)
KL_CASES.update({n: c + (None,) for n, c in CASES.items()})
KL_CASES.update({
    "UnitUniform": (lambda L, p: L.distributions.Uniform(_t(L, p["a"]), _t(L, p["a"] + p["b"])),
                    lambda d, s: {"a": _pos(d, s, 0.05, 0.45), "b": _pos(d, s, 0.05, 0.5)},
                    None, None),
    "WideUniform": (lambda L, p: L.distributions.Uniform(_t(L, -p["a"]), _t(L, 1 + p["b"])),
                    lambda d, s: {"a": _pos(d, s, 0.1, 2), "b": _pos(d, s, 0.1, 2)}, None, None),
    "FarUniform": (lambda L, p: L.distributions.Uniform(_t(L, p["a"]), _t(L, p["a"] + p["b"])),
                   lambda d, s: {"a": _pos(d, s, 5, 6), "b": _pos(d, s)}, None, None),
    "HeavyPareto": (lambda L, p: L.distributions.Pareto(_t(L, p["a"]), _t(L, p["b"])),
                    lambda d, s: {"a": _pos(d, s, 0.2, 2), "b": _pos(d, s, 2.2, 6)}, None, None),
})

KL_PAIRS = [
    ("MultivariateNormal", "MultivariateNormal"), ("MultivariateNormalTril", "MultivariateNormal"),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
    ("MultivariateNormal", "LowRankMultivariateNormal"),
    ("LowRankMultivariateNormal", "MultivariateNormalPrecision"),
    ("ContinuousBernoulli", "ContinuousBernoulli"),
    ("ContinuousBernoulliNearHalf", "ContinuousBernoulli"), ("Gumbel", "Gumbel"),
    ("Pareto", "Pareto"), ("HeavyPareto", "Pareto"), ("Beta", "ContinuousBernoulli"),
    ("Beta", "Gamma"), ("Beta", "Pareto"), ("ContinuousBernoulli", "Exponential"),
    ("ContinuousBernoulli", "Normal"), ("ContinuousBernoulli", "Pareto"),
    ("ContinuousBernoulli", "Uniform"), ("ContinuousBernoulli", "WideUniform"),
    ("Exponential", "Beta"), ("Exponential", "ContinuousBernoulli"), ("Exponential", "Gumbel"),
    ("Exponential", "Pareto"), ("Exponential", "Uniform"), ("Gamma", "Beta"),
    ("Gamma", "ContinuousBernoulli"), ("Gamma", "Gumbel"), ("Gamma", "Pareto"),
    ("Gamma", "Uniform"), ("Gumbel", "Beta"), ("Gumbel", "ContinuousBernoulli"),
    ("Gumbel", "Exponential"), ("Gumbel", "Gamma"), ("Gumbel", "Normal"), ("Gumbel", "Pareto"),
    ("Gumbel", "Uniform"), ("Laplace", "ContinuousBernoulli"), ("Laplace", "Pareto"),
    ("Normal", "ContinuousBernoulli"), ("Normal", "Gumbel"), ("Normal", "Pareto"),
    ("Pareto", "Beta"), ("Pareto", "ContinuousBernoulli"), ("Pareto", "Exponential"),
    ("HeavyPareto", "Exponential"), ("Pareto", "Gamma"), ("HeavyPareto", "Gamma"),
    ("Pareto", "Normal"), ("HeavyPareto", "Normal"), ("Pareto", "Uniform"),
    ("Poisson", "Bernoulli"), ("Poisson", "Binomial"), ("Uniform", "Beta"),
    ("UnitUniform", "Beta"), ("Uniform", "ContinuousBernoulli"),
    ("WideUniform", "ContinuousBernoulli"), ("UnitUniform", "ContinuousBernoulli"),
    ("Uniform", "Gamma"), ("UnitUniform", "Gamma"), ("Uniform", "Gumbel"), ("Uniform", "Pareto"),
    ("WideUniform", "Pareto"), ("FarUniform", "Pareto"), ("Chi2", "Gumbel"), ("Weibull", "Weibull"),
    ("InverseGamma", "InverseGamma"), ("Kumaraswamy", "Kumaraswamy"),
    ("LogisticNormal", "LogisticNormal"), ("StudentT", "StudentT"), ("Wishart", "Wishart"),
    ("WishartTril", "Wishart"), ("RelaxedBernoulli", "RelaxedBernoulli"),
]


def _kl_params(name, seed):
    rng = np.random.default_rng(seed)
    return KL_CASES[name][1](rng, (3,))


@pytest.mark.parametrize("pair", KL_PAIRS, ids="-".join)
def test_kl_divergence_matches_torch(pair):
    params = [_kl_params(name, seed) for name, seed in zip(pair, (0, 1))]

    def kl(L):
        p, q = (KL_CASES[n][0](L, ps) for n, ps in zip(pair, params))
        return L.distributions.kl_divergence(p, q)
    _same_outcome(lambda: kl(torch), lambda: kl(glasstorch), rtol=1e-6, atol=1e-9)


def test_every_torch_kl_pair_is_registered():
    names = {(p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY}
    ours = {(p.__name__, q.__name__) for p, q in glasstorch.distributions.kl._KL_REGISTRY}
    assert ours == names


def test_kl_gradients_match_torch():
    params = [_kl_params(n, s) for n, s in (("LowRankMultivariateNormal", 0),
                                            ("MultivariateNormal", 1))]
    grads = []
    for L in (torch, glasstorch):
        leaves = [{k: _t(L, v).requires_grad_() for k, v in ps.items()} for ps in params]
        p = CASES["LowRankMultivariateNormal"][0](_Shim(L, leaves[0], params[0]), params[0])
        q = CASES["MultivariateNormal"][0](_Shim(L, leaves[1], params[1]), params[1])
        L.distributions.kl_divergence(p, q).sum().backward()
        grads.append([lv[k].grad for lv in leaves for k in sorted(lv)])
    for g, t in zip(grads[1], grads[0]):
        _close(g, t, rtol=1e-6, atol=1e-9)


# -- errors, warnings, reprs -----------------------------------------------------------

def _mvn_lib(L):
    return L.distributions.MultivariateNormal


ERRORS = {
    "mvn_loc_dim": lambda L: _mvn_lib(L)(L.tensor(0.0), L.eye(2)),
    "mvn_two": lambda L: _mvn_lib(L)(L.zeros(2), L.eye(2), scale_tril=L.eye(2)),
    "mvn_none": lambda L: _mvn_lib(L)(L.zeros(2)),
    "mvn_cov_dim": lambda L: _mvn_lib(L)(L.zeros(2), L.ones(2)),
    "mvn_prec_dim": lambda L: _mvn_lib(L)(L.zeros(2), precision_matrix=L.ones(2)),
    "mvn_tril_dim": lambda L: _mvn_lib(L)(L.zeros(2), scale_tril=L.ones(2)),
    "mvn_not_pd": lambda L: _mvn_lib(L)(L.zeros(2), L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "mvn_bad_tril": lambda L: _mvn_lib(L)(L.zeros(2), scale_tril=L.tensor([[1.0, 1.0],
                                                                           [0.0, 1.0]])),
    "mvn_value": lambda L: _mvn_lib(L)(L.zeros(2), L.eye(2)).log_prob(L.zeros(3)),
    "mvn_kl_event": lambda L: L.distributions.kl_divergence(_mvn_lib(L)(L.zeros(2), L.eye(2)),
                                                            _mvn_lib(L)(L.zeros(3), L.eye(3))),
    "lowrank_loc_dim": lambda L: L.distributions.LowRankMultivariateNormal(
        L.tensor(0.0), L.ones(1, 1), L.ones(1)),
    "lowrank_factor_dim": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(2), L.ones(2), L.ones(2)),
    "lowrank_factor_shape": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(2), L.ones(3, 1), L.ones(2)),
    "lowrank_diag_shape": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(2), L.ones(2, 1), L.ones(3)),
    "lowrank_batch": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(3, 2), L.ones(4, 2, 1), L.ones(2)),
    "lowrank_kl_event": lambda L: L.distributions.kl_divergence(
        L.distributions.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(2)),
        _mvn_lib(L)(L.zeros(3), L.eye(3))),
    "multinomial_count": lambda L: L.distributions.Multinomial(L.tensor(3), L.ones(2) / 2),
    "multinomial_support": lambda L: L.distributions.Multinomial(
        2, L.ones(2) / 2).log_prob(L.tensor([2.0, 1.0])),
    "negbin_both": lambda L: L.distributions.NegativeBinomial(3.0, probs=L.tensor(0.5),
                                                              logits=L.tensor(0.0)),
    "negbin_probs": lambda L: L.distributions.NegativeBinomial(3.0, probs=L.tensor([1.0])),
    "studentt_df": lambda L: L.distributions.StudentT(L.tensor([-1.0])),
    "pareto_support": lambda L: L.distributions.Pareto(L.tensor([2.0]), L.tensor([1.0]))
    .log_prob(L.tensor([1.0])),
    "vonmises_value": lambda L: L.distributions.VonMises(L.zeros(1), L.ones(1)).log_prob(0.5),
    "cb_probs": lambda L: L.distributions.ContinuousBernoulli(L.tensor([1.5]),
                                                              validate_args=True),
    "cb_none": lambda L: L.distributions.ContinuousBernoulli(),
    "lkj_dim": lambda L: L.distributions.LKJCholesky(1),
    "lkj_conc": lambda L: L.distributions.LKJCholesky(3, L.tensor([-1.0])),
    "lkj_support": lambda L: L.distributions.LKJCholesky(2).log_prob(L.eye(2) * 2),
    "wishart_df": lambda L: L.distributions.Wishart(L.tensor(1.0), L.eye(3)),
    "wishart_two": lambda L: L.distributions.Wishart(4.0, L.eye(2), scale_tril=L.eye(2)),
    "wishart_dim": lambda L: L.distributions.Wishart(4.0, precision_matrix=L.ones(2)),
    "gpd_double": lambda L: L.distributions.GeneralizedPareto(
        L.zeros(1, dtype=L.float64), L.ones(1, dtype=L.float64),
        L.zeros(1, dtype=L.float64)).log_prob(L.ones(1, dtype=L.float64)),
    "gpd_support": lambda L: L.distributions.GeneralizedPareto(
        L.zeros(1), L.ones(1), L.tensor([-0.5])).log_prob(L.tensor([3.0])),
    "relaxed_both": lambda L: L.distributions.RelaxedBernoulli(L.tensor(1.0)),
    "msf_mixture": lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Normal(0.0, 1.0), L.distributions.Normal(L.zeros(2), 1.0)),
    "msf_component": lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(L.ones(2)), 3),
    "msf_batch": lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(L.ones(3, 2)), L.distributions.Normal(L.zeros(4, 2), 1.0)),
    "msf_count": lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(L.ones(3)), L.distributions.Normal(L.zeros(2), 1.0)),
    "expfamily_cross": lambda L: L.distributions.kl_divergence(
        L.distributions.ContinuousBernoulli(L.tensor([0.3])),
        L.distributions.Bernoulli(L.tensor([0.3]))),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as t_err:
        ERRORS[name](torch)
    with pytest.raises(type(t_err.value)) as g_err:
        ERRORS[name](glasstorch)
    assert str(g_err.value) == str(t_err.value)


def _warning_messages(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("fn", [
    lambda L: L.distributions.Wishart(L.tensor(2.5), L.eye(3)),
    lambda L: (L.manual_seed(0), L.distributions.Wishart(L.tensor([4.0, 5.0]),
                                                         L.eye(3)).rsample((2,))),
    lambda L: (L.manual_seed(0), L.distributions.Wishart(
        L.tensor(2.0001), L.eye(3)).rsample((5,), max_try_correction=2)),
], ids=["low_df", "redraw", "max_try"])
def test_wishart_warnings_match_torch(fn):
    assert _warning_messages(lambda: fn(glasstorch)) == _warning_messages(lambda: fn(torch))


def test_mixture_of_independent_components_matches_torch():
    """Event dims from Independent components, and a mixture without batch dims
    broadcast against the components' batch (sampling then fails in PyTorch's
    gather, and here alike); with the mixture's batch given, samples equal torch's."""
    rng = np.random.default_rng(3)
    loc, scale = rng.normal(size=(2, 3, 4)), rng.uniform(0.5, 2, (2, 3, 4))

    def build(L, w):
        comp = L.distributions.Independent(L.distributions.Normal(_t(L, loc), _t(L, scale)), 1)
        return L.distributions.MixtureSameFamily(L.distributions.Categorical(_t(L, w)), comp)
    w_flat, w_batched = rng.uniform(0.1, 1, (3,)), rng.uniform(0.1, 1, (2, 3))
    t_d, g_d = _both(lambda L: build(L, w_flat))
    assert repr(g_d) == repr(t_d) and repr(g_d.support) == repr(t_d.support)
    assert (g_d.batch_shape, g_d.event_shape) == (t_d.batch_shape, t_d.event_shape)
    v = rng.normal(size=(5, 2, 4))
    _close(g_d.log_prob(_t(glasstorch, v)), t_d.log_prob(_t(torch, v)))
    _close(g_d.mean, t_d.mean)
    _close(g_d.variance, t_d.variance)
    with pytest.raises(RuntimeError) as t_err:
        t_d.sample((3,))
    with pytest.raises(RuntimeError, match=str(t_err.value)):
        g_d.sample((3,))
    t_d, g_d = _both(lambda L: build(L, w_batched))
    torch.manual_seed(4)
    glasstorch.manual_seed(4)
    assert_same(g_d.sample((3,)), t_d.sample((3,)), rtol=1e-12, atol=0)
    _close(g_d.variance, t_d.variance)


def test_lowrank_and_mvn_matrices_match_torch():
    """The lazily derived matrices of each parameterization."""
    for name in ("MultivariateNormal", "MultivariateNormalPrecision", "MultivariateNormalTril",
                 "LowRankMultivariateNormal", "Wishart", "WishartTril"):
        p = _fixed(name, (2,))[0]
        t_d, g_d = _both(lambda L: CASES[name][0](L, p))
        for attr in ("covariance_matrix", "precision_matrix", "scale_tril"):
            _close(getattr(g_d, attr), getattr(t_d, attr), rtol=1e-8, atol=1e-10)


def test_vonmises_small_concentration_and_expand():
    """The Taylor branch of the proposal (kappa < 1e-5) and expand's rebuild."""
    def build(L):
        return L.distributions.VonMises(_t(L, [0.5, -2.0]), _t(L, [1e-6, 20.0])).expand((3, 2))
    t_d, g_d = _both(build)
    torch.manual_seed(9)
    glasstorch.manual_seed(9)
    assert_same(g_d.sample((4,)), t_d.sample((4,)), rtol=1e-12, atol=0)
    _close(g_d.variance, t_d.variance)
    assert_same(glasstorch.rand(2, dtype=glasstorch.float64),
                torch.rand(2, dtype=torch.float64), rtol=0, atol=0)


def test_multinomial_counts_sum_to_total():
    d = glasstorch.distributions.Multinomial(9, logits=glasstorch.tensor([[0.0, 1.0, -1.0]] * 2))
    counts = d.sample((4,))
    assert counts.shape == (4, 2, 3) and bool((counts.sum(-1) == 9).all())
    assert d.support.check(counts).all()


NUMBER_CASES = {
    "Gumbel": lambda D: D.Gumbel(0.5, 2.0),
    "FisherSnedecor": lambda D: D.FisherSnedecor(3.0, 7.0),
    "StudentT": lambda D: D.StudentT(3.0),
    "Weibull": lambda D: D.Weibull(1.5, 2.0),
    "Pareto": lambda D: D.Pareto(1.0, 3.0),
    "Kumaraswamy": lambda D: D.Kumaraswamy(2.0, 3.0),
    "InverseGamma": lambda D: D.InverseGamma(3.0, 2.0),
    "ContinuousBernoulli": lambda D: D.ContinuousBernoulli(0.3),
    "ContinuousBernoulliLogits": lambda D: D.ContinuousBernoulli(logits=-0.7),
    "GeneralizedPareto": lambda D: D.GeneralizedPareto(0.0, 1.0, 0.2),
    "LogisticNormal": lambda D: D.LogisticNormal(0.3, 1.2),
    "NegativeBinomial": lambda D: D.NegativeBinomial(3.0, logits=0.4),
    "RelaxedBernoulli": lambda D: D.RelaxedBernoulli(D.Normal(0.0, 1.0).scale * 0.5, 0.3),
    "LKJCholesky": lambda D: D.LKJCholesky(4, 2.0),
    "Wishart": lambda D: D.Wishart(5, precision_matrix=D.Normal(0.0, 1.0).scale.new_tensor(
        [[2.0, 0.5], [0.5, 1.0]])),
}


@pytest.mark.parametrize("name", list(NUMBER_CASES))
def test_number_parameters_match_torch(name):
    """Python numbers as parameters: the default dtype, an empty batch where PyTorch
    gives one, the same samples and densities."""
    t_d, g_d = _both(lambda L: NUMBER_CASES[name](L.distributions))
    assert (g_d.batch_shape, g_d.event_shape) == (t_d.batch_shape, t_d.event_shape)
    assert repr(g_d) == repr(t_d)
    torch.manual_seed(6)
    glasstorch.manual_seed(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_s = t_d.sample((3,))
        g_s = g_d.sample((3,))
    assert_same(g_s, t_s, rtol=1e-5, atol=1e-7)
    # float32: log densities near 0 cancel to a few ulps
    _same_outcome(lambda: t_d.log_prob(t_s), lambda: g_d.log_prob(g_s), rtol=1e-5, atol=1e-6)
    _same_outcome(t_d.entropy, g_d.entropy, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["HalfNormal", "HalfCauchy"])
def test_folded_log_prob_value_dtype(name):
    """HalfCauchy reads the value in the scale's dtype; HalfNormal promotes."""
    results = []
    for lib in (glasstorch, torch):
        d = getattr(lib.distributions, name)(lib.tensor([1.0, 2.0]), validate_args=False)
        out = d.log_prob(lib.tensor([0.5, -1.0], dtype=lib.float64))
        results.append((str(out.dtype), out.tolist()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
