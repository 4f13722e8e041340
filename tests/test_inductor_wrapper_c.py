"""The C wrapper of ``mode="reduce-overhead"`` (``_inductor/codegen/wrapper_c.py``):
consecutive kernels and matrix products are one generated C function, called
once from the Python wrapper.  Training with it matches PyTorch (the MLP with
Adam, the example GPT with AdamW); a graph of kernels and products is one
ctypes call; other extern calls split the runs; strided and transposed
operands reach BLAS through its transpose flags and leading dimensions, and
those BLAS cannot read stay Python steps, as every product does without a
BLAS.  Products are BLAS's gemm on both sides but not the same BLAS (PyTorch
has MKL): values agree within float32 rounding, not bitwise."""
from __future__ import annotations

import copy
import ctypes

import re

import numpy as np
import pytest

import glasstorch as gt
from examples.dual import tiny_gpt
from glasstorch._inductor import compile_fx, config, debug
from glasstorch._inductor.codegen import wrapper_c

from .helpers import to_numpy

pytestmark = pytest.mark.skipif(not compile_fx.codecache.available(), reason="no C compiler")
needs_blas = pytest.mark.skipif(wrapper_c.find_blas() is None, reason="numpy ships no cblas")


def _c_calls(compiled) -> list:
    """The names of the ctypes functions ``compiled``'s wrapper calls, from now on."""
    namespace, calls = compiled.call.__globals__, []
    for name, fn in list(namespace.items()):
        if isinstance(fn, ctypes._CFuncPtr):
            def counted(*args, _fn=fn, _name=name):
                calls.append(_name)
                return _fn(*args)
            namespace[name] = counted
    return calls


def _run(compiled, i: int) -> str:
    """The name of run ``i`` of ``compiled``'s C wrapper."""
    return f"graph_run_{i}"


def _python_calls(compiled) -> list:
    """The calls the Python wrapper makes, but allocations and views."""
    lines = compiled.code.python_source.split("def call(args):")[1].splitlines()
    return [line.strip() for line in lines if "(" in line and "= (" not in line and
            not line.strip().startswith(("return", "data_ptrs", "args.clear()")) and
            "empty_strided(" not in line and "data_ptr(" not in line]


def _to_torch(torch, gt_model, torch_model):
    """``torch_model`` given ``gt_model``'s parameters."""
    with torch.no_grad():
        for p, q in zip(gt_model.parameters(), torch_model.parameters()):
            q.copy_(torch.from_numpy(to_numpy(p).astype(np.float32)))


def _train(run, optimizer, step, inputs, loss_fn, steps=3) -> list:
    """The losses of ``steps`` training steps: forward, backward, ``step()``."""
    losses = []
    for _ in range(steps):
        loss = loss_fn(run(*inputs))
        loss.backward()
        losses.append(loss.item())
        step()
        optimizer.zero_grad()
    return losses


def _assert_params(got, expected, rtol=1e-4, atol=1e-5):
    for p, q in zip(got.parameters(), expected.parameters()):
        np.testing.assert_allclose(to_numpy(p), to_numpy(q), rtol=rtol, atol=atol)


@needs_blas
def test_mlp_adam_training_equals_torch(compiled_graphs):
    """An MLP's forward, backward and Adam step, each a reduce-overhead graph:
    torch's losses and parameters, and each graph one C call."""
    import torch
    gt.manual_seed(0)
    nn = gt.nn
    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 5))
    reference = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 32), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 5))
    _to_torch(torch, model, reference)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 20), dtype=np.float32), rng.integers(0, 5, 16)
    opt = gt.optim.Adam(model.parameters(), lr=1e-3)
    losses = _train(gt.compile(model, mode="reduce-overhead"), opt,
                    gt.compile(opt.step, mode="reduce-overhead"),
                    (gt.from_numpy(x),), lambda out: gt.nn.functional.cross_entropy(
                        out, gt.from_numpy(y)))
    ref_opt = torch.optim.Adam(reference.parameters(), lr=1e-3)
    expected = _train(reference, ref_opt, ref_opt.step, (torch.from_numpy(x),),
                      lambda out: torch.nn.functional.cross_entropy(out, torch.from_numpy(y)))
    np.testing.assert_allclose(losses, expected, rtol=1e-5)
    _assert_params(model, reference)
    kinds = [c.code.name.split("_", 1)[1] for c in compiled_graphs]
    assert kinds == ["forward", "backward", "inference"]
    for compiled in compiled_graphs:         # forward, backward, Adam's step: one C call each
        assert _python_calls(compiled) == [f"{_run(compiled, 0)}(data_ptrs)"]
    assert "gt_mm_f32(" in compiled_graphs[0].code.c_source


@needs_blas
def test_gpt_adamw_training_equals_torch(compiled_graphs):
    """The example GPT (embeddings, attention's bmm, layer norms, the loss)
    and its AdamW step under reduce-overhead: torch's losses and parameters.
    Its backward's scatter (the loss's gradient) splits it into two runs."""
    import torch
    model, idx, targets = tiny_gpt(gt)
    reference, _, _ = tiny_gpt(torch)
    _to_torch(torch, model, reference)
    runs = []
    for lib, net, run in ((gt, model, gt.compile(model, mode="reduce-overhead")),
                          (torch, reference, reference)):
        opt = net.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95))
        step = gt.compile(opt.step, mode="reduce-overhead") if lib is gt else opt.step
        inputs = (idx, targets) if lib is gt else \
            (torch.from_numpy(to_numpy(idx)).long(), torch.from_numpy(to_numpy(targets)).long())
        runs.append(_train(run, opt, step, inputs, lambda out: out[1]))
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-5)
    _assert_params(model, reference, rtol=1e-4, atol=2e-5)
    forward, backward, _ = compiled_graphs
    assert _python_calls(forward) == [f"{_run(forward, 0)}(data_ptrs)"]
    assert "for (int64_t i = 0; i < 8; i++)" in forward.code.c_source      # attention's bmm
    calls = _python_calls(backward)
    assert calls[0] == f"{_run(backward, 0)}(data_ptrs)"
    assert calls[-1] == f"{_run(backward, len(backward.code.c_wrapper.runs) - 1)}(data_ptrs)"
    assert any("aten.scatter" in call for call in calls)


@needs_blas
def test_kernels_and_products_are_one_ctypes_call(compiled_graphs):
    """A graph of kernels and matrix products is one ctypes call per call, its
    C wrapper printed with the kernels (``TORCH_LOGS=output_code`` and
    ``debug.stages``); outputs are fresh tensors each call."""
    def f(x, w):
        return ((x @ w).relu() @ w.t()).softmax(-1)
    x, w = gt.randn(8, 16), gt.randn(16, 16)
    compiled = gt.compile(f, mode="reduce-overhead")
    first = compiled(x, w)
    graph, = compiled_graphs
    calls = _c_calls(graph)
    second = compiled(x, w)
    assert calls == [_run(graph, 0)]
    assert first is not second and first.data_ptr() != second.data_ptr()
    np.testing.assert_allclose(to_numpy(first), to_numpy(f(x, w)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(to_numpy(first), to_numpy(second))
    text = compile_fx.output_code_text(graph)
    assert f"void {_run(graph, 0)}(void **p)" in text and "gt_mm_f32(" in text
    with config.patch(static_memory=True):
        stages = str(debug.stages(f, x, w))
    assert "void graph_run_0(void **p)" in stages
    assert "graph_run_0(data_ptrs)" in stages


@needs_blas
def test_default_mode_runs_c_with_buffers_of_each_call(compiled_graphs):
    """Without static memory the C wrapper still runs the graph (one ctypes
    call), its buffers allocated per call and its pointers in a fresh array
    per call: a call of the graph made inside another (re-entering it) gets
    its own values; ``config.c_wrapper = False`` gives
    the Python wrapper calling each kernel and ``aten.mm``."""
    def f(x, w):
        return ((x @ w).relu() @ w.t()).softmax(-1)
    w = gt.randn(16, 16)
    xs = [gt.randn(8, 16) for _ in range(3)]
    compiled = gt.compile(f)
    compiled(xs[0], w)
    graph, = compiled_graphs
    assert "static_" not in graph.code.python_source
    assert "data_ptrs = pointer_array()" in graph.code.python_source
    namespace = graph.call.__globals__
    run, calls, inner = namespace[_run(graph, 0)], [], []

    def reentering(pointers):          # the run calls the graph again before it runs itself
        calls.append(pointers)
        if len(calls) == 1:
            inner.extend(graph.call([xs[1], w]))
        return run(pointers)
    namespace[_run(graph, 0)] = reentering
    outer = compiled(xs[0], w)
    assert len(calls) == 2 and calls[0] is not calls[1]
    for got, x in ((outer, xs[0]), (inner[0], xs[1])):
        np.testing.assert_allclose(to_numpy(got), to_numpy(f(x, w)), rtol=1e-5, atol=1e-6)
    gt._dynamo.reset()
    with config.patch(c_wrapper=False):
        gt.compile(f)(xs[2], w)
    assert "data_ptrs" not in compiled_graphs[-1].code.python_source
    assert "aten.mm.default(" in compiled_graphs[-1].code.python_source


@needs_blas
def test_buffers_dead_after_a_run_share_one_workspace(compiled_graphs):
    """Without static memory, the buffers a run allocates that nothing reads
    after it (no output, no Python step) are windows of one allocation of the
    call, at offsets that are multiples of 64 bytes; the outputs stay tensors
    of their own.  Values as eager's and as torch's, forward and backward.
    Under reduce-overhead the buffers are static: no workspace."""
    import torch
    gt.manual_seed(0)
    model = gt.nn.Sequential(gt.nn.Linear(20, 32), gt.nn.ReLU(), gt.nn.Linear(32, 32),
                             gt.nn.GELU(), gt.nn.Linear(32, 5))
    reference = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 32), torch.nn.GELU(),
                                    torch.nn.Linear(32, 5))
    _to_torch(torch, model, reference)
    x = gt.randn(16, 20)
    theirs = reference(torch.from_numpy(to_numpy(x)))
    theirs.sum().backward()
    expected = model(x)
    expected.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    out = gt.compile(model)(x)
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(out.detach()), to_numpy(expected.detach()),
                               rtol=1e-5, atol=1e-6)
    for p, g in zip(model.parameters(), grads):
        np.testing.assert_allclose(to_numpy(p.grad), to_numpy(g), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(out.detach()), theirs.detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(to_numpy(p.grad), q.grad.numpy(), rtol=1e-5, atol=1e-5)
    for graph in compiled_graphs:
        source = graph.code.python_source
        line = next(x for x in source.splitlines() if x.startswith("    workspace = "))
        inside = line.split("# ")[1].split(", ")
        returned = re.findall(r"\bbuf\d+\b", source.split("    return")[1])
        assert len(inside) >= 2 and returned and not set(inside) & set(returned)
        offsets = [int(n) for n in re.findall(r"base \+ (\d+)", source)]
        assert offsets and all(n % 64 == 0 for n in offsets)
    gt._dynamo.reset()
    gt.compile(model, mode="reduce-overhead")(x)
    assert "workspace" not in compiled_graphs[-1].code.python_source


@needs_blas
def test_python_extern_splits_the_runs(compiled_graphs):
    """An extern C does not call (sort) ends one run; the next begins after it."""
    def f(x, w):
        return (gt.sort((x @ w).exp(), -1).values @ w).tanh()
    x, w = gt.randn(8, 16), gt.randn(16, 16)
    out = gt.compile(f, mode="reduce-overhead")(x, w)
    np.testing.assert_allclose(to_numpy(out), to_numpy(f(x, w)), rtol=1e-5, atol=1e-6)
    graph, = compiled_graphs
    calls = _python_calls(graph)
    assert calls[0] == f"{_run(graph, 0)}(data_ptrs)"
    assert "aten.sort" in calls[1]
    assert calls[-1] == f"{_run(graph, 1)}(data_ptrs)"


# (operand a, operand b) of a product, from contiguous bases: as they are,
# transposed, sliced (a leading dimension wider than the matrix), one row
LAYOUTS = {
    "plain": (lambda a: a, lambda b: b),
    "transposed": (lambda a: a.t().contiguous().t(), lambda b: b.t().contiguous().t()),
    "sliced": (lambda a: gt.cat([a, a], 1)[:, 3:3 + a.shape[1]], lambda b: b[::1]),
    "every_other_row": (lambda a: gt.cat([a, a], 1).reshape(-1, a.shape[1])[::2], lambda b: b),
    "one_row": (lambda a: a[:1], lambda b: b.t().contiguous().t()),
}


@needs_blas
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_strided_and_transposed_products(compiled_graphs, layout, dtype):
    """Operands that are windows of graph inputs (transposed, sliced, strided
    rows) go to BLAS as they are, via its transpose flags and leading
    dimensions: eager's values, float32 and float64."""
    dtype = getattr(gt, dtype)
    make_a, make_b = LAYOUTS[layout]

    def f(a, b):
        return make_a(a).exp() @ make_b(b) + 1, make_a(a) @ make_b(b)
    a, b = gt.randn(6, 5, dtype=dtype), gt.randn(5, 7, dtype=dtype)
    got = gt.compile(f, mode="reduce-overhead")(a, b)
    for g, e in zip(got, f(a, b)):
        np.testing.assert_allclose(to_numpy(g), to_numpy(e), rtol=1e-5, atol=1e-6)
    graph, = compiled_graphs
    assert not [c for c in _python_calls(graph) if "aten." in c]
    assert graph.code.python_source.count("(data_ptrs)") == 1


@needs_blas
def test_batched_product_of_transposed_windows(compiled_graphs):
    """``bmm`` of transposed batch windows (attention's backward): a gemm per
    matrix, in C."""
    def f(q, k):
        return (q.transpose(1, 2) @ k.exp()).sum(0), q @ k.transpose(1, 2)
    q, k = gt.randn(3, 4, 5, dtype=gt.float64), gt.randn(3, 4, 5, dtype=gt.float64)
    got = gt.compile(f, mode="reduce-overhead")(q, k)
    for g, e in zip(got, f(q, k)):
        np.testing.assert_allclose(to_numpy(g), to_numpy(e), rtol=1e-12, atol=1e-12)
    graph, = compiled_graphs
    assert "gt_dgemm(CblasRowMajor" in graph.code.c_source
    assert not [c for c in _python_calls(graph) if "aten." in c]


def test_blas_operand_layouts():
    """The transpose flag and leading dimension of a rows x cols matrix, or
    None where BLAS cannot read it."""
    assert wrapper_c._blas_operand(4, 3, 3, 1) == ("CblasNoTrans", 3)
    assert wrapper_c._blas_operand(4, 3, 8, 1) == ("CblasNoTrans", 8)
    assert wrapper_c._blas_operand(4, 3, 1, 4) == ("CblasTrans", 4)
    assert wrapper_c._blas_operand(1, 3, 0, 5) == ("CblasTrans", 5)
    assert wrapper_c._blas_operand(4, 3, 0, 1) is None          # expanded rows
    assert wrapper_c._blas_operand(4, 3, 6, 2) is None          # every other column
    assert wrapper_c._blas_operand(4, 3, 2, 1) is None          # overlapping rows


@needs_blas
def test_product_blas_cannot_read_stays_python(compiled_graphs):
    """An expanded operand (stride 0) has no leading dimension: the product is
    an ATen call between runs, and the values are eager's."""
    def f(x, v):
        return (x.exp() @ v.expand(5, 7)).relu()
    x, v = gt.randn(6, 5), gt.randn(1, 7)
    out = gt.compile(f, mode="reduce-overhead")(x, v)
    np.testing.assert_allclose(to_numpy(out), to_numpy(f(x, v)), rtol=1e-5, atol=1e-6)
    graph, = compiled_graphs
    assert any("aten.mm.default" in c for c in _python_calls(graph))


def test_without_blas_products_are_python_steps(compiled_graphs, monkeypatch):
    """No BLAS found: matrix products stay ATen calls from Python, the kernels
    between them still C runs, and training still matches eager."""
    monkeypatch.setattr(wrapper_c, "find_blas", lambda: None)
    model, idx, targets = tiny_gpt(gt)
    twin = copy.deepcopy(model)
    runs = []
    for net, run in ((twin, twin), (model, gt.compile(model, mode="reduce-overhead"))):
        opt = gt.optim.SGD(net.parameters(), lr=0.1)
        runs.append(_train(run, opt, opt.step, (idx, targets), lambda out: out[1], steps=2))
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-5)
    _assert_params(model, twin)
    forward = compiled_graphs[0]
    assert "gt_mm_" not in forward.code.c_source and "_set_blas" not in forward.code.c_source
    calls = _python_calls(forward)
    assert any("aten.mm.default" in c for c in calls)
    assert any("_run_" in c for c in calls)


def test_without_compiler_reduce_overhead_runs_aten(monkeypatch):
    """No C compiler: reduce-overhead graphs run as their ATen kernels."""
    monkeypatch.setenv("GLASSTORCH_NATIVE", "0")
    gt._dynamo.reset()

    def f(x, w):
        return (x @ w).relu().sum()
    x, w = gt.randn(4, 5), gt.randn(5, 3)
    np.testing.assert_allclose(to_numpy(gt.compile(f, mode="reduce-overhead")(x, w)),
                               to_numpy(f(x, w)), rtol=1e-6)


@needs_blas
def test_large_product_rows_split_among_threads(compiled_graphs):
    """A product of at least 2^21 multiply-adds is split among the intra-op
    threads along the longer side of its result, each block a single-threaded
    gemm (eager's matmul): rows, or the columns of a wide result, or a bmm's
    matrices; operands as they are and transposed."""
    threads = gt.get_num_threads()
    gt.set_num_threads(3)
    try:
        def f(a, b, w, v, q):
            return (a.exp() @ b).relu(), a.t() @ a[:, :128], a[:24] @ w, a[:24] @ v.t(), \
                q @ q.transpose(1, 2)
        a, b, w, v, q = gt.randn(256, 160), gt.randn(160, 128), gt.randn(160, 1601), \
            gt.randn(1601, 160), gt.randn(64, 64, 32)
        got = gt.compile(f, mode="reduce-overhead")(a, b, w, v, q)
        for g, e in zip(got, f(a, b, w, v, q)):
            np.testing.assert_allclose(to_numpy(g), to_numpy(e), rtol=1e-4, atol=1e-4)
    finally:
        gt.set_num_threads(threads)
    graph, = compiled_graphs
    assert graph.code.python_source.count("(data_ptrs)") == 1
