"""AOTAutograd against torch's: the forward and backward graphs the default
partitioner makes (as code, character for character), the saved tensors, and
training steps run through aot_function giving eager's gradients."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from functorch.compile import aot_function as torch_aot_function
from functorch.compile import default_partition as torch_default_partition
from functorch.compile import min_cut_rematerialization_partition as torch_min_cut

import glasstorch as gt
from glasstorch._functorch.aot_autograd import aot_function, aot_module, nop
from glasstorch._functorch.partitioners import (default_partition,
                                                min_cut_rematerialization_partition)

from .helpers import to_numpy
from .test_make_fx import _classifier_step, _cnn_step, _gpt_step, _inputs, _lstm_step

AOT = {gt: (aot_function, default_partition, min_cut_rematerialization_partition),
       torch: (torch_aot_function, torch_default_partition, torch_min_cut)}


def _recording(store: list):
    def compiler(gm, inputs):
        store.append(gm.code)
        return gm
    return compiler


FUNCTIONS = {
    "mm_relu_sin": (lambda lib: lambda x, w, y: ((x @ w).relu() * y).sin().sum(),
                    [(2, 3), (3, 3), (2, 3)], [True, True, False]),
    "detached_output": (lambda lib: lambda x, w: ((x @ w).tanh().sum(), (x @ w).detach()),
                        [(2, 3), (3, 4)], [True, True]),
    "layer_norm_gelu": (lambda lib: lambda x, w, b: lib.nn.functional.gelu(
        lib.nn.functional.layer_norm(x, (4,), w, b)).mean(), [(3, 4), (4,), (4,)],
        [True, True, True]),
    "softmax_cross_entropy": (lambda lib: lambda x, w: lib.nn.functional.cross_entropy(
        x @ w, lib.tensor([0, 2, 1])), [(3, 4), (4, 5)], [False, True]),
    "two_outputs": (lambda lib: lambda x, y: (x * y, (x.exp() + y).sum()),
                    [(4,), (4,)], [True, True]),
}


def _args(lib, name):
    _, shapes, grads = FUNCTIONS[name]
    return [t.requires_grad_(g) for t, g in zip(_inputs(lib, shapes), grads)]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_default_partition_graphs_as_torch(name):
    """Forward graph (outputs, then saved values) and backward graph (saved
    values, then tangents) print as torch's; values and gradients equal eager's."""
    results = []
    for lib in (gt, torch):
        aot, partition, _ = AOT[lib]
        codes: list = []
        fn = FUNCTIONS[name][0](lib)
        compiled = aot(fn, _recording(codes), _recording(codes), partition_fn=partition)
        args = _args(lib, name)
        out = compiled(*args)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        loss = sum(o.sum() for o in outs if o.requires_grad)
        loss.backward()
        eager_args = _args(lib, name)
        eager = fn(*eager_args)
        eager_outs = eager if isinstance(eager, tuple) else (eager,)
        sum(o.sum() for o in eager_outs if o.requires_grad).backward()
        for a, e in zip(args, eager_args):
            if a.requires_grad:
                np.testing.assert_allclose(to_numpy(a.grad), to_numpy(e.grad), rtol=1e-6,
                                           atol=1e-7)
        for o, e in zip(outs, eager_outs):
            np.testing.assert_allclose(to_numpy(o.detach()), to_numpy(e.detach()), rtol=1e-6)
        results.append((codes, type(out).__name__, [o.requires_grad for o in outs],
                        type(outs[0].grad_fn).__name__ if outs[0].grad_fn else None))
    assert results[0] == results[1]


def test_inference_graph_when_nothing_needs_grad():
    """No grad needed: one forward graph (no joint, no partition), as torch's."""
    codes = []
    for lib in (gt, torch):
        store: list = []
        compiled = AOT[lib][0](FUNCTIONS["two_outputs"][0](lib), _recording(store))
        with lib.no_grad():
            out = compiled(*_args(lib, "two_outputs"))
        assert not any(o.requires_grad for o in out)
        codes.append(store)
    assert codes[0] == codes[1]


def _saved_count(lib, step, args, partition):
    """(How many values the forward graph hands the backward, the loss, the
    parameters' gradients) for ``step.loss`` run through aot_function."""
    aot = AOT[lib][0]
    seen = {}

    def fw(gm, inputs):
        seen["fw"] = gm
        return gm

    def bw(gm, inputs):
        seen["bw"] = gm
        return gm
    params, *rest = args
    state = {**params, **step.buffers}      # buffers are inputs too, as aot_module makes them
    names = list(state)

    def flat_step(*flat):
        return step.loss(dict(zip(names, flat[:len(names)])), *flat[len(names):])
    compiled = aot(flat_step, fw, bw, partition_fn=partition)
    loss = compiled(*state.values(), *rest)
    loss.backward()
    grads = [p.grad for p in params.values()]
    placeholders = [n for n in seen["bw"].graph.nodes if n.op == "placeholder"]
    return len([n for n in placeholders if not n.name.startswith("tangents")]), loss, grads


@pytest.mark.parametrize("model", ["gpt", "cnn", "lstm", "classifier"])
def test_training_step_gradients_and_saved_tensors(model):
    """A model's loss through aot_function: eager's loss and gradients, and no
    more saved tensors than torch's partitioner saves for the same model (the
    LSTM: torch takes oneDNN's fused kernel there, so only glasstorch's own eager
    run is the reference)."""
    build = {"gpt": _gpt_step, "cnn": _cnn_step, "lstm": _lstm_step,
             "classifier": _classifier_step}[model]

    step, args = build(gt)
    count, loss, grads = _saved_count(gt, step, args, default_partition)
    eager_loss, eager_grads = step(*args)
    np.testing.assert_allclose(to_numpy(loss.detach()), to_numpy(eager_loss.detach()),
                               rtol=1e-6)
    for g, e in zip(grads, eager_grads):
        np.testing.assert_allclose(to_numpy(g), to_numpy(e), rtol=1e-5, atol=1e-6)
    min_cut_count, min_cut_loss, min_cut_grads = _saved_count(
        gt, step, build(gt)[1], min_cut_rematerialization_partition)
    for g, e in zip(min_cut_grads, eager_grads):
        np.testing.assert_allclose(to_numpy(g), to_numpy(e), rtol=1e-5, atol=1e-6)
    if model != "lstm":
        step_t, args_t = build(torch)
        theirs, _, _ = _saved_count(torch, step_t, args_t, torch_default_partition)
        assert count <= theirs
    assert min_cut_count <= count


def test_lstm_saves_no_more_than_torchs_min_cut():
    """The LSTM step: torch traces oneDNN's fused LSTM layer, which saves little, and
    its aot_function then fails at run time on this step (an assertion on the saved
    Parameters), so the count is read from the forward graph's outputs (the loss,
    then what the backward gets).  With the min-cut partitioner, the one torch.compile
    trains with, glasstorch saves no more than torch."""
    counts = []
    for lib in (gt, torch):
        step, args = _lstm_step(lib)
        params, *rest = args
        state = {**params, **step.buffers}
        names = list(state)
        seen = {}

        def fw(gm, inputs):
            seen["fw"] = gm
            return gm

        def flat_step(*flat):
            return step.loss(dict(zip(names, flat[:len(names)])), *flat[len(names):])
        compiled = AOT[lib][0](flat_step, fw, fw, partition_fn=AOT[lib][2])
        try:
            compiled(*state.values(), *rest)
        except AssertionError:
            assert lib is torch
        output, = [n for n in seen["fw"].graph.nodes if n.op == "output"]
        counts.append(len(output.args[0]) - 1)
    assert counts[0] <= counts[1], counts


def test_min_cut_recomputes_cheap_ops():
    """The min-cut partitioner saves fewer bytes than the default one by
    recomputing pointwise ops in the backward; gradients stay eager's."""
    def fn(x, w):
        h = (x @ w)
        return (h.sin().cos().exp() * h).sum()
    saved = {}
    for partition in (default_partition, min_cut_rematerialization_partition):
        graphs = {}

        def bw(gm, inputs):
            graphs["bw"] = gm
            return gm
        x, w = [t.requires_grad_() for t in _inputs(gt, [(8, 16), (16, 16)])]
        aot_function(fn, nop, bw, partition_fn=partition)(x, w).backward()
        saved[partition.__name__] = [n.meta["val"].numel() for n in graphs["bw"].graph.nodes
                                     if n.op == "placeholder" and
                                     not n.name.startswith("tangents")]
        x2, w2 = [t.requires_grad_() for t in _inputs(gt, [(8, 16), (16, 16)])]
        fn(x2, w2).backward()
        np.testing.assert_allclose(to_numpy(x.grad), to_numpy(x2.grad), rtol=1e-6)
        np.testing.assert_allclose(to_numpy(w.grad), to_numpy(w2.grad), rtol=1e-6)
    assert sum(saved["min_cut_rematerialization_partition"]) < sum(saved["default_partition"])


def test_aot_module_trains_like_eager():
    """aot_module: the Module's parameters are graph inputs, and .grad lands
    on them as in eager."""
    gt.manual_seed(0)
    model = gt.nn.Sequential(gt.nn.Linear(4, 8), gt.nn.GELU(), gt.nn.Linear(8, 2))
    x, = _inputs(gt, [(3, 4)])
    compiled = aot_module(model, nop, nop)
    compiled(x).pow(2).sum().backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).pow(2).sum().backward()
    for g, p in zip(got, model.parameters()):
        np.testing.assert_allclose(to_numpy(g), to_numpy(p.grad), rtol=1e-6)


def test_backend_registry_as_torch():
    """list_backends hides the debug backends as torch's does (torch also lists
    backends glasstorch does not have: cudagraphs, openxla, tvm); eager and
    aot_eager run a graph; an unknown name is torch's InvalidBackend."""
    assert gt._dynamo.list_backends() == ["inductor"]
    assert "inductor" in torch._dynamo.list_backends()
    assert {"eager", "aot_eager", "aot_eager_default_partitioner"} <= set(
        gt._dynamo.list_backends(exclude_tags=()))
    gm = gt.fx.symbolic_trace(gt.nn.Sequential(gt.nn.Linear(3, 3), gt.nn.Tanh()))
    x = gt.ones(2, 3, requires_grad=True)
    for name in ("eager", "aot_eager"):
        out = gt._dynamo.lookup_backend(name)(gm, [x])(x)
        out = out[0] if isinstance(out, (tuple, list)) else out
        np.testing.assert_allclose(to_numpy(out.detach()), to_numpy(gm(x).detach()))
    messages = []
    for lib in (gt, torch):
        with pytest.raises(RuntimeError) as info:
            lib._dynamo.lookup_backend("no_such_backend")
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _mutating(lib):
    def f(x, y):
        y.add_(1)
        z = x * y
        return z.view(-1), z, x.t()
    return f


def _writes_through_view(lib):
    def f(x, y):
        y[0].mul_(2)
        return (x @ y.t()).relu(), y.diagonal()
    return f


@pytest.mark.parametrize("build", [_mutating, _writes_through_view])
@pytest.mark.parametrize("grad", [True, False])
def test_input_mutations_and_aliased_outputs_as_torch(build, grad):
    """A written input gets its new value written back after the graph (the
    graph returns it first, no copy_ inside); an output that is a view of an
    input or of another output is rebuilt from its base by replaying the view
    (so ``_base`` and the grad_fn are eager's). Graph text, values, the
    mutation, the aliasing and the gradients all equal torch's."""
    results = []
    for lib in (gt, torch):
        codes: list = []

        def partition(joint, inputs, *, num_fwd_outputs, partition=AOT[lib][1], **kw):
            codes.append(joint.code)
            return partition(joint, inputs, num_fwd_outputs=num_fwd_outputs, **kw)
        x, y = _inputs(lib, [(2, 3), (2, 3)])
        x.requires_grad_(grad)
        compiled = AOT[lib][0](build(lib), _recording(codes), _recording(codes),
                               partition_fn=partition)
        out = compiled(x, y)
        record = [codes[:], y.tolist(), [o.tolist() for o in out],
                  [o._base is x or o._base is y for o in out],
                  [any(o._base is p for p in out) for o in out],
                  [type(o.grad_fn).__name__ if o.grad_fn else None for o in out]]
        if grad:
            sum(o.sum() for o in out if o.requires_grad).backward()
            record += [x.grad.tolist(), codes[len(record[0]):]]
        results.append(record)
    assert results[0] == results[1]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_joint_graph_as_torch(name):
    """The joint forward+backward graph (what the partitioners receive) prints
    as torch's: placeholders primals_*/tangents_*, the forward, autograd's ops."""
    joints = []
    for lib in (gt, torch):
        def partition(joint, inputs, *, num_fwd_outputs, partition=AOT[lib][1], **kw):
            joints.append(joint.code)
            return partition(joint, inputs, num_fwd_outputs=num_fwd_outputs, **kw)
        AOT[lib][0](FUNCTIONS[name][0](lib), nop if lib is gt else (lambda gm, i: gm),
                    partition_fn=partition)(*_args(lib, name))
    assert joints[0] == joints[1]


def test_compiler_stages_print_torchs_graphs():
    """glasstorch.compiler.stages shows, for a Module, the graphs torch makes at
    each stage: symbolic_trace's, make_fx's, and aot_module's joint, forward and
    backward graphs, with the saved tensors named as torch's partitioner names them."""
    from functorch.compile import aot_module as torch_aot_module
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    def mlp(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.GELU(), lib.nn.Linear(8, 2))
    x_gt, = _inputs(gt, [(3, 4)])
    x_t, = _inputs(torch, [(3, 4)])
    stages = gt.compiler.stages(mlp(gt), x_gt)
    theirs: dict = {}

    def keep(kind):
        def compiler(gm, inputs):
            theirs[kind] = gm
            return gm
        return compiler

    def partition(joint, inputs, **kw):
        theirs["joint"] = joint
        return torch_default_partition(joint, inputs, **kw)
    model = mlp(torch)
    torch_aot_module(model, keep("forward"), keep("backward"), partition_fn=partition)(
        x_t).sum().backward()
    assert stages.fx.code == torch.fx.symbolic_trace(model).code
    assert stages.aten.code == torch_make_fx(model, tracing_mode="fake",
                                             _allow_non_fake_inputs=True)(x_t).code
    for kind in ("joint", "forward", "backward"):
        assert stages.graphs[kind].code == theirs[kind].code, kind
    assert [n.name for n in stages.saved] == [
        n.name for n in theirs["backward"].graph.nodes
        if n.op == "placeholder" and not n.name.startswith("tangents")]
    text = str(stages)
    assert "4b. backward partition" in text and "4 saved" in stages.saved_table()
