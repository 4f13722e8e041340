"""Inductor on CPU: glasstorch.compile against PyTorch, side by side in one run.

    python -m benchmarks.bench_inductor                 # everything (~3-5 min)
    python -m benchmarks.bench_inductor --threads 1     # set_num_threads(1) in both libraries
    python -m benchmarks.bench_inductor --only softmax  # one case (a key, or a substring of keys)
    python -m benchmarks.bench_inductor --repeats 9     # more alternating rounds

Each row: glasstorch's median time, torch's median(s), and the ratio
glasstorch / torch (lower is better), against the row's target:

  pointwise   (sin(x)*2 + cos(x)).relu().exp(), 1M float32, vs torch.compile   <= 0.8
  softmax     softmax(x, -1), 4096x1024 float32, vs the faster of torch
              eager and torch.compile                                         <= 1.0
  layer_norm  layer_norm(x, (1024,), weight, bias), 4096x1024, same           <= 1.0
  mlp         training step, MLP 784-512-512-10 (ReLU), batch 64,
              cross_entropy, Adam; vs torch eager                             <= 1.0
  gpt         training step, examples/gpt.py (2 layers, n_embd 128, 4 heads,
              T 64, vocabulary 65, batch 16), AdamW; vs torch eager and vs
              torch.compile, each                                             <= 1.0
  demo-gpt    the demo's GPT (examples/train_gpt.py defaults: vocabulary 60,
              context 32, 2 layers, 4 heads, n_embd 64, batch 16, AdamW)
              with mode="reduce-overhead"; vs torch eager                     <= 1.5
  cold-*      process start to the first compiled result, empty cache (a
              fresh TORCHINDUCTOR_CACHE_DIR), one subprocess per run: the
              pointwise chain (glasstorch < 1 s) and the gpt training step
              (glasstorch < 10 s); torch's time and the ratio beside it

A training step is zero_grad, forward and loss, backward, optimizer step.
"Compiled" means ``lib.compile(model)`` (forward and backward) and
``lib.compile(optimizer.step)``; if the compiled step raises, the eager step is
timed instead.  Notes after the table say which step ran, and what Dynamo
could not trace during a case (its graph-break / eager-frame reasons).

Method: both libraries get the same numbers and the same initial weights
(each seeds its own RNG identically); the first results are compared (a
mismatch reads WRONG).  Each callable is warmed up (10 calls; the first
compiles), its loop count calibrated to a round of ``--round-time`` seconds, then
``--repeats`` rounds run with the order of the contestants alternating, so
machine noise hits all alike; the medians of the per-call times are reported.
"""
from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from benchmarks.bench_ops import (T, _calibrate, _short, _time_loop, data, environment,
                                  fmt_ratio, fmt_time, load_warning)
from benchmarks.bench_train import _gpt_module, _labels

ROOT = pathlib.Path(__file__).resolve().parent.parent
WARMUP = 10                # calls before calibration: the first compiles, and a frame that
                           # Dynamo re-traces on every call settles at its recompile limit (8)
NOTES: dict[tuple[str, str], str] = {}   # (library, topic) -> what compiling found, per case
ERRORS: list[tuple[str, str, BaseException]] = []   # (case, who, exception), printed too


# --------------------------------------------------------------------------
# Compiling, with a note of what Dynamo captured
# --------------------------------------------------------------------------

def compiled_if(compiled: bool, lib, fn, what: str, mode=None, optional: bool = False):
    """``lib.compile(fn, mode=mode)`` if ``compiled``, else ``fn``.  With
    ``optional``, a compiled call that raises is replaced by ``fn`` from then
    on, and NOTES says which of the two ran."""
    if not compiled:
        return fn
    compiled_fn = lib.compile(fn, mode=mode)
    if not optional:
        return compiled_fn
    current, key = compiled_fn, (lib.__name__, what)
    NOTES[key] = f"{lib.__name__}: compile({what}) works: the compiled {what} is timed"

    def call(*args):
        nonlocal current
        try:
            return current(*args)
        except Exception as exc:
            if current is fn:
                raise
            NOTES[key] = (f"{lib.__name__}: compile({what}) raised {type(exc).__name__}: "
                          f"{_short(exc, 200)}; the eager {what} is timed instead")
            current = fn
            return fn(*args)
    return call


def dynamo_gaps(lib) -> collections.Counter:
    """What Dynamo could not trace so far (graph breaks, frames left eager), by reason."""
    counters = lib._dynamo.utils.counters
    return sum((collections.Counter({_short(k, 120): n for k, n in counters[kind].items()})
                for kind in ("unimplemented", "graph_break")), collections.Counter())


# --------------------------------------------------------------------------
# The cases: build(lib, compiled) -> a zero-argument callable
# --------------------------------------------------------------------------

def pointwise(lib, compiled):
    x = T(lib, data(1 << 20, seed=1))
    f = compiled_if(compiled, lib, lambda x: (lib.sin(x) * 2 + lib.cos(x)).relu().exp(),
                    "pointwise chain")
    return lambda: f(x)


def softmax(lib, compiled):
    x = T(lib, data(4096, 1024, seed=2))
    f = compiled_if(compiled, lib, lambda x: lib.softmax(x, -1), "softmax")
    return lambda: f(x)


def layer_norm(lib, compiled):
    x, w, b = (T(lib, data(4096, 1024, seed=3)), T(lib, data(1024, seed=4)),
               T(lib, data(1024, seed=5)))
    f = compiled_if(compiled, lib, lambda x, w, b: lib.nn.functional.layer_norm(x, (1024,), w, b),
                    "layer_norm")
    return lambda: f(x, w, b)


def train_step(lib, compiled, model, optimizer, inputs, loss_fn, mode=None):
    """zero_grad, loss_fn(forward, *inputs), backward, step; returns the loss."""
    forward = compiled_if(compiled, lib, model, type(model).__name__, mode)
    opt_step = compiled_if(compiled, lib, optimizer.step, f"{type(optimizer).__name__}.step",
                           mode, optional=True)

    def step():
        optimizer.zero_grad()
        loss = loss_fn(forward, *inputs)
        loss.backward()
        opt_step()
        return loss
    return step


def mlp(lib, compiled, batch=64):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    x, y = T(lib, data(batch, 784, seed=11)), lib.from_numpy(_labels(batch, 10, seed=12))
    return train_step(lib, compiled, model, lib.optim.Adam(model.parameters(), lr=1e-3), (x, y),
                      lambda m, x, y: lib.nn.functional.cross_entropy(m(x), y))


def gpt(lib, compiled, *, vocab=65, block=64, n_embd=128, batch=16, lr=1e-3, betas=(0.9, 0.95),
        mode=None):
    example = _gpt_module(lib.__name__)
    lib.manual_seed(0)
    model = example.GPT(example.GPTConfig(vocab_size=vocab, block_size=block, n_layer=2,
                                          n_head=4, n_embd=n_embd, dropout=0.0))
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=lr, betas=betas)
    tokens = _labels(batch * (block + 1), vocab, seed=13).reshape(batch, block + 1)
    idx, targets = lib.from_numpy(tokens[:, :-1].copy()), lib.from_numpy(tokens[:, 1:].copy())
    return train_step(lib, compiled, model, optimizer, (idx, targets),
                      lambda m, idx, t: m(idx, t)[1], mode)


demo_gpt = functools.partial(gpt, vocab=60, block=32, n_embd=64, lr=5e-3, betas=(0.9, 0.99),
                             mode="reduce-overhead")


@dataclass
class Case:
    key: str
    title: str
    build: Callable[[Any, bool], Callable[[], Any]]
    target: float                       # glasstorch / torch at most this
    versus: tuple[str, ...]             # torch's sides: "eager", "compiled"
    each: bool = False                  # the target holds against each side, not the fastest


@dataclass
class ColdCase:
    key: str
    title: str
    case: str                           # the Case whose compiled build runs
    target: float                       # glasstorch's seconds below this
    runs: tuple[int, int]               # subprocesses for glasstorch, for torch


CASES = [
    Case("pointwise", "(sin(x)*2+cos(x)).relu().exp(), 1M f32", pointwise, 0.8, ("compiled",)),
    Case("softmax", "softmax(x, -1), 4096×1024 f32", softmax, 1.0, ("eager", "compiled")),
    Case("layer_norm", "layer_norm, 4096×1024 f32, w and b", layer_norm, 1.0,
         ("eager", "compiled")),
    Case("mlp", "MLP 784-512-512-10 step, b64, Adam", mlp, 1.0, ("eager",)),
    Case("gpt", "GPT 2×128 step, T64 b16, AdamW", gpt, 1.0, ("eager", "compiled"), each=True),
    Case("demo-gpt", "demo GPT 2×64 step, reduce-overhead", demo_gpt, 1.5, ("eager",)),
]
COLD = [
    ColdCase("cold-pointwise", "cold: pointwise chain", "pointwise", 1.0, (2, 2)),
    ColdCase("cold-gpt", "cold: GPT training step", "gpt", 10.0, (2, 1)),
]
BY_KEY = {c.key: c for c in CASES}


# --------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------

@dataclass
class Row:
    title: str
    ours: str
    theirs: str
    ratio: str
    target: str
    verdict: str


def failed_row(title: str, who: str, target: str, exc: BaseException) -> Row:
    """The row of a case that ``who`` could not run; the error goes to ERRORS."""
    ERRORS.append((title, who, exc))
    cells = ("error", "") if who == "glasstorch" else ("", "error")
    return Row(title, *cells, "", target, f"{who} raised {type(exc).__name__}")


def as_array(out) -> np.ndarray:
    return np.asarray(out.detach().numpy(), dtype=np.float64)


def medians(contestants: dict[str, Callable], repeats: int, round_time: float) -> dict[str, float]:
    """Median seconds per call of each (warmed-up) contestant over ``repeats``
    rounds, the contestants' order reversed every other round."""
    numbers = {k: _calibrate(fn, round_time, True)[0] for k, fn in contestants.items()}
    times: dict[str, list[float]] = {k: [] for k in contestants}
    order = list(contestants)
    for r in range(repeats):
        for k in order if r % 2 == 0 else order[::-1]:
            times[k].append(_time_loop(contestants[k], numbers[k], True) / numbers[k])
    return {k: statistics.median(v) for k, v in times.items()}


class Failed(Exception):
    """A contestant could not run: ``label`` names it, the cause is chained."""

    def __init__(self, label: str):
        super().__init__(label)
        self.label = label


def warmed(label: str, build: Callable[[], Callable]) -> tuple[Callable, np.ndarray]:
    """The callable ``build()`` returns, called WARMUP times; and its first result."""
    try:
        fn = build()
        first = as_array(fn())
        for _ in range(WARMUP - 1):
            fn()
    except Exception as exc:
        raise Failed(label) from exc
    return fn, first


def note_new_gaps(before: dict) -> None:
    """A note per library whose Dynamo could not trace something since ``before``."""
    for lib, seen in before.items():
        new = dynamo_gaps(lib) - seen
        if new:
            NOTES[lib.__name__, "dynamo"] = f"{lib.__name__}: Dynamo could not trace: " + \
                "; ".join(f"{reason} ({n}×)" for reason, n in new.items())


def run_case(c: Case, gt, torch, args) -> Row:
    target = f"≤ {c.target:g}" + (" each" if c.each else "" if len(c.versus) == 1 else " vs best")
    gaps = {lib: dynamo_gaps(lib) for lib in (gt, torch)}
    try:
        contestants = {"glasstorch": warmed("glasstorch", lambda: c.build(gt, True))}
        for side in c.versus:
            contestants[side] = warmed(f"torch {side}", lambda: c.build(torch, side == "compiled"))
    except Failed as exc:
        return failed_row(c.title, exc.label, target, exc.__cause__)
    finally:
        note_new_gaps(gaps)
    wrong = [k for k, (_, out) in contestants.items()
             if not np.allclose(out, contestants["glasstorch"][1], rtol=1e-4, atol=1e-5)]
    t = medians({k: fn for k, (fn, _) in contestants.items()}, args.repeats, args.round_time)
    ours = t.pop("glasstorch")
    ratios = {side: ours / s for side, s in t.items()}
    if c.each:
        ratio, ok = " · ".join(fmt_ratio(r) for r in ratios.values()), \
            all(r <= c.target for r in ratios.values())
    else:
        best = min(t, key=t.get)           # torch's faster side
        ratio = fmt_ratio(ratios[best]) + (f" vs {best}" if len(ratios) > 1 else "")
        ok = ratios[best] <= c.target
    verdict = f"WRONG ({', '.join(wrong)} differ)" if wrong else "PASS" if ok else "FAIL"
    return Row(c.title, fmt_time(ours), " · ".join(f"{k} {fmt_time(v)}" for k, v in t.items()),
               ratio, target, verdict)


# --------------------------------------------------------------------------
# Cold compile: whole subprocesses
# --------------------------------------------------------------------------

def cold_child(key: str, library: str, threads: str) -> None:
    """In a fresh process: import the library, build the case compiled, run it
    once; print the wall clock after the import and when the result is there."""
    import importlib
    lib = importlib.import_module(library)
    imported = time.time()
    if threads == "1":
        lib.set_num_threads(1)
    out = as_array(BY_KEY[key].build(lib, True)())
    print(json.dumps({"imported": imported, "done": time.time(), "value": float(out.sum())}),
          flush=True)


def cold_seconds(c: ColdCase, library: str, threads: str) -> tuple[float, float]:
    """Seconds from spawning a child with an empty compile cache to its first
    result, and of those, to the end of its ``import``."""
    cache = tempfile.mkdtemp(prefix="bench_inductor_cache_")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
    try:
        start = time.time()
        proc = subprocess.run([sys.executable, "-m", "benchmarks.bench_inductor", "--threads",
                               threads, "--cold-child", c.case, library], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        if proc.returncode:
            raise RuntimeError(f"{library} child exited {proc.returncode}:\n"
                               + "\n".join(proc.stderr.strip().splitlines()[-15:]))
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        return report["done"] - start, report["imported"] - start
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def run_cold(c: ColdCase, args) -> Row:
    times: dict[str, list[tuple[float, float]]] = {"glasstorch": [], "torch": []}
    target = f"< {c.target:g} s"
    for i in range(max(c.runs)):
        for library, runs in zip(times, c.runs):
            if i < runs:
                try:
                    times[library].append(cold_seconds(c, library, args.threads))
                except Exception as exc:
                    return failed_row(c.title, library, target, exc)
    (ours, ours_import), (theirs, theirs_import) = (
        map(statistics.median, zip(*v)) for v in times.values())
    NOTES["both", "import"] = (f"of which import: glasstorch {fmt_time(ours_import)}, "
                               f"torch {fmt_time(theirs_import)} (medians)")
    runs = "{} / {} runs".format(*c.runs)
    return Row(f"{c.title} ({runs})", fmt_time(ours), fmt_time(theirs), fmt_ratio(ours / theirs),
               target, "PASS" if ours < c.target else "FAIL")


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def render(rows: list[Row]) -> str:
    header = Row("case", "glasstorch", "torch (median)", "ratio", "target", "result")
    cells = [list(vars(r).values()) for r in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header.__dict__))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_inductor",
                                description=__doc__.splitlines()[0])
    p.add_argument("--threads", choices=("1", "default"), default="default",
                   help="1: set_num_threads(1) in both libraries; default: leave them")
    p.add_argument("--repeats", type=int, default=7, help="alternating rounds (default 7)")
    p.add_argument("--round-time", type=float, default=0.25, help="seconds per round (0.25)")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="a case key, or a substring of keys: " +
                        ", ".join(c.key for c in [*CASES, *COLD]))
    p.add_argument("--cold-child", nargs=2, metavar=("CASE", "LIBRARY"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.cold_child:
        cold_child(*args.cold_child, args.threads)
        return 0

    every = [*CASES, *COLD]
    keys = {c.key for c in every}
    selected = [c for c in every if not args.only or any(
        c.key == name if name in keys else name in c.key for name in args.only)]
    if not selected:
        p.error(f"no case matches {args.only}; cases: {', '.join(sorted(keys))}")

    import glasstorch as gt
    import torch
    if args.threads == "1":
        gt.set_num_threads(1)
        torch.set_num_threads(1)
    started, rows, notes = time.perf_counter(), [], []
    for c in selected:
        print(f"{c.key} ...", file=sys.stderr, flush=True)
        NOTES.clear()
        rows.append(run_cold(c, args) if isinstance(c, ColdCase) else run_case(c, gt, torch, args))
        notes += [f"{c.key}: {note}" for note in NOTES.values()]
        print(f"  {rows[-1].ours} vs {rows[-1].theirs}: {rows[-1].ratio} {rows[-1].verdict}",
              file=sys.stderr, flush=True)

    print("\n".join(environment(gt, torch, args.threads == "1")))
    print(f"threads: {args.threads} (glasstorch {gt.get_num_threads()}, torch "
          f"{torch.get_num_threads()}); {args.repeats} alternating rounds of "
          f"~{args.round_time:g} s after {WARMUP} warm-up calls; medians; "
          f"ratio = glasstorch / torch (lower is better)")
    warning = load_warning()
    if warning:
        print(f"note: {warning}")
    print()
    print(render(rows))
    if notes:
        print("\nnotes:\n" + "\n".join(f"  {n}" for n in notes))
    for title, who, exc in ERRORS:
        print(f"\n{who} failed on {title!r}:")
        print("".join(traceback.format_exception(exc)[-12:]).rstrip())
    print(f"\ndone in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
