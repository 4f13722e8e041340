"""Inductor with dynamic shapes: a graph traced with symbolic sizes (``dynamic=True``,
``mark_dynamic``, or automatic dynamic after a size changed) is traced by
AOTAutograd once and compiled once, its kernels and wrapper taking the sizes as
arguments; every size the guards admit then runs the same C.  Values and
gradients are compared with real torch's, or with glasstorch's eager run
(itself tested against torch's elsewhere) for the example GPT."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from examples.dual import load_example
from glasstorch._dynamo.utils import counters
from glasstorch._inductor import codecache

from .helpers import to_numpy
from .test_inductor_models import check_catalogue
from .test_make_fx import CATALOGUE

RTOL, ATOL = 2e-5, 2e-6


@pytest.fixture
def c_compiles(monkeypatch):
    """The number of generated C sources the run loads (each a compile, unless cached)."""
    count = [0]
    load = codecache.load

    def counting(source):
        count[0] += 1
        return load(source)
    monkeypatch.setattr(codecache, "load", counting)
    gt._dynamo.reset()
    counters.clear()
    return count


def _close(ours, theirs, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(to_numpy(ours).astype(np.float64),
                               theirs.detach().double().numpy(), rtol=rtol, atol=atol)


def _chain(lib):
    def f(x, w):
        h = lib.softmax(x @ w, -1).sin() + x.sum(-1, keepdim=True)
        return h, lib.nn.functional.layer_norm(x * 2 + 1, x.shape[-1:]), x.amax(0), x.var(1)
    return f


def test_one_compile_serves_every_size(c_compiles):
    """Sizes 3..60 of both dims run one compiled graph: one C source, one Dynamo
    graph, values as torch's at every size."""
    compiled = gt.compile(_chain(gt), dynamic=True)
    rng = np.random.default_rng(0)
    for n in range(3, 61, 3):
        x, w = rng.standard_normal((n, n + 2), np.float32), \
            rng.standard_normal((n + 2, n + 2), np.float32)
        got = compiled(gt.from_numpy(x), gt.from_numpy(w))
        want = _chain(torch)(torch.from_numpy(x), torch.from_numpy(w))
        for g, e in zip(got, want):
            assert g.shape == tuple(e.shape) and g.stride() == e.stride()
            _close(g, e, rtol=1e-4, atol=1e-5)
    assert c_compiles[0] == 1
    assert counters["stats"]["unique_graphs"] == 1


def test_sizes_are_kernel_arguments():
    """The printed code: kernels take ``const int64_t`` sizes, loops run to them,
    and the wrapper reads them from its inputs (the sizes Dynamo passes)."""
    gt._dynamo.reset()
    gt._logging.set_logs(output_code=True)
    import logging
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    log = logging.getLogger("torch._logging")
    log.addHandler(handler)
    try:
        gt.compile(lambda x: (x.exp() * 2).sum(1), dynamic=True)(gt.ones(5, 7))
    finally:
        log.removeHandler(handler)
        gt._logging.set_logs()
    text = "\n".join(records)
    assert "const int64_t s" in text
    assert re.search(r" s\d+ = arg0_1$", text, re.M) and re.search(r" s\d+ = arg1_1$", text, re.M)
    assert "< s" in text and "#pragma omp parallel for if(" in text


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_training_with_a_dynamic_batch(c_compiles, mode):
    """An MLP's training step, compiled once (forward and backward) for every
    batch size: loss and gradients as torch's, at each size.  Under
    reduce-overhead the buffers whose sizes vary are allocated per call."""
    models = []
    for lib in (gt, torch):
        lib.manual_seed(0)
        models.append(lib.nn.Sequential(lib.nn.Linear(12, 16), lib.nn.GELU(),
                                        lib.nn.LayerNorm(16), lib.nn.Linear(16, 3)))
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        p.data = gt.from_numpy(q.detach().numpy().copy())
    compiled = gt.compile(models[0], dynamic=True, mode=mode)
    rng = np.random.default_rng(1)
    for n in (4, 9, 17, 33, 5):
        x = rng.standard_normal((n, 12), np.float32)
        y = rng.integers(0, 3, n)
        losses = []
        for lib, model in ((gt, compiled), (torch, models[1])):
            model.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.from_numpy(x)), lib.from_numpy(y))
            loss.backward()
            losses.append(loss)
        _close(losses[0], losses[1], rtol=1e-5, atol=1e-6)
        for p, q in zip(models[0].parameters(), models[1].parameters()):
            _close(p.grad, q.grad, rtol=1e-4, atol=1e-5)
    assert c_compiles[0] == 2
    assert counters["stats"]["unique_graphs"] == 1


def test_gpt_step_with_a_dynamic_sequence_length(c_compiles):
    """The example GPT's loss and gradients for sequence lengths 3..15 (its
    causal mask sliced to each; at the block size, 16, the slice is the whole
    contiguous mask, and the contiguity guard recompiles, as in PyTorch),
    inputs and targets sliced from one window as train_gpt.py batches them (a
    stride of T + 1, a symbol of its own): one forward and one backward
    compile, equal to the eager model's."""
    gpt = load_example("gpt.py", "glasstorch")
    gt.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(vocab_size=23, block_size=16, n_layer=2, n_head=2, n_embd=32))

    def loss_of(m, idx, tgt):
        return m(idx, tgt)[1]
    compiled = gt.compile(loss_of, dynamic=True)
    rng = np.random.default_rng(2)
    for t in (3, 7, 11, 15):
        window = gt.from_numpy(rng.integers(0, 23, (2, t + 1)))
        idx, tgt = window[:, :-1], window[:, 1:]
        grads = []
        for fn in (compiled, loss_of):
            model.zero_grad()
            loss = fn(model, idx, tgt)
            loss.backward()
            grads.append([loss] + [p.grad.clone() for p in model.parameters()])
        for g, e in zip(*grads):
            np.testing.assert_allclose(to_numpy(g), to_numpy(e), rtol=1e-4, atol=1e-5)
    assert c_compiles[0] == 2
    assert counters["stats"]["unique_graphs"] == 1


def test_automatic_dynamic_compiles_twice(c_compiles):
    """Without ``dynamic=``, the first size compiles static C; a second size
    recompiles with symbolic sizes, which then serve every later size."""
    compiled = gt.compile(lambda x: lib_f(gt, x))
    for n in (4, 5, 6, 9, 30):
        x = np.random.default_rng(n).standard_normal((n, 8), np.float32)
        _close(compiled(gt.from_numpy(x)), lib_f(torch, torch.from_numpy(x)))
    assert c_compiles[0] == 2
    assert counters["stats"]["unique_graphs"] == 2


def lib_f(lib, x):
    return lib.log_softmax(x.cos() * 3, dim=0) - x.mean()


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_with_symbolic_sizes(name):
    """make_fx's catalogue compiled with ``dynamic=True``: each function's
    values, dtypes, shapes and strides as eager's, and the inputs it writes."""
    check_catalogue(name, dynamic=True)


def _views(lib, x, y):
    a = x.reshape(-1, 2).t().contiguous().sum(1)
    b = lib.cat([x, y], 0).permute(1, 0) * 2
    c = x.unsqueeze(1).expand(-1, 3, -1).reshape(x.shape[0] * 3, -1).cos()
    return a, b, c, x[1:, ::2].exp(), lib.where(x > 0, x, y[:-1])


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(2, 40), min_size=2, max_size=4))
def test_views_over_changing_sizes(sizes):
    """Reshapes, permutes, concatenation, expansion and slices of symbolic sizes:
    torch's values and strides, whichever sizes come in turn."""
    gt._dynamo.reset()
    compiled = gt.compile(_views, dynamic=True)
    for n in sizes:
        x = np.random.default_rng(n).standard_normal((n, 4), np.float32)
        y = np.random.default_rng(n + 1).standard_normal((n + 1, 4), np.float32)
        got = compiled(gt, gt.from_numpy(x), gt.from_numpy(y))
        want = _views(torch, torch.from_numpy(x), torch.from_numpy(y))
        for g, e in zip(got, want):
            assert g.shape == tuple(e.shape) and g.stride() == e.stride()
            _close(g, e)


def _row_ops(lib, x):
    return lib.softmax(x, -1), lib.nn.functional.layer_norm(x, x.shape[-1:])


def test_guarded_layouts_recompile_once_per_side(c_compiles):
    """A row array fits rows up to ``row_cache_size`` and Welford's fixed blocks
    need a multiple of 64: both are guards on the row length, so lengths on
    the other side of one compile again, once, and every length is right."""
    compiled = gt.compile(lambda x: _row_ops(gt, x), dynamic=True)
    for n in (70, 130, 192, 256, 5000, 6000):
        x = np.random.default_rng(n).standard_normal((3, n), np.float32)
        for g, e in zip(compiled(gt.from_numpy(x)), _row_ops(torch, torch.from_numpy(x))):
            _close(g, e, rtol=1e-5, atol=1e-5)
    # 70 and 130; 192 and 256 (whole blocks); 5000 and 6000 (rows too long for the array)
    assert counters["stats"]["unique_graphs"] == 3


class _ConvNet(gt.nn.Module):
    def __init__(self):
        super().__init__()
        nn = gt.nn
        self.conv, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x, y):
        h = gt.nn.functional.max_pool2d(gt.relu(self.bn(self.conv(x))), 2)
        return gt.nn.functional.cross_entropy(self.fc(h.mean((2, 3))), y)


def test_batch_norm_training_with_a_changing_batch(c_compiles):
    """A training loop whose batches change size (a last, smaller batch):
    automatic dynamic compiles the second size with symbolic sizes, through
    BatchNorm's running statistics (functionalized writes) and its backward
    decomposition, then every later size reuses it; losses, weights and
    running statistics as the eager model's."""
    import copy
    gt.manual_seed(0)
    model = _ConvNet()
    reference = copy.deepcopy(model)
    compiled = gt.compile(model)
    optimizers = [gt.optim.SGD(m.parameters(), lr=0.1) for m in (model, reference)]
    for n in (8, 8, 5, 7, 3):
        x = gt.from_numpy(np.random.default_rng(n).standard_normal((n, 3, 8, 8), np.float32))
        y = gt.from_numpy(np.random.default_rng(n + 1).integers(0, 5, n))
        losses = []
        for fn, opt in ((compiled, optimizers[0]), (reference, optimizers[1])):
            loss = fn(x, y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss)
        np.testing.assert_allclose(to_numpy(losses[0]), to_numpy(losses[1]), rtol=1e-5)
    for a, b in zip(model.state_dict().values(), reference.state_dict().values()):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-4, atol=1e-5)
    assert counters["stats"]["unique_graphs"] == 2


def test_a_size_held_only_in_a_sum_is_solved(c_compiles):
    """A padded input's backward sees its size only as ``s + 3``: the wrapper
    solves ``s`` from it, so the backward takes its sizes as arguments too;
    gradients as torch's at every size."""
    def f(lib, x):
        return lib.nn.functional.pad(x, (1, 2)).relu().cumsum(1)
    compiled = gt.compile(lambda x: f(gt, x), dynamic=True)
    for n in (4, 7, 12):
        x = np.random.default_rng(n).standard_normal((2, n), np.float32)
        ours, theirs = gt.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
        compiled(ours).sum().backward()
        f(torch, theirs).sum().backward()
        _close(ours.grad, theirs.grad)
    assert c_compiles[0] == 2 and counters["stats"]["unique_graphs"] == 1
