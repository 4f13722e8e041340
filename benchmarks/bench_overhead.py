"""What the glass box's hooks cost per op, glasstorch vs real PyTorch, side by side.

    python -m benchmarks.bench_overhead              # 7 rounds x 0.2 s per library per row
    python -m benchmarks.bench_overhead --quick      # short run
    python -m benchmarks.bench_overhead --markdown   # table for docs/performance.md

For each tiny op (``x + y`` and ``x.relu()`` on 4×4, ``torch.mm`` on 16×16,
float32) three ways of running it:

* plain;
* under an active profiler: ``with profile(activities=[CPU]):`` around the
  block of calls, recording every op.  The cost of an empty ``with
  profile():`` (its own row: PyTorch's Kineto takes milliseconds to start and
  stop) is subtracted before dividing by the block, so the row shows what
  each recorded op costs; the table and FunctionEvents are not built;
* under an empty ``TorchDispatchMode`` (its ``__torch_dispatch__`` just calls
  ``func``), entered around the block.

Each timed call runs a block of ``BLOCK`` ops; the times shown are per op.
The method is ``bench_ops``'s (``run_case``: calibrated rounds, alternating
libraries, medians).  Columns: µs per op for each library, their ratio
(glasstorch / torch), and for each library the cost relative to its own
plain run.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time

from benchmarks.bench_ops import (Case, T, data, environment, fmt_ratio, fmt_time, latency,
                                  load_warning, method_line, run_case)

BLOCK = 1000

OPS = {
    "x + y (4×4)": lambda lib: _binary(lib, 4, lambda x, y: x + y),
    "x.relu() (4×4)": lambda lib: _binary(lib, 4, lambda x, y: x.relu()),
    "torch.mm (16×16)": lambda lib: _binary(lib, 16, lib.mm),
}


def _binary(lib, n, fn):
    x, y = T(lib, data(n, n, seed=1)), T(lib, data(n, n, seed=2))
    return lambda: fn(x, y)


def _block(op):
    def run():
        for _ in range(BLOCK - 1):
            op()
        return op()
    return run


def _empty_dispatch_mode(lib):
    """An instance of a TorchDispatchMode that only forwards each op."""
    try:
        module = importlib.import_module(f"{lib.__name__}.utils._python_dispatch")
        base = module.TorchDispatchMode
    except (ImportError, AttributeError):
        raise NotImplementedError(f"{lib.__name__}.utils._python_dispatch.TorchDispatchMode") \
            from None

    class Forward(base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    return Forward()


def plain(lib, make_op):
    return _block(make_op(lib))


def under_profiler(lib, make_op):
    block, profile = _block(make_op(lib)), lib.profiler.profile
    cpu = [lib.profiler.ProfilerActivity.CPU]

    def run():
        with profile(activities=cpu):
            return block()
    return run


def under_dispatch_mode(lib, make_op):
    block, mode = _block(make_op(lib)), _empty_dispatch_mode(lib)

    def run():
        with mode:
            return block()
    return run


MODES = {"plain": plain, "profiler": under_profiler, "empty TorchDispatchMode": under_dispatch_mode}


def _empty_profile(lib):
    profile, cpu = lib.profiler.profile, [lib.profiler.ProfilerActivity.CPU]

    def run():
        with profile(activities=cpu):
            pass
    return run


SESSION = "empty `with profile():` (per session)"


def cases() -> list[Case]:
    out = [Case(SESSION, "session", _empty_profile, latency(float("inf")), check=False)]
    out += [Case(f"{op} | {mode}", op, lambda lib, m=m, o=o: m(lib, o), latency(float("inf")))
            for op, o in OPS.items() for mode, m in MODES.items()]
    return out


def _rows(results) -> list[tuple]:
    """(op, mode, gt per op, torch per op, ratio, gt × plain, torch × plain) rows."""
    session = results[0]
    rows = [(SESSION, "", *((fmt_time(session.gt_median), fmt_time(session.torch_median),
                             fmt_ratio(session.ratio)) if session.status == "ok"
                            else (f"n/a ({session.note})", "—", "—")), "", "")]
    plain_times = {}
    for r in results[1:]:
        op, _, mode = r.case.name.partition(" | ")
        if r.status != "ok" or (mode == "profiler" and session.status != "ok"):
            rows.append((op, mode, f"n/a ({r.note})", "—", "—", "—", "—"))
            continue
        gt, th = r.gt_median, r.torch_median
        if mode == "profiler":
            gt, th = gt - session.gt_median, th - session.torch_median
        gt, th = gt / BLOCK, th / BLOCK
        if mode == "plain":
            plain_times[op] = (gt, th)
        base = plain_times.get(op)
        rows.append((op, mode, fmt_time(gt), fmt_time(th), fmt_ratio(gt / th),
                     fmt_ratio(gt / base[0]) if base else "",
                     fmt_ratio(th / base[1]) if base else ""))
    return rows


HEADER = ("op", "mode", "glasstorch /op", "torch /op", "gt / torch", "gt × plain",
          "torch × plain")


def render(rows, markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(HEADER) + " |",
                 "|" + "|".join([":---", ":---"] + ["---:"] * 5) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(HEADER)]
    line = lambda cells: "  ".join(c.ljust(w) if i < 2 else c.rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([line(HEADER), "  ".join("-" * w for w in widths), *map(line, rows)])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_overhead",
                                description="per-op cost of the profiler and dispatch modes")
    p.add_argument("--quick", action="store_true", help="3 rounds of ~0.04 s")
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--rounds", type=int, help="rounds per library (default 7; quick 3)")
    p.add_argument("--round-time", type=float, help="seconds per round (default 0.2; quick 0.04)")
    p.add_argument("--no-gc", action="store_true", help="disable gc while timing")
    args = p.parse_args(argv)
    args.rounds = args.rounds or (3 if args.quick else 7)
    args.round_time = args.round_time or (0.04 if args.quick else 0.2)

    import glasstorch as gt
    import torch
    start = time.perf_counter()
    results = []
    for c in cases():
        print(f"{c.name} ...", end="", file=sys.stderr, flush=True)
        r = run_case(c, gt, torch, rounds=args.rounds, round_time=args.round_time,
                     case_budget=2.0 if args.quick else 20.0, keep_gc=not args.no_gc)
        results.append(r)
        print(f" {r.status}" + (f" ({r.note})" if r.note else ""), file=sys.stderr, flush=True)
    print(f"done in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    env = environment(gt, torch, False)
    method = f"{method_line(args)}; {BLOCK} ops per timed call"
    head = [*(f"- {e}" for e in env), f"- method: {method}"] if args.markdown else \
        [*env, method, ""]
    print("\n".join(head))
    print(render(_rows(results), args.markdown))
    if (warning := load_warning()):
        print(("- note: " if args.markdown else "Note: ") + warning)
    return 0


if __name__ == "__main__":
    sys.exit(main())
