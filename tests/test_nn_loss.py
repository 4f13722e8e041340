"""Loss and distance layers, kl_div, one_hot, cosine_similarity and pairwise_distance
against real PyTorch: every reduction, class weights, ignore_index, label smoothing,
probability targets, legacy size_average/reduce, warnings and errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch

from .differential import differential, raised
from .helpers import assert_same
from .nn_differential import check_module, same_inputs

seeds = st.integers(0, 2**31 - 1)
REDUCTIONS = ["none", "mean", "sum"]


def _targets(lib, shape, classes, seed=1, ignore=None):
    values = np.random.default_rng(seed).integers(0, classes, size=shape)
    if ignore is not None:
        values[..., 0] = ignore
    return lib.from_numpy(values.astype(np.int64))


def _inputs(*specs, seed=0):
    """(float shape | ("classes", shape, C[, ignore]) | ("prob", shape) | ("unit", shape))."""
    def make(lib):
        rng = np.random.default_rng(seed)
        out = []
        for spec in specs:
            if spec[0] == "classes":
                out.append(_targets(lib, spec[1], spec[2], seed + 1, *spec[3:]))
            elif spec[0] == "prob":
                p = rng.uniform(0.05, 1, size=spec[1]).astype(np.float32)
                out.append(lib.from_numpy(p / p.sum(axis=1, keepdims=True)))
            elif spec[0] == "unit":
                out.append(lib.from_numpy(rng.uniform(0.02, 0.98, size=spec[1])
                                          .astype(np.float32)))
            else:
                out.append(lib.from_numpy(rng.standard_normal(spec).astype(np.float32)))
        return tuple(out)
    return make


# -- modules, every reduction ----------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs,inputs", [
    ("MSELoss", {}, _inputs((3, 4), (3, 4))),
    ("L1Loss", {}, _inputs((3, 4), (3, 4))),
    ("SmoothL1Loss", {"beta": 0.5}, _inputs((3, 4), (3, 4))),
    ("SmoothL1Loss", {"beta": 0.0}, _inputs((3, 4), (3, 4))),
    ("HuberLoss", {"delta": 0.7}, _inputs((3, 4), (3, 4))),
    ("BCELoss", {}, _inputs(("unit", (3, 4)), ("unit", (3, 4)))),
    ("BCEWithLogitsLoss", {}, _inputs((3, 4), ("unit", (3, 4)))),
    ("NLLLoss", {}, _inputs((5, 4), ("classes", (5,), 4))),
    ("NLLLoss", {"ignore_index": 2}, _inputs((5, 4, 3), ("classes", (5, 3), 4))),
    ("NLLLoss", {}, _inputs((2, 3, 4, 2), ("classes", (2, 4, 2), 3))),
    ("CrossEntropyLoss", {}, _inputs((5, 4), ("classes", (5,), 4))),
    ("CrossEntropyLoss", {}, _inputs((4,), ("classes", (), 4))),
    ("CrossEntropyLoss", {"ignore_index": 1}, _inputs((5, 3, 2), ("classes", (5, 2), 3, 1))),
    ("CrossEntropyLoss", {"label_smoothing": 0.2}, _inputs((5, 4), ("classes", (5,), 4))),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "ignore_index": 0},
     _inputs((6, 3, 2), ("classes", (6, 2), 3, 0))),
    ("CrossEntropyLoss", {}, _inputs((5, 4), ("prob", (5, 4)))),
    ("CrossEntropyLoss", {"label_smoothing": 0.3}, _inputs((5, 4, 2), ("prob", (5, 4, 2)))),
    ("KLDivLoss", {}, _inputs((3, 4), ("unit", (3, 4)))),
    ("KLDivLoss", {"log_target": True}, _inputs((3, 4), (3, 4))),
])
def test_loss_module(name, kwargs, inputs, reduction):
    check_module(lambda lib: getattr(lib.nn, name)(reduction=reduction, **kwargs), inputs)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs", [
    ("CrossEntropyLoss", {}), ("CrossEntropyLoss", {"label_smoothing": 0.25}),
    ("CrossEntropyLoss", {"ignore_index": 3}), ("NLLLoss", {}), ("NLLLoss", {"ignore_index": 0}),
])
def test_class_weighted_losses(name, kwargs, reduction):
    """``weight`` is a buffer: in the state_dict, and applied per class."""
    weight = np.array([0.5, 2.0, 1.0, 0.25], dtype=np.float32)
    inputs = _inputs((6, 4), ("classes", (6,), 4))
    check_module(lambda lib: getattr(lib.nn, name)(weight=lib.from_numpy(weight.copy()),
                                                   reduction=reduction, **kwargs), inputs)


def test_cross_entropy_weighted_probability_targets():
    weight = np.array([0.5, 2.0, 1.0], dtype=np.float32)
    for reduction in REDUCTIONS:
        check_module(lambda lib: lib.nn.CrossEntropyLoss(lib.from_numpy(weight.copy()),
                                                         reduction=reduction,
                                                         label_smoothing=0.1),
                     _inputs((4, 3), ("prob", (4, 3))))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_weights(reduction):
    check_module(lambda lib: lib.nn.BCELoss(weight=lib.from_numpy(np.array([1.0, 0.5, 2.0, 0.1],
                                                                           np.float32)),
                                            reduction=reduction),
                 _inputs(("unit", (3, 4)), ("unit", (3, 4))))
    check_module(lambda lib: lib.nn.BCEWithLogitsLoss(
        weight=lib.from_numpy(np.array([[1.0], [0.5], [2.0]], np.float32)),
        pos_weight=lib.from_numpy(np.array([3.0, 0.5, 1.0, 2.0], np.float32)),
        reduction=reduction), _inputs((3, 4), ("unit", (3, 4))))


def test_kl_div_batchmean_and_mean_warning():
    def scenario(lib):
        x = lib.log_softmax(lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 5), 1)
        t = lib.softmax(lib.tensor(np.arange(12, 0, -1, dtype=np.float32).reshape(3, 4) / 7), 1)
        return [lib.nn.KLDivLoss(reduction=r)(x, t) for r in ("batchmean", "mean", "sum")] + \
            [lib.nn.functional.kl_div(x[0, 0], t[0, 0], reduction="batchmean")]
    differential(scenario)


@pytest.mark.parametrize("legacy", [(True, None), (False, None), (None, False), (False, True),
                                    (True, False)])
def test_legacy_size_average_and_reduce(legacy):
    size_average, reduce = legacy

    def scenario(lib):
        x = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        y = lib.tensor(np.linspace(1, -1, 12, dtype=np.float32).reshape(3, 4))
        t = lib.tensor([0, 3, 1])
        losses = [lib.nn.MSELoss(size_average, reduce), lib.nn.L1Loss(size_average, reduce),
                  lib.nn.KLDivLoss(size_average, reduce)]
        ce = lib.nn.CrossEntropyLoss(size_average=size_average, reduce=reduce)
        return [m.reduction for m in losses + [ce]] + [m(x, y) for m in losses] + [ce(x, t)]
    differential(scenario)


def test_loss_reprs_and_state_dicts():
    def scenario(lib):
        w = lib.ones(3)
        modules = [lib.nn.CrossEntropyLoss(w), lib.nn.NLLLoss(), lib.nn.BCEWithLogitsLoss(
            pos_weight=w), lib.nn.HuberLoss(delta=2), lib.nn.KLDivLoss(log_target=True),
            lib.nn.PairwiseDistance(p=1.5), lib.nn.CosineSimilarity(dim=0)]
        return [(repr(m), list(m.state_dict()), m.reduction if hasattr(m, "reduction") else None)
                for m in modules]
    differential(scenario)


def test_nllloss2d_is_deprecated():
    differential(lambda lib: repr(lib.nn.NLLLoss2d()), warning_types=(FutureWarning,))


LOSS_ERRORS = [
    lambda lib: lib.nn.HuberLoss(delta="1"),
    lambda lib: lib.nn.MSELoss(reduction="bogus")(lib.zeros(2), lib.zeros(2)),
    lambda lib: lib.nn.KLDivLoss(reduction="bogus")(lib.zeros(2), lib.zeros(2)),
    lambda lib: lib.nn.CrossEntropyLoss(label_smoothing=1.5)(lib.zeros(2, 3),
                                                             lib.tensor([0, 1])),
    lambda lib: lib.nn.CrossEntropyLoss()(lib.zeros(2, 3), lib.tensor([0, 3])),
    lambda lib: lib.nn.CrossEntropyLoss(ignore_index=1)(lib.zeros(2, 3), lib.zeros(2, 3)),
    lambda lib: lib.nn.NLLLoss(lib.ones(2))(lib.zeros(2, 3), lib.tensor([0, 1])),
    lambda lib: lib.nn.BCELoss()(lib.zeros(2, 3), lib.zeros(3, 2)),
    lambda lib: lib.nn.BCEWithLogitsLoss()(lib.zeros(2, 3), lib.zeros(3)),
    lambda lib: lib.kl_div(lib.zeros(2, dtype=lib.int64), lib.zeros(2)),
    lambda lib: lib.kl_div(lib.zeros(2), lib.zeros(2, dtype=lib.complex64)),
    lambda lib: lib.nn.SmoothL1Loss(beta=-1.0)(lib.zeros(2), lib.zeros(2)),
]


@pytest.mark.parametrize("case", range(len(LOSS_ERRORS)))
def test_loss_errors(case):
    raised(differential(LOSS_ERRORS[case], may_raise=True))


def test_size_mismatch_warning():
    differential(lambda lib: lib.nn.MSELoss()(lib.zeros(3, 1), lib.ones(3)))


# -- kl_div values ---------------------------------------------------------------------------

@given(st.sampled_from([0, 1, 2, 7]), st.booleans(), st.sampled_from(["float32", "float64"]),
       seeds)
def test_kl_div_op(torch, reduction, log_target, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 4)).astype(dtype)
    t = rng.uniform(0, 1, (3, 4)).astype(dtype)
    t[0, 0] = 0.0       # xlogy(0, 0) = 0
    results = []
    for lib in (glasstorch, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        out = lib.kl_div(a, b, reduction, log_target=log_target)
        out.backward(lib.ones_like(out))
        results.append((out.detach(), a.grad, b.grad))
    assert_same(results[0], results[1], atol=1e-6, rtol=1e-6)


# -- one_hot ---------------------------------------------------------------------------------

@given(st.lists(st.integers(0, 3), min_size=0, max_size=3), st.integers(-1, 6), seeds)
def test_one_hot(torch, shape, num_classes, seed):
    values = np.random.default_rng(seed).integers(0, 5, size=shape)

    def scenario(lib):
        return lib.nn.functional.one_hot(lib.tensor(values, dtype=lib.int64), num_classes)
    differential(scenario, may_raise=True)


ONE_HOT_ERRORS = [
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1.0])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1], dtype=lib.int32)),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([-1, 2])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1, 2]), 2),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1, 2]), -2),
    lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.int64)),
]


@pytest.mark.parametrize("case", range(len(ONE_HOT_ERRORS)))
def test_one_hot_errors(case):
    raised(differential(ONE_HOT_ERRORS[case], may_raise=True))


# -- distances -------------------------------------------------------------------------------

@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.booleans(),
       st.sampled_from([1.0, 2.0, 3.0, float("inf")]), st.booleans(), seeds)
def test_pairwise_distance(torch, shape, broadcast, p, keepdim, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[-1:] if broadcast else shape).astype(np.float32)
    results = []
    for lib in (glasstorch, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.nn.PairwiseDistance(p=p, keepdim=keepdim)(x, y)
        out.sum().backward()
        results.append((out.detach(), x.grad, y.grad))
    assert_same(results[0], results[1], atol=1e-5, rtol=1e-5)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.booleans(), st.integers(0, 2),
       seeds)
def test_cosine_similarity(torch, shape, broadcast, dim_seed, seed):
    rng = np.random.default_rng(seed)
    dim = dim_seed % len(shape) - len(shape)
    a = rng.standard_normal(shape).astype(np.float64)
    b = rng.standard_normal([1] * len(shape) if broadcast else shape).astype(np.float64)
    a.flat[0] = 0.0      # a zero vector: the eps clamp
    results = []
    for lib in (glasstorch, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.nn.CosineSimilarity(dim=dim, eps=1e-6)(x, y)
        out.sum().backward()
        results.append((out.detach(), x.grad, y.grad, type(out.grad_fn).__name__))
    assert results[0][3] == results[1][3]
    assert_same(results[0][:3], results[1][:3], atol=1e-10, rtol=1e-8)


def test_distance_modules():
    check_module(lambda lib: lib.nn.CosineSimilarity(), same_inputs((3, 5), (3, 5)))
    check_module(lambda lib: lib.nn.PairwiseDistance(keepdim=True), same_inputs((3, 5), (1, 5)))


DISTANCE_ERRORS = [
    lambda lib: lib.cosine_similarity(lib.zeros(2, 3, dtype=lib.int64),
                                      lib.zeros(2, 3, dtype=lib.int64)),
    lambda lib: lib.cosine_similarity(lib.zeros(2, 3), lib.zeros(3, 3)),
    lambda lib: lib.cosine_similarity(lib.zeros(2, 3), lib.zeros(2, 3), dim=2),
    lambda lib: lib.pairwise_distance(lib.zeros(2, 3), lib.zeros(3, 3)),
]


@pytest.mark.parametrize("case", range(len(DISTANCE_ERRORS)))
def test_distance_errors(case):
    raised(differential(DISTANCE_ERRORS[case], may_raise=True))


def test_cosine_similarity_integer_inputs():
    differential(lambda lib: lib.cosine_similarity(lib.tensor([[1, 2, 3]]),
                                                   lib.tensor([[1.0, 0.5, 2.0]])))


# -- margin and embedding losses -------------------------------------------------------------

def _signs(n):
    def make(lib):
        return lib.tensor([1.0 if i % 3 else -1.0 for i in range(n)])
    return make


def _with(inputs, *extra):
    return lambda lib: inputs(lib) + tuple(e(lib) for e in extra)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs,inputs", [
    ("MarginRankingLoss", {"margin": 0.3}, _with(_inputs((6,), (6,)), _signs(6))),
    ("HingeEmbeddingLoss", {}, _with(_inputs((2, 5)), _signs(5))),
    ("HingeEmbeddingLoss", {"margin": 0.2}, _with(_inputs((5,)), _signs(5))),
    ("CosineEmbeddingLoss", {"margin": 0.1}, _with(_inputs((4, 6), (4, 6)), _signs(4))),
    ("TripletMarginLoss", {"margin": 1.5}, _inputs((4, 5), (4, 5), (4, 5))),
    ("TripletMarginLoss", {"p": 1.0, "swap": True}, _inputs((4, 5), (4, 5), (4, 5))),
    ("PoissonNLLLoss", {}, _inputs((3, 4), ("unit", (3, 4)))),
    ("PoissonNLLLoss", {"log_input": False, "full": True}, _inputs(("unit", (3, 4)),
                                                                   ("unit", (3, 4)))),
    ("MultiLabelSoftMarginLoss", {}, _inputs((3, 4), ("unit", (3, 4)))),
])
def test_margin_and_embedding_losses(name, kwargs, inputs, reduction):
    check_module(lambda lib: getattr(lib.nn, name)(reduction=reduction, **kwargs), inputs)


def test_poisson_full_uses_stirling_above_one():
    def scenario(lib):
        x = lib.tensor([0.5, 1.0, 2.0, 3.0], requires_grad=True)
        t = lib.tensor([0.0, 1.0, 2.0, 5.0])
        loss = lib.nn.functional.poisson_nll_loss(x, t, log_input=False, full=True,
                                                  reduction="sum")
        loss.backward()
        return loss, x.grad
    differential(scenario)


MARGIN_ERRORS = [
    lambda lib: lib.nn.functional.margin_ranking_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                      lib.zeros(2)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                        lib.zeros(1, 2)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(3), lib.zeros(3),
                                                        lib.zeros(2)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                        lib.tensor(1.0)),
    lambda lib: lib.nn.functional.triplet_margin_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                      lib.zeros(3)),
    lambda lib: lib.nn.functional.triplet_margin_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                      lib.zeros(2, 3), margin=0.0),
    lambda lib: lib.nn.TripletMarginLoss(margin=-1.0),
    lambda lib: lib.nn.functional.poisson_nll_loss(lib.zeros(2), lib.zeros(2),
                                                   reduction="bogus"),
    lambda lib: lib.nn.functional.multilabel_soft_margin_loss(lib.zeros(2), lib.zeros(2),
                                                              reduction="bogus"),
]


@pytest.mark.parametrize("case", range(len(MARGIN_ERRORS)))
def test_margin_loss_errors(case):
    raised(differential(MARGIN_ERRORS[case], may_raise=True))
