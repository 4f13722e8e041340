"""Training steps, glasstorch vs real PyTorch, side by side in one process.

    python -m benchmarks.bench_train               # both cases (~30 s)
    python -m benchmarks.bench_train --quick       # shorter rounds
    python -m benchmarks.bench_train --only gpt    # one case
    python -m benchmarks.bench_train --threads 1   # everything single-threaded
    python -m benchmarks.bench_train --profile     # cProfile our GPT step: where the time goes
    python -m benchmarks.bench_train --profile mlp

One training step is ``zero_grad``, forward, loss, ``backward``, optimizer
``step``:

* ``mlp``: MLP 784-512-512-10 (ReLU), batch 128, Adam, ``F.cross_entropy``.
* ``gpt``: ``examples/gpt.py`` with 2 layers, n_embd 128, 4 heads, context 64,
  vocabulary 65, batch 16, AdamW from ``configure_optimizers``.

The ratio is glasstorch's steps/s divided by torch's (torch's step time over
ours; higher is better).  The method is ``bench_ops``'s (its ``run_case``):
each library's loop count is calibrated to a round of ``--round-time``
seconds, rounds alternate between the libraries, and the reported step time is
the median over rounds.  Both libraries get the same thread count (torch's
``set_num_threads`` and glasstorch's, which sets its C loops' threads; numpy's
BLAS keeps its default unless ``--threads`` is given), the same initial
weights (each library seeds its own RNG identically: glasstorch's generator
and init functions match torch's bit for bit) and the same batch, and the
first step's losses are compared.

``--profile`` runs glasstorch's step under cProfile and prints the top
functions by own time (as ``bench_ops --profile`` does), then the same time
summed by source file, so "where the time goes" has an answer per layer:
dispatcher, autograd, kernels, numpy, nn, optim.
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time

import numpy as np

from benchmarks.bench_ops import (Case, _calibrate, _THREAD_VARS, data, environment, fmt_ratio,
                                  fmt_time, group, method_line, profile_case, render_markdown,
                                  render_text, run_case, throughput)
from examples.dual import load_example

group("train", "training step (zero_grad, forward, loss, backward, optimizer step)")


def _labels(n: int, classes: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, classes, n).astype(np.int64)


def _step(model, optimizer, inputs, loss_fn):
    def step():
        optimizer.zero_grad()
        loss = loss_fn(model, *inputs)
        loss.backward()
        optimizer.step()
        return loss
    return step


def mlp_step(lib):
    """MLP 784-512-512-10, batch 128, Adam, cross_entropy."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.from_numpy(data(128, 784, seed=11).copy())
    y = lib.from_numpy(_labels(128, 10, seed=12))
    return _step(model, optimizer, (x, y),
                 lambda m, x, y: lib.nn.functional.cross_entropy(m(x), y))


@functools.lru_cache(maxsize=None)
def _gpt_module(library: str):
    return load_example("gpt.py", library)


def gpt_step(lib):
    """examples/gpt.py: 2 layers, n_embd 128, 4 heads, context 64, batch 16, AdamW."""
    gpt = _gpt_module(lib.__name__)
    lib.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(vocab_size=65, block_size=64, n_layer=2, n_head=4, n_embd=128))
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95))
    tokens = _labels(16 * 65, 65, seed=13).reshape(16, 65)
    idx = lib.from_numpy(tokens[:, :-1].copy())
    targets = lib.from_numpy(tokens[:, 1:].copy())
    return _step(model, optimizer, (idx, targets), lambda m, idx, t: m(idx, t)[1])


CASES = [
    Case("mlp: MLP 784-512-512-10, batch 128, Adam", "train", mlp_step, throughput(0.5),
         rtol=1e-4, atol=1e-5),
    Case("gpt: GPT 2×128, 4 heads, T 64, batch 16, AdamW", "train", gpt_step, throughput(0.3),
         rtol=1e-4, atol=1e-5),
]


# --------------------------------------------------------------------------
# Where the time goes
# --------------------------------------------------------------------------

def _area(filename: str) -> str:
    """A profile entry's layer, from its source path."""
    path = filename.replace(os.sep, "/")
    if "/glasstorch/" in path:
        part = path.split("/glasstorch/", 1)[1]
        return "glasstorch/" + ("/".join(part.split("/")[:2]) if "/" in part else part)
    if "/numpy/" in path:
        return "numpy (Python side)"
    if filename.startswith("<") or filename == "~":
        return "builtins and C functions (numpy kernels, BLAS, native.c)"
    return "other"


def profile_by_file(c: Case, gt, *, seconds: float = 1.0, top: int = 15) -> str:
    """Own time of glasstorch's step summed per source file (per layer)."""
    import cProfile
    import pstats

    fn = c.setup(gt)
    fn()
    number, _ = _calibrate(fn, seconds / 5, True)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(number):
        fn()
    prof.disable()
    stats = pstats.Stats(prof).stats
    by_area: dict[str, float] = {}
    for (file, _line, _name), (_cc, _ncalls, tottime, _cum, _callers) in stats.items():
        by_area[_area(file)] = by_area.get(_area(file), 0.0) + tottime
    total = sum(by_area.values())
    out = [f"own time by source file ({number} steps under the profiler):"]
    for area, t in sorted(by_area.items(), key=lambda kv: kv[1], reverse=True)[:top]:
        out.append(f"  {100 * t / total:5.1f}%  {fmt_time(t / number):>9}/step  {area}")
    return "\n".join(out)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_train",
                                description="training steps, glasstorch vs PyTorch, side by side")
    p.add_argument("--quick", action="store_true", help="3 rounds of ~0.3 s")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="cases whose name contains NAME (mlp, gpt)")
    p.add_argument("--rounds", type=int, help="measurement rounds per library (default 5; quick 3)")
    p.add_argument("--round-time", type=float, help="seconds per round (default 1.0; quick 0.3)")
    p.add_argument("--threads", type=int,
                   help="N threads everywhere: set_num_threads(N) in both libraries and "
                        "OMP/OPENBLAS/MKL_NUM_THREADS=N (re-executes the process)")
    p.add_argument("--no-gc", action="store_true", help="disable gc while timing")
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--profile", nargs="?", const="gpt", metavar="NAME",
                   help="instead of timing, cProfile glasstorch's step for the case NAME "
                        "(default gpt)")
    args = p.parse_args(argv)
    args.rounds = args.rounds or (3 if args.quick else 5)
    args.round_time = args.round_time or (0.3 if args.quick else 1.0)

    if args.threads and any(os.environ.get(k) != str(args.threads) for k in _THREAD_VARS):
        env = dict(os.environ, **{k: str(args.threads) for k in _THREAD_VARS})
        sys.stdout.flush()
        os.execvpe(sys.executable, [sys.executable, "-m", "benchmarks.bench_train",
                                    *(sys.argv[1:] if argv is None else argv)], env)

    filters = args.only + ([args.profile] if args.profile else [])
    selected = [c for c in CASES
                if not filters or any(f.lower() in c.name.lower() for f in filters)]
    if not selected:
        p.error(f"no case matches {filters}; cases: {', '.join(c.name for c in CASES)}")

    import glasstorch as gt
    import torch
    threads = args.threads or torch.get_num_threads()
    torch.set_num_threads(threads)
    gt.set_num_threads(threads)

    if args.profile:
        for c in selected:
            print(profile_case(c, gt, seconds=3.0, top=25))
            print()
            print(profile_by_file(c, gt, seconds=3.0))
        return 0

    t_start = time.perf_counter()
    results = []
    for c in selected:
        print(f"{c.name} ...", end="", file=sys.stderr, flush=True)
        r = run_case(c, gt, torch, rounds=args.rounds, round_time=args.round_time,
                     case_budget=60.0, keep_gc=not args.no_gc)
        results.append(r)
        note = (f"{fmt_ratio(r.ratio)}: {1 / r.gt_median:.1f} vs {1 / r.torch_median:.1f} steps/s"
                if r.status == "ok" else r.note)
        print(f" {r.status} ({note})", file=sys.stderr, flush=True)
    print(f"done in {time.perf_counter() - t_start:.1f} s", file=sys.stderr)

    env = environment(gt, torch, bool(args.threads))
    method = method_line(args) + f"; {threads} thread(s) in both libraries"
    print(render_markdown(results, env, method) if args.markdown
          else render_text(results, env, method, verbose=True))
    for r in results:
        if r.status == "ok":
            print(f"{r.case.name}: glasstorch {1 / r.gt_median:.2f} steps/s "
                  f"({fmt_time(r.gt_median)}/step), torch {1 / r.torch_median:.2f} steps/s "
                  f"({fmt_time(r.torch_median)}/step): ratio {fmt_ratio(r.ratio)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
