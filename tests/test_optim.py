"""Differential tests of glasstorch.optim against torch.optim.

Each scenario runs in both libraries from the same numpy values: parameters and
per-step gradients are drawn once and handed to both, so every difference comes
from the optimizer.  After each step the parameters and the whole
``state_dict()`` (ids, nesting, state tensors' dtype/shape/values, group
options) are compared; values agree to float32 rounding (the core ``sqrt``
and ``add(alpha=...)`` kernels round differently from PyTorch's MKL/FMA ones
in the last bit, so bit-identity is not asserted).
"""
from __future__ import annotations

import copy
import importlib
import re
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch._dispatcher.dispatcher import dispatch_trace

from .differential import Close, differential, observe, raised, returned, run

SHAPES = ((4, 3), (3,), (2, 2))


def _module(lib, name):
    """``torch.optim.<name>`` (the package deletes its submodule attributes, as torch's does)."""
    return importlib.import_module(f"{lib.__name__}.optim.{name}")


def _draw(seed, steps, shapes=SHAPES, dtype=np.float32):
    """Initial parameter values and one gradient per parameter per step."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]
    return init, grads


def _build(lib, name, kwargs, init, groups=None):
    """Parameters from ``init`` and an optimizer over them; ``groups`` (a list of
    option overrides) splits the parameters into that many groups."""
    params = [lib.tensor(a, requires_grad=True) for a in init]
    if groups is None:
        spec = params
    else:
        chunks = np.array_split(np.arange(len(params)), len(groups))
        spec = [dict(options, params=[params[i] for i in chunk])
                for options, chunk in zip(groups, chunks)]
    return params, getattr(lib.optim, name)(spec, **kwargs)


def _set_grads(lib, params, grads, skip=None):
    for i, (p, g) in enumerate(zip(params, grads)):
        p.grad = None if i == skip else lib.tensor(g)


def trajectory(lib, name, kwargs, *, steps=20, seed=0, groups=None, skip_every=None,
               dtype=np.float32):
    """Parameters and state_dict after every step (one parameter's gradient is
    None every ``skip_every`` steps: that parameter is then left alone)."""
    init, grads = _draw(seed, steps, dtype=dtype)
    params, opt = _build(lib, name, kwargs, init, groups)
    history = []
    for step, g in enumerate(grads):
        skip = 1 if skip_every and step % skip_every == 0 else None
        _set_grads(lib, params, g, skip)
        opt.step()
        history.append((params, opt.state_dict()))
        history[-1] = observe(history[-1])   # observe now: the tensors change in place
    return history


CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("Adam", {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "maximize": True, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "initial_accumulator_value": 0.1}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "maximize": True, "eps": 1e-6}),
]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_trajectory_matches_torch(name, kwargs):
    differential(lambda lib: trajectory(lib, name, kwargs))


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_param_groups_with_own_options_and_missing_grads(name):
    momentum = {"momentum": 0.9} if name in ("SGD", "RMSprop") else {}
    groups = [{"lr": 0.05}, {"lr": 0.01, "weight_decay": 0.2}]
    differential(lambda lib: trajectory(lib, name, dict(momentum, lr=0.03), groups=groups,
                                        skip_every=3, steps=12))


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                         ("Adam", {"amsgrad": True}), ("RMSprop", {}),
                                         ("Adagrad", {"lr_decay": 0.1})])
def test_float64_parameters(name, kwargs):
    differential(lambda lib: trajectory(lib, name, kwargs, steps=10, dtype=np.float64))


def test_step_count_follows_the_default_dtype():
    def scenario(lib):
        lib.set_default_dtype(lib.float64)
        try:
            return trajectory(lib, "Adam", {}, steps=2)
        finally:
            lib.set_default_dtype(lib.float32)
    differential(scenario)


# -- random hyperparameters -------------------------------------------------------------

def _hyper(draw_kwargs):
    return st.fixed_dictionaries({}, optional=draw_kwargs)


rates = st.floats(1e-4, 0.2)
decays = st.sampled_from([0, 0.01, 0.3])
HYPER = {
    "SGD": _hyper({"lr": rates, "momentum": st.floats(0, 0.99), "dampening": st.floats(0, 0.9),
                   "weight_decay": decays, "maximize": st.booleans()}),
    "Adam": _hyper({"lr": rates, "betas": st.tuples(st.floats(0, 0.99), st.floats(0.5, 0.9999)),
                    "eps": st.sampled_from([1e-8, 1e-3]), "weight_decay": decays,
                    "amsgrad": st.booleans(), "maximize": st.booleans()}),
    "AdamW": _hyper({"lr": rates, "weight_decay": decays, "amsgrad": st.booleans()}),
    "RMSprop": _hyper({"lr": rates, "alpha": st.floats(0.5, 0.999), "momentum": st.floats(0, 0.9),
                       "centered": st.booleans(), "weight_decay": decays,
                       "maximize": st.booleans()}),
    "Adagrad": _hyper({"lr": rates, "lr_decay": st.floats(0, 0.5), "weight_decay": decays,
                       "initial_accumulator_value": st.floats(0, 1), "maximize": st.booleans()}),
}


@pytest.mark.parametrize("name", sorted(HYPER))
def test_random_hyperparameters(name):
    @settings(max_examples=6)
    @given(kwargs=HYPER[name], seed=st.integers(0, 2**16))
    def check(kwargs, seed):
        differential(lambda lib: trajectory(lib, name, kwargs, steps=12, seed=seed))
    check()


# -- implementations PyTorch picks by flag ------------------------------------------------

@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "foreach": True}),
    ("Adam", {"amsgrad": True, "foreach": True}),
    ("Adam", {"weight_decay": 0.1, "fused": True}),
    ("AdamW", {"fused": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "fused": True}),
    ("RMSprop", {"centered": True, "foreach": True}),
    ("Adagrad", {"foreach": True}),
    ("Adagrad", {"fused": True}),
])
def test_foreach_and_fused_agree_with_torch(name, kwargs):
    """glasstorch runs the single-tensor loop for these; PyTorch's multi-tensor and
    fused CPU kernels compute the same update."""
    differential(lambda lib: trajectory(lib, name, kwargs, steps=8))


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_tensor_learning_rate(name):
    differential(lambda lib: trajectory(lib, name, {"lr": lib.tensor(0.05)}, steps=6))


def test_tensor_betas():
    differential(lambda lib: trajectory(
        lib, "Adam", {"betas": (lib.tensor(0.8), lib.tensor(0.99))}, steps=6))


# -- the same ops as PyTorch's loop -------------------------------------------------------

class _TorchOpLog(torch.utils._python_dispatch.TorchDispatchMode):
    """The aten ops PyTorch's CPU kernels receive, as ``name.overload``."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == "aten":   # (not the profiler's record_function ops)
            overload = "" if func._overloadname == "default" else "." + func._overloadname
            self.ops.append(func._schema.name.split("::")[1] + overload)
        return func(*args, **(kwargs or {}))


def _backend_ops(trace):
    """The outermost calls that reached a CPU kernel, from a glasstorch dispatch trace."""
    ops, inside = [], None
    for line in trace.lines:
        depth = len(line) - len(line.lstrip(" "))
        if inside is not None and depth > inside:
            continue
        inside = None
        namespace, name, key = re.search(r"op=\[(\w+)::([^\]]+)\], key=\[(\w+)\]",
                                         line).groups()
        if key == "CPU" and namespace == "aten":   # (not the record_function ops)
            ops.append(name)
            inside = depth
    return ops


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "maximize": True}),
    ("Adam", {"amsgrad": True, "maximize": True, "weight_decay": 0.1}),
    ("AdamW", {}),
    ("RMSprop", {"centered": True, "momentum": 0.1, "weight_decay": 0.1}),
    ("Adagrad", {"lr_decay": 0.1, "weight_decay": 0.1}),
])
def test_step_dispatches_torchs_op_sequence(name, kwargs):
    """A step (after the state exists) sends the same aten ops to the backend, in
    order, as PyTorch's single-tensor loop."""
    init, grads = _draw(0, 2)
    logs = []
    for lib in (torch, gt):
        params, opt = _build(lib, name, kwargs, init)
        _set_grads(lib, params, grads[0])
        opt.step()
        _set_grads(lib, params, grads[1])
        if lib is torch:
            with _TorchOpLog() as log:
                opt.step()
            logs.append(log.ops)
        else:
            with dispatch_trace() as trace:
                opt.step()
            logs.append(_backend_ops(trace))
    assert logs[1] == logs[0]


# -- state_dict / load_state_dict ---------------------------------------------------------

def _to_glasstorch(value):
    """A torch state_dict with its tensors rebuilt as glasstorch tensors (via numpy)."""
    if isinstance(value, torch.Tensor):
        return gt.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _to_glasstorch(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_glasstorch(v) for v in value)
    return value


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                         ("Adam", {"amsgrad": True, "weight_decay": 0.1}),
                                         ("AdamW", {}),
                                         ("RMSprop", {"centered": True, "momentum": 0.5}),
                                         ("Adagrad", {"lr_decay": 0.1})])
def test_load_state_dict_saved_by_torch_continues_identically(name, kwargs):
    init, grads = _draw(3, 12)
    groups = [{"lr": 0.02}, {"lr": 0.01}]
    t_params, t_opt = _build(torch, name, kwargs, init, groups)
    for g in grads[:5]:
        _set_grads(torch, t_params, g)
        t_opt.step()

    saved = _to_glasstorch(t_opt.state_dict())
    g_params, g_opt = _build(gt, name, kwargs,
                             [p.detach().numpy().copy() for p in t_params], groups)
    g_opt.load_state_dict(saved)
    assert observe(g_opt.state_dict()) == observe(t_opt.state_dict())
    for g in grads[5:]:
        for lib, params, opt in ((torch, t_params, t_opt), (gt, g_params, g_opt)):
            _set_grads(lib, params, g)
            opt.step()
        assert observe((g_params, g_opt.state_dict())) == observe((t_params, t_opt.state_dict()))


@pytest.mark.parametrize("name,kwargs", [("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}),
                                         ("RMSprop", {"centered": True}), ("Adagrad", {})])
def test_state_dict_round_trip_is_exact(name, kwargs):
    """A fresh optimizer loaded from a state_dict takes bit-identical steps."""
    init, grads = _draw(5, 8)
    params, opt = _build(gt, name, kwargs, init)
    for g in grads[:4]:
        _set_grads(gt, params, g)
        opt.step()
    saved = copy.deepcopy(opt.state_dict())
    twin_params, twin = _build(gt, name, kwargs, [p.detach().numpy().copy() for p in params])
    twin.load_state_dict(saved)
    for g in grads[4:]:
        for ps, o in ((params, opt), (twin_params, twin)):
            _set_grads(gt, ps, g)
            o.step()
    for a, b in zip(params, twin_params):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_deepcopy_continues_identically():
    init, grads = _draw(6, 6)
    params, opt = _build(gt, "Adam", {}, init)
    _set_grads(gt, params, grads[0])
    opt.step()
    twin = copy.deepcopy(opt)
    twin_params = twin.param_groups[0]["params"]
    for g in grads[1:]:
        for ps, o in ((params, opt), (twin_params, twin)):
            _set_grads(gt, ps, g)
            o.step()
    for a, b in zip(params, twin_params):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_load_casts_state_to_parameter_dtype_but_not_step():
    def scenario(lib):
        init, grads = _draw(1, 1)
        params, opt = _build(lib, "Adam", {}, init)
        _set_grads(lib, params, grads[0])
        opt.step()
        saved = opt.state_dict()
        for s in saved["state"].values():
            s["exp_avg"] = s["exp_avg"].double()
            s["step"] = s["step"].double()
        opt.load_state_dict(saved)
        return [(str(s["exp_avg"].dtype), str(s["step"].dtype)) for s in opt.state.values()]
    assert returned(differential(scenario))[0] == ("torch.float32", "torch.float64")


def test_load_old_state_dict_fills_defaults_and_step_tensors():
    """Older checkpoints lack newer options and saved the step as a number."""
    def scenario(lib):
        init, grads = _draw(2, 2)
        params, opt = _build(lib, "Adam", {}, init)
        _set_grads(lib, params, grads[0])
        opt.step()
        saved = opt.state_dict()
        for group in saved["param_groups"]:
            for key in ("maximize", "foreach", "capturable", "differentiable", "fused"):
                del group[key]
        for s in saved["state"].values():
            s["step"] = float(s["step"])
        opt.load_state_dict(saved)
        _set_grads(lib, params, grads[1])
        opt.step()
        return params, opt.state_dict()
    differential(scenario)


@pytest.mark.parametrize("change", ["groups", "sizes"])
def test_load_state_dict_errors(change):
    def scenario(lib):
        init, _ = _draw(0, 0)
        params, opt = _build(lib, "SGD", {"lr": 0.1}, init)
        saved = opt.state_dict()
        if change == "groups":
            saved["param_groups"].append(dict(saved["param_groups"][0]))
        else:
            saved["param_groups"][0]["params"] = saved["param_groups"][0]["params"][:-1]
        opt.load_state_dict(saved)
    raised(differential(scenario, may_raise=True), "ValueError")


def test_state_dict_ids_with_repeated_parameters():
    def scenario(lib):
        a, b = lib.zeros(2, requires_grad=True), lib.ones(2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = lib.optim.SGD([{"params": [a, a]}, {"params": [b]}], lr=0.1, momentum=0.9)
        a.grad, b.grad = lib.ones(2), lib.ones(2)
        opt.step()
        return opt.state_dict()
    differential(scenario)


def test_named_parameters_keep_their_names():
    def scenario(lib):
        a, b = lib.zeros(2, requires_grad=True), lib.ones(3, requires_grad=True)
        opt = lib.optim.Adam([("a", a), ("b", b)])
        return opt.state_dict()["param_groups"], repr(opt)
    differential(scenario)


# -- zero_grad, closure, hooks, repr ------------------------------------------------------

@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    def scenario(lib):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        v = lib.tensor([3.0], requires_grad=True)
        (w * w).sum().backward(create_graph=True)   # a grad with history
        opt = lib.optim.SGD([w, v], lr=0.1)
        opt.zero_grad(set_to_none=set_to_none)
        return w.grad, v.grad
    differential(scenario)


def test_step_with_closure_returns_its_loss():
    def scenario(lib):
        w = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = ((w - 1) ** 2).sum()
            loss.backward()
            return loss
        losses = [opt.step(closure) for _ in range(5)]
        return losses, w
    differential(scenario)


def test_training_a_small_model():
    """Two layers of Parameters trained with backward(): losses and weights agree."""
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((8, 4), (8,), (1, 8), (1,),
                                                                 (16, 4), (16, 1))]

    def scenario(lib):
        w1, b1, w2, b2, x, y = [lib.tensor(a) for a in arrays]
        params = [lib.nn.Parameter(t) for t in (w1, b1, w2, b2)]
        opt = lib.optim.AdamW(params, lr=0.01)
        F = lib.nn.functional
        losses = []
        for _ in range(10):
            opt.zero_grad()
            hidden = F.relu(F.linear(x, params[0], params[1]))
            loss = F.mse_loss(F.linear(hidden, params[2], params[3]), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return Close(losses), params
    differential(scenario)


def test_step_hooks():
    def scenario(lib):
        calls = []
        w = lib.tensor([1.0], requires_grad=True)
        w.grad = lib.tensor([1.0])
        opt = lib.optim.SGD([w], lr=0.5)

        def pre(o, args, kwargs):
            calls.append(("pre", type(o).__name__, len(args), dict(kwargs)))
            return args, {"closure": lambda: 7.0}

        def post(o, args, kwargs):
            calls.append(("post", list(kwargs)))

        global_pre = _module(lib, "optimizer").register_optimizer_step_pre_hook(
            lambda o, a, k: calls.append("global pre"))
        global_post = _module(lib, "optimizer").register_optimizer_step_post_hook(
            lambda o, a, k: calls.append("global post"))
        handles = [opt.register_step_pre_hook(pre), opt.register_step_post_hook(post)]
        try:
            result = opt.step()
        finally:
            global_pre.remove()
            global_post.remove()
        for h in handles:
            h.remove()
        opt.step()
        return calls, result, w
    differential(scenario)


def test_bad_pre_hook_result():
    def scenario(lib):
        w = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5)
        opt.register_step_pre_hook(lambda o, a, k: 3)
        opt.step()
    msg = raised(run(scenario, gt), "RuntimeError")
    assert msg.endswith("must return None or a tuple of (new_args, new_kwargs), but got 3.")


def test_state_dict_hooks():
    def scenario(lib):
        calls = []
        w = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5)
        opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
        opt.register_state_dict_pre_hook(lambda o: calls.append("first pre"), prepend=True)
        opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
        saved = opt.state_dict()
        opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append(sorted(sd)))
        opt.register_load_state_dict_post_hook(lambda o: calls.append("loaded"))
        opt.load_state_dict(saved)
        return calls, sorted(saved)
    differential(scenario)


def test_repr():
    def scenario(lib):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
        return [repr(lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)),
                repr(lib.optim.Adam([a], betas=(0.8, 0.9))), repr(lib.optim.AdamW([a])),
                repr(lib.optim.RMSprop([a])), repr(lib.optim.Adagrad([a]))]
    differential(scenario)


def test_differentiable_step_is_part_of_the_graph():
    """differentiable=True keeps grad mode on: the update's graph reaches the leaf."""
    def scenario(lib):
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        results = []
        for name, kwargs in (("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.1}),
                             ("RMSprop", {"lr": 0.1})):
            p = w * 1.0
            opt = getattr(lib.optim, name)([p], differentiable=True, **kwargs)
            for _ in range(2):
                p.grad = lib.tensor([1.0, 2.0, -1.0])
                opt.step()
            results.append(lib.autograd.grad((p * p).sum(), w)[0])
        return results
    differential(scenario)


# -- errors --------------------------------------------------------------------------------

def _leaf(lib):
    return lib.zeros(2, requires_grad=True)


ERRORS = {
    "empty": lambda lib: lib.optim.SGD([], lr=0.1),
    "set": lambda lib: lib.optim.SGD([{"params": {_leaf(lib)}}], lr=0.1),
    "tensor": lambda lib: lib.optim.SGD(_leaf(lib), lr=0.1),
    "not a tensor": lambda lib: lib.optim.SGD([1.5], lr=0.1),
    "non-leaf": lambda lib: lib.optim.SGD([_leaf(lib) * 2], lr=0.1),
    "group not a dict": lambda lib: lib.optim.SGD([_leaf(lib)]).add_param_group([_leaf(lib)]),
    "two groups": lambda lib: (lambda p: lib.optim.SGD([{"params": [p]}, {"params": [p]}]))(
        _leaf(lib)),
    "names mixed": lambda lib: lib.optim.SGD([("a", _leaf(lib)), _leaf(lib)]),
    "named and unnamed groups": lambda lib: lib.optim.SGD(
        [{"params": [("a", _leaf(lib))]}, {"params": [_leaf(lib)]}]),
    "required": lambda lib: lib.optim.Optimizer(
        [_leaf(lib)], {"lr": _module(lib, "optimizer").required}),
    "sgd lr": lambda lib: lib.optim.SGD([_leaf(lib)], lr=-0.1),
    "sgd momentum": lambda lib: lib.optim.SGD([_leaf(lib)], momentum=-0.1),
    "sgd weight_decay": lambda lib: lib.optim.SGD([_leaf(lib)], weight_decay=-1),
    "nesterov": lambda lib: lib.optim.SGD([_leaf(lib)], nesterov=True),
    "tensor lr size": lambda lib: lib.optim.SGD([_leaf(lib)], lr=lib.ones(2)),
    "fused and foreach": lambda lib: lib.optim.SGD([_leaf(lib)], fused=True, foreach=True),
    "adam eps": lambda lib: lib.optim.Adam([_leaf(lib)], eps=-1.0),
    "adam beta0": lambda lib: lib.optim.Adam([_leaf(lib)], betas=(1.0, 0.9)),
    "adam beta1": lambda lib: lib.optim.Adam([_leaf(lib)], betas=(0.9, -0.1)),
    "adam betas mixed": lambda lib: lib.optim.Adam([_leaf(lib)], betas=(0.9, lib.tensor(0.9))),
    "adam tensor lr foreach": lambda lib: lib.optim.Adam([_leaf(lib)], lr=lib.tensor(0.1),
                                                         foreach=True),
    "adam fused differentiable": lambda lib: lib.optim.Adam([_leaf(lib)], fused=True,
                                                            differentiable=True),
    "adamw weight_decay": lambda lib: lib.optim.AdamW([_leaf(lib)], weight_decay=-0.1),
    "rmsprop alpha": lambda lib: lib.optim.RMSprop([_leaf(lib)], alpha=-0.1),
    "rmsprop momentum": lambda lib: lib.optim.RMSprop([_leaf(lib)], momentum=-0.1),
    "adagrad lr_decay": lambda lib: lib.optim.Adagrad([_leaf(lib)], lr_decay=-0.1),
    "adagrad accumulator": lambda lib: lib.optim.Adagrad([_leaf(lib)],
                                                         initial_accumulator_value=-1.0),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_construction_errors(case):
    raised(differential(lambda lib: repr(ERRORS[case](lib)), may_raise=True))


def test_duplicate_parameters_warn():
    def scenario(lib):
        p = _leaf(lib)
        return len(lib.optim.SGD([p, p], lr=0.1).param_groups[0]["params"])
    assert differential(scenario)[2] == (
        "optimizer contains a parameter group with duplicate parameters; in future, this will "
        "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",)


@pytest.mark.parametrize("name,kwargs,dtype", [
    ("Adam", {"capturable": True}, "float32"),
    ("RMSprop", {"capturable": True}, "float32"),
    ("Adam", {"fused": True}, "float64"),
    ("SGD", {"fused": True}, "int64"),
])
def test_capturable_and_fused_checks_at_step(name, kwargs, dtype):
    def scenario(lib):
        p = lib.zeros(2, dtype=getattr(lib, dtype), requires_grad=dtype != "int64")
        p.grad = lib.ones(2, dtype=getattr(lib, dtype))
        opt = getattr(lib.optim, name)([p], **kwargs)
        opt.step()
        return p
    differential(scenario, may_raise=True)


def test_public_names():
    assert {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Optimizer", "lr_scheduler"} <= set(
        gt.optim.__all__)
    for name in gt.optim.__all__:
        assert hasattr(torch.optim, name) and hasattr(gt.optim, name)
    for module in ("optimizer", "sgd", "adam", "adamw", "rmsprop", "adagrad"):
        assert _module(gt, module).__all__ == _module(torch, module).__all__


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                         ("Adam", {"amsgrad": True}),
                                         ("RMSprop", {"centered": True, "momentum": 0.5}),
                                         ("Adagrad", {})])
def test_complex_parameters_update_as_real_pairs(name, kwargs):
    def scenario(lib):
        rng = np.random.default_rng(4)

        def draw():
            return (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64)
        p = lib.tensor(draw(), requires_grad=True)
        opt = getattr(lib.optim, name)([p], **kwargs)
        history = []
        for _ in range(4):
            p.grad = lib.tensor(draw())
            opt.step()
            history.append(observe(lib.view_as_real(p.detach())))
        return history
    differential(scenario)


def test_user_defined_optimizer_gets_hooks_and_state():
    """A subclass written as PyTorch's docs show: its step is wrapped with the hooks."""
    def scenario(lib):
        class SignSGD(lib.optim.Optimizer):
            def __init__(self, params, lr=0.1):
                super().__init__(params, {"lr": lr, "differentiable": False})

            def step(self, closure=None):
                with lib.no_grad():
                    for group in self.param_groups:
                        for p in group["params"]:
                            self.state[p]["count"] = self.state[p].get("count", 0) + 1
                            p.add_(p.grad.sign(), alpha=-group["lr"])

        w = lib.tensor([1.0, -1.0], requires_grad=True)
        w.grad = lib.tensor([0.5, -2.0])
        opt = SignSGD([w])
        calls = []
        opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
        opt.step()
        opt.step()
        return w, calls, opt.state_dict()
    differential(scenario)
