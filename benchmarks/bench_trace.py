"""make_fx and AOTAutograd tracing time, glasstorch against PyTorch, in one run.

Traces the example GPT's whole training step (forward, cross-entropy,
``autograd.grad``) with make_fx in each library, alternating, and prints the
median times and their ratio; then the number of tensors each library's
default partitioner saves for the backward of the same step.

    python -m benchmarks.bench_trace [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import time



def _gpt_step(lib):
    from examples.dual import tiny_gpt
    model, idx, targets = tiny_gpt(lib)
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())

    def loss(state, idx, targets):
        return lib.func.functional_call(model, state, (idx, targets))[1]

    def step(params, idx, targets):
        value = loss({**params, **buffers}, idx, targets)
        return value, lib.autograd.grad(value, list(params.values()))
    return step, loss, params, buffers, idx, targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import torch
    from functorch.compile import aot_function as torch_aot
    from functorch.compile import default_partition as torch_partition
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    import glasstorch as gt
    from glasstorch._functorch.aot_autograd import aot_function as gt_aot
    from glasstorch._functorch.partitioners import default_partition as gt_partition
    from glasstorch.fx.experimental.proxy_tensor import make_fx as gt_make_fx

    libs = {"glasstorch": (gt, gt_make_fx, gt_aot, gt_partition),
            "torch": (torch, torch_make_fx, torch_aot, torch_partition)}
    times: dict = {name: [] for name in libs}
    for name, (lib, make_fx, _, _) in libs.items():     # warm up (imports, first-call caches)
        step, _, params, _, idx, targets = _gpt_step(lib)
        make_fx(step)(params, idx, targets)
    for _ in range(args.repeats):
        for name, (lib, make_fx, _, _) in libs.items():
            step, _, params, _, idx, targets = _gpt_step(lib)
            start = time.perf_counter()
            make_fx(step)(params, idx, targets)
            times[name].append(time.perf_counter() - start)
    ours, theirs = (statistics.median(times[n]) for n in ("glasstorch", "torch"))
    print(f"make_fx of the GPT training step, median of {args.repeats}: "
          f"glasstorch {ours * 1e3:.1f} ms, torch {theirs * 1e3:.1f} ms, "
          f"glasstorch takes {ours / theirs:.2f}x torch's time")
    for name, (lib, _, aot, partition) in libs.items():
        _, loss, params, buffers, idx, targets = _gpt_step(lib)
        state = {**params, **buffers}
        saved = {}

        def bw(gm, inputs, saved=saved):
            saved["n"] = sum(1 for n in gm.graph.nodes if n.op == "placeholder"
                             and not n.name.startswith("tangents"))
            return gm
        names = list(state)
        compiled = aot(lambda *flat: loss(dict(zip(names, flat[:len(names)])), *flat[len(names):]),
                       lambda gm, inputs: gm, bw, partition_fn=partition)
        compiled(*state.values(), idx, targets).backward()
        print(f"{name}: default_partition saves {saved['n']} tensors for the GPT step's backward")


if __name__ == "__main__":
    main()
