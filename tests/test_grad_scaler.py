"""torch.amp.GradScaler (glasstorch/amp/grad_scaler.py) against PyTorch's
``torch.amp.GradScaler("cpu")``: scale trajectories, skipped steps and
parameters over scripted sequences of finite, inf, NaN and overflowing
gradients (several growth settings, two optimizers, unscale_ + clipping);
errors and warnings with PyTorch's texts; state_dict and pickle round trips;
the aten ops' own checks; and the deprecated torch.cpu/cuda.amp spellings.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import glasstorch as gt
from glasstorch._dispatcher.op_counter import OpCounter

from .differential import differential, run

# The gradient coefficient each event puts into the loss (times the scale: 1e38 overflows).
EVENTS = {"ok": 2.0, "inf": float("inf"), "-inf": float("-inf"), "nan": float("nan"),
          "overflow": 1e38}


def _values(t):
    return np.asarray(t.detach().numpy().tolist())


def train(lib, events, *, clip=False, scaler_kwargs=None, scaler=None):
    """One SGD(momentum) and one Adam optimizer; each iteration's events say what
    each optimizer's gradients hold.  Returns, per iteration, the scale, the
    growth tracker, both step results and the parameters; then the state_dict."""
    w1 = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w2 = lib.tensor([[0.5, 0.25], [-1.0, 2.0]], requires_grad=True)
    sgd = lib.optim.SGD([w1], lr=0.1, momentum=0.9)
    adam = lib.optim.Adam([w2], lr=0.01)
    scaler = scaler or lib.amp.GradScaler("cpu", **(scaler_kwargs or {}))
    history = []
    for event1, event2 in events:
        c1 = lib.tensor([1.0, EVENTS[event1], 3.0])
        c2 = lib.tensor([[1.0, -1.0], [0.5, EVENTS[event2]]])
        sgd.zero_grad()
        adam.zero_grad()
        scaler.scale((w1 * c1).sum() + (w2 * c2).sum()).backward()
        if clip:
            scaler.unscale_(sgd)
            lib.nn.utils.clip_grad_norm_([w1], 1.0)
        steps = (scaler.step(sgd), scaler.step(adam))
        scaler.update()
        history.append((scaler.get_scale(), scaler._get_growth_tracker(), steps,
                        _values(w1), _values(w2)))
    return history, scaler.state_dict()


def _for_clipping(events):
    """Clipping a huge finite gradient depends on its norm, which overflows to inf
    in torch's float32 vector_norm but not in glasstorch's (a known divergence of
    the reduction, not of GradScaler); clipped runs use inf instead of overflow."""
    return [tuple("inf" if e == "overflow" else e for e in pair) for pair in events]


def assert_same_training(ours, theirs):
    (our_history, our_state), (their_history, their_state) = ours, theirs
    assert our_state == their_state
    assert len(our_history) == len(their_history)
    for o, t in zip(our_history, their_history):
        assert o[:3] == t[:3], (o, t)      # scale and tracker exactly
        for a, b in zip(o[3:], t[3:]):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, equal_nan=True)


SCRIPT = [("ok", "ok"), ("ok", "ok"), ("inf", "ok"), ("ok", "nan"), ("ok", "ok"), ("ok", "ok"),
          ("overflow", "ok"), ("ok", "-inf"), ("ok", "ok"), ("ok", "ok"), ("ok", "ok")]


@pytest.mark.parametrize("scaler_kwargs", [
    {"init_scale": 4.0, "growth_interval": 2},
    {"init_scale": 2.0 ** 16, "growth_interval": 3, "growth_factor": 1.5, "backoff_factor": 0.25},
    {"init_scale": 3e38, "growth_interval": 1, "growth_factor": 3.0},   # growth that would overflow
    {"init_scale": 1.0, "growth_interval": 1, "backoff_factor": 0.1},
], ids=["interval2", "factor1.5", "near-max", "interval1"])
@pytest.mark.parametrize("clip", [False, True])
def test_scripted_trajectory_matches_pytorch(scaler_kwargs, clip):
    events = _for_clipping(SCRIPT) if clip else SCRIPT
    assert_same_training(train(gt, events, clip=clip, scaler_kwargs=scaler_kwargs),
                         train(torch, events, clip=clip, scaler_kwargs=scaler_kwargs))


@settings(max_examples=15)
@given(events=st.lists(st.tuples(st.sampled_from(sorted(EVENTS)), st.sampled_from(sorted(EVENTS))),
                       min_size=1, max_size=7),
       growth_interval=st.integers(1, 3), growth_factor=st.sampled_from([1.5, 2.0, 4.0]),
       backoff_factor=st.sampled_from([0.5, 0.125, 0.9]),
       init_scale=st.sampled_from([1.0, 2.0 ** 16, 1e30]), clip=st.booleans())
def test_random_trajectories_match_pytorch(events, growth_interval, growth_factor,
                                           backoff_factor, init_scale, clip):
    kwargs = dict(growth_interval=growth_interval, growth_factor=growth_factor,
                  backoff_factor=backoff_factor, init_scale=init_scale)
    events = _for_clipping(events) if clip else events
    assert_same_training(train(gt, events, clip=clip, scaler_kwargs=kwargs),
                         train(torch, events, clip=clip, scaler_kwargs=kwargs))


def test_state_dict_round_trip_continues_the_same_trajectory():
    kwargs = {"init_scale": 8.0, "growth_interval": 2}

    def resumed(lib):
        _, state = train(lib, SCRIPT[:5], scaler_kwargs=kwargs)
        fresh = lib.amp.GradScaler("cpu")
        fresh.load_state_dict(state)          # before its first scale(): _init_* used
        before = (fresh.get_scale(), fresh._get_growth_tracker(), fresh.state_dict())
        return before, train(lib, SCRIPT[5:], scaler=fresh)
    ours, theirs = resumed(gt), resumed(torch)
    assert ours[0] == theirs[0]
    assert_same_training(ours[1], theirs[1])


def test_load_state_dict_into_a_running_scaler_and_pickle():
    def scenario(lib):
        _, state = train(lib, SCRIPT[:4], scaler_kwargs={"init_scale": 8.0, "growth_interval": 3})
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(lib.ones(()))            # tensors exist: load_state_dict fills them
        scaler.load_state_dict(state)
        out = [scaler.get_scale(), scaler._get_growth_tracker(), scaler.state_dict()]
        copy = pickle.loads(pickle.dumps(scaler))
        out += [copy.get_scale(), copy._get_growth_tracker(), copy._scale is None]
        return out
    differential(scenario)


def test_pickling_mid_iteration_is_refused():
    def scenario(lib):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(w.sum()).backward()
        scaler.unscale_(opt)
        return pickle.dumps(scaler)
    differential(scenario, may_raise=True)


def test_scale_nested_outputs():
    def scenario(lib):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        x = lib.tensor([1.0, 2.0])
        out = scaler.scale([x, (x, [x * 2])])
        lazy = scaler.scale(iter([x]))
        return out, type(lazy).__name__, list(lazy), scaler.scale(x)
    differential(scenario)


@pytest.mark.parametrize("value", [3, None, 2.5])
def test_scale_refuses_non_tensors(value):
    differential(lambda lib: lib.amp.GradScaler("cpu").scale([lib.ones(1), value]), may_raise=True)


def test_ops_run_through_the_dispatcher():
    w = gt.ones(2, requires_grad=True)
    opt = gt.optim.SGD([w], lr=0.1)
    scaler = gt.amp.GradScaler("cpu")
    with OpCounter() as counts:
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert counts.by_op_key["aten::_amp_foreach_non_finite_check_and_unscale_", "CPU"] == 1
    assert counts.by_op_key["aten::_amp_update_scale_", "CPU"] == 1


# -- errors ----------------------------------------------------------------------------------

def _one_step_setup(lib, dtype=None):
    w = lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu")
    scaler.scale(w.sum()).backward()
    if dtype is not None:
        w.grad = w.grad.to(getattr(lib, dtype))
    return w, opt, scaler


MISUSE = {
    "unscale-twice": lambda lib, w, opt, s: (s.unscale_(opt), s.unscale_(opt)),
    "unscale-after-step": lambda lib, w, opt, s: (s.step(opt), s.unscale_(opt)),
    "step-twice": lambda lib, w, opt, s: (s.step(opt), s.step(opt)),
    "closure": lambda lib, w, opt, s: s.step(opt, closure=lambda: None),
    "update-without-step": lambda lib, w, opt, s: s.update(),
    "new-scale-two-elements": lambda lib, w, opt, s: s.update(lib.ones(2)),
    "new-scale-requires-grad": lambda lib, w, opt, s: s.update(lib.ones((), requires_grad=True)),
    "new-scale-int": lambda lib, w, opt, s: s.update(3),
    "new-scale-float": lambda lib, w, opt, s: (s.update(5.0), s.get_scale()),
    "new-scale-tensor": lambda lib, w, opt, s: (s.update(lib.tensor([7.0])), s.get_scale()),
    "load-empty": lambda lib, w, opt, s: s.load_state_dict({}),
    "no-grads": lambda lib, w, opt, s: s.step(lib.optim.SGD([lib.ones(1, requires_grad=True)],
                                                               lr=0.1)),
    "setters": lambda lib, w, opt, s: (s.set_growth_factor(3.0), s.set_backoff_factor(0.2),
                                       s.set_growth_interval(7), s.get_growth_factor(),
                                       s.get_backoff_factor(), s.get_growth_interval(),
                                       s.is_enabled(), s.state_dict()),
}


@pytest.mark.parametrize("name", sorted(MISUSE))
def test_misuse_raises_pytorchs_errors(name):
    def scenario(lib):
        w, opt, scaler = _one_step_setup(lib)
        return MISUSE[name](lib, w, opt, scaler)
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_unscale_by_gradient_dtype(dtype):
    def scenario(lib):
        w, opt, scaler = _one_step_setup(lib, dtype)
        scaler.unscale_(opt)
        return w.grad
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("method", ["unscale_", "step", "update"])
def test_calls_before_scale_raise(method):
    def scenario(lib):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        return getattr(scaler, method)(*([] if method == "update" else [opt]))
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("kwargs", [{"growth_factor": 1.0}, {"backoff_factor": 1.0},
                                    {"growth_factor": 0.5, "enabled": False}])
def test_constructor_checks(kwargs):
    differential(lambda lib: lib.amp.GradScaler("cpu", **kwargs).is_enabled(), may_raise=True)


# -- disabled scalers and the deprecated spellings ------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda lib: lib.amp.GradScaler(),                       # device "cuda", no CUDA
    lambda lib: lib.amp.GradScaler("cpu", enabled=False),
    lambda lib: lib.cuda.amp.GradScaler(),
    lambda lib: lib.cpu.amp.GradScaler(init_scale=8.0),
], ids=["default-cuda", "disabled", "cuda-amp", "cpu-amp"])
def test_disabled_and_deprecated_scalers(make):
    def scenario(lib):
        scaler = make(lib)
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5)
        loss = w.sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.step(opt)
        scaler.update()
        return (scaled is loss, scaler.is_enabled(), scaler.get_scale(), scaler.state_dict(),
                scaler.load_state_dict({}) if not scaler.is_enabled() else None, w)
    differential(scenario, named=True)


class _RecordingSGD:
    """An optimizer that unscales and skips by itself (``_step_supports_amp_scaling``):
    GradScaler hands it ``grad_scale`` and ``found_inf`` for the step."""

    _step_supports_amp_scaling = True

    def __init__(self, lib, params):
        self.lib, self.param_groups, self.seen = lib, [{"params": params}], []

    def step(self):
        self.seen.append((self.grad_scale.item(), self.found_inf.item()))
        return "stepped"


def test_optimizer_that_supports_amp_scaling():
    def scenario(lib):
        w = lib.ones(2, requires_grad=True)
        opt = _RecordingSGD(lib, [w])
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        out = []
        for coeff in (1.0, float("inf"), 1.0):
            w.grad = None
            scaler.scale((w * coeff).sum()).backward()
            out.append(scaler.step(opt))
            out.append(hasattr(opt, "grad_scale"))
            scaler.update()
        return out, opt.seen, scaler.get_scale()
    differential(scenario)


# -- the ops' own checks --------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib._amp_foreach_non_finite_check_and_unscale_(
        [lib.ones(2)], lib.zeros(2), lib.ones(())),
    lambda lib: lib._amp_foreach_non_finite_check_and_unscale_(
        [lib.ones(2)], lib.zeros(()), lib.ones(2)),
    lambda lib: lib._amp_foreach_non_finite_check_and_unscale_(
        [lib.ones(2)], lib.zeros((), dtype=lib.float64), lib.ones(())),
    lambda lib: lib._amp_foreach_non_finite_check_and_unscale_(
        [lib.ones(2)], lib.zeros(()), lib.ones((), dtype=lib.float64)),
    lambda lib: lib._amp_foreach_non_finite_check_and_unscale_(
        [lib.ones(2, dtype=lib.int64)], lib.zeros(()), lib.ones(())),
    lambda lib: lib._amp_update_scale_(lib.ones(()), lib.zeros((), dtype=lib.int64),
                                       lib.zeros(()), 2.0, 0.5, 1),
    lambda lib: lib._amp_update_scale_(lib.ones((), dtype=lib.float64),
                                       lib.zeros((), dtype=lib.int32), lib.zeros(()), 2.0, 0.5, 1),
    lambda lib: lib._amp_update_scale_(lib.ones(2), lib.zeros((), dtype=lib.int32),
                                       lib.zeros(()), 2.0, 0.5, 1),
    lambda lib: lib._amp_update_scale_(lib.ones(()), lib.zeros((), dtype=lib.int32),
                                       lib.zeros((), dtype=lib.float64), 2.0, 0.5, 1),
], ids=["found-inf-numel", "inv-scale-numel", "found-inf-dtype", "inv-scale-dtype", "int-grads",
        "tracker-dtype", "scale-dtype", "scale-numel", "update-found-inf-dtype"])
def test_op_argument_checks(call):
    differential(call, may_raise=True)


def test_update_scale_op_sequence():
    """The rule step by step, tracker included: from 4 with interval 2,
    ok ok inf ok ok nan -> 4 8 4 4 8 4."""
    def scenario(lib):
        scale, tracker = lib.full((), 4.0), lib.zeros((), dtype=lib.int32)
        out = []
        for found in (0.0, 0.0, 1.0, 0.0, 0.0, float("nan")):
            lib._amp_update_scale_(scale, tracker, lib.tensor(found), 2.0, 0.5, 2)
            out.append((scale.item(), tracker.item()))
        return out
    differential(scenario)


# -- the seed's training loops (seeds/001, "8.3 GradScaler vs autocast-only") -------------------

@pytest.mark.parametrize("device_type,fast_dtype,scaled", [
    ("cuda", "float16", True),      # as written: no CUDA here, so both warn and disable
    ("cpu", "float16", True),       # the same loop where autocast and the scaler work
    ("cpu", "bfloat16", False),     # bf16: no scaler needed
])
def test_seed_training_loop(device_type, fast_dtype, scaled):
    rng = np.random.default_rng(1)
    w1, w2 = rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((3, 8))
    data = [(rng.standard_normal((6, 4)), rng.integers(0, 3, 6)) for _ in range(4)]

    def loop(lib):
        model = lib.nn.Sequential(lib.nn.Linear(4, 8, bias=False), lib.nn.ReLU(),
                                  lib.nn.Linear(8, 3, bias=False))
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor(w1))
            model[2].weight.copy_(lib.tensor(w2.astype(np.float32)))
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        loss_fn = lib.nn.CrossEntropyLoss()
        scaler = lib.cuda.amp.GradScaler() if device_type == "cuda" else \
            lib.amp.GradScaler("cpu")
        losses = []
        for x, y in [(lib.tensor(x, dtype=lib.float32), lib.tensor(y)) for x, y in data]:
            opt.zero_grad(set_to_none=True)
            with lib.autocast(device_type, dtype=getattr(lib, fast_dtype)):
                out = model(x)
                loss = loss_fn(out, y)
            if scaled:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            losses.append((str(out.dtype), str(loss.dtype), loss.item(), scaler.get_scale()))
        return losses, [p.detach().numpy().copy() for p in model.parameters()]

    ours, theirs = run(loop, gt, named=True), run(loop, torch, named=True)
    assert ours[0] == theirs[0] == "returned" and ours[2] == theirs[2]    # same warnings
    (our_losses, our_params), (their_losses, their_params) = ours[1], theirs[1]
    for o, t in zip(our_losses, their_losses):
        assert o[:2] == t[:2] and o[3] == t[3]                        # dtypes, scale
        assert o[2] == pytest.approx(t[2], rel=2e-2, abs=1e-2)        # half-precision loss
    for o, t in zip(our_params, their_params):
        np.testing.assert_allclose(o, t, rtol=2e-2, atol=2e-3)
