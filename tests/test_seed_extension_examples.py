"""The seeds' code examples for the extension points, run unchanged but for the
import line (and CUDA devices, which these machines lack, read as CPU).  The
custom-op seeds (myadd, clip_norm, triple) are in ``test_custom_ops.py``.

Each program runs in a fresh namespace under both libraries; what it prints
must be the same (or, for the profiler's timings, hold the same rows).
"""
from __future__ import annotations

import contextlib
import io
import re
import textwrap
import warnings

import pytest

PROGRAMS = {
    # /work/shared/seeds/000: "Verification Code" (nn.Linear under a DispatchLogger)
    "dispatch_logger": '''
        from torch.utils._python_dispatch import TorchDispatchMode

        class DispatchLogger(TorchDispatchMode):
            """Log every dispatched operator."""
            def __torch_dispatch__(self, func, types, args, kwargs=None):
                print(f"  → {func.__module__}.{func.__name__}")
                return func(*args, **(kwargs or {}))

        layer = torch.nn.Linear(768, 3072).cuda()
        x = torch.randn(32, 768, device='cuda')

        with DispatchLogger():
            y = layer(x)
        with DispatchLogger():
            y.sum().backward()
    ''',
    # 000, Exercise 1: count the operators of a 2-layer MLP's forward
    "op_counter": '''
        import torch.nn as nn
        from torch.utils._python_dispatch import TorchDispatchMode

        class OpCounter(TorchDispatchMode):
            def __init__(self):
                self.ops = {}

            def __torch_dispatch__(self, func, types, args, kwargs=None):
                name = f"{func.__module__}.{func.__name__}"
                self.ops[name] = self.ops.get(name, 0) + 1
                return func(*args, **(kwargs or {}))

        model = nn.Sequential(
            nn.Linear(256, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        ).cuda()
        x = torch.randn(16, 256, device='cuda')

        counter = OpCounter()
        with counter:
            y = model(x)

        for op, count in sorted(counter.ops.items()):
            print(f"  {op}: {count}")
    ''',
    # 000, Exercise 2: walk the autograd graph
    "graph_walk": '''
        x = torch.randn(4, 4, requires_grad=True)
        w = torch.randn(4, 4, requires_grad=True)
        b = torch.randn(4, requires_grad=True)

        y = torch.addmm(b, x, w)
        z = y.sum()

        node = z.grad_fn
        while node:
            print(f"{type(node).__name__}")
            if node.next_functions:
                node = node.next_functions[0][0]
            else:
                break
    ''',
    # 000, "Dispatch Keys in Practice" (with torch._C's spelling of the key set)
    "dispatch_keys": '''
        x = torch.randn(3, 3, requires_grad=True, device='cuda')
        print(torch._C._dispatch_keys(x))
        y = x.detach()
        print(torch._C._dispatch_keys(y))
        print("addmm" in torch._C._dispatch_dump('aten::addmm'))
    ''',
    # 001, Exercise 2: autocast + no_grad + matmul
    "autocast_no_grad_matmul": '''
        a = torch.randn(8, 8, device="cuda", requires_grad=True)
        b = torch.randn(8, 8, device="cuda", requires_grad=True)
        with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():
            y = a @ b
        print(y.dtype, y.requires_grad)
    ''',
    # 001, 8.3: the GradScaler loop (without CUDA: the scaler warns and disables itself)
    "grad_scaler_loop": '''
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        loss_fn = torch.nn.functional.mse_loss
        loader = [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(3)]
        scaler = torch.cuda.amp.GradScaler()
        for x, y in loader:
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(x)
                loss = loss_fn(out, y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        print(out.dtype, loss.dtype, scaler.is_enabled(), model.weight.dtype)
    ''',
    # 001, 13.1: the profiler (CUDA activity asked for, CPU recorded)
    "profiler": '''
        from torch.profiler import profile, record_function, ProfilerActivity

        model = torch.nn.Linear(16, 4)
        x = torch.randn(8, 16)
        target = torch.randn(8, 4)
        with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            record_shapes=True,
            with_stack=False,
        ) as prof:
            with record_function("forward"):
                y = model(x)
            with record_function("loss"):
                loss = (y - target).pow(2).mean()
            with record_function("backward"):
                loss.backward()

        table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=20)
        print("Self CPU time total" in table)
        rows = {event.key for event in prof.key_averages()}
        print(sorted(rows & {"forward", "loss", "backward", "aten::linear", "aten::addmm",
                             "aten::pow", "aten::mean", "AddmmBackward0",
                             "autograd::engine::evaluate_function: AddmmBackward0"}))
    ''',
}


def _run(program, lib_name):
    """Run a seed program with ``import torch`` meaning ``lib_name``; its stdout."""
    lib = __import__(lib_name)
    for name in ("utils._python_dispatch", "profiler", "library"):
        __import__(f"{lib_name}.{name}")
    source = textwrap.dedent(program)
    source = source.replace(".cuda()", "").replace("device='cuda'", "device='cpu'") \
        .replace('device="cuda"', 'device="cpu"')
    source = re.sub(r"\bfrom torch\b", f"from {lib_name}", source)
    source = re.sub(r"\bimport torch\.nn as nn\b", "nn = torch.nn", source)
    namespace = {"torch": lib}
    out = io.StringIO()
    lib.manual_seed(0)
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, f"<seed {lib_name}>", "exec"), namespace)
    return out.getvalue()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_seed_program_prints_what_pytorch_prints(name):
    program = PROGRAMS[name]
    theirs = _run(program, "torch")
    ours = _run(program, "glasstorch")
    assert ours == theirs
    assert ours.strip()
