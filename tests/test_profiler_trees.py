"""The profiler's op event trees, op for op, against real PyTorch.

The same program runs under ``profile()`` in both libraries; each side's
events become a tree of names (nesting and order kept, timings dropped) and
the two trees must be equal.  That includes the ops ATen's kernels dispatch
internally (``clone`` -> ``empty_like`` -> ``empty``, ``copy_``), which
glasstorch's kernels dispatch too while the profiler watches.  Dropped on both
sides alike: the profiler's own ``ProfilerStep#`` ranges.
"""
from __future__ import annotations

import contextlib
import importlib
import warnings

import numpy as np
import pytest
import torch

import glasstorch as gt
from examples.dual import load_example


def event_tree(prof):
    """[(name, children), ...] of the top-level events, in start order."""
    def node(event):
        return (event.name, tuple(node(c) for c in event.cpu_children))
    return [node(e) for e in prof.events()
            if e.cpu_parent is None and not e.name.startswith("ProfilerStep#")]


def render(tree, depth=0):
    """The tree as indented lines (what a failing assertion shows)."""
    lines = []
    for name, children in tree:
        lines.append("  " * depth + name)
        lines.extend(render(children, depth + 1))
    return lines


def profiled_tree(lib, program):
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU]) as prof:
        program()
    return event_tree(prof)


def assert_same_tree(make_program):
    """``make_program(lib)`` builds its inputs (unprofiled) and returns the
    program to profile; the two libraries' trees must be equal."""
    theirs = render(profiled_tree(torch, make_program(torch)))
    ours = render(profiled_tree(gt, make_program(gt)))
    assert ours == theirs


# -- single ops ---------------------------------------------------------------------------

def _fixed(lib, *shape):
    return lib.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


SINGLE_OPS = {
    "t_contiguous": lambda lib, x: x.t().contiguous(),
    "clone": lambda lib, x: x.clone(),
    "contiguous_noop": lambda lib, x: x.contiguous(),
    "zeros": lambda lib, x: lib.zeros(3, 4),
    "ones": lambda lib, x: lib.ones(3, 4),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "ones_like": lambda lib, x: lib.ones_like(x),
    "full": lambda lib, x: lib.full((2, 3), 1.5),
    "to_double": lambda lib, x: x.to(lib.float64),
    "double": lambda lib, x: x.double(),
    "linear": lambda lib, x: lib.nn.functional.linear(x, x, x[:, 0]),
    "matmul_3d": lambda lib, x: lib.matmul(x.expand(2, 3, 4), x.t()),
    "reshape_copy": lambda lib, x: x.t().reshape(12),
    "reshape_view": lambda lib, x: x.reshape(4, 3),
    "expand_as": lambda lib, x: x[0].expand_as(x),
    "softmax": lambda lib, x: lib.softmax(x, -1),
    "log_softmax": lambda lib, x: lib.nn.functional.log_softmax(x, -1),
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x, (4,)),
    "dropout_eval": lambda lib, x: lib.nn.functional.dropout(x, 0.5, training=False),
    "mse_loss": lambda lib, x: lib.nn.functional.mse_loss(x, x * 2),
    "mse_loss_sum": lambda lib, x: lib.nn.functional.mse_loss(x, x[0], reduction="sum"),
    "mse_loss_none": lambda lib, x: lib.nn.functional.mse_loss(x, x * 2, reduction="none"),
    "tensor_ctor": lambda lib, x: (lib.tensor(0.), lib.tensor([[1, 2]], dtype=lib.float64),
                                   lib.tensor([1.5], device="meta")),
    "tensor_ctor_from_tensor": lambda lib, x: lib.tensor(x, dtype=lib.float64),
    "detach_": lambda lib, x: (x * 2).detach_(),
    "cat_dim0": lambda lib, x: lib.cat([x, x]),
    "cat_same_strides": lambda lib, x: lib.cat([x.t(), x.t()], 1),
    "cat_mixed_strides": lambda lib, x: lib.cat([x, x.t().contiguous().t()]),
    "cat_int_dim1": lambda lib, x: lib.cat([x.long(), x.long()], 1),
    "embedding_2d": lambda lib, x: lib.nn.functional.embedding(lib.arange(3).view(1, 3), x),
    "index_select_dim1": lambda lib, x: x.index_select(1, lib.arange(0, 4, 3)),
    "masked_fill_same_shape": lambda lib, x: x.masked_fill(x > 0, 0.5),
    "masked_fill_broadcast": lambda lib, x: x.masked_fill(x[0] > 0, x[0, 0]),
    "batch_norm_train_4d": lambda lib, x: lib.nn.functional.batch_norm(
        x.view(1, 3, 2, 2), None, None, training=True),
    "batch_norm_eval_4d": lambda lib, x: lib.nn.functional.batch_norm(
        x.view(1, 3, 2, 2), x[0, :3], x[1, :3] * x[1, :3] + 1),
    "batch_norm_train_2d": lambda lib, x: lib.nn.functional.batch_norm(x, None, None,
                                                                        training=True),
    "batch_norm_train_channels_last": lambda lib, x: lib.nn.functional.batch_norm(
        x.view(1, 2, 2, 3).permute(0, 3, 1, 2), None, None, training=True),
}


@pytest.mark.parametrize("name", sorted(SINGLE_OPS))
def test_single_op_trees_match_torch(name):
    def make(lib):
        x = _fixed(lib, 3, 4)
        return lambda: SINGLE_OPS[name](lib, x)
    assert_same_tree(make)


# -- convolution: _convolution, the backend ATen picks, and its allocations ----------------

def _conv_args(lib, x, w, b=None, dtype="float32", cl=False, grad=False):
    def make(shape):
        return lib.from_numpy(np.random.default_rng(len(shape)).standard_normal(shape)
                              .astype(dtype))
    x, w = make(x), make(w)
    if cl:
        x = x.to(memory_format=lib.channels_last)
    b = make(b) if b else None
    if grad:
        for t in (x, w, b):
            if t is not None:
                t.requires_grad_()
    return x, w, b


CONV_FORWARD = {     # (lib) -> the call; what oneDNN takes, what the slow kernels take
    "mkldnn_bias": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x, w, b, padding=1))(*_conv_args(lib, (2, 2, 6, 6), (4, 2, 3, 3), (4,))),
    "mkldnn_5x5_batch1": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x, w))(*_conv_args(lib, (1, 2, 6, 6), (4, 2, 5, 5))),
    "mkldnn_groups": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x, w, groups=2))(*_conv_args(lib, (1, 2, 6, 6), (4, 1, 3, 3))),
    "mkldnn_channels_last": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x, w))(*_conv_args(lib, (2, 2, 6, 6), (4, 2, 3, 3), cl=True)),
    "mkldnn_transposed": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv_transpose2d(
        x, w))(*_conv_args(lib, (2, 2, 6, 6), (2, 4, 3, 3))),
    "mkldnn_1d_noncontiguous": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv1d(
        x[:, :, 0], w[:, :, 0], b))(*_conv_args(lib, (2, 2, 6, 6), (4, 2, 3, 3), (4,))),
    "mkldnn_bfloat16": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x.bfloat16(), w.bfloat16()))(*_conv_args(lib, (2, 2, 6, 6), (4, 2, 3, 3))),
    "mkldnn_unbatched": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x[0], w))(*_conv_args(lib, (2, 2, 6, 6), (4, 2, 3, 3))),
    "slow_batch1": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x, w))(*_conv_args(lib, (1, 2, 6, 6), (4, 2, 3, 3))),
    "slow_1x1_noncontiguous": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x, w[:, :, :1, :1]))(*_conv_args(lib, (1, 2, 6, 6), (4, 2, 3, 3))),
    "slow_float64_bias": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x, w, b))(*_conv_args(lib, (2, 2, 6, 6), (4, 2, 3, 3), (4,), dtype="float64")),
    "slow_float64_groups": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x, w, b, groups=2))(*_conv_args(lib, (2, 2, 6, 6), (4, 1, 3, 3), (4,), dtype="float64")),
    "slow_float64_1d": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv1d(
        x[:, :, 0], w[:, :, 0]))(*_conv_args(lib, (2, 2, 6, 6), (4, 2, 3, 3), dtype="float64")),
    "empty_batch": lambda lib: (lambda x, w, b: lambda: lib.nn.functional.conv2d(
        x, w, b))(*_conv_args(lib, (0, 2, 6, 6), (4, 2, 3, 3), (4,))),
}


@pytest.mark.parametrize("name", sorted(CONV_FORWARD))
def test_convolution_trees_match_torch(name):
    """convolution -> _convolution -> mkldnn_convolution / thnn_conv2d -> ... as
    ATen picks the backend (dtype, batch, kernel size, groups, layout)."""
    assert_same_tree(CONV_FORWARD[name])


CONV_BACKWARD = {     # the forward's arguments; a backward of ones
    "all": dict(x=(2, 2, 6, 6), w=(4, 2, 3, 3), b=(4,)),
    "weight_only": dict(x=(2, 2, 6, 6), w=(4, 2, 3, 3), grad=None),
    "1d": dict(x=(2, 2, 6), w=(4, 2, 3), b=(4,)),
    "groups": dict(x=(2, 2, 6, 6), w=(4, 1, 3, 3), groups=2),
    "channels_last": dict(x=(2, 2, 6, 6), w=(4, 2, 3, 3), b=(4,), cl=True),
    "transposed": dict(x=(2, 2, 6, 6), w=(2, 4, 3, 3), transposed=True),
    "slow_float64": dict(x=(2, 2, 6, 6), w=(4, 2, 3, 3), b=(4,), dtype="float64"),
    "slow_float64_weight_only": dict(x=(2, 2, 6, 6), w=(4, 2, 3, 3), b=(4,), dtype="float64",
                                     grad=None),
    "slow_float64_groups": dict(x=(2, 2, 6, 6), w=(4, 1, 3, 3), b=(4,), dtype="float64",
                                groups=2),
    "slow_float64_1x1": dict(x=(2, 2, 6, 6), w=(4, 2, 1, 1), dtype="float64"),
    "slow_float64_1d": dict(x=(2, 2, 6), w=(4, 2, 3), dtype="float64"),
    "slow_float32_batch1": dict(x=(1, 2, 6, 6), w=(4, 2, 3, 3), b=(4,)),
}


@pytest.mark.parametrize("name", sorted(CONV_BACKWARD))
def test_convolution_backward_trees_match_torch(name):
    """convolution_backward picks the backend again; oneDNN's backward makes each
    gradient as its forward makes the output; the slow kernel's backward is an op
    (_slow_conv2d_backward), once per group."""
    case = dict(CONV_BACKWARD[name])
    groups, transposed = case.pop("groups", 1), case.pop("transposed", False)
    weight_only = "grad" in case and case.pop("grad") is None

    def make(lib):
        x, w, b = _conv_args(lib, case["x"], case["w"], case.get("b"), case.get("dtype", "float32"),
                             case.get("cl", False), grad=True)
        if weight_only:
            x = x.detach()
        k = len(case["x"]) - 2
        y = lib.ops.aten.convolution.default(x, w, b, [1] * k, [0] * k, [1] * k, transposed,
                                             [0] * k, groups)
        g = lib.ones_like(y)
        return lambda: y.backward(g)
    assert_same_tree(make)


# -- gradient accumulation: add_ into the buffered gradient when nothing else holds it ------

BACKWARDS = {   # loss(x), create_graph
    "fresh_grads": (lambda x: (x.exp().sin() + x.exp().cos()).sum(), False),
    "product": (lambda x: (x.exp() * x.exp()).sum(), False),
    "same_grad_twice": (lambda x: (lambda y: (y + y).sum())(x.exp()), False),
    "two_grads_from_one_node": (lambda x: (x * x).sum(), False),
    "create_graph": (lambda x: (x.exp().sin() + x.exp().cos()).sum(), True),
}


@pytest.mark.parametrize("name", sorted(BACKWARDS))
def test_backward_accumulation_trees_match_torch(name):
    """The engine's input buffer sums a node's incoming gradients in place
    (``add_``) or not (``add``) by InputBuffer::accumulate's rule."""
    def make(lib):
        x = _fixed(lib, 3, 4).requires_grad_()
        loss, create_graph = BACKWARDS[name]
        return lambda: loss(x).backward(create_graph=create_graph)
    assert_same_tree(make)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_backward_trees_match_torch(reduction):
    """mse_loss_backward writes into zeros_like(self) through its grad_input
    overload, once for each of the two inputs."""
    def make(lib):
        x, y = _fixed(lib, 3, 4).requires_grad_(), _fixed(lib, 4).requires_grad_()
        loss = lib.nn.functional.mse_loss(x, y.expand(3, 4), reduction=reduction)
        return lambda: loss.sum().backward()
    assert_same_tree(make)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_batch_norm_backward_trees_match_torch(training, affine):
    """native_batch_norm_backward's allocations (contiguous kernel); one
    tensor as weight and bias gets both gradients, summed in place."""
    def make(lib):
        x, g = _fixed(lib, 2, 3, 2, 2).requires_grad_(), _fixed(lib, 2, 3, 2, 2)
        w = lib.ones(3, requires_grad=True) if affine else None
        stats = (None, None) if training else (lib.zeros(3), lib.ones(3))
        y = lib.nn.functional.batch_norm(x, *stats, w, w, training=training)
        return lambda: y.backward(g)
    assert_same_tree(make)


# -- gradient clipping: _foreach_norm and _foreach_mul_, one op per gradient underneath -------

@pytest.mark.parametrize("foreach", [None, False])
def test_clip_grad_norm_trees_match_torch(foreach):
    def make(lib):
        params = [lib.nn.Parameter(_fixed(lib, 3, 4)), lib.nn.Parameter(_fixed(lib, 5))]
        for p in params:
            p.grad = p.detach() * 2
        return lambda: lib.nn.utils.clip_grad_norm_(params, 0.5, foreach=foreach)
    assert_same_tree(make)


# -- training steps: forward, backward, optimizer step -----------------------------------

def _step(lib, model, loss_fn, optimizer):
    def program():
        optimizer.zero_grad()
        loss = loss_fn()
        loss.backward()
        optimizer.step()
    program.model = model
    return program


OPTIMIZERS = {
    "SGD": lambda lib, params: lib.optim.SGD(params, lr=0.1, momentum=0.9),
    "Adam": lambda lib, params: lib.optim.Adam(params, lr=1e-3),
    "AdamW": lambda lib, params: lib.optim.AdamW(params, lr=1e-3),
}


def mlp(lib, optimizer):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x, y = _fixed(lib, 5, 8), lib.tensor([0, 1, 2, 3, 0])
    loss_fn = lambda: nn.functional.cross_entropy(model(x), y)
    return _step(lib, model, loss_fn, OPTIMIZERS[optimizer](lib, model.parameters()))


def cnn(lib, optimizer):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 3))
    x, y = _fixed(lib, 2, 2, 6, 6), lib.tensor([0, 2])
    loss_fn = lambda: nn.functional.cross_entropy(model(x), y)
    return _step(lib, model, loss_fn, OPTIMIZERS[optimizer](lib, model.parameters()))


_GPT = {}


def gpt(lib, optimizer):
    name = "torch" if lib is torch else "glasstorch"
    if name not in _GPT:
        _GPT[name] = load_example("gpt.py", name)
    module = _GPT[name]
    lib.manual_seed(0)
    model = module.GPT(module.GPTConfig(vocab_size=23, block_size=8, n_layer=1, n_head=2,
                                        n_embd=16))
    ids = np.random.default_rng(0).integers(0, 23, (2, 9))
    idx, targets = lib.from_numpy(ids[:, :-1].copy()), lib.from_numpy(ids[:, 1:].copy())
    loss_fn = lambda: model(idx, targets)[1]
    return _step(lib, model, loss_fn, OPTIMIZERS[optimizer](lib, model.parameters()))


@pytest.mark.parametrize("model, optimizer", [
    pytest.param(model, optimizer, id=f"{model.__name__}-{optimizer}")
    for model in (mlp, cnn, gpt) for optimizer in sorted(OPTIMIZERS)])
def test_training_step_trees_match_torch(model, optimizer):
    assert_same_tree(lambda lib: model(lib, optimizer))


# -- observing changes nothing else ------------------------------------------------------

@pytest.mark.parametrize("model", [mlp, cnn, gpt], ids=lambda f: f.__name__)
def test_profiled_step_gives_the_same_values(model):
    """Kernels dispatch their inner ops only while observed: the parameters
    after a profiled step are bit-identical to an unprofiled one's."""
    def params_after_step(profiled):
        program = model(gt, "AdamW")    # seeded: the same model and data each time
        if profiled:
            with gt.profiler.profile(activities=[gt.profiler.ProfilerActivity.CPU]):
                program()
        else:
            program()
        return [p.detach().numpy().copy() for p in program.model.parameters()]
    plain, observed = params_after_step(False), params_after_step(True)
    assert all(np.array_equal(a, b) for a, b in zip(plain, observed))


def test_dispatch_mode_sees_no_inner_op_while_profiled():
    """Inner ops run below the Python key, as in PyTorch: a TorchDispatchMode
    inside a profiled region logs what PyTorch's logs, nothing more."""
    def logged(lib):
        log = []

        class Logger(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(str(func))
                return func(*args, **(kwargs or {}))
        x, w = _fixed(lib, 3, 4), _fixed(lib, 5, 4).requires_grad_()
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU]), Logger():
            y = lib.nn.functional.linear(x.t().contiguous().t(), w, w[:, 0]).relu().sum()
            y.backward()
            x.mean() * 2
        return log
    assert logged(gt) == logged(torch)


def test_python_handlers_are_ranges_as_in_torch():
    """A dispatch mode's handler is a "PythonDispatchMode" range, a subclass's
    ``__torch_dispatch__`` a "PythonSubclass" one, each over the op it calls
    again; ``as_subclass`` (how ``__torch_function__`` wraps results) is ``alias``."""
    def make(lib):
        pytree = importlib.import_module(lib.__name__ + ".utils._pytree")

        class Mode(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        class Wrapper(lib.Tensor):
            @staticmethod
            def __new__(cls, elem):
                out = lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
                out.elem = elem
                return out

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                unwrap = lambda a: a.elem if isinstance(a, Wrapper) else a    # noqa: E731
                return Wrapper(func(*pytree.tree_map(unwrap, args),
                                    **pytree.tree_map(unwrap, kwargs or {})))

        class Functional(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs)
        x = _fixed(lib, 3, 4)
        wrapped, functional = Wrapper(x), x.as_subclass(Functional)

        def program():
            with Mode():
                (x + 1).sum()
            wrapped.sin()
            functional * 2
        return program
    assert_same_tree(make)


def test_dispatch_mode_sees_torch_tensor_as_torch_does_while_profiled():
    """torch.tensor dispatches empty and to below the Python key, and detach_
    stops at the autograd key: a mode sees lift_fresh (and, copying a tensor,
    detach and _to_copy), profiled or not."""
    def logged(lib, profiled):
        log = []

        class Logger(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(str(func))
                return func(*args, **(kwargs or {}))
        x = _fixed(lib, 3, 4)
        profiler = lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU])
        with profiler if profiled else contextlib.nullcontext(), Logger():
            lib.tensor([[1, 2]], dtype=lib.float64)
            lib.tensor(x)
            lib.tensor(0.5, device="meta")
        return log
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)    # the copy construction's advice
        assert logged(gt, True) == logged(gt, False) == logged(torch, True)
