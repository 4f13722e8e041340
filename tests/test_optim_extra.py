"""Differential tests of the rest of torch.optim against PyTorch: Adamax, NAdam,
RAdam, ASGD, Rprop, Adadelta, SparseAdam and LBFGS (with and without the
strong-Wolfe line search), and the flags every optimizer takes.

The first-order optimizers reuse test_optim's harness: parameters and per-step
gradients drawn once from numpy and handed to both libraries, parameters and the
whole state_dict compared after each of 20 steps.  LBFGS runs closures on small
problems (Rosenbrock's function, a linear regression, an LSTMCell sequence
model) and is compared on losses, parameters, closure call counts and state.
Values agree to float rounding (``Close``): the dot products LBFGS takes and
float64 ``add(alpha=...)`` round differently from MKL's and ATen's FMA loops.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch._dispatcher.dispatcher import dispatch_trace

from .differential import Close, differential, observe, raised
from .test_optim import (_TorchOpLog, _backend_ops, _build, _draw, _module, _set_grads,
                         _to_glasstorch, trajectory)

NEW = ["Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "Rprop"]
DTYPES = {"float32": np.float32, "float64": np.float64}

CASES = [
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.5, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 5, "weight_decay": 0.1}),
    ("ASGD", {"t0": 0, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2), "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-4, "weight_decay": 0.1, "maximize": True}),
]


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_trajectory_matches_torch(name, kwargs, dtype):
    differential(lambda lib: trajectory(lib, name, kwargs, dtype=DTYPES[dtype]))


# -- random hyperparameters, 20 steps -----------------------------------------------------

def _hyper(options, weight_decay=True):
    common = {"lr": st.floats(1e-4, 0.2), "maximize": st.booleans(),
              "foreach": st.sampled_from([None, False, True])}
    if weight_decay:
        common["weight_decay"] = st.sampled_from([0, 0.01, 0.3])
    return st.fixed_dictionaries({}, optional=dict(common, **options))


betas = st.tuples(st.floats(0, 0.99), st.floats(0.5, 0.9999))
HYPER = {
    "Adamax": _hyper({"betas": betas, "eps": st.sampled_from([1e-8, 1e-3])}),
    "NAdam": _hyper({"betas": betas, "momentum_decay": st.floats(0, 0.1),
                     "decoupled_weight_decay": st.booleans()}),
    "RAdam": _hyper({"betas": betas, "decoupled_weight_decay": st.booleans()}),
    "ASGD": _hyper({"lambd": st.floats(0, 0.1), "alpha": st.floats(0.1, 1.0),
                    "t0": st.sampled_from([0, 3, 10, 1e6])}),
    "Rprop": _hyper({"etas": st.tuples(st.floats(0.1, 0.9), st.floats(1.1, 2.0)),
                     "step_sizes": st.tuples(st.sampled_from([1e-6, 1e-3]),
                                             st.sampled_from([0.1, 50]))},
                    weight_decay=False),
    "Adadelta": _hyper({"rho": st.floats(0, 1), "eps": st.sampled_from([1e-6, 1e-3])}),
}


@pytest.mark.parametrize("name", sorted(HYPER))
def test_random_hyperparameters(name):
    @settings(max_examples=5)
    @given(kwargs=HYPER[name], seed=st.integers(0, 2**16), dtype=st.sampled_from(sorted(DTYPES)))
    def check(kwargs, seed, dtype):
        differential(lambda lib: trajectory(lib, name, kwargs, seed=seed, dtype=DTYPES[dtype]))
    check()


@pytest.mark.parametrize("name", NEW)
def test_param_groups_with_own_options_and_missing_grads(name):
    groups = [{"lr": 0.05}, {"lr": 0.01, "weight_decay": 0.2}]
    differential(lambda lib: trajectory(lib, name, {"lr": 0.03}, groups=groups, skip_every=3,
                                        steps=12))


@pytest.mark.parametrize("name", NEW)
def test_tensor_learning_rate(name):
    differential(lambda lib: trajectory(lib, name, {"lr": lib.tensor(0.05)}, steps=6))


@pytest.mark.parametrize("name", NEW)
def test_complex_parameters_update_as_real_pairs(name):
    def scenario(lib):
        rng = np.random.default_rng(4)

        def draw():
            return (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64)
        p = lib.tensor(draw(), requires_grad=True)
        opt = getattr(lib.optim, name)([p])
        history = []
        for _ in range(4):
            p.grad = lib.tensor(draw())
            opt.step()
            history.append(observe(lib.view_as_real(p.detach())))
        return history
    differential(scenario)


@pytest.mark.parametrize("name", NEW)
def test_step_dispatches_torchs_op_sequence(name):
    """A step (after the state exists) sends the same aten ops to the backend, in
    order, as PyTorch's single-tensor loop.  (PyTorch also logs ``lift_fresh`` where
    a Python number becomes a tensor, ``as_tensor(x)`` or ``t[mask] = x``; glasstorch's
    tensor factories dispatch it only while observed, so it is left out of the
    comparison, with the ``empty`` and ``to`` that ``torch.tensor`` dispatches before
    it below the Python key, which the trace shows and PyTorch's mode log cannot.)"""
    kwargs = {"weight_decay": 0.1} if name != "Rprop" else {}
    init, grads = _draw(0, 2)
    logs = []
    for lib in (torch, gt):
        params, opt = _build(lib, name, dict(kwargs, foreach=False), init)
        _set_grads(lib, params, grads[0])
        opt.step()
        _set_grads(lib, params, grads[1])
        if lib is torch:
            with _TorchOpLog() as log:
                opt.step()
            logs.append([op for op in log.ops if op != "lift_fresh"])
        else:
            with dispatch_trace() as trace:
                opt.step()
            logs.append(_without_tensor_ctor(_backend_ops(trace)))
    assert logs[1] == logs[0]


def _without_tensor_ctor(ops):
    """``ops`` less each ``empty.memory_format, to.device, lift_fresh`` (torch.tensor's)."""
    ctor = ["empty.memory_format", "to.device", "lift_fresh"]
    kept, i = [], 0
    while i < len(ops):
        if ops[i:i + 3] == ctor:
            i += 3
        else:
            kept.append(ops[i])
            i += 1
    return kept


def test_step_count_and_scalar_state_follow_the_default_dtype():
    def scenario(lib):
        lib.set_default_dtype(lib.float64)
        try:
            return [trajectory(lib, name, {}, steps=2) for name in ("NAdam", "ASGD")]
        finally:
            lib.set_default_dtype(lib.float32)
    differential(scenario)


# -- flags ----------------------------------------------------------------------------------

ALL = ["Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "NAdam", "RAdam",
       "RMSprop", "Rprop", "SGD", "SparseAdam"]


@pytest.mark.parametrize("name", ALL)
def test_constructor_signature_is_torchs(name):
    """Every optimizer takes exactly PyTorch's arguments (foreach, fused, maximize,
    capturable, differentiable where PyTorch has them), with its defaults."""
    def params(cls):
        return [(p.name, p.kind, p.default)
                for p in inspect.signature(cls.__init__).parameters.values()]
    assert params(getattr(gt.optim, name)) == params(getattr(torch.optim, name))


FLAGS = [{"foreach": True}, {"foreach": False}, {"fused": True}, {"fused": False},
         {"maximize": True}, {"capturable": True}, {"differentiable": True},
         {"fused": True, "foreach": True}, {"fused": True, "differentiable": True}]


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: "-".join(f"{k}={v}" for k, v in f.items()))
@pytest.mark.parametrize("name", [n for n in ALL if n != "LBFGS"])
def test_flags_are_accepted_or_refused_as_torch_does(name, flags):
    """Construction and two steps with each flag: the same trajectory, or the same
    error (an unknown keyword, fused on CPU without a kernel, capturable on CPU,
    an in-place update of a leaf under differentiable=True...)."""
    def scenario(lib):
        init, grads = _draw(8, 2)
        params = [lib.tensor(a, requires_grad=True) for a in init]
        opt = getattr(lib.optim, name)(params, **flags)
        for g in grads:
            _set_grads(lib, params, g)
            opt.step()
        return params, opt.state_dict()
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("name", [n for n in NEW if n != "Adamax"])
def test_differentiable_step_is_part_of_the_graph(name):
    """(PyTorch's differentiable Adamax fails its own second step: the in-place
    ``exp_inf.mul_`` clobbers a tensor the previous step's graph saved.)"""
    def scenario(lib):
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        p = w * 1.0
        opt = getattr(lib.optim, name)([p], lr=0.1, differentiable=True)
        for grad in ([1.0, 2.0, -1.0], [0.5, -2.0, -1.5]):
            p.grad = lib.tensor(grad)
            opt.step()
        return lib.autograd.grad((p * p).sum(), w)[0]
    differential(scenario)


# -- constructor errors ----------------------------------------------------------------------

def _leaf(lib):
    return lib.zeros(2, requires_grad=True)


ERRORS = {
    "adamax lr": lambda lib: lib.optim.Adamax([_leaf(lib)], lr=-1.0),
    "adamax eps": lambda lib: lib.optim.Adamax([_leaf(lib)], eps=-1.0),
    "adamax beta0": lambda lib: lib.optim.Adamax([_leaf(lib)], betas=(1.0, 0.9)),
    "adamax beta1": lambda lib: lib.optim.Adamax([_leaf(lib)], betas=(0.9, 1.5)),
    "adamax weight_decay": lambda lib: lib.optim.Adamax([_leaf(lib)], weight_decay=-0.1),
    "adamax tensor lr size": lambda lib: lib.optim.Adamax([_leaf(lib)], lr=lib.ones(2)),
    "nadam momentum_decay": lambda lib: lib.optim.NAdam([_leaf(lib)], momentum_decay=-0.1),
    "nadam beta0": lambda lib: lib.optim.NAdam([_leaf(lib)], betas=(-0.1, 0.9)),
    "nadam weight_decay nan": lambda lib: lib.optim.NAdam([_leaf(lib)],
                                                          weight_decay=float("nan")),
    "radam eps": lambda lib: lib.optim.RAdam([_leaf(lib)], eps=-1e-8),
    "radam beta1": lambda lib: lib.optim.RAdam([_leaf(lib)], betas=(0.9, 1.0)),
    "asgd lr": lambda lib: lib.optim.ASGD([_leaf(lib)], lr=-0.1),
    "asgd weight_decay": lambda lib: lib.optim.ASGD([_leaf(lib)], weight_decay=-0.1),
    "rprop etas": lambda lib: lib.optim.Rprop([_leaf(lib)], etas=(1.2, 0.5)),
    "rprop etaplus": lambda lib: lib.optim.Rprop([_leaf(lib)], etas=(0.5, 1.0)),
    "rprop lr": lambda lib: lib.optim.Rprop([_leaf(lib)], lr=-1),
    "adadelta rho": lambda lib: lib.optim.Adadelta([_leaf(lib)], rho=1.1),
    "adadelta eps": lambda lib: lib.optim.Adadelta([_leaf(lib)], eps=-1.0),
    "adadelta weight_decay": lambda lib: lib.optim.Adadelta([_leaf(lib)], weight_decay=-1),
    "sparseadam lr": lambda lib: lib.optim.SparseAdam([_leaf(lib)], lr=0.0),
    "sparseadam eps": lambda lib: lib.optim.SparseAdam([_leaf(lib)], eps=0.0),
    "sparseadam beta1": lambda lib: lib.optim.SparseAdam([_leaf(lib)], betas=(0.9, 1.0)),
    "sparseadam complex": lambda lib: lib.optim.SparseAdam(
        [_leaf(lib), lib.zeros(2, dtype=lib.complex64, requires_grad=True)]),
    "lbfgs lr": lambda lib: lib.optim.LBFGS([_leaf(lib)], lr=-0.5),
    "lbfgs groups": lambda lib: lib.optim.LBFGS([{"params": [_leaf(lib)]},
                                                 {"params": [_leaf(lib)]}]),
    "lbfgs empty": lambda lib: lib.optim.LBFGS([]),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_construction_errors(case):
    raised(differential(lambda lib: repr(ERRORS[case](lib)), may_raise=True))


def test_repr():
    def scenario(lib):
        a = lib.zeros(2, requires_grad=True)
        return [repr(getattr(lib.optim, name)([a])) for name in NEW + ["SparseAdam", "LBFGS"]]
    differential(scenario)


def test_sparse_adam_refuses_dense_gradients():
    """glasstorch has no sparse tensors: a step over a dense gradient raises PyTorch's
    error; a step with no gradient only runs the closure."""
    def scenario(lib):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.SparseAdam([p])
        loss = opt.step(lambda: 2.5)
        p.grad = lib.ones(3)
        return loss, opt.step()
    assert raised(differential(scenario, may_raise=True), "RuntimeError").startswith(
        "SparseAdam does not support dense gradients")


def test_public_names():
    assert set(ALL) <= set(gt.optim.__all__)
    for name in gt.optim.__all__:
        assert hasattr(torch.optim, name) and hasattr(gt.optim, name)
    for module in ("adadelta", "adamax", "asgd", "lbfgs", "nadam", "radam", "rprop",
                   "sparse_adam"):
        assert _module(gt, module).__all__ == _module(torch, module).__all__


# -- state_dict round trips with torch --------------------------------------------------------

def _to_torch(value):
    """A glasstorch state_dict with its tensors rebuilt as torch tensors (via numpy)."""
    if isinstance(value, gt.Tensor):
        return torch.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _to_torch(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_torch(v) for v in value)
    return value


CONVERT = {torch: _to_glasstorch, gt: _to_torch}


@pytest.mark.parametrize("first", ["torch", "glasstorch"])
@pytest.mark.parametrize("name,kwargs", [("Adamax", {}), ("NAdam", {"weight_decay": 0.1}),
                                         ("RAdam", {}), ("ASGD", {"t0": 2}), ("Rprop", {}),
                                         ("Adadelta", {"weight_decay": 0.1})])
def test_state_dict_moves_between_libraries_and_continues(name, kwargs, first):
    """Five steps in one library, its state_dict loaded into the other, seven more
    steps in both: the same state_dicts and parameters after every step."""
    src, dst = (torch, gt) if first == "torch" else (gt, torch)
    init, grads = _draw(3, 12)
    groups = [{"lr": 0.02}, {"lr": 0.01}]
    s_params, s_opt = _build(src, name, kwargs, init, groups)
    for g in grads[:5]:
        _set_grads(src, s_params, g)
        s_opt.step()
    d_params, d_opt = _build(dst, name, kwargs, [p.detach().numpy().copy() for p in s_params],
                             groups)
    d_opt.load_state_dict(CONVERT[src](s_opt.state_dict()))
    assert observe(d_opt.state_dict()) == observe(s_opt.state_dict())
    for g in grads[5:]:
        for lib, params, opt in ((src, s_params, s_opt), (dst, d_params, d_opt)):
            _set_grads(lib, params, g)
            opt.step()
        assert observe((d_params, d_opt.state_dict())) == observe((s_params, s_opt.state_dict()))


def test_old_state_dicts_get_scalar_tensors_back():
    """Older checkpoints saved NAdam's mu_product and ASGD's eta and mu as numbers."""
    def scenario(lib):
        out = []
        for name in ("NAdam", "ASGD"):
            init, grads = _draw(2, 2)
            params, opt = _build(lib, name, {}, init)
            _set_grads(lib, params, grads[0])
            opt.step()
            saved = opt.state_dict()
            for s in saved["state"].values():
                for key in ("step", "mu_product", "eta", "mu"):
                    if key in s:
                        s[key] = s[key].item()
            opt.load_state_dict(saved)
            _set_grads(lib, params, grads[1])
            opt.step()
            out.append((params, opt.state_dict()))
        return out
    differential(scenario)


# -- LBFGS -------------------------------------------------------------------------------------

def _numbers_close(value):
    """Python floats inside a result become ``Close`` (LBFGS keeps losses and step
    lengths as floats, equal to rounding)."""
    if isinstance(value, float):
        return Close(value)
    if isinstance(value, dict):
        return {k: _numbers_close(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_numbers_close(v) for v in value)
    return value


def _run_lbfgs(lib, params, loss_fn, steps, with_state=True, **kwargs):
    """``steps`` LBFGS steps over ``params``; per step the returned loss, the closure
    calls so far, the parameters and (``with_state``) the state_dict."""
    opt = lib.optim.LBFGS(params, **kwargs)
    calls = []

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        calls.append(loss.item())
        return loss
    history = []
    for _ in range(steps):
        loss = opt.step(closure)
        seen = (loss, len(calls), params) + ((opt.state_dict(),) if with_state else ())
        history.append(observe(_numbers_close(seen)))
    return history, Close(calls)


def _rosenbrock(lib, dtype, start=(-1.5, 2.0, 0.5, -0.7)):
    x = lib.tensor(np.array(start, dtype=dtype), requires_grad=True)
    return [x], lambda: (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_rosenbrock(line_search_fn):
    differential(lambda lib: _run_lbfgs(lib, *_rosenbrock(lib, np.float64), steps=5,
                                        line_search_fn=line_search_fn))


@pytest.mark.cpu_paths
def test_lbfgs_one_step_float32():
    """One float32 step of 6 iterations: losses, calls and parameters.  (Run to
    convergence, the stopping tests compare losses that differ in the last float32
    bit: PyTorch's ``dot`` is MKL's sdot, whose summation order is MKL's own, so
    the iteration count itself would depend on the BLAS.)"""
    differential(lambda lib: _run_lbfgs(lib, *_rosenbrock(lib, np.float32), steps=1,
                                        with_state=False, line_search_fn="strong_wolfe",
                                        max_iter=6))


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_linear_regression(line_search_fn, dtype):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((32, 5))
    y = x @ rng.standard_normal((5, 1)) + 0.1 * rng.standard_normal((32, 1))
    weight, bias = rng.standard_normal((1, 5)), rng.standard_normal(1)

    def scenario(lib):
        cast = DTYPES[dtype]
        model = lib.nn.Linear(5, 1).to(getattr(lib, dtype))
        with lib.no_grad():
            model.weight.copy_(lib.tensor(weight.astype(cast)))
            model.bias.copy_(lib.tensor(bias.astype(cast)))
        inputs, targets = lib.tensor(x.astype(cast)), lib.tensor(y.astype(cast))
        return _run_lbfgs(lib, list(model.parameters()),
                          lambda: lib.nn.functional.mse_loss(model(inputs), targets), steps=3,
                          with_state=dtype == "float64", line_search_fn=line_search_fn,
                          max_iter=5)
    differential(scenario)


@pytest.mark.cpu_paths
@settings(max_examples=8)
@given(lr=st.floats(0.05, 1.0), max_iter=st.integers(1, 8), history_size=st.integers(1, 6),
       line_search_fn=st.sampled_from([None, "strong_wolfe"]), seed=st.integers(0, 2**16))
def test_lbfgs_random_hyperparameters(lr, max_iter, history_size, line_search_fn, seed):
    """20 steps of a float64 logistic regression with random options: losses, closure
    calls and parameters.  The problem is strongly convex (an L2 term of 0.1), so its
    optimum is finite and well conditioned: on separable data, or with a weak L2 term
    (0.01: seed 257, lr 0.071, history 2), the weights drift along a flat valley where
    the loss agrees to 1e-10 but last-bit differences of PyTorch's MKL dot products
    against glasstorch's move the weights past ``Close`` (as on Rosenbrock's function
    with an unsafeguarded lr near 1)."""
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((40, 4)), rng.standard_normal(4)
    y = (x @ rng.standard_normal(4) + 0.5 * rng.standard_normal(40) > 0).astype(np.float64)

    def scenario(lib):
        inputs, targets = lib.tensor(x), lib.tensor(y)
        weight = lib.tensor(w, requires_grad=True)
        return _run_lbfgs(
            lib, [weight],
            lambda: lib.nn.functional.binary_cross_entropy_with_logits(inputs @ weight, targets)
            + 0.1 * (weight * weight).sum(),
            steps=20, with_state=False, lr=lr, max_iter=max_iter, history_size=history_size,
            line_search_fn=line_search_fn)
    differential(scenario)


def test_lbfgs_tolerances_stop_early():
    """A loose tolerance_grad returns after the first evaluation; a loose
    tolerance_change ends the iterations after one."""
    def scenario(lib):
        out = []
        for kwargs in ({"tolerance_grad": 1e3}, {"tolerance_change": 1e3}, {"max_eval": 3}):
            out.append(_run_lbfgs(lib, *_rosenbrock(lib, np.float64), steps=2, **kwargs))
        return out
    differential(scenario)


def test_lbfgs_unknown_line_search():
    def scenario(lib):
        params, loss_fn = _rosenbrock(lib, np.float64)
        return _run_lbfgs(lib, params, loss_fn, steps=1, line_search_fn="armijo")
    raised(differential(scenario, may_raise=True), "RuntimeError",
           "only 'strong_wolfe' is supported")


@pytest.mark.parametrize("first", ["torch", "glasstorch"])
def test_lbfgs_state_dict_moves_between_libraries(first):
    """Two steps in one library, the state_dict (flat directions, curvature pairs,
    step length...) loaded into the other, two more steps in both."""
    src, dst = (torch, gt) if first == "torch" else (gt, torch)

    def setup(lib, start):
        params, loss_fn = _rosenbrock(lib, np.float64, start)
        opt = lib.optim.LBFGS(params, max_iter=4, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        return params, opt, closure

    s_params, s_opt, s_closure = setup(src, (-1.5, 2.0, 0.5, -0.7))
    for _ in range(2):
        s_opt.step(s_closure)
    d_params, d_opt, d_closure = setup(dst, s_params[0].detach().numpy().copy())
    d_opt.load_state_dict(CONVERT[src](s_opt.state_dict()))
    for _ in range(2):
        s_opt.step(s_closure)
        d_opt.step(d_closure)
        assert observe(_numbers_close((d_params, d_opt.state_dict()))) == \
            observe(_numbers_close((s_params, s_opt.state_dict())))


def test_lbfgs_trains_an_lstm_sequence_model():
    """The path of pytorch/examples' time_sequence_prediction, small: two double
    LSTMCells and a Linear predicting the next sample of sine waves, trained by
    LBFGS through a closure; the losses the closure sees and the weights agree."""
    rng = np.random.default_rng(2)
    phase = rng.integers(-20, 20, size=(4, 1))
    waves = np.sin((np.arange(31) + phase) / 5.0)
    shapes = {}

    def scenario(lib):
        nn = lib.nn

        class Sequence(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm1, self.lstm2 = nn.LSTMCell(1, 6), nn.LSTMCell(6, 6)
                self.linear = nn.Linear(6, 1)

            def forward(self, inputs):
                state1 = state2 = None
                outputs = []
                for input_t in inputs.split(1, dim=1):
                    state1 = self.lstm1(input_t, state1)
                    state2 = self.lstm2(state1[0], state2)
                    outputs.append(self.linear(state2[0]))
                return lib.cat(outputs, dim=1)

        seq = Sequence().double()
        init = np.random.default_rng(5)
        with lib.no_grad():
            for p in seq.parameters():
                p.copy_(lib.tensor(init.uniform(-0.4, 0.4, tuple(p.shape))))
        shapes[lib.__name__] = [tuple(p.shape) for p in seq.parameters()]
        inputs, targets = lib.from_numpy(waves[:, :-1]), lib.from_numpy(waves[:, 1:])
        return _run_lbfgs(lib, list(seq.parameters()),
                          lambda: nn.functional.mse_loss(seq(inputs), targets), steps=2,
                          lr=0.8, max_iter=6)
    history, losses = differential(scenario)[1]
    assert len(losses.array) > 6 and math.isfinite(float(losses.array[-1]))
    assert shapes["glasstorch"] == shapes["torch"]
