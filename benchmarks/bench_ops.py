"""glasstorch vs real PyTorch, side by side, in one process.

    python -m benchmarks.bench_ops               # full run (~7 rounds x 0.2 s per library per case)
    python -m benchmarks.bench_ops --quick       # short run (< 60 s even with ops missing)
    python -m benchmarks.bench_ops --markdown    # table ready to paste into docs/performance.md
    python -m benchmarks.bench_ops --only matmul --only tiny   # substring filter on case/group
    python -m benchmarks.bench_ops --list        # the registered cases
    python -m benchmarks.bench_ops --profile "a + b"   # cProfile glasstorch's side of a case

Method (see benchmarks/README.md): both libraries get identical inputs made
from the same numpy arrays.  Each library's loop count is calibrated so that a
measurement round takes about ``--round-time`` seconds; then, round after
round, glasstorch and torch are measured alternately (the order flips every
round, so drift and warm-up effects hit both).  The reported time is the
MEDIAN per-call time over the rounds; the ratio is the ratio of the two
medians:

* latency cases:    ratio = glasstorch / torch       (lower is better; target: <= N x)
* throughput cases: ratio = torch / glasstorch       (higher is better; target: >= N x)

Adding a case (e.g. for autograd): write ``setup(lib) -> zero-argument
callable`` and register it with ``@case(name, group, latency(6))`` or
``throughput(0.8)``.  ``lib`` is the ``glasstorch`` or ``torch`` module; build
inputs with ``T(lib, data(...))`` so that both libraries see the same numbers.
A glasstorch op that is missing (AttributeError / NotImplementedError /
"unsupported operand" TypeError, at setup or at the first call) makes the case
"n/a (missing: ...)"; it never stops the run.

This module must not be imported by glasstorch or its tests.
"""
from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# --------------------------------------------------------------------------
# Targets and the case registry
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """How the ratio is formed and what it must reach."""

    kind: str      # "latency" (ratio = gt/torch, must be <= value) | "throughput" (torch/gt, >= value)
    value: float

    def ratio(self, gt_s: float, torch_s: float) -> float:
        return gt_s / torch_s if self.kind == "latency" else torch_s / gt_s

    def met(self, ratio: float) -> bool:
        return ratio <= self.value if self.kind == "latency" else ratio >= self.value

    @property
    def label(self) -> str:
        return f"{'≤' if self.kind == 'latency' else '≥'} {self.value:g}×"


def latency(max_ratio: float) -> Target:
    """glasstorch's per-call time may be at most ``max_ratio`` times torch's."""
    return Target("latency", max_ratio)


def throughput(min_ratio: float) -> Target:
    """torch_time / glasstorch_time must be at least ``min_ratio``."""
    return Target("throughput", min_ratio)


@dataclass(frozen=True)
class Case:
    name: str
    group: str
    setup: Callable[[Any], Callable[[], Any]]   # setup(lib) -> zero-argument callable to time
    target: Target
    check: bool = True                          # compare both libraries' results once
    rtol: float = 1e-3
    atol: float = 1e-3


CASES: list[Case] = []
GROUPS: dict[str, str] = {}   # group -> title, in registration order


def group(name: str, title: str) -> None:
    GROUPS[name] = title


def case(name: str, group: str, target: Target, **kw) -> Callable:
    """Decorator registering ``setup(lib) -> callable`` as a benchmark case."""
    def register(setup):
        if group not in GROUPS:
            GROUPS[group] = group
        CASES.append(Case(name, group, setup, target, **kw))
        return setup
    return register


@functools.lru_cache(maxsize=None)
def data(*shape: int, seed: int = 0, dtype: str = "float32") -> np.ndarray:
    """A deterministic standard-normal array; cached so both libraries get the same object."""
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float64).astype(dtype)


def T(lib, array: np.ndarray, **kw):
    """``lib.tensor(array)``: each library gets its own copy of the same numbers."""
    return lib.tensor(array, **kw)


# --------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------

group("tiny", "tiny-tensor per-op latency (4×4 float32)")
TINY = latency(6)


@case("a + b", "tiny", TINY)
def _tiny_add(lib):
    a, b = T(lib, data(4, 4, seed=1)), T(lib, data(4, 4, seed=2))
    return lambda: a + b


@case("a * b", "tiny", TINY)
def _tiny_mul(lib):
    a, b = T(lib, data(4, 4, seed=1)), T(lib, data(4, 4, seed=2))
    return lambda: a * b


@case("a @ b", "tiny", TINY)
def _tiny_matmul(lib):
    a, b = T(lib, data(4, 4, seed=1)), T(lib, data(4, 4, seed=2))
    return lambda: a @ b


@case("relu(a)", "tiny", TINY)
def _tiny_relu(lib):
    a, relu = T(lib, data(4, 4, seed=1)), lib.relu
    return lambda: relu(a)


@case("a.sum()", "tiny", TINY)
def _tiny_sum(lib):
    a = T(lib, data(4, 4, seed=1))
    return lambda: a.sum()


@case("a.transpose(0, 1)", "tiny", TINY)
def _tiny_transpose(lib):
    a = T(lib, data(4, 4, seed=1))
    return lambda: a.transpose(0, 1)


@case("a[1:3]", "tiny", TINY)
def _tiny_slice(lib):
    a = T(lib, data(4, 4, seed=1))
    return lambda: a[1:3]


group("large", "large-op throughput (float32)")
LARGE = throughput(0.8)
N4M = 4 * 1024 * 1024


@case("matmul 1024×1024 @ 1024×1024", "large", LARGE)
def _large_matmul(lib):
    a, b = T(lib, data(1024, 1024, seed=3)), T(lib, data(1024, 1024, seed=4))
    return lambda: a @ b


@case("add 4M (a + b)", "large", LARGE)
def _large_add(lib):
    a, b = T(lib, data(N4M, seed=5)), T(lib, data(N4M, seed=6))
    return lambda: a + b


@case("sum 4M (x.sum())", "large", LARGE, atol=0.05)
def _large_sum(lib):
    x = T(lib, data(N4M, seed=7))
    return lambda: x.sum()


@case("softmax(x, -1) 1024×4096", "large", LARGE, rtol=1e-3, atol=1e-6)
def _large_softmax(lib):
    x, softmax = T(lib, data(1024, 4096, seed=8)), lib.softmax
    return lambda: softmax(x, -1)


group("autograd", "autograd: recording, grad modes, backward (4×4 float32)")
AUTOGRAD = latency(6)


def _leaves(lib, *seeds):
    return [T(lib, data(4, 4, seed=s), requires_grad=True) for s in seeds]


@case("a + b, requires_grad", "autograd", AUTOGRAD, check=False)
def _rg_add(lib):
    a, b = _leaves(lib, 1, 2)
    return lambda: a + b


@case("a * b, requires_grad", "autograd", AUTOGRAD, check=False)
def _rg_mul(lib):
    a, b = _leaves(lib, 1, 2)
    return lambda: a * b


@case("a @ b, requires_grad", "autograd", AUTOGRAD, check=False)
def _rg_matmul(lib):
    a, b = _leaves(lib, 1, 2)
    return lambda: a @ b


@case("relu(a), requires_grad", "autograd", AUTOGRAD, check=False)
def _rg_relu(lib):
    (a,), relu = _leaves(lib, 1), lib.relu
    return lambda: relu(a)


def _hundred_adds(lib, mode):
    a, b = _leaves(lib, 1, 2)

    def run():
        with mode():
            for _ in range(100):
                a + b
    return run


@case("100 × (a + b), requires_grad, under no_grad", "autograd", AUTOGRAD, check=False)
def _no_grad_adds(lib):
    return _hundred_adds(lib, lib.no_grad)


@case("100 × (a + b), requires_grad, under inference_mode", "autograd", AUTOGRAD, check=False)
def _inference_adds(lib):
    return _hundred_adds(lib, lib.inference_mode)


CHAIN = ("mul", "add", "tanh", "sigmoid", "neg")


def _chain(lib, x):
    """50 elementwise ops: (×1.01, +0.1, tanh, sigmoid, neg) ten times."""
    for i in range(50):
        step = CHAIN[i % 5]
        x = x * 1.01 if step == "mul" else x + 0.1 if step == "add" else \
            x.tanh() if step == "tanh" else x.sigmoid() if step == "sigmoid" else -x
    return x


@case("50-op elementwise chain: forward (recording)", "autograd", AUTOGRAD, check=False)
def _chain_forward(lib):
    (x,) = _leaves(lib, 3)
    return lambda: _chain(lib, x)


@case("50-op elementwise chain: forward + backward", "autograd", AUTOGRAD)
def _chain_backward(lib):
    (x,) = _leaves(lib, 3)

    def run():
        x.grad = None
        _chain(lib, x).sum().backward()
        return x.grad
    return run


# --------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------

_MISSING_TYPEERROR = re.compile(r"unsupported operand|not subscriptable|not callable|"
                                r"not iterable|does not support item")


def _short(exc: BaseException, limit: int = 70) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]
    return first if len(first) <= limit else first[:limit - 1] + "…"


def _missing_label(exc: BaseException) -> str | None:
    """A short name for the missing piece, or None when ``exc`` is a real error."""
    msg = str(exc)
    if isinstance(exc, AttributeError):
        m = re.search(r"module '([\w.]+)' has no attribute '(\w+)'", msg)
        if m:
            return f"{m[1]}.{m[2]}"
        m = re.search(r"'(\w+)' object has no attribute '(\w+)'", msg)
        if m:
            return f"{m[1]}.{m[2]}"
        return _short(exc)
    if isinstance(exc, NotImplementedError):
        return _short(exc) or "NotImplementedError"
    if isinstance(exc, TypeError) and _MISSING_TYPEERROR.search(msg):
        m = re.search(r"unsupported operand type\(s\) for (\S+?):", msg)
        if m:
            return f"operator {m[1]}"
        if "not subscriptable" in msg:
            return "Tensor.__getitem__"
        return _short(exc)
    return None


def _to_numpy(x) -> np.ndarray | None:
    if x is None:
        return None
    if hasattr(x, "detach"):
        try:
            x = x.detach()
        except Exception:
            pass
    try:
        return np.asarray(x.numpy() if hasattr(x, "numpy") else x, dtype=np.float64)
    except Exception:
        return None


def _time_loop(fn: Callable[[], Any], number: int, keep_gc: bool) -> float:
    """Seconds for ``number`` calls of ``fn`` (timeit's loop, gc as requested)."""
    it = range(number)
    gc_was_on = gc.isenabled()
    if not keep_gc:
        gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in it:
            fn()
        t1 = time.perf_counter()
    finally:
        if gc_was_on:
            gc.enable()
    return t1 - t0


def _calibrate(fn, round_time: float, keep_gc: bool) -> tuple[int, float]:
    """Loop count for a ~``round_time`` s round, and the per-call estimate (s).

    Starts with an extra call beyond the first (the setup's check call): the
    first large allocations fault in fresh pages (and glibc adapts its mmap
    threshold), which is not the steady state being measured.  A slow op's
    warm-up call doubles as its estimate.
    """
    t = _time_loop(fn, 1, keep_gc)
    if t >= round_time / 5:
        return 1 if t >= round_time / 2 else max(1, round(round_time / t)), t
    n = 1
    while True:
        for mult in (1, 2, 5):
            number = n * mult
            t = _time_loop(fn, number, keep_gc)
            if t >= round_time / 5:
                per_call = t / number
                return max(1, round(round_time / per_call)), per_call
        n *= 10


@dataclass
class Result:
    case: Case
    status: str                        # "ok" | "missing" | "error" | "torch-error"
    note: str = ""
    gt: list[float] = field(default_factory=list)      # per-call seconds, one per round
    torch: list[float] = field(default_factory=list)
    checked: bool | None = None        # None: not compared; False: results differ

    @property
    def gt_median(self) -> float:
        return statistics.median(self.gt)

    @property
    def torch_median(self) -> float:
        return statistics.median(self.torch)

    @property
    def ratio(self) -> float:
        return self.case.target.ratio(self.gt_median, self.torch_median)

    @property
    def met(self) -> bool:
        return self.status == "ok" and self.checked is not False and self.case.target.met(self.ratio)

    @staticmethod
    def _spread(xs):
        return (max(xs) - min(xs)) / statistics.median(xs) if xs else float("nan")

    @property
    def noise(self) -> float:
        """The larger relative (max - min) / median spread of the two libraries' rounds."""
        return max(self._spread(self.gt), self._spread(self.torch))


def run_case(c: Case, gt, torch, *, rounds: int, round_time: float, case_budget: float,
             keep_gc: bool) -> Result:
    fns, outs = {}, {}
    for name, lib in (("torch", torch), ("glasstorch", gt)):
        try:
            fn = c.setup(lib)
            outs[name] = fn()          # first call: missing kernels show up here
            fns[name] = fn
        except Exception as exc:       # noqa: BLE001 - any failure is reported, never fatal
            if name == "torch":
                return Result(c, "torch-error", f"torch raised {type(exc).__name__}: {_short(exc)}")
            missing = _missing_label(exc)
            if missing is not None:
                return Result(c, "missing", missing)
            return Result(c, "error", f"{type(exc).__name__}: {_short(exc)}")

    res = Result(c, "ok")
    if c.check:
        g, t = _to_numpy(outs["glasstorch"]), _to_numpy(outs["torch"])
        if g is not None and t is not None:
            res.checked = g.shape == t.shape and bool(np.allclose(g, t, rtol=c.rtol, atol=c.atol))
            if not res.checked:
                res.note = "results differ from torch"
    del outs

    try:
        gc.collect()
        numbers = {}
        est = 0.0
        for name in ("glasstorch", "torch"):
            numbers[name], per_call = _calibrate(fns[name], round_time, keep_gc)
            est += numbers[name] * per_call
        # Very slow ops: fewer rounds (down to 1) rather than a run that never ends.
        rounds = max(1, min(rounds, int(case_budget / max(est, 1e-9))))
        order = ["glasstorch", "torch"]
        per_round = {"glasstorch": res.gt, "torch": res.torch}
        for r in range(rounds):
            for name in (order if r % 2 == 0 else order[::-1]):
                per_round[name].append(_time_loop(fns[name], numbers[name], keep_gc) / numbers[name])
    except Exception as exc:           # noqa: BLE001 - e.g. an op that fails on a later call
        return Result(c, "error", f"while timing: {type(exc).__name__}: {_short(exc)}")
    return res


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def fmt_time(s: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    raise AssertionError


def fmt_ratio(r: float) -> str:
    return f"{r:.2f}×" if r < 10 else f"{r:.1f}×" if r < 100 else f"{r:.0f}×"


_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def environment(gt, torch, torch_threads_set: bool) -> list[str]:
    blas = "?"
    try:
        d = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{d.get('name', '?')} {d.get('version', '')}".strip()
    except Exception:
        pass
    torch_blas = "?"
    try:
        m = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
        torch_blas = m[1] if m else "?"
    except Exception:
        pass
    env_threads = ", ".join(f"{k}={os.environ[k]}" for k in _THREAD_VARS
                            if k in os.environ) or "no *_NUM_THREADS set (numpy BLAS: its default)"
    try:
        load = "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        load = "load average ?"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
            cpu = m[1].strip() if m else cpu
    except OSError:
        pass
    return [
        f"glasstorch {getattr(gt, '__version__', '?')} vs torch {torch.__version__} — "
        f"Python {platform.python_version()}, numpy {np.__version__} (BLAS: {blas})",
        f"torch threads: {torch.get_num_threads()} "
        f"({'set by --threads/--torch-threads' if torch_threads_set else 'torch default'}), "
        f"torch BLAS: {torch_blas}; {env_threads}",
        f"CPU: {cpu}, {os.cpu_count()} logical cores, {load} at the start",
    ]


def load_warning() -> str | None:
    """A caveat when the machine was busier than it has cores (noisy, and unfair to threads)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return None
    cores = os.cpu_count() or 1
    if load < cores:
        return None
    return (f"load average {load:.1f} on {cores} cores: timings are noisy, and multi-threaded "
            f"ops (torch's OpenMP, numpy's BLAS) suffer most; compare with --threads 1")


def method_line(args) -> str:
    return (f"{args.rounds} alternating rounds of ~{args.round_time:g} s per library per case; "
            f"median per-call time; ratio of medians; gc {'on' if not args.no_gc else 'off'} while timing")


def table_rows(results: list[Result]) -> list[tuple[str, ...] | str]:
    """Rows of the table; a bare string is a group heading."""
    rows: list[tuple[str, ...] | str] = []
    last_group = None
    for r in results:
        if r.case.group != last_group:
            last_group = r.case.group
            rows.append(GROUPS.get(last_group, last_group))
        tgt = r.case.target.label
        if r.status == "ok":
            ok = "WRONG" if r.checked is False else ("yes" if r.met else "NO")
            rows.append((r.case.name, fmt_time(r.gt_median), fmt_time(r.torch_median),
                         fmt_ratio(r.ratio), tgt, ok))
        elif r.status == "missing":
            rows.append((r.case.name, f"n/a (missing: {r.note})", "—", "—", tgt, "n/a"))
        elif r.status == "error":
            rows.append((r.case.name, f"n/a (error: {r.note})", "—", "—", tgt, "n/a"))
        else:
            rows.append((r.case.name, "—", f"n/a ({r.note})", "—", tgt, "n/a"))
    return rows


HEADER = ("case", "glasstorch", "torch", "ratio", "target", "ok?")


def summary(results: list[Result]) -> str:
    measured = [r for r in results if r.status == "ok"]
    met = sum(r.met for r in results)
    parts = []
    for g in dict.fromkeys(r.case.group for r in results):
        rs = [r for r in results if r.case.group == g]
        parts.append(f"{g}: {sum(r.met for r in rs)}/{len(rs)}")
    na = len(results) - len(measured)
    wrong = sum(r.checked is False for r in measured)
    extra = []
    if na:
        extra.append(f"{na} n/a")
    if wrong:
        extra.append(f"{wrong} with results differing from torch")
    return (f"{met}/{len(results)} cases meet target ({', '.join(parts)})"
            + (f"; {', '.join(extra)}" if extra else ""))


def render_text(results, env, method, verbose) -> str:
    rows = table_rows(results)
    header = HEADER + (("noise",) if verbose else ())
    body = []
    noise_by_row = iter([f"±{r.noise * 50:.0f}%" if r.status == "ok" else "" for r in results])
    for row in rows:
        body.append(row if isinstance(row, str) else row + ((next(noise_by_row),) if verbose else ()))
    widths = [max(len(header[i]), *(len(r[i]) for r in body if not isinstance(r, str)))
              for i in range(len(header))]
    line = lambda cells: "  ".join(c.rjust(w) if 0 < i < 4 else c.ljust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    out = [*env, method, "", line(header), "  ".join("-" * w for w in widths)]
    for row in body:
        out.append(f"[{row}]" if isinstance(row, str) else line(row))
    out += ["", "ratio: latency cases = glasstorch/torch time (lower is better); "
            "throughput cases = torch/glasstorch time (higher is better).",
            *(["Note: " + w] if (w := load_warning()) else []),
            "Summary: " + summary(results)]
    return "\n".join(out)


def render_markdown(results, env, method) -> str:
    out = [*(f"- {e}" for e in env), f"- method: {method}",
           "- ratio: latency cases = glasstorch/torch time (lower is better); "
           "throughput cases = torch/glasstorch time (higher is better)",
           *([f"- note: {w}"] if (w := load_warning()) else []), "",
           "| " + " | ".join(HEADER) + " |",
           "|" + "|".join([":---", "---:", "---:", "---:", ":---:", ":---:"]) + "|"]
    for row in table_rows(results):
        if isinstance(row, str):
            out.append(f"| **{row}** |  |  |  |  |  |")
        else:
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
    out += ["", f"**Summary:** {summary(results)}"]
    return "\n".join(out)


def profile_case(c: Case, gt, *, seconds: float = 1.0, top: int = 20) -> str:
    """cProfile glasstorch's callable for ``c``; per-call costs of the top functions.

    cProfile adds a fixed cost per Python call, so many small functions look
    more expensive than they are; use it to see *where* time goes, and the
    table (no profiler) for how much.
    """
    import cProfile
    import pstats

    try:
        fn = c.setup(gt)
        fn()
    except Exception as exc:  # noqa: BLE001
        return f"{c.name}: n/a ({_missing_label(exc) or f'{type(exc).__name__}: {_short(exc)}'})"
    number, per_call = _calibrate(fn, seconds / 5, True)
    number = max(1, number)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(number):
        fn()
    prof.disable()
    stats = pstats.Stats(prof).stats   # (file, line, fn) -> (cc, ncalls, tottime, cumtime, callers)
    rows = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    total = sum(v[2] for v in stats.values())
    here = os.getcwd() + os.sep
    out = [f"profile of glasstorch `{c.name}`: {number} calls, {fmt_time(per_call)} per call without "
           f"the profiler, {fmt_time(total / number)} with it",
           f"{'calls/call':>10} {'own/call':>10} {'own %':>6} {'cum/call':>10}  function"]
    for (file, line, name), (_cc, ncalls, tottime, cumtime, _callers) in rows:
        where = f"{file.replace(here, '')}:{line}({name})" if line else name
        out.append(f"{ncalls / number:10.3g} {fmt_time(tottime / number):>10} "
                   f"{100 * tottime / total:5.1f}% {fmt_time(cumtime / number):>10}  {where}")
    return "\n".join(out)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def _matches(c: Case, pattern: str) -> bool:
    """A group name, an exact case name, or (if no case has that exact name) a substring."""
    p = pattern.lower()
    if p == c.group.lower() or p == c.name.lower():
        return True
    exact = any(p == other.name.lower() for other in CASES)
    return not exact and p in c.name.lower()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_ops",
                                description="glasstorch vs PyTorch, side by side.")
    p.add_argument("--quick", action="store_true", help="short run: 3 rounds of ~0.04 s")
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--only", action="append", metavar="NAME", default=[],
                   help="run the group NAME, the case named NAME, or else cases whose name contains NAME "
                        "(case-insensitive; repeatable)")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--rounds", type=int, help="measurement rounds per library (default 7; quick 3)")
    p.add_argument("--round-time", type=float, help="seconds per round (default 0.2; quick 0.04)")
    p.add_argument("--torch-threads", type=int, help="torch.set_num_threads(N) (default: leave torch's)")
    p.add_argument("--threads", type=int,
                   help="N threads for both: torch.set_num_threads(N) and OMP/OPENBLAS/MKL_NUM_THREADS=N "
                        "(re-executes this process with those set, as BLAS reads them at load)")
    p.add_argument("--no-gc", action="store_true", help="disable gc while timing (timeit's default)")
    p.add_argument("--verbose", "-v", action="store_true", help="add a noise column (±half range)")
    p.add_argument("--json", metavar="PATH", help="also write raw per-round times to PATH")
    p.add_argument("--profile", metavar="NAME", action="append", default=[],
                   help="instead of timing, cProfile glasstorch on the cases matching NAME")
    args = p.parse_args(argv)
    args.rounds = args.rounds or (3 if args.quick else 7)
    args.round_time = args.round_time or (0.04 if args.quick else 0.2)
    case_budget = 2.0 if args.quick else 20.0

    filters = args.only + args.profile
    selected = [c for c in CASES if not filters or any(_matches(c, o) for o in filters)]
    if args.threads:
        if any(os.environ.get(k) != str(args.threads) for k in _THREAD_VARS):
            env = dict(os.environ, **{k: str(args.threads) for k in _THREAD_VARS})
            sys.stdout.flush()
            os.execvpe(sys.executable, [sys.executable, "-m", "benchmarks.bench_ops",
                                        *(sys.argv[1:] if argv is None else argv)], env)
        args.torch_threads = args.threads
    if args.list:
        for c in CASES:
            print(f"{c.group:8} {c.name:32} target {c.target.kind} {c.target.label}")
        return 0
    if not selected:
        p.error(f"no case matches {filters}; see --list")

    try:
        import glasstorch as gt
    except Exception as exc:  # noqa: BLE001 - a half-edited tree: say so, don't dump a traceback
        print(f"cannot benchmark: `import glasstorch` failed: {type(exc).__name__}: {_short(exc, 200)}",
              file=sys.stderr)
        return 2
    if args.profile:
        print("\n\n".join(profile_case(c, gt) for c in selected))
        return 0
    import torch
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)

    t_start = time.perf_counter()
    results = []
    for i, c in enumerate(selected, 1):
        t_case = time.perf_counter()
        print(f"[{i}/{len(selected)}] {c.group}: {c.name} ...", end="", file=sys.stderr, flush=True)
        r = run_case(c, gt, torch, rounds=args.rounds, round_time=args.round_time,
                     case_budget=case_budget, keep_gc=not args.no_gc)
        data.cache_clear()
        results.append(r)
        print(f" {r.status}" + (f" ({fmt_ratio(r.ratio)})" if r.status == "ok" else f" ({r.note})")
              + f" [{time.perf_counter() - t_case:.1f} s]", file=sys.stderr, flush=True)
    print(f"done in {time.perf_counter() - t_start:.1f} s", file=sys.stderr)

    env = environment(gt, torch, bool(args.torch_threads))
    method = method_line(args)
    print(render_markdown(results, env, method) if args.markdown
          else render_text(results, env, method, args.verbose))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "method": method, "results": [
                {"case": r.case.name, "group": r.case.group, "status": r.status, "note": r.note,
                 "target": {"kind": r.case.target.kind, "value": r.case.target.value},
                 "glasstorch_s": r.gt, "torch_s": r.torch,
                 "ratio": r.ratio if r.status == "ok" else None, "met": r.met,
                 "checked": r.checked} for r in results]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
