"""torch.compile's capture, glasstorch against PyTorch, in one run.

Two measures, each as a ratio of medians:

* capture: the example GPT's first compiled call (cold: Dynamo traces the
  bytecode, builds the graph and guards; the ``eager`` backend, so no code
  generation is timed), after ``reset()``;
* guard hit: a compiled ``x + 1`` on a 4-element tensor, called again with the
  same input (the guards pass and the cached graph runs), per call.

    python -m benchmarks.bench_compile [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

def capture_time(lib) -> float:
    from examples.dual import tiny_gpt
    model, idx, targets = tiny_gpt(lib)
    lib._dynamo.reset()
    compiled = lib.compile(model, backend="eager")
    start = time.perf_counter()
    compiled(idx, targets)
    return time.perf_counter() - start


def guard_hit_time(lib, calls: int = 2000) -> float:
    lib._dynamo.reset()
    compiled = lib.compile(lambda x: x + 1, backend="eager")
    x = lib.ones(4)
    compiled(x)
    start = time.perf_counter()
    for _ in range(calls):
        compiled(x)
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import torch

    import glasstorch
    for name, measure in (("capture of the GPT (cold)", capture_time),
                          ("compiled x + 1, guard hit, per call", guard_hit_time)):
        times = {glasstorch: [], torch: []}
        for _ in range(args.repeats):
            for lib in (glasstorch, torch):
                times[lib].append(measure(lib))
        ours, theirs = statistics.median(times[glasstorch]), statistics.median(times[torch])
        print(f"{name}, median of {args.repeats}: glasstorch {ours * 1e3:.3f} ms, "
              f"torch {theirs * 1e3:.3f} ms, glasstorch takes {ours / theirs:.2f}x torch's time")


if __name__ == "__main__":
    main()
