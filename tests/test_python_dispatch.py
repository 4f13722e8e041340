"""The Python key: TorchDispatchMode and ``__torch_dispatch__``, against real PyTorch.

The acceptance programs are the seeds' DispatchLogger and OpCounter (nn.Linear,
a 2-layer MLP, forward and backward): the mode must log the same OpOverloads,
in the same order, as PyTorch's.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from .differential import differential, raised, returned


def _logger(lib, log):
    class DispatchLogger(lib.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args, kwargs=None):
            log.append(f"{func.__module__}.{func.__name__}")
            return func(*args, **(kwargs or {}))
    return DispatchLogger


def _import_dispatch(lib):
    __import__(f"{lib.__name__}.utils._python_dispatch")
    return lib


def _weights(lib, model, seed=0):
    """The same parameter values in both libraries."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.1))


def test_seed_dispatch_logger_linear_forward_and_backward():
    def scenario(lib):
        lib = _import_dispatch(lib)
        log = []
        layer = lib.nn.Linear(768, 3072)
        x = lib.randn(32, 768)
        with _logger(lib, log)():
            y = layer(x)
        log.append("-- backward")
        with _logger(lib, log)():
            y.sum().backward()
        return log
    log = returned(differential(scenario))
    assert log[:2] == ("torch._ops.aten.t.default", "torch._ops.aten.addmm.default")


def test_seed_op_counter_mlp_forward_backward_and_loss():
    def scenario(lib):
        lib = _import_dispatch(lib)

        class OpCounter(lib.utils._python_dispatch.TorchDispatchMode):
            def __init__(self):
                super().__init__()
                self.ops = {}

            def __torch_dispatch__(self, func, types, args, kwargs=None):
                name = f"{func.__module__}.{func.__name__}"
                self.ops[name] = self.ops.get(name, 0) + 1
                return func(*args, **(kwargs or {}))

        nn = lib.nn
        model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))
        x = lib.randn(16, 256)
        forward, backward, log = OpCounter(), OpCounter(), []
        with forward:
            y = model(x)
        with _logger(lib, log)():
            loss = lib.nn.functional.cross_entropy(y, lib.tensor([1] * 16))
            loss.backward()
        with backward:
            model(x).relu().mean().backward()
        return sorted(forward.ops.items()), log, sorted(backward.ops.items())
    forward = returned(differential(scenario))[0]
    assert dict(forward)["torch._ops.aten.addmm.default"] == 2


def test_logged_ops_for_factories_and_a_graph_with_saved_outputs():
    def scenario(lib):
        lib = _import_dispatch(lib)
        log = []
        with _logger(lib, log)():
            lib.zeros(3)
            lib.ones(2, 2)
            lib.tensor([1.0, 2.0])
            lib.arange(5)
            lib.full((2,), 3.0)
            x = lib.randn(4, 4, requires_grad=True)
            (x.relu() * 2).mean().backward()
            x.sigmoid().tanh().sum().backward()
        return log
    differential(scenario)


def test_handler_sees_overload_objects_and_no_autograd_inside():
    def scenario(lib):
        lib = _import_dispatch(lib)
        seen = []

        class Inspect(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                seen.append((str(func), func.__name__, str(func.overloadpacket), func.name(),
                             types, out.requires_grad, out.grad_fn is None,
                             lib.is_grad_enabled(), len(
                                 lib.utils._python_dispatch._get_current_dispatch_mode_stack())))
                return out
        x = lib.ones(3, requires_grad=True)
        with Inspect():
            y = (x * 2).sum(dim=0)
        return seen, y.requires_grad, type(y.grad_fn).__name__
    differential(scenario)


def test_nested_dispatch_modes():
    def scenario(lib):
        lib = _import_dispatch(lib)
        log = []

        class Named(lib.utils._python_dispatch.TorchDispatchMode):
            def __init__(self, name):
                super().__init__()
                self.name = name

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append((self.name, str(func)))
                return func(*args, **(kwargs or {}))
        with Named("outer"):
            with Named("inner"):
                lib.ones(2).neg()
            lib.ones(1).exp()
        return log
    differential(scenario)


def test_mode_can_change_results():
    def scenario(lib):
        lib = _import_dispatch(lib)

        class AddIsSub(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if func is lib.ops.aten.add.Tensor:
                    func = lib.ops.aten.sub.Tensor
                return func(*args, **(kwargs or {}))
        with AddIsSub():
            return lib.ones(2) + lib.ones(2) * 3
    differential(scenario)


def _logging_tensor(lib, log):
    """A wrapper subclass in the style of PyTorch's LoggingTensor: metadata only,
    the data in ``elem``, every op unwrapped, run, rewrapped."""
    class LoggingTensor(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            r = lib.Tensor._make_wrapper_subclass(
                cls, elem.size(), strides=elem.stride(), dtype=elem.dtype, device=elem.device,
                requires_grad=elem.requires_grad)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            log.append((str(func), tuple(t.__name__ for t in types)))

            def unwrap(a):
                if isinstance(a, cls):
                    return a.elem
                if isinstance(a, (list, tuple)):
                    return type(a)(unwrap(x) for x in a)
                return a

            def wrap(a):
                if isinstance(a, lib.Tensor) and not isinstance(a, cls):
                    return cls(a)
                if isinstance(a, (list, tuple)):
                    return type(a)(wrap(x) for x in a)
                return a
            return wrap(func(*unwrap(args), **unwrap(dict(kwargs or {})) if kwargs else {}))
    return LoggingTensor


def test_wrapper_subclass_with_autograd():
    def scenario(lib):
        log = []
        LoggingTensor = _logging_tensor(lib, log)
        w = LoggingTensor(lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=False))
        w.requires_grad_(True)
        x = LoggingTensor(lib.tensor([[0.5, -1.0]]))
        y = (x @ w).relu().sum()
        y.backward()
        return (log, type(y).__name__, type(w.grad).__name__, w.grad.elem.tolist(),
                y.elem.item(), tuple(w.shape), w.stride(), w.dtype == lib.float32,
                type(y.grad_fn).__name__)
    differential(scenario)


def test_wrapper_subclass_without_data_has_no_pointer():
    def scenario(lib):
        log = []
        LoggingTensor = _logging_tensor(lib, log)
        w = LoggingTensor(lib.ones(2, 3))
        return w.data_ptr(), w.dim(), tuple(w.size()), w.is_contiguous()
    differential(scenario)


def test_subclass_returning_notimplemented_everywhere():
    def scenario(lib):
        class Declines(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        x = lib.Tensor._make_wrapper_subclass(Declines, (2,), dtype=lib.float32)
        if operator:        # the operator turns the TypeError into NotImplemented
            return x * 2
        return lib.mul(x, 2)
    operator = True
    raised(differential(scenario, may_raise=True), "TypeError",
           "unsupported operand type(s) for *: 'Declines' and 'int'")
    operator = False
    message = raised(differential(scenario, may_raise=True), "TypeError")
    assert "all __torch_dispatch__ handlers returned NotImplemented" in message


def test_dispatch_modes_are_thread_local():
    def scenario(lib):
        lib = _import_dispatch(lib)
        log = []
        with _logger(lib, log)():
            t = threading.Thread(target=lambda: lib.ones(2).neg())
            t.start()
            t.join()
            lib.ones(1)
        return log
    differential(scenario)


def test_include_set_while_a_mode_is_active():
    def scenario(lib):
        lib = _import_dispatch(lib)
        before = str(lib._C._dispatch_tls_local_include_set())
        with _logger(lib, [])():
            inside = str(lib._C._dispatch_tls_local_include_set())
        after = str(lib._C._dispatch_tls_local_include_set())
        return before, inside, after
    differential(scenario)


@pytest.mark.parametrize("op", ["mm", "addmm", "conv", "softmax", "layer_norm", "embedding"])
def test_layer_functionals_log_pytorchs_ops(op):
    def scenario(lib):
        lib = _import_dispatch(lib)
        F = lib.nn.functional
        log = []
        x = lib.ones(2, 4, requires_grad=True)
        with _logger(lib, log)():
            if op == "mm":
                out = x @ lib.ones(4, 3)
            elif op == "addmm":
                out = F.linear(x, lib.ones(3, 4), lib.ones(3))
            elif op == "conv":
                out = F.conv2d(x.view(1, 1, 2, 4), lib.ones(2, 1, 2, 2), lib.ones(2))
            elif op == "softmax":
                out = F.softmax(x, dim=-1)
            elif op == "layer_norm":
                out = F.layer_norm(x, (4,))
            else:
                out = F.embedding(lib.tensor([0, 1]), x)
            out.sum().backward()
        return log
    differential(scenario)


def test_user_mode_outside_fake_mode_still_sees_ops_first():
    """FakeTensorMode is an infrastructure mode: it sits below user modes, so a
    logging mode entered first still sees every op (and gets fake results)."""
    def scenario(lib):
        lib = _import_dispatch(lib)
        __import__(f"{lib.__name__}._subclasses.fake_tensor")
        log = []
        with _logger(lib, log)():
            with lib._subclasses.fake_tensor.FakeTensorMode():
                x = lib.ones(2, 3)
                y = (x @ x.t()).relu()
        # (torch's fake mm asks ``prim.device`` of its inputs: an implementation detail)
        return [n for n in log if "._ops.prim." not in n], type(y).__name__, tuple(y.shape)
    differential(scenario)


def test_example_gpt_forward_and_backward_log_pytorchs_ops():
    """A whole real model: examples/gpt.py (embeddings, layer norm, causal sdpa,
    GELU MLP, weight tying, cross_entropy), forward and backward under a logging
    mode, op for op as in PyTorch."""
    from examples.dual import load_example

    def scenario(lib):
        lib = _import_dispatch(lib)
        gpt = load_example("gpt.py", lib.__name__)
        lib.manual_seed(0)
        model = gpt.GPT(gpt.GPTConfig(block_size=8, vocab_size=11, n_layer=1, n_head=2,
                                      n_embd=8, dropout=0.0))
        idx = lib.randint(0, 11, (2, 8))
        log = []
        with _logger(lib, log)():
            _, loss = model(idx, idx)
            loss.backward()
        return log
    log = returned(differential(scenario))
    assert len(log) > 150


def test_cnn_training_step_logs_pytorchs_ops():
    """Conv2d, BatchNorm2d, ReLU, MaxPool2d, Flatten, Dropout, Linear, label-smoothed
    cross_entropy, backward, an Adam step and an eval forward: the same log."""
    def scenario(lib):
        lib = _import_dispatch(lib)
        nn = lib.nn
        lib.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.0),
                              nn.Linear(4 * 4 * 4, 10))
        x = lib.randn(2, 3, 8, 8)
        y = lib.tensor([1, 2])
        optimizer = lib.optim.Adam(model.parameters(), lr=0.1)
        log = []
        with _logger(lib, log)():
            nn.functional.cross_entropy(model(x), y, label_smoothing=0.1).backward()
            optimizer.step()
            model.eval()
            model(x)
        return log
    differential(scenario)
