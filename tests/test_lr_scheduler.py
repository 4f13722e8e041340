"""Differential tests of glasstorch.optim.lr_scheduler against torch's.

Learning rates are plain Python floats computed by the same expressions, so
they are compared exactly (``==``), step by step, together with the momentum
or betas the cyclic schedules write, the schedulers' ``state_dict()`` and the
warnings they emit.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from .differential import differential, raised, returned


def _optimizer(lib, name="SGD", groups=2, **kwargs):
    params = [lib.zeros(2, requires_grad=True) for _ in range(groups)]
    spec = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)]
    if name == "SGD":
        kwargs.setdefault("momentum", 0.9)
    return getattr(lib.optim, name)(spec, **kwargs)


def _record(opt, sched):
    groups = opt.param_groups
    return (sched.get_last_lr(), [g["lr"] for g in groups],
            [g.get("momentum") for g in groups], [g.get("betas") for g in groups])


def schedule(lib, make, *, steps=30, optimizer="SGD", metrics=None, groups=2):
    """lrs (and momenta) after construction and after each optimizer/scheduler step."""
    opt = _optimizer(lib, optimizer, groups)
    sched = make(lib.optim.lr_scheduler, opt)
    history = [_record(opt, sched)]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        history.append(_record(opt, sched))
    return history, sched.state_dict()


SCHEDULERS = {
    "StepLR": lambda S, o: S.StepLR(o, step_size=4, gamma=0.3),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.5),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "LambdaLR": lambda S, o: S.LambdaLR(o, lr_lambda=lambda e: 1 / (1 + e)),
    "LambdaLR-per-group": lambda S, o: S.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: e % 3]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lr_lambda=lambda e: 0.95),
    "LinearLR": lambda S, o: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=9),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.3, total_iters=6),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=12, power=2.5),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=30),
    "OneCycleLR-linear-3phase": lambda S, o: S.OneCycleLR(
        o, max_lr=0.8, epochs=6, steps_per_epoch=5, anneal_strategy="linear", three_phase=True,
        pct_start=0.25, div_factor=10.0),
    "OneCycleLR-no-momentum": lambda S, o: S.OneCycleLR(o, max_lr=0.8, total_steps=31,
                                                        cycle_momentum=False),
    "CyclicLR": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4,
                                        step_size_down=3),
    "CyclicLR-triangular2": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                    mode="triangular2"),
    "CyclicLR-exp_range": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range",
                                                  gamma=0.9, base_momentum=0.7),
    "SequentialLR": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=5), S.ExponentialLR(o, gamma=0.9),
            S.CosineAnnealingLR(o, T_max=6)], milestones=[5, 15]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.5, total_iters=4), S.ExponentialLR(o, gamma=0.9)]),
}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_lr_sequence_matches_torch(name):
    optimizer = "Adam" if name.startswith(("OneCycleLR-linear", "CyclicLR-exp")) else "SGD"
    differential(lambda lib: schedule(lib, SCHEDULERS[name], optimizer=optimizer))


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                                  "LinearLR", "ConstantLR", "PolynomialLR", "LambdaLR"])
def test_closed_form_by_epoch(name):
    """``step(epoch)`` (deprecated, warns) uses the closed form where one exists."""
    def scenario(lib):
        opt = _optimizer(lib)
        sched = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
        lrs = []
        for epoch in (3, 1, 10, 4, 4, 0, 25):
            opt.step()
            sched.step(epoch)
            lrs.append(sched.get_last_lr())
        return lrs
    differential(scenario)


def test_warm_restarts_fractional_epochs():
    def scenario(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=3)
        lrs = []
        for epoch in (0.5, 1.25, 3.9, 4.0, 7.5, 16.1, 2.0, 40.3):
            opt.step()
            sched.step(epoch)
            lrs.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        return lrs
    differential(scenario)


def test_cosine_annealing_resumed_with_last_epoch():
    def scenario(lib):
        opt = _optimizer(lib)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"]
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, last_epoch=4)
        lrs = [sched.get_last_lr()]
        for _ in range(8):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        return lrs
    differential(scenario)


# -- random parameters ---------------------------------------------------------------------

@settings(max_examples=15)
@given(kind=st.sampled_from(["step", "multistep", "exp", "cos", "linear", "poly", "constant",
                             "warm", "onecycle"]),
       a=st.integers(1, 12), b=st.floats(0.05, 0.99), c=st.integers(0, 15))
def test_random_schedules(kind, a, b, c):
    makers = {
        "step": lambda S, o: S.StepLR(o, step_size=a, gamma=b),
        "multistep": lambda S, o: S.MultiStepLR(o, milestones=sorted({a, c, a + c}), gamma=b),
        "exp": lambda S, o: S.ExponentialLR(o, gamma=b),
        "cos": lambda S, o: S.CosineAnnealingLR(o, T_max=a, eta_min=b / 100),
        "linear": lambda S, o: S.LinearLR(o, start_factor=b, end_factor=1 - b / 2, total_iters=a),
        "poly": lambda S, o: S.PolynomialLR(o, total_iters=a, power=b * 3),
        "constant": lambda S, o: S.ConstantLR(o, factor=b, total_iters=a),
        "warm": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=a, T_mult=1 + c % 3,
                                                           eta_min=b / 10),
        "onecycle": lambda S, o: S.OneCycleLR(o, max_lr=b, total_steps=25 + c, pct_start=b / 2,
                                              three_phase=a % 2 == 0),
    }
    differential(lambda lib: schedule(lib, makers[kind], steps=25))


@settings(max_examples=15)
@given(metrics=st.lists(st.sampled_from([1.0, 0.9, 0.99995, 1.2, 0.5, 0.49999]), min_size=25,
                        max_size=25),
       mode=st.sampled_from(["min", "max"]), threshold_mode=st.sampled_from(["rel", "abs"]),
       patience=st.integers(0, 3), cooldown=st.integers(0, 2),
       min_lr=st.sampled_from([0, 0.02, [0.05, 0.0]]))
def test_reduce_lr_on_plateau(metrics, mode, threshold_mode, patience, cooldown, min_lr):
    def make(S, o):
        return S.ReduceLROnPlateau(o, mode=mode, factor=0.5, patience=patience,
                                   threshold_mode=threshold_mode, cooldown=cooldown,
                                   min_lr=min_lr)
    differential(lambda lib: schedule(lib, make, steps=25, metrics=metrics))


# -- state_dict ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_dict_round_trip(name):
    """A new scheduler loaded from a state_dict taken mid-run continues the same lrs."""
    def scenario(lib):
        S = lib.optim.lr_scheduler
        opt = _optimizer(lib)
        sched = SCHEDULERS[name](S, opt)
        for _ in range(8):
            opt.step()
            sched.step()
        saved = sched.state_dict()
        resumed = SCHEDULERS[name](S, _optimizer(lib))
        resumed.optimizer.load_state_dict(opt.state_dict())
        resumed.load_state_dict(saved)
        lrs = []
        for s in (sched, resumed):
            for _ in range(6):
                s.optimizer.step()
                s.step()
            lrs.append(s.get_last_lr())
        assert lrs[0] == lrs[1]
        return lrs[0], sorted(saved)
    differential(scenario)


def test_reduce_lr_on_plateau_state_dict():
    def scenario(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=1)
        for metric in (1.0, 0.5, 0.4, 2.0):
            sched.step(metric)
        state = sched.state_dict()
        twin = lib.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(lib))
        twin.load_state_dict(state)
        return state, twin.mode_worse, twin.mode
    differential(scenario)


def test_initial_lr_enters_the_param_groups():
    def scenario(lib):
        opt = _optimizer(lib, "Adam")
        lib.optim.lr_scheduler.StepLR(opt, 3)
        return opt.state_dict()["param_groups"], repr(opt)
    differential(scenario)


def test_tensor_learning_rate_is_filled_in_place():
    def scenario(lib):
        p = lib.zeros(2, requires_grad=True)
        lr = lib.tensor(0.5)
        opt = lib.optim.SGD([p], lr=lr)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        for _ in range(5):
            opt.step()
            sched.step()
        return lr, opt.param_groups[0]["lr"] is lr, sched.get_last_lr(), sched.base_lrs
    differential(scenario)


# -- warnings and errors ---------------------------------------------------------------------

def test_scheduler_stepped_before_optimizer_warns():
    def scenario(lib):
        sched = lib.optim.lr_scheduler.StepLR(_optimizer(lib), 2)
        sched.step()
        sched.step()
        return sched.get_last_lr()
    shown = differential(scenario)[2]
    assert len(shown) == 1 and shown[0].startswith("Detected call of `lr_scheduler.step()` before")


def test_overridden_optimizer_step_warns():
    def scenario(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        opt.step = lambda: None
        sched.step()
        return sched.get_last_lr()
    assert differential(scenario)[2][0].startswith("Seems like `optimizer.step()` has been")


def test_get_lr_outside_step_and_epoch_argument_warn():
    def scenario(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        opt.step()
        sched.step(3)
        return sched.get_lr()
    assert len(differential(scenario)[2]) == 2


def test_optimizer_step_is_wrapped_once():
    def scenario(lib):
        opt = _optimizer(lib)
        S = lib.optim.lr_scheduler
        first = S.StepLR(opt, 2)
        wrapped = opt.step
        S.ExponentialLR(opt, 0.5)
        return (opt.step is wrapped, first.optimizer is opt,
                hasattr(opt.step, "_wrapped_by_lr_sched"))
    assert returned(differential(scenario)) == (True, True, True)


def _steps(sched, count):
    for _ in range(count):
        sched.optimizer.step()
        sched.step()


ERRORS = {
    "not an optimizer": lambda S, o: S.StepLR(object(), 2),
    "resume without initial_lr": lambda S, o: S.StepLR(o, 2, last_epoch=3),
    "constant factor": lambda S, o: S.ConstantLR(o, factor=1.5),
    "linear start": lambda S, o: S.LinearLR(o, start_factor=0),
    "linear end": lambda S, o: S.LinearLR(o, end_factor=1.5),
    "lambda count": lambda S, o: S.LambdaLR(o, [lambda e: 1.0]),
    "multiplicative not callable": lambda S, o: S.MultiplicativeLR(o, 0.5),
    "warm T_0": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0),
    "warm T_mult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    "warm eta_min": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    "warm negative epoch": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    "onecycle no steps": lambda S, o: S.OneCycleLR(o, max_lr=0.1),
    "onecycle total_steps": lambda S, o: S.OneCycleLR(o, max_lr=0.1, total_steps=0),
    "onecycle epochs": lambda S, o: S.OneCycleLR(o, max_lr=0.1, epochs=-1, steps_per_epoch=2),
    "onecycle pct": lambda S, o: S.OneCycleLR(o, max_lr=0.1, total_steps=5, pct_start=1),
    "onecycle anneal": lambda S, o: S.OneCycleLR(o, 0.1, total_steps=5, anneal_strategy="x"),
    "onecycle max_lr count": lambda S, o: S.OneCycleLR(o, max_lr=[0.1], total_steps=5),
    "onecycle overrun": lambda S, o: _steps(S.OneCycleLR(o, 0.1, total_steps=2), 3),
    "cyclic mode": lambda S, o: S.CyclicLR(o, 0.1, 1.0, mode="sine"),
    "plateau factor": lambda S, o: S.ReduceLROnPlateau(o, factor=1.0),
    "plateau mode": lambda S, o: S.ReduceLROnPlateau(o, mode="avg"),
    "plateau threshold mode": lambda S, o: S.ReduceLROnPlateau(o, threshold_mode="pct"),
    "plateau min_lr count": lambda S, o: S.ReduceLROnPlateau(o, min_lr=[0.1]),
    "sequential empty": lambda S, o: S.SequentialLR(o, [], milestones=[]),
    "sequential milestones": lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[3]),
    "sequential plateau": lambda S, o: S.SequentialLR(o, [S.ReduceLROnPlateau(o)], []),
    "chained empty": lambda S, o: S.ChainedScheduler([]),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    raised(differential(lambda lib: repr(ERRORS[case](lib.optim.lr_scheduler,
                                                      _optimizer(lib, "Adam"))), may_raise=True))


def test_cycle_momentum_needs_momentum():
    def scenario(lib):
        opt = lib.optim.Adagrad([lib.zeros(2, requires_grad=True)])
        lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=4)
    raised(differential(scenario, may_raise=True), "ValueError")


def test_public_names():
    import torch

    import glasstorch as gt
    assert gt.optim.lr_scheduler.__all__ == torch.optim.lr_scheduler.__all__
    assert gt.optim.lr_scheduler.EPOCH_DEPRECATION_WARNING == \
        torch.optim.lr_scheduler.EPOCH_DEPRECATION_WARNING
    assert math.isinf(gt.optim.lr_scheduler.ReduceLROnPlateau(
        gt.optim.SGD([gt.zeros(1, requires_grad=True)])).best)
