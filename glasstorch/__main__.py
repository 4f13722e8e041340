"""``python -m glasstorch demo``: train a small model, then show what the runtime did.

Training uses autograd (``loss.backward()``, updates under ``no_grad``); the
walkthrough after it shows the path of a call through the dispatch keys, the
autograd graph the forward recorded, and the grad modes.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def train(torch, steps: int = 60) -> None:
    """Fit y = Xw + b on synthetic data with gradient descent, printing progress."""
    _section("training: linear regression, gradient descent with autograd")
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(256, 8)).astype(np.float32))
    w_true = torch.from_numpy(rng.normal(size=(8, 1)).astype(np.float32))
    y = x @ w_true + 0.5 + torch.from_numpy(rng.normal(scale=0.01, size=(256, 1)).astype(np.float32))
    w = torch.zeros(8, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lr = 0.1
    for step in range(1, steps + 1):
        err = x @ w + b - y                       # forward records MmBackward0, AddBackward0 ...
        loss = (err * err).mean()
        loss.backward()                           # the engine walks the graph into w.grad, b.grad
        with torch.no_grad():                     # the update itself is not recorded
            w -= w.grad * lr
            b -= b.grad * lr
            w.grad = None
            b.grad = None
        if step % 10 == 0 or step == 1:
            print(f"step {step:3d}  loss {loss.item():.6f}")
    print(f"learned bias {b.item():.4f} (true 0.5); max |w - w_true| = "
          f"{(w - w_true).abs().max().item():.4f}")


def walkthrough(torch) -> None:
    from glasstorch._core.allocator import cpu_allocator
    from glasstorch._dispatcher import dispatch_trace

    _section("a tensor is (storage, sizes, strides, offset)")
    a = torch.arange(24, dtype=torch.float32).view(2, 3, 4)
    print("a = arange(24).view(2, 3, 4):", tuple(a.shape), "strides", a.stride())
    b = a.transpose(0, 2)
    print("a.transpose(0, 2):          ", tuple(b.shape), "strides", b.stride(),
          "contiguous:", b.is_contiguous(), "same storage:", b.data_ptr() == a.data_ptr())
    c = a.narrow(1, 1, 2)
    print("a.narrow(1, 1, 2):          ", tuple(c.shape), "strides", c.stride(),
          "offset", c.storage_offset())
    img = torch.zeros(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    print("channels_last (2,3,4,5):     strides", img.stride(),
          "is_contiguous(channels_last):", img.is_contiguous(memory_format=torch.channels_last))

    _section("dispatch keys")
    print("a's keys:          ", torch._C._dispatch_keys(a))
    print("thread included:   ", torch._C._dispatch_tls_local_include_set())
    print("thread excluded:   ", torch._C._dispatch_tls_local_exclude_set())

    _section("one call, end to end: c = x + y")
    x, y = torch.ones(2, 2), torch.ones(2, 2)
    with dispatch_trace() as trace:
        x + y
    print(trace)
    print("(AutogradCPU's kernel ran, found no input requiring grad, and redispatched;\n"
          " ADInplaceOrView and AutocastCPU were skipped: fallthrough kernels)")
    print("\naten::add.Tensor's table (CPU and Meta rows; the Autograd alias filled every "
          "Autograd<Backend> slot):")
    for line in torch._C._dispatch_dump_table("aten::add.Tensor").splitlines():
        if line.split(":")[0] in ("CPU", "Meta", "AutogradCPU", "AutogradMeta"):
            print("  " + line)

    _section("a composite op decomposes: matmul of 2-d tensors")
    with dispatch_trace() as trace:
        torch.matmul(x, y)
    print(trace)

    _section("autograd: the graph a forward records")
    a_ = torch.tensor(2.0, requires_grad=True)
    b_ = torch.tensor(3.0, requires_grad=True)
    d = a_ * b_ + a_
    print("d = a * b + a  ->", d)
    print("d.grad_fn.next_functions:", d.grad_fn.next_functions)
    d.backward()
    print("after d.backward(): a.grad =", a_.grad, " b.grad =", b_.grad)
    xw = torch.randn(4, 4, requires_grad=True)
    z = torch.addmm(torch.randn(4, requires_grad=True), xw, torch.randn(4, 4, requires_grad=True))
    node, names = z.sum().grad_fn, []
    while node is not None:
        names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    print("addmm(...).sum(): walk of next_functions[0]:", " -> ".join(names))

    _section("grad modes: no_grad vs inference_mode")
    with torch.no_grad(), dispatch_trace() as trace:
        xw * 2
    print("under no_grad (the Autograd kernel still runs, records nothing):")
    print(trace)
    with torch.inference_mode(), dispatch_trace() as trace:
        xw * 2
    print("under inference_mode (the Autograd keys are excluded: never entered):")
    print(trace)

    _section("the meta device: shapes and dtypes, no bytes")
    m = torch.empty(1024, 1024, device="meta")
    out = m @ m.t()
    print("(1024x1024 @ 1024x1024) on meta ->", out)

    _section("memory: every byte from an allocator")
    stats = cpu_allocator.stats
    print(f"CPU allocator: {stats.current} bytes live, peak {stats.peak}, "
          f"{stats.allocations} allocations")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m glasstorch")
    parser.add_argument("command", choices=["demo"], help="demo: train, then show the runtime")
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args(argv)
    import glasstorch as torch
    train(torch, args.steps)
    walkthrough(torch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
