"""``python -m glasstorch demo``: train a small GPT, then show what the runtime did.

1. Training: ``examples/train_gpt.py`` (a plain PyTorch script) trains a
   character-level GPT (``examples/gpt.py``) on Shakespeare's Sonnets, which
   ship with glasstorch, with a progress bar and periodic losses, then samples
   text from it.
2. One more training step, watched: the kernels the dispatcher ran, per
   dispatch key, in the forward, the backward and the optimizer step (an
   ``OpCounter`` observer); the autograd graph the forward recorded (nodes
   reachable from ``loss.grad_fn``, by type); and the CPU allocator's books
   (bytes live, peak, allocations).
3. The extension points at work on the trained model: the profiler's table
   for one step (and a chrome trace), a TorchDispatchMode's log of an MLP
   block, FakeTensorMode running the model on a batch never allocated,
   autocast's dtypes, and the autograd graph written as SVG.
4. A walkthrough of the layers underneath: a tensor's storage and strides,
   the dispatch keys, one call end to end, a composite op, grad modes, and
   the meta device.

``python -m glasstorch run script.py [args]`` runs a PyTorch program unchanged on
glasstorch (``import torch`` binds glasstorch; see ``_as_torch.py``).

``--quick`` trains a few steps only (a smoke test); ``--steps N`` sets the
number of training steps.  The examples live in the source tree next to the
package (``pip install -e .`` keeps them there).

Threads: the model's matrices are small (at most 512 x 256), where
OpenBLAS's thread hand-offs cost more than a second thread saves, and on a
busy machine far more (this demo measured 4 min 53 s with numpy's default two
BLAS threads against 1 min 31 s with one, on a 2-core box at load 6.6).  So
``--threads N`` (default 1) calls ``torch.set_num_threads(N)``, which sets
glasstorch's C loops and numpy's OpenBLAS alike.
"""
from __future__ import annotations

import argparse
import pathlib
import re
import sys
import time
from collections import Counter

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def _mb(nbytes: int) -> str:
    return f"{nbytes / 2**20:.2f} MB"


# -- 1. training -------------------------------------------------------------------

def train_and_sample(args):
    """Run examples/train_gpt.py's training; returns (model, data)."""
    sys.path.insert(0, str(EXAMPLES))
    import train_gpt

    _section("training a character-level GPT on Shakespeare's Sonnets")
    evals = 2 if args.quick else 5
    options = train_gpt.build_parser().parse_args([
        "--steps", str(args.steps), "--eval-every", str(max(1, args.steps // evals)),
        "--sample-tokens", str(args.sample_tokens), "--threads", str(args.threads)])
    model, data, _ = train_gpt.run(options)
    return model, data


# -- 2. one training step, watched -----------------------------------------------------

def graph_nodes(root) -> Counter:
    """Autograd nodes reachable from ``root`` (a grad_fn), counted by type."""
    seen, stack, kinds = {id(root)}, [root], Counter()
    while stack:
        node = stack.pop()
        kinds[type(node).__name__] += 1
        for child, _ in node.next_functions:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return kinds


KEY_ROLES = {
    "AutogradCPU": "autograd: record the graph node, then redispatch",
    "ADInplaceOrView": "views and in-place ops: version counters, view links",
    "CPU": "the kernels that compute (numpy, native.c)",
    "BackendSelect": "factories pick a backend from their device argument",
    "Undefined": "factories with no tensor argument (arange): default kernel",
}


def watch_one_step(model, data) -> None:
    from glasstorch._core.allocator import cpu_allocator
    from glasstorch._dispatcher.op_counter import OpCounter

    cfg = model.config
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-4, betas=(0.9, 0.99))
    batch = data.batch("train", 16, cfg.block_size)

    _, loss = model(*batch)   # a warm step: AdamW creates its state on the first one
    loss.backward()
    optimizer.step()
    stats = cpu_allocator.stats
    live_before, allocations_before = stats.current, stats.allocations
    cpu_allocator.reset_peak()

    with OpCounter() as forward:
        _, loss = model(*batch)
    nodes, root = graph_nodes(loss.grad_fn), type(loss.grad_fn).__name__
    peak_after_forward = stats.peak
    optimizer.zero_grad(set_to_none=True)
    with OpCounter() as backward:
        loss.backward()
    with OpCounter() as update:
        optimizer.step()
    del loss

    _section("one training step, watched: kernels run per dispatch key")
    print(f"batch of {batch[0].shape[0]} x {batch[0].shape[1]} characters; a count is one kernel "
          "entered at that key (an op passing autograd, then its CPU kernel, counts twice)")
    phases = {"forward": forward, "backward": backward, "optimizer": update}
    keys = sorted(set().union(*(c.by_key for c in phases.values())),
                  key=lambda k: -sum(c.by_key[k] for c in phases.values()))
    print(f"  {'dispatch key':<18}" + "".join(f"{p:>11}" for p in phases) + "   what runs there")
    for key in keys:
        print(f"  {key:<18}" + "".join(f"{c.by_key[key]:>11}" for c in phases.values())
              + f"   {KEY_ROLES.get(key, '')}")
    print(f"  {'total':<18}" + "".join(f"{c.total:>11}" for c in phases.values()))
    for name, counter in phases.items():
        top = ", ".join(f"{op.removeprefix('aten::')} {n}"
                        for op, n in counter.by_op.most_common(6))
        print(f"  most frequent in {name}: {top}")

    _section("the autograd graph the forward recorded")
    print(f"{sum(nodes.values())} nodes reachable from loss.grad_fn "
          f"({root} at the root); by type:")
    items = nodes.most_common()
    for i in range(0, len(items), 3):
        print("  " + "".join(f"{name:<26}{n:>4}    " for name, n in items[i:i + 3]).rstrip())
    print(f"({nodes['AccumulateGrad']} AccumulateGrad nodes: one per parameter; the tied "
          "wte/lm_head weight is one Parameter, so it has one)")

    _section("memory: the CPU allocator's books for that step")
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    print(f"parameters:                         {_mb(params)}")
    print(f"live before the step:               {_mb(live_before)}  "
          "(parameters, gradients, AdamW's two moments, the text)")
    print(f"peak after the forward:             {_mb(peak_after_forward)}  "
          "(+ activations saved for backward)")
    print(f"peak during the step:               {_mb(stats.peak)}")
    print(f"live after the step:                {_mb(stats.current)}  "
          "(the activations freed as backward consumed them)")
    print(f"allocations during the step:        {stats.allocations - allocations_before}")


def extension_points(torch, model, data) -> None:
    """The seams the dispatcher offers, each used on the trained model."""
    import tempfile
    from glasstorch.autograd.graph_viz import make_dot
    from glasstorch.profiler import ProfilerActivity, profile, record_function
    from glasstorch._subclasses.fake_tensor import FakeTensorMode
    from glasstorch.utils._python_dispatch import TorchDispatchMode

    cfg = model.config
    idx, targets = data.batch("train", 16, cfg.block_size)
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-4, betas=(0.9, 0.99))
    out_dir = pathlib.Path(tempfile.gettempdir())

    _section("the profiler (a dispatcher observer): one training step")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("forward"):
            _, loss = model(idx, targets)
        with record_function("backward"):
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    trace = out_dir / "glasstorch-demo-trace.json"
    prof.export_chrome_trace(str(trace))
    print(f"chrome trace (open in ui.perfetto.dev): {trace}")

    _section("a TorchDispatchMode: what reaches the kernels for one block's MLP")

    class Logger(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))
    x = torch.randn(2, cfg.n_embd)
    with Logger() as logger:
        model.transformer.h[0].mlp(x)
    print("  " + " -> ".join(logger.ops))

    _section("FakeTensorMode: the model on a batch that is never allocated")
    with FakeTensorMode(allow_non_fake_inputs=True) as fake:   # (the weights stay real)
        big = fake.from_tensor(torch.zeros(4096, cfg.block_size, dtype=torch.long))
        logits, loss = model(big, big)
    print(f"logits: {type(logits).__name__} of shape {tuple(logits.shape)}, {logits.dtype} "
          f"(it would need {_mb(logits.numel() * logits.element_size())}; no byte was "
          f"allocated); loss: {type(loss).__name__}, shape {tuple(loss.shape)}")

    _section("autocast (a dispatch key): the forward in bfloat16")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits, loss = model(idx, targets)
    print(f"logits {logits.dtype}, loss {loss.dtype} (matmuls ran in bfloat16; "
          "cross_entropy is on the fp32 list)")

    _section("the autograd graph, drawn")
    _, loss = model(idx, targets)
    dot = make_dot(loss, params=dict(model.named_parameters()))
    svg = out_dir / "glasstorch-demo-graph.svg"
    svg.write_bytes(dot.pipe(format="svg"))
    print(f"{dot.source.count('->')} edges; DOT with dot.source, SVG written to {svg}")


def graphs(torch, model, data) -> None:
    """The compile stack's first half on the trained model: the Python-level FX
    graph, then one training step as ATen graphs, split by AOTAutograd."""
    from glasstorch._functorch.aot_autograd import aot_function
    from glasstorch._functorch.partitioners import (default_partition,
                                                    min_cut_rematerialization_partition)

    cfg = model.config
    mlp = model.transformer.h[0].mlp
    stages = torch.compiler.stages(mlp, torch.randn(2, cfg.n_embd))
    _section("glasstorch.compiler.stages: one block's MLP, stage by stage")
    print("FX graph (symbolic_trace: the Python-level calls):")
    print(stages.fx.code.strip())
    print("\nAOTAutograd's forward partition (ATen ops; returns the output, then what it saves):")
    print(stages.graphs["forward"].code.strip())
    print("\nsaved for the backward:")
    print(stages.saved_table())
    print("(print(glasstorch.compiler.stages(fn, *args)) shows every stage: FX, ATen, joint, "
          "forward, backward)")

    idx, targets = data.batch("train", 4, cfg.block_size)
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    names = list(state)

    def loss_of(*flat):
        return torch.func.functional_call(model, dict(zip(names, flat[:len(names)])),
                                          flat[len(names):])[1]
    graphs: dict = {}
    for partition in (default_partition, min_cut_rematerialization_partition):
        def keep(kind, partition=partition):
            def compiler(gm, inputs):
                graphs[(partition.__name__, kind)] = gm
                return gm
            return compiler
        compiled = aot_function(loss_of, keep("forward"), keep("backward"),
                                partition_fn=partition)
        compiled(*state.values(), idx, targets).backward()
    model.zero_grad(set_to_none=True)
    fw = graphs[("default_partition", "forward")]
    bw = graphs[("default_partition", "backward")]
    _section("AOTAutograd: one training step as a forward and a backward ATen graph")
    ops = [n for n in fw.graph.nodes if n.op == "call_function"]
    print(f"forward graph: {len(ops)} ATen ops; its first lines:")
    print("\n".join(fw.code.strip().splitlines()[:8]) + "\n    ...")
    bw_ops = [n for n in bw.graph.nodes if n.op == "call_function"]
    print(f"backward graph: {len(bw_ops)} ATen ops, taking the saved values, then the tangent")

    _section("what the partitioners save for the backward (versus recompute)")
    for name in ("default_partition", "min_cut_rematerialization_partition"):
        saved = [n for n in graphs[(name, "backward")].graph.nodes
                 if n.op == "placeholder" and not n.name.startswith("tangents")]
        nbytes = sum(n.meta["val"].numel() * n.meta["val"].element_size() for n in saved)
        recomputed = [n.name for n in graphs[(name, "backward")].graph.nodes
                      if n.op == "call_function" and n.meta.get("val") is not None
                      and n.name in {m.name for m in graphs[("default_partition",
                                                              "forward")].graph.nodes}]
        print(f"{name}: saves {len(saved)} tensors ({_mb(nbytes)}); recomputes "
              f"{len(recomputed)} forward ops in the backward"
              + (f" ({', '.join(recomputed[:6])}{', ...' if len(recomputed) > 6 else ''})"
                 if recomputed else ""))


def capture(torch, model, data) -> None:
    """Dynamo on the trained model and on a function with a graph break: the
    graph torch.compile captures, the guards, the break and the resume function."""
    idx, targets = data.batch("train", 4, model.config.block_size)
    captured = []
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=lambda gm, inputs: captured.append(gm) or gm.forward)
    compiled(idx, targets)
    gm = captured[0]
    _section("torch.compile (Dynamo): the trained GPT's forward, captured from its bytecode")
    ops = [n for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    inputs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    print(f"{len(captured)} graph, {len(inputs)} inputs (parameters named by their path), "
          f"{len(ops)} calls; its first lines:")
    body = [line for line in gm.code.splitlines() if " = " in line and "L_" not in line]
    print("\n".join(body[1:9]) + "\n    ...")

    def scaled(x, n):
        y = torch.sin(x) * n
        print(f"  (a print inside the compiled function: {tuple(y.shape)})")
        return y.sum()
    _section("a graph break: print() splits the function; the rest resumes in a new frame")
    explained = torch._dynamo.explain(scaled)(torch.ones(3), 2)
    print(f"graphs: {explained.graph_count}, breaks: {explained.graph_break_count}")
    print(explained.describe())

    _section("torch.export: one block's MLP as one ATen graph, traced above autograd")
    exported = torch.export.export(model.transformer.h[0].mlp,
                                   (torch.randn(4, model.config.n_embd),),
                                   dynamic_shapes=({0: torch.export.Dim("batch")},))
    print("\n".join(line for line in str(exported).splitlines()
                    if line.strip() and "# File" not in line))
    print("(the PreDispatch key saw F.linear whole: aten.linear, not t + addmm; "
          "run_decompositions() lowers it to core ATen:)")
    lowered = exported.run_decompositions()
    print("  " + ", ".join(n.name for n in lowered.graph.nodes if n.op == "call_function"))


def inductor(torch, model, data) -> None:
    """Inductor on the trained model: one block's LayerNorm from ATen op to C,
    then the whole forward compiled, against eager."""
    import time

    from glasstorch._inductor import debug
    cfg = model.config
    ln = model.transformer.h[0].ln_1
    x = torch.randn(4 * cfg.block_size, cfg.n_embd)
    with torch.no_grad():
        stages = debug.stages(ln, x)
    gm, compiled = stages.graphs["inference"]
    _section("Inductor: one block's LayerNorm, from ATen op to a fused C kernel")
    print("the core ATen graph it receives:")
    print("\n".join(line for line in gm.code.strip().splitlines()[1:] if "= self." not in line))
    print("\nloop IR (each buffer: a loop nest and its body, one op per line):")
    print("\n".join(debug.ir_text(compiled.graph).splitlines()[:14]) + "\n    ...")
    print("\nfusion decisions:")
    print("\n".join("  " + line for line in compiled.scheduler.decisions))
    print("\nthe kernel, and the C wrapper that runs the graph (compiled with cc -O3 "
          "-march=native -fopenmp, cached on disk):")
    print(debug.kernels_only(compiled.code.c_source))

    _section("torch.compile (Inductor): the trained GPT's forward as fused C kernels")
    idx, targets = data.batch("train", 4, cfg.block_size)
    torch._dynamo.reset()
    compiled_model = torch.compile(model)
    with torch.no_grad():
        start = time.perf_counter()
        logits, loss = compiled_model(idx, targets)
        first = time.perf_counter() - start
        eager_logits, eager_loss = model(idx, targets)
        timings = {}
        for name, fn in (("eager", model), ("compiled", compiled_model)):
            start = time.perf_counter()
            for _ in range(5):
                fn(idx, targets)
            timings[name] = (time.perf_counter() - start) / 5
    print(f"first call (capture, lowering, C compilation or cache hit): {first:.2f} s")
    print(f"loss compiled {loss.item():.6f}, eager {eager_loss.item():.6f}; largest logit "
          f"difference {(logits - eager_logits).abs().max().item():.2e}")
    print(f"forward: compiled takes {timings['compiled'] / timings['eager']:.2f}x eager's time "
          "(print(glasstorch._inductor.debug.stages(fn, *args)) shows every stage)")


def dynamic_shapes(torch, model, data) -> None:
    """The trained GPT's forward compiled with ``dynamic=True``: every sequence
    length runs the same C, whose kernels take the sizes as arguments."""
    import logging
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    log = logging.getLogger("torch._logging")
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    compiled_model = torch.compile(model, dynamic=True)
    # (below the block size: the whole causal mask is contiguous, and PyTorch's
    # contiguity guard recompiles there)
    lengths = sorted({max(2, model.config.block_size * k // 5) for k in (1, 2, 3, 4)})
    log.addHandler(handler)
    torch._logging.set_logs(output_code=True)
    try:
        with torch.no_grad():
            for length in lengths:
                idx, targets = data.batch("train", 4, length)
                loss = compiled_model(idx, targets)[1]
                assert abs(loss.item() - model(idx, targets)[1].item()) < 1e-4
    finally:
        log.removeHandler(handler)
        torch._logging.set_logs()
    lines = [line.split("] ", 2)[-1] for record in records for line in record.splitlines()]
    _section("dynamic shapes: one compiled forward for every sequence length")
    print(f"sequence lengths {lengths}: {torch._dynamo.utils.counters['stats']['unique_graphs']} "
          f"graph, {sum(line.startswith('Output code') for line in lines)} compile; "
          "losses equal eager's")
    print("the wrapper reads the sizes from its inputs:")
    print("\n".join(line for line in lines if re.fullmatch(r" +s\d+ = \w+", line)))
    print("and passes them to each kernel, whose loops run to them:")
    kernel = next(i for i, line in enumerate(lines)
                  if line.startswith("void cpp_fused") and "int64_t s" in line)
    print("\n".join(lines[kernel:kernel + 8]) + "\n    ...")


def transforms(torch, model, data) -> None:
    """Per-example gradients of the trained GPT with ``vmap(grad(loss))``: one
    batched call instead of a loop, and how vmap batched each op it met."""
    import warnings
    from glasstorch._dispatcher import dispatch_trace
    from glasstorch._functorch.debug import BatchingReport

    _section("vmap(grad): per-example gradients, the batch as a dispatch key")
    idx, targets = data.batch("train", 4, model.config.block_size)
    params = {"lm_head.weight": model.lm_head.weight.detach()}

    def loss(p, one_idx, one_target):
        return torch.func.functional_call(model, p, (one_idx[None], one_target[None]))[1]
    model.eval()
    with warnings.catch_warnings(), BatchingReport() as report:
        warnings.simplefilter("ignore")
        grads = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, idx, targets)
    looped = [torch.func.grad(loss)(params, idx[i], targets[i]) for i in range(4)]
    model.train()
    per_example = grads["lm_head.weight"]
    print(f"lm_head gradients, one per sequence: {tuple(per_example.shape)}; norms",
          [round(g.norm().item(), 4) for g in per_example])
    print("largest difference from a loop of 4 grad calls:",
          f"{max((per_example[i] - looped[i]['lm_head.weight']).abs().max().item() for i in range(4)):.1e}")
    fallbacks = report.fallbacks()
    print(f"how vmap batched the {sum(report.counts.values())} op calls it met "
          f"({len(report.counts)} kinds):")
    shown = [line for line in str(report).splitlines()
             if "fallback" in line or "rule:" in line][:12]
    print("\n".join(shown))
    print("ops that ran once per example (no batching rule yet):", fallbacks or "none")
    print("\none op under vmap, through the keys (x.sin() on a BatchedTensor):")
    ones = torch.ones(3, 2)
    with dispatch_trace() as trace:
        torch.vmap(lambda x: x.sin())(ones)
    print(trace)
    print("(FrontMode hands the op to the vmap level; its batching rule calls sin once on\n"
          " the whole (3, 2) batch; BackMode sends that call to the next level down: here\n"
          " none, so the CPU kernel)")


def op_library(torch, model) -> None:
    """torch.linalg and torch.fft on the trained weights, and where each op's code
    lives: an op's name leads to its kernel's file and line in one step."""
    _section("the op library by family: linalg and fft on the trained GPT")
    wte = model.transformer.wte.weight.detach()
    s = torch.linalg.svdvals(wte)
    energy = (s ** 2).cumsum(0) / (s ** 2).sum()
    print(f"token embedding {tuple(wte.shape)}: singular values {s[0].item():.2f} .. "
          f"{s[-1].item():.3f}; {int((energy < 0.9).sum().item()) + 1} of {s.numel()} "
          "directions hold 90% of its energy")
    from glasstorch._ops.kernels import _lapack
    gram = wte.T @ wte
    with _lapack.steps() as ran:
        values = torch.linalg.eigh(gram).eigenvalues
    print(f"eigh of its {tuple(gram.shape)} Gram matrix (largest eigenvalue "
          f"{values[-1].item():.2f}) took syevd's own steps: {' -> '.join(ran)}")
    print("(lapack.c rebuilds the slow ones over OpenBLAS's gemm; _lapack.steps() records them)")
    wpe = model.transformer.wpe.weight.detach()
    spectrum = torch.fft.rfft(wpe, dim=0).abs().mean(dim=1)
    print("position embedding along the sequence, mean |rfft| per frequency:",
          [round(v, 3) for v in spectrum[:6].tolist()], "...")
    print("\nwhere the code is (torch._C._dispatch_dump names each kernel's file and line):")
    for name in ("aten::gelu", "aten::gelu_backward", "aten::_linalg_svd", "aten::_fft_r2c"):
        for line in torch._C._dispatch_dump(name).splitlines():
            if line.startswith("CPU:"):
                print(f"  {name:22} {line.rsplit('(', 1)[-1].rstrip(')')}")
    print("(a forward op and its backward op share their family's file: "
          "docs/adding-an-op.md lists the families)")


# -- 3. the layers underneath ----------------------------------------------------------

def walkthrough(torch) -> None:
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

    _section("a composite op decomposes: F.linear on a 3-d input")
    inputs, weight = torch.ones(4, 5, 2), torch.ones(3, 2)
    with dispatch_trace() as trace:
        torch.nn.functional.linear(inputs, weight)
    print(trace)

    _section("autograd: the graph a forward records")
    a_ = torch.tensor(2.0, requires_grad=True)
    b_ = torch.tensor(3.0, requires_grad=True)
    d = a_ * b_ + a_
    print("d = a * b + a  ->", d)
    print("d.grad_fn.next_functions:", d.grad_fn.next_functions)
    d.backward()
    print("after d.backward(): a.grad =", a_.grad, " b.grad =", b_.grad)

    _section("grad modes: no_grad vs inference_mode")
    xw = torch.randn(4, 4, requires_grad=True)
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
    print("(1024x1024 @ 1024x1024) on meta ->", m @ m.t())


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        return run(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m glasstorch")
    parser.add_argument("command", choices=["demo", "run"],
                        help="demo: train a small GPT, then show what the runtime did; "
                             "run SCRIPT [ARGS]: run a PyTorch script unchanged on glasstorch")
    parser.add_argument("--steps", type=int, default=500, help="training steps (default 500)")
    parser.add_argument("--sample-tokens", type=int, default=300)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 20 steps, a short sample")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS and kernel threads (default 1: fastest for this small model)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.sample_tokens = 20, 60
    if not (EXAMPLES / "train_gpt.py").exists():
        print(f"the demo runs examples/train_gpt.py from the source tree, not found at {EXAMPLES}; "
              "install glasstorch from a checkout (pip install -e .)", file=sys.stderr)
        return 2

    import glasstorch as torch
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    model, data = train_and_sample(args)
    watch_one_step(model, data)
    extension_points(torch, model, data)
    graphs(torch, model, data)
    capture(torch, model, data)
    inductor(torch, model, data)
    dynamic_shapes(torch, model, data)
    transforms(torch, model, data)
    op_library(torch, model)
    walkthrough(torch)
    print(f"\ndemo finished in {time.perf_counter() - started:.1f} s")
    return 0


def run(argv) -> int:
    """``python -m glasstorch run script.py [args]``: ``import torch`` in the
    script (and everything it imports) binds glasstorch."""
    if not argv:
        print("usage: python -m glasstorch run SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    from glasstorch import _as_torch
    sys.path.insert(0, str(pathlib.Path(argv[0]).resolve().parent))
    _as_torch.run_script(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
