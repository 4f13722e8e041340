"""Inductor on whole programs: make_fx's catalogue of 47 functions and the
test models (the example GPT and classifier, a CNN with BatchNorm, an LSTM
tagger), compiled with torch.compile's default backend against glasstorch's
eager run (itself tested against torch's elsewhere), forward and training:
values, dtypes, shapes, strides, and the gradients of several steps."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import glasstorch as gt
from examples.dual import load_example, tiny_gpt

from .helpers import to_numpy
from .test_make_fx import CATALOGUE, _inputs

# transcendental ops go through libmvec / SLEEF in compiled code: a few ulp
RTOL, ATOL = 2e-5, 2e-6


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


def _catalogue_args(name):
    shapes = CATALOGUE[name][1]
    if name == "tuple_inputs":
        x, a, b = _inputs(gt, [(3,), (3,), (3,)])
        return [x, (a, b)]
    return _inputs(gt, shapes)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_compiled_equals_eager(name):
    """Each function of make_fx's catalogue: compiled (fused C kernels and
    extern calls) gives eager's values, dtypes, shapes and strides."""
    check_catalogue(name)


def check_catalogue(name, **options):
    """Catalogue function ``name`` compiled with ``options`` against eager:
    values, dtypes, shapes, strides, and the inputs it writes."""
    fn = CATALOGUE[name][0](gt)
    gt._dynamo.reset()
    compiled = gt.compile(fn, **options)
    eager_args, compiled_args = _catalogue_args(name), _catalogue_args(name)
    expected, got = _flat(fn(*eager_args)), _flat(compiled(*compiled_args))
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        if not isinstance(e, gt.Tensor):
            assert e == g
            continue
        assert (g.dtype, g.shape, g.stride()) == (e.dtype, e.shape, e.stride())
        np.testing.assert_allclose(to_numpy(g).astype(np.float64),
                                   to_numpy(e).astype(np.float64), rtol=RTOL, atol=ATOL)
    for e, g in zip(eager_args, compiled_args):     # inputs written in place: as eager
        if isinstance(e, gt.Tensor):
            np.testing.assert_array_equal(to_numpy(g), to_numpy(e))


def _cnn():
    nn = gt.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 10))


class _Tagger(gt.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = gt.nn.LSTM(5, 6, batch_first=True)
        self.head = gt.nn.Linear(6, 3)

    def forward(self, x):
        return self.head(self.lstm(x)[0]).reshape(-1, 3)


def _model(name):
    """(model, inputs, targets, loss of (output, targets))"""
    gt.manual_seed(0)
    ce = gt.nn.functional.cross_entropy
    if name == "gpt":
        model, idx, targets = tiny_gpt(gt)
        return model, (idx, targets), None, lambda out, _: out[1]
    if name == "classifier":
        model = load_example("train_classifier.py", "glasstorch").make_model(hidden=32)
        x, = _inputs(gt, [(4, 1, 16, 16)])
        return model, (x,), gt.tensor([3, 7, 0, 9]), ce
    if name == "cnn":
        x, = _inputs(gt, [(2, 1, 8, 8)])
        return _cnn(), (x,), gt.tensor([3, 7]), ce
    x, = _inputs(gt, [(2, 4, 5)])
    return _Tagger(), (x,), gt.tensor([0, 1, 2, 0, 2, 2, 1, 0]), ce


@pytest.mark.parametrize("name", ["gpt", "classifier", "cnn", "lstm"])
def test_training_compiled_equals_eager(name):
    """Three SGD steps with the model compiled (forward and backward graphs
    through Inductor): eager's losses, gradients, parameters and buffers
    (BatchNorm's running statistics).  SGD, not Adam: Adam's update divides
    by the gradient's own size, so rounding noise in a gradient near zero
    becomes a full step and the runs part."""
    model, inputs, targets, loss_fn = _model(name)
    twin = copy.deepcopy(model)
    gt._dynamo.reset()
    compiled = gt.compile(model)
    runs = []
    for net, run in ((twin, twin), (model, compiled)):
        opt = gt.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        losses, grads = [], []
        for _ in range(3):
            loss = loss_fn(run(*inputs), targets)
            loss.backward()
            losses.append(loss.item())
            grads.append([p.grad.clone() for p in net.parameters()])
            opt.step()
            opt.zero_grad()
        runs.append((losses, grads, net.state_dict()))
    (eager_losses, eager_grads, eager_state), (losses, grads, state) = runs
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for step_grads, step_eager in zip(grads, eager_grads):
        for g, e in zip(step_grads, step_eager):
            np.testing.assert_allclose(to_numpy(g), to_numpy(e), rtol=1e-4, atol=1e-5)
    for key, value in eager_state.items():
        np.testing.assert_allclose(to_numpy(state[key]).astype(np.float64),
                                   to_numpy(value).astype(np.float64), rtol=1e-4, atol=1e-5)


def test_compiled_gpt_runs_generated_c(monkeypatch, tmp_path, compiled_graphs):
    """The compiled GPT's graphs become C kernels (compiled into the cache
    directory) and a C wrapper calling them and the matrix products (BLAS's
    gemm) in between."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    seen = compiled_graphs
    model, idx, targets = tiny_gpt(gt)
    _, loss = gt.compile(model)(idx, targets)
    loss.backward()
    assert [c.code.name.split("_", 1)[1] for c in seen] == ["forward", "backward"]
    forward = seen[0].code
    assert len(forward.kernels) >= 5
    assert "_run_0(data_ptrs)" in forward.python_source
    assert "gt_mm_f32(" in forward.c_source and "aten.mm" not in forward.python_source
    assert any(kernel.startswith("cpp_fused_") and "softmax" in kernel
               for kernel, _ in forward.kernels)
    assert list(tmp_path.glob("*/c*.so"))


def test_training_step_with_backward_and_step_inside_compile(torch):
    """A whole training step under torch.compile: ``loss.backward()`` breaks the
    graph and runs (PyTorch's break: 'Unsupported Tensor.backward() call'),
    then ``opt.step()`` runs as ``torch.compile(opt.step)`` would, its update one
    compiled graph after the first step; the losses and weights follow torch's
    eager ones, and no frame is compiled twice (the bound methods ``opt.step``
    and ``opt.zero_grad``, new objects at every read, are guarded by their
    function and instance)."""
    gt._dynamo.reset()
    results = []
    for lib, compile_fn in ((torch, None), (gt, gt.compile)):
        lib.manual_seed(0)
        model = lib.nn.Linear(4, 2)
        with lib.no_grad():
            model.weight.copy_(lib.from_numpy(np.linspace(-1, 1, 8, dtype=np.float32)
                                              .reshape(2, 4)))
            model.bias.zero_()
        opt = lib.optim.Adam(model.parameters(), lr=0.1)
        x = lib.from_numpy(np.arange(32, dtype=np.float32).reshape(8, 4) / 10)

        def step(x):
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        run = compile_fn(step) if compile_fn else step
        results.append(([run(x).item() for _ in range(4)], to_numpy(model.weight.detach())))
    (expected, w_expected), (got, w_got) = results
    (compiled_step,) = [ctx.optimizer_steps[opt] for ctx in gt._dynamo._CONTEXTS
                        if opt in ctx.optimizer_steps]
    assert len(compiled_step.compiled) == 1
    assert gt._dynamo.utils.counters["stats"]["recompiles"] == 0
    # (the compiled update computes Adam's bias corrections from a float32 step
    # count, as PyTorch's compiled Adam does: the last bits differ, 1e-5 here)
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    assert got[3] < got[0]
    np.testing.assert_allclose(w_got, w_expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name, kwargs", [("Adam", {"lr": 1e-2}),
                                          ("AdamW", {"lr": 1e-2, "weight_decay": 0.1}),
                                          ("SGD", {"lr": 0.1, "momentum": 0.9})])
def test_compiled_optimizer_step_equals_eager(name, kwargs):
    """``torch.compile(opt.step)``: the first step runs eagerly (it builds the
    state), later ones as one compiled graph of the parameters, gradients and
    state; parameters and state follow eager's (Adam's step count is a
    tensor in the graph, so its bias corrections round in float32, and the
    next gradients follow the parameters' last bits: 1e-4 on the moments);
    the step's hooks still run at every call."""
    model, inputs, targets, loss_fn = _model("classifier")
    twin = copy.deepcopy(model)
    gt._dynamo.reset()
    opts = [getattr(gt.optim, name)(net.parameters(), **kwargs) for net in (twin, model)]
    steps = [opts[0].step, gt.compile(opts[1].step)]
    calls = []
    opts[1].register_step_post_hook(lambda opt, args, kw: calls.append(opt))
    for _ in range(4):
        for net, opt, step in zip((twin, model), opts, steps):
            loss_fn(net(*inputs), targets).backward()
            step()
            opt.zero_grad()
    assert len(steps[1].compiled) == 1 and len(calls) == 4
    for p, e in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(to_numpy(p), to_numpy(e), rtol=1e-5, atol=1e-6)
        for key, value in opts[0].state[e].items():
            got = opts[1].state[p][key]
            np.testing.assert_allclose(to_numpy(got), to_numpy(value), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kwargs, prefix", [
    ({"options": {"no_such_option": 1}}, "Unexpected optimization option no_such_option"),
    ({"mode": "reduce-overhead", "options": {"max_fusion_size": 2}},
     "Either mode or options can be specified, but both can't be specified at the same time."),
    ({"mode": "fastest"}, "Unrecognized mode=fastest, should be one of: "),
])
def test_compile_mode_and_options_errors_as_torch(kwargs, prefix):
    """Bad ``mode=`` / ``options=`` raise torch's RuntimeError when
    torch.compile is called, with torch's message."""
    import torch
    for lib in (gt, torch):
        with pytest.raises(RuntimeError) as info:
            lib.compile(lambda x: x + 1, **kwargs)
        assert str(info.value).startswith(prefix), (lib.__name__, str(info.value))


@pytest.mark.parametrize("case", ["not callable", "decorated None", "missing argument",
                                  "unexpected keyword", "too many arguments"])
def test_compile_call_errors_as_torch(case):
    """What torch.compile raises for a bad model and for a bad call of the
    compiled function: the same type and message as torch (a bad call gets
    Python's own TypeError, as eager)."""
    import torch

    def f(x, y):
        return x + y
    for lib in (gt, torch):
        x = lib.ones(2)
        calls = {"not callable": lambda: lib.compile(3),
                 "decorated None": lambda: lib.compile(mode="default")(None),
                 "missing argument": lambda: lib.compile(f)(x),
                 "unexpected keyword": lambda: lib.compile(f)(x, y=x, z=x),
                 "too many arguments": lambda: lib.compile(f)(x, x, x)}
        with pytest.raises(Exception) as info:
            calls[case]()
        got = (type(info.value), str(info.value))
        if lib is gt:
            ours = got
    assert ours == got


def test_compile_options_reach_every_graph(compiled_graphs):
    """``options`` hold for the forward and the backward graph: a fusion size
    of 1 gives one kernel per buffer in both (and eager's values)."""
    seen = compiled_graphs
    x = gt.randn(4, 8, requires_grad=True)
    f = gt.compile(lambda x: (x.sin() * 2).softmax(-1).sum(), options={"max_fusion_size": 1})
    f(x).backward()
    assert len(seen) == 2
    for compiled in seen:
        kernels = [s for s in compiled.scheduler.steps if hasattr(s, "nodes")]
        assert all(len(k.nodes) == 1 for k in kernels) and len(kernels) > 1
    expected = gt.autograd.grad((x.sin() * 2).softmax(-1).sum(), x)[0]
    np.testing.assert_allclose(to_numpy(x.grad), to_numpy(expected), rtol=RTOL, atol=ATOL)
