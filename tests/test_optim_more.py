"""Adafactor, Muon, swa_utils and swap_in_optimizer_params_and_state against
real PyTorch: parameters and state after every step, learning-rate schedules,
errors."""
from __future__ import annotations

import copy
import importlib

import numpy as np
import pytest
import torch

import glasstorch as gt

from .differential import differential, observe
from .test_optim import _draw, _set_grads, trajectory

MATRICES = ((4, 3), (2, 2), (3, 5))


def caught(fn):
    """The exception ``fn()`` raises, as (type name, message); fails if none."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return type(exc).__name__, str(exc)
    raise AssertionError("no exception")


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.05, "weight_decay": 0.1},
                                    {"lr": 0.02, "beta2_decay": -0.5, "eps": (1e-6, 1e-2),
                                     "d": 2.0, "maximize": True}])
def test_adafactor_trajectory(kwargs):
    differential(lambda lib: trajectory(lib, "Adafactor", kwargs, steps=8))


def _muon_trajectory(lib, kwargs, steps=5):
    init, grads = _draw(3, steps, shapes=MATRICES)
    params = [lib.tensor(a, requires_grad=True) for a in init]
    opt = lib.optim.Muon(params, **kwargs)
    history = []
    for g in grads:
        _set_grads(lib, params, g)
        opt.step()
        history.append([np.array(p.detach().tolist()) for p in params]
                       + [np.array(s["momentum_buffer"].tolist()) for s in opt.state.values()])
    return history


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.02, "nesterov": False, "momentum": 0.9},
                                    {"adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.0,
                                     "ns_steps": 3}])
def test_muon_trajectory(kwargs):
    """Within bfloat16's rounding: the Newton-Schulz products run in bfloat16."""
    ours, theirs = _muon_trajectory(gt, kwargs), _muon_trajectory(torch, kwargs)
    for step_ours, step_theirs in zip(ours, theirs):
        for a, b in zip(step_ours, step_theirs):
            np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-4)


@pytest.mark.parametrize("name,kwargs", [
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}), ("Adafactor", {"d": 0.5}),
    ("Adafactor", {"weight_decay": -1}), ("Muon", {"momentum": -1.0}),
    ("Muon", {"adjust_lr_fn": "nope"}), ("Muon", {"weight_decay": -0.1})])
def test_bad_hyperparameters(name, kwargs):
    def build(lib):
        return caught(lambda: getattr(lib.optim, name)([lib.zeros(2, 2, requires_grad=True)],
                                                       **kwargs))
    differential(build)


def test_muon_refuses_non_matrices():
    differential(lambda lib: caught(lambda: lib.optim.Muon([lib.zeros(3, requires_grad=True)])))


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(),
                             lib.nn.Linear(4, 2))


def _swa_utils(lib):
    return importlib.import_module(f"{lib.__name__}.optim.swa_utils")


@pytest.mark.parametrize("averaging", ["swa", "ema", "ema_multi", "swa_multi", "buffers"])
def test_averaged_model(averaging):
    def run(lib):
        swa = _swa_utils(lib)
        model = _net(lib)
        kwargs = {"swa": {}, "ema": {"avg_fn": swa.get_ema_avg_fn(0.9)},
                  "ema_multi": {"multi_avg_fn": swa.get_ema_multi_avg_fn(0.8)},
                  "swa_multi": {"multi_avg_fn": swa.get_swa_multi_avg_fn()},
                  "buffers": {"use_buffers": True}}[averaging]
        averaged = swa.AveragedModel(model, **kwargs)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        rng = np.random.default_rng(1)
        out = []
        for _ in range(4):
            x = lib.tensor(rng.standard_normal((5, 3)).astype(np.float32))
            model(x).sum().backward()
            opt.step()
            opt.zero_grad()
            averaged.update_parameters(model)
            out.append(observe(averaged.state_dict()))
        out.append(observe(averaged(lib.ones(2, 3))))
        return out
    differential(run)


def test_update_bn_recomputes_running_stats():
    def run(lib):
        swa = _swa_utils(lib)
        model = _net(lib)
        rng = np.random.default_rng(2)
        loader = [(lib.tensor(rng.standard_normal((6, 3)).astype(np.float32)), 0)
                  for _ in range(3)]
        model.eval()
        swa.update_bn(loader, model)
        return observe((model.state_dict(), model.training, model[1].momentum))
    differential(run)


@pytest.mark.parametrize("kwargs", [{"swa_lr": 0.05}, {"swa_lr": [0.05, 0.01], "anneal_epochs": 3,
                                                        "anneal_strategy": "linear"},
                                    {"swa_lr": 0.2, "anneal_epochs": 0}])
def test_swalr_schedule(kwargs):
    def run(lib):
        swa = _swa_utils(lib)
        groups = [{"params": [lib.zeros(2, requires_grad=True)]},
                  {"params": [lib.zeros(2, requires_grad=True)], "lr": 0.3}]
        opt = lib.optim.SGD(groups, lr=0.5)
        sched = swa.SWALR(opt, **kwargs)
        lrs = []
        for _ in range(6):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        state = {k: v for k, v in sched.state_dict().items() if k != "_get_lr_called_within_step"}
        return lrs, sorted(state)
    differential(run)


@pytest.mark.parametrize("kwargs", [{"anneal_strategy": "exp"}, {"anneal_epochs": -1},
                                    {"anneal_epochs": 1.5}])
def test_swalr_errors(kwargs):
    def run(lib):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.5)
        return caught(lambda: _swa_utils(lib).SWALR(opt, swa_lr=0.1, **kwargs))
    differential(run)


def test_ema_decay_out_of_range():
    differential(lambda lib: caught(lambda: _swa_utils(lib).get_ema_multi_avg_fn(1.5)))


def test_swap_in_optimizer_params_and_state():
    def run(lib):
        params = [lib.ones(3, requires_grad=True), lib.ones(2, requires_grad=True)]
        opt = lib.optim.Adam(params, lr=0.1)
        for p in params:
            p.grad = lib.ones_like(p)
        opt.step()
        saved = copy.deepcopy(opt.state_dict())
        saved["param_groups"][0]["lr"] = 0.01
        other = {"a": lib.full((3,), 2.0, requires_grad=True),
                 "b": lib.full((2,), 2.0, requires_grad=True)}
        for p in other.values():
            p.grad = lib.full_like(p, -1.0)
        with lib.optim.swap_in_optimizer_params_and_state(opt, other, saved):
            inside_lr = opt.param_groups[0]["lr"]
            opt.step()
        errors = [caught(lambda: lib.optim.swap_in_optimizer_params_and_state(
                      opt, other, bad).__enter__())
                  for bad in ({"state": [], "param_groups": []},
                              {"state": {}, "param_groups": []},
                              {"state": {7: {}}, "param_groups": saved["param_groups"]})]
        return observe((params, other, inside_lr, opt.param_groups[0]["lr"], opt.state_dict())), \
            errors
    differential(run)
