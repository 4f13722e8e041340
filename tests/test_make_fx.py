"""make_fx against torch's: the same program traced in glasstorch and in torch
gives the same ATen graph, compared as the generated code, character for
character (node targets, names, arguments, shapes in views), plus each node's
metadata, for a catalogue of functions and the example models' training steps."""
from __future__ import annotations

import importlib
import operator

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import glasstorch as gt
from examples.dual import load_example, tiny_gpt
from glasstorch.fx.experimental.proxy_tensor import make_fx as gt_make_fx

from .helpers import to_numpy

MAKE_FX = {gt: gt_make_fx, torch: torch_make_fx}


def _inputs(lib, shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [lib.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]


# name -> (function of lib returning the traced function, input shapes)
CATALOGUE = {
    "add_mul": (lambda lib: lambda x, y: x * y + x, [(3, 4), (3, 4)]),
    "broadcast_sub_div": (lambda lib: lambda x, y: (x - y) / 2, [(3, 4), (4,)]),
    "scalar_ops": (lambda lib: lambda x: 1 - x ** 2 + 3 * x, [(5,)]),
    "matmul_2d": (lambda lib: lambda x, w: x @ w, [(3, 4), (4, 5)]),
    "matmul_3d": (lambda lib: lambda x, w: lib.matmul(x, w), [(2, 3, 4), (4, 5)]),
    "bmm": (lambda lib: lambda x, y: lib.bmm(x, y), [(2, 3, 4), (2, 4, 5)]),
    "linear": (lambda lib: lambda x, w, b: lib.nn.functional.linear(x, w, b),
               [(2, 4), (3, 4), (3,)]),
    "linear_3d": (lambda lib: lambda x, w: lib.nn.functional.linear(x, w), [(2, 5, 4), (3, 4)]),
    "relu_sigmoid_tanh": (lambda lib: lambda x: lib.relu(x) + lib.sigmoid(x) * lib.tanh(x),
                          [(4, 4)]),
    "gelu": (lambda lib: lambda x: lib.nn.functional.gelu(x), [(4, 4)]),
    "gelu_tanh": (lambda lib: lambda x: lib.nn.functional.gelu(x, approximate="tanh"), [(4,)]),
    "silu": (lambda lib: lambda x: lib.nn.functional.silu(x), [(4, 4)]),
    "softmax": (lambda lib: lambda x: lib.softmax(x, -1), [(3, 5)]),
    "log_softmax": (lambda lib: lambda x: lib.nn.functional.log_softmax(x, dim=1), [(3, 5)]),
    "layer_norm": (lambda lib: lambda x, w, b: lib.nn.functional.layer_norm(x, (5,), w, b),
                   [(3, 5), (5,), (5,)]),
    "sum_mean": (lambda lib: lambda x: (x.sum(), x.mean(0), x.sum(-1, keepdim=True)),
                 [(3, 4)]),
    "var_std": (lambda lib: lambda x: (x.var(0), x.std(1), lib.var_mean(x, 1)), [(3, 4)]),
    "max_min": (lambda lib: lambda x: (x.max(), lib.max(x, 1), x.amin(0), x.argmax(1)),
                [(3, 4)]),
    "view_reshape": (lambda lib: lambda x: (x.view(4, 3), x.reshape(-1), x.flatten(),
                                            x.t().reshape(12)), [(3, 4)]),
    "permute_transpose": (lambda lib: lambda x: (x.permute(2, 0, 1), x.transpose(0, 2),
                                                 x.mT), [(2, 3, 4)]),
    "squeeze_unsqueeze": (lambda lib: lambda x: (x.unsqueeze(0), x.unsqueeze(-1).squeeze(-1),
                                                 x[None]), [(3, 1, 4)]),
    "expand": (lambda lib: lambda x: x.expand(2, 3, 4) + 1, [(3, 1)]),
    "indexing": (lambda lib: lambda x: (x[0], x[:, 1], x[1:3], x[..., ::2], x[:, None]),
                 [(4, 4)]),
    "cat_stack": (lambda lib: lambda x, y: (lib.cat([x, y]), lib.stack([x, y], 1)),
                  [(2, 3), (2, 3)]),
    "split_chunk": (lambda lib: lambda x: (x.split(2, 1), x.chunk(3, 0)), [(3, 5)]),
    "where_clamp": (lambda lib: lambda x, y: (lib.where(x > 0, x, y), x.clamp(-0.5, 0.5),
                                              x.clamp(min=0)), [(3, 4), (3, 4)]),
    "comparison": (lambda lib: lambda x, y: ((x > y) & (x < 1), x == y, x.ne(0)),
                   [(3, 4), (3, 4)]),
    "exp_log": (lambda lib: lambda x: (x.exp(), x.abs().log(), lib.log1p(x.abs()),
                                       x.abs().sqrt(), x.rsqrt()), [(4,)]),
    "trig": (lambda lib: lambda x: (x.sin(), x.cos(), lib.atan2(x, x + 1)), [(4,)]),
    "inplace": (lambda lib: lambda x: x.clone().mul_(2).add_(1).relu_(), [(3, 4)]),
    "inplace_on_input": (lambda lib: lambda x: x.add_(1), [(3,)]),
    "factories": (lambda lib: lambda x: (lib.zeros(3), lib.ones(2, 3, dtype=lib.float64),
                                         lib.full((2,), 7.0), lib.arange(5), x.new_zeros(2),
                                         lib.zeros_like(x), lib.empty(0).numel()), [(3,)]),
    "tensor_constant": (lambda lib: lambda x: x + lib.tensor([1.0, 2.0, 3.0]), [(2, 3)]),
    "dtype_casts": (lambda lib: lambda x: (x.double(), x.to(lib.int32), x.half().float(),
                                           x.type(lib.float64)), [(3,)]),
    "cross_entropy": (lambda lib: lambda x: lib.nn.functional.cross_entropy(
        x, lib.tensor([0, 2, 1])), [(3, 4)]),
    "mse_l1": (lambda lib: lambda x, y: (lib.nn.functional.mse_loss(x, y),
                                         lib.nn.functional.l1_loss(x, y)), [(3, 4), (3, 4)]),
    "dropout_eval": (lambda lib: lambda x: lib.nn.functional.dropout(x, 0.5, training=False),
                     [(3, 4)]),
    "conv2d": (lambda lib: lambda x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1),
               [(1, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "max_pool_avg_pool": (lambda lib: lambda x: (lib.nn.functional.max_pool2d(x, 2),
                                                 lib.nn.functional.avg_pool2d(x, 2)),
                          [(1, 2, 4, 4)]),
    "batch_norm_eval": (lambda lib: lambda x, m, v: lib.nn.functional.batch_norm(x, m, v.abs()),
                        [(2, 3, 4), (3,), (3,)]),
    "embedding": (lambda lib: lambda w: lib.nn.functional.embedding(lib.tensor([[0, 2], [1, 1]]),
                                                                    w), [(4, 3)]),
    "einsum": (lambda lib: lambda x, y: lib.einsum("ij,jk->ik", x, y), [(2, 3), (3, 4)]),
    "baddbmm_addmm": (lambda lib: lambda a, x, y: lib.addmm(a, x, y, beta=0.5),
                      [(2, 4), (2, 3), (3, 4)]),
    "cumsum_sort": (lambda lib: lambda x: (x.cumsum(0), x.sort(1), x.topk(2)), [(3, 4)]),
    "masked_fill": (lambda lib: lambda x: x.masked_fill(x > 0, 0.0), [(3, 4)]),
    "tuple_inputs": (lambda lib: lambda x, pair: pair[0] * x + pair[1], [(3,), ((3,), (3,))]),
    "scaled_dot_product_attention": (
        lambda lib: lambda q, k, v: lib.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=True), [(1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)]),
}


def _trace(lib, name, tracing_mode="real"):
    build, shapes = CATALOGUE[name]
    flat = [s for s in shapes if not isinstance(s[0], tuple)]
    nested = [s for s in shapes if isinstance(s[0], tuple)]
    values = iter(_inputs(lib, flat + [t for group in nested for t in group]))
    args = [tuple(next(values) for _ in s) if isinstance(s[0], tuple) else next(values)
            for s in shapes]
    # keep the ordering of _inputs: plain shapes first, nested ones after
    args = [next(iter([a])) for a in args]
    fn = build(lib)
    gm = MAKE_FX[lib](fn, tracing_mode=tracing_mode)(*[_clone(a) for a in args])
    return gm, fn, args


def _clone(a):
    return tuple(_clone(x) for x in a) if isinstance(a, tuple) else a.clone()


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_make_fx_code_as_torch(name):
    """The generated code (every op, its overload, its arguments, the names)
    equals torch's, and running the graph gives what the function gives."""
    gm, fn, args = _trace(gt, name)
    theirs, _, _ = _trace(torch, name)
    assert gm.code == theirs.code
    assert str(gm.graph) == str(theirs.graph)
    expected = fn(*[_clone(a) for a in args])
    got = gm(*[_clone(a) for a in args])
    for e, g in zip(gt.utils._pytree.tree_leaves(expected), gt.utils._pytree.tree_leaves(got)):
        if isinstance(e, gt.Tensor):
            np.testing.assert_array_equal(to_numpy(g), to_numpy(e))
        else:
            assert g == e


@pytest.mark.parametrize("name", ["linear", "layer_norm", "softmax", "max_min", "split_chunk",
                                  "view_reshape", "factories", "conv2d", "cross_entropy"])
def test_fake_tracing_code_and_meta_as_torch(name):
    """Under tracing_mode="fake" nothing is computed, the graph is the same, and
    each node's meta (val's shape, stride and dtype; tensor_meta) equals torch's."""
    gm, _, _ = _trace(gt, name, "fake")
    theirs, _, _ = _trace(torch, name, "fake")
    assert gm.code == theirs.code

    def describe(graph_module, lib):
        rows = []
        for node in graph_module.graph.nodes:
            val = node.meta.get("val")
            vals = val if isinstance(val, (tuple, list)) else [val]
            rows.append((node.name, [(tuple(v.shape), v.stride(), str(v.dtype), v.device.type)
                                     if isinstance(v, lib.Tensor) else v for v in vals]))
            meta = node.meta.get("tensor_meta")
            if meta is not None:
                rows.append((tuple(meta.shape), str(meta.dtype), meta.requires_grad,
                             tuple(meta.stride), str(meta.memory_format)))
        return rows
    assert describe(gm, gt) == describe(theirs, torch)
    fake = [n.meta["val"] for n in gm.graph.nodes if isinstance(n.meta.get("val"), gt.Tensor)]
    assert fake and all(type(v).__name__ == "FakeTensor" for v in fake)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       dim=st.integers(-1, 0), keepdim=st.booleans())
def test_make_fx_reductions_and_views_any_shape(shape, dim, keepdim):
    """For any shape: the same graph as torch's for a chain of views,
    broadcasting and reductions."""
    def build(lib):
        def f(x, y):
            z = (x * y.unsqueeze(0)).reshape(-1).view(*shape)
            return z.sum(dim, keepdim=keepdim), z.softmax(dim), z.transpose(0, -1).contiguous()
        return f
    codes = []
    for lib in (gt, torch):
        x, y = _inputs(lib, [tuple(shape), tuple(shape[1:]) or ()])
        codes.append(MAKE_FX[lib](build(lib))(x, y).code)
    assert codes[0] == codes[1]


def _training_step(lib, model, loss_fn, inputs):
    params = dict(model.named_parameters())
    functional_call = importlib.import_module(
        f"{lib.__name__}.func").functional_call if hasattr(lib.func, "functional_call") else \
        lib.nn.utils.stateless._functional_call if lib is gt else \
        torch.func.functional_call

    def loss(params, *inputs):
        return loss_fn(functional_call(model, params, inputs[:-1]), inputs[-1])

    def step(params, *inputs):
        value = loss(params, *inputs)
        return value, lib.autograd.grad(value, list(params.values()))
    step.loss, step.buffers = loss, dict(model.named_buffers())
    return step, params


def _gpt_step(lib):
    model, idx, targets = tiny_gpt(lib)
    step, params = _training_step(lib, model, lambda out, t: out[1], (idx, targets, None))
    return step, (params, idx, targets, None)


def _cnn_step(lib):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 10))
    x, = _inputs(lib, [(2, 1, 8, 8)])
    y = lib.tensor([3, 7])
    step, params = _training_step(lib, model, lib.nn.functional.cross_entropy, (x, y))
    return step, (params, x, y)


def _classifier_step(lib):
    """examples/train_classifier.py's MLP on a batch of 16x16 digits."""
    classifier = load_example("train_classifier.py", lib.__name__)
    lib.manual_seed(0)
    model = classifier.make_model(hidden=32)
    x, = _inputs(lib, [(4, 1, 16, 16)])
    y = lib.tensor([3, 7, 0, 9])
    step, params = _training_step(lib, model, lib.nn.functional.cross_entropy, (x, y))
    return step, (params, x, y)


def _lstm_step(lib):
    lib.manual_seed(0)

    class Tagger(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lib.nn.LSTM(5, 6, batch_first=True)
            self.head = lib.nn.Linear(6, 3)

        def forward(self, x):
            return self.head(self.lstm(x)[0])
    x, = _inputs(lib, [(2, 4, 5)])
    y = lib.tensor([[0, 1, 2, 0], [2, 2, 1, 0]])
    step, params = _training_step(lib, Tagger(), lambda out, t: lib.nn.functional.cross_entropy(
        out.reshape(-1, 3), t.reshape(-1)), (x, y))
    return step, (params, x, y)


@pytest.mark.parametrize("model", ["gpt", "cnn", "classifier"])
def test_training_step_graph_as_torch(model):
    """A whole training step (forward, loss, autograd.grad) of the example GPT,
    of a small CNN and of the example classifier traces to torch's graph, op
    for op and name for name."""
    build = {"gpt": _gpt_step, "cnn": _cnn_step, "classifier": _classifier_step}[model]
    codes = []
    for lib in (gt, torch):
        step, args = build(lib)
        codes.append(MAKE_FX[lib](step)(*args).code)
    assert codes[0] == codes[1]


def test_lstm_step_traces_and_matches_eager():
    """An LSTM step traces; the graph, run again, gives eager's loss and grads
    (torch takes oneDNN's fused LSTM on CPU, a different op sequence, so this
    one is compared by values, not by code)."""
    step, args = _lstm_step(gt)
    gm = gt_make_fx(step)(*args)
    expected = step(*args)
    got = gm(*args)
    for e, g in zip(gt.utils._pytree.tree_leaves(expected), gt.utils._pytree.tree_leaves(got)):
        np.testing.assert_allclose(to_numpy(g), to_numpy(e), rtol=1e-6, atol=1e-7)


def test_module_parameters_become_constants_as_torch():
    """A Module traced directly: its parameters are get_attr constants named as
    torch names them, stored as Parameters on the GraphModule."""
    results = []
    for lib in (gt, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 3))
        gm = MAKE_FX[lib](model)(lib.ones(2, 4))
        results.append((gm.code, type(gm).__name__, sorted(n for n, _ in gm.named_parameters()),
                        sorted(n for n, _ in gm.named_buffers()),
                        gm(lib.ones(2, 4)).tolist() == model(lib.ones(2, 4)).tolist()))
    assert results[0] == results[1]


def test_data_dependent_op_refused_as_torch():
    """Reading a traced tensor's value (``.item()``) raises torch's error."""
    errors = []
    for lib in (gt, torch):
        with pytest.raises(RuntimeError) as info:
            MAKE_FX[lib](lambda x: x * x.sum().item())(lib.ones(3))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_decomposition_table_replaces_ops():
    """An op in ``decomposition_table`` is recorded as the ops its decomposition runs."""
    codes = []
    for lib in (gt, torch):
        aten = lib.ops.aten

        def softplus(x, beta=1, threshold=20):
            return aten.log1p.default(aten.exp.default(x))
        table = {aten.softplus.default: softplus}
        codes.append(MAKE_FX[lib](lambda x: lib.nn.functional.softplus(x) * 2,
                                  decomposition_table=table)(lib.ones(3)).code)
    assert codes[0] == codes[1]
    assert "log1p" in codes[0] and "softplus" not in codes[0]


def test_traced_graph_runs_on_new_inputs():
    """The GraphModule is a program: new inputs of the same shapes give the
    function's results (the pytree codegen rebuilds nested outputs)."""
    gm, fn, _ = _trace(gt, "tuple_inputs")
    x, a, b = _inputs(gt, [(3,), (3,), (3,)], seed=1)
    np.testing.assert_array_equal(to_numpy(gm(x, (a, b))), to_numpy(fn(x, (a, b))))
    np.testing.assert_array_equal(to_numpy(gm(x, [a, b])), to_numpy(fn(x, [a, b])))
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == \
        [gt.ops.aten.mul.Tensor, gt.ops.aten.add.Tensor]
    assert operator.getitem not in [n.target for n in gm.graph.nodes]
