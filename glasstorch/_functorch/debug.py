"""What vmap did with each op of a function: its batching rule, a
decomposition into other ops, or the per-example loop (the glass box of
issue 15; PyTorch shows this only as the loop's performance warning).

    print(batching_report(lambda x: x.sin().sum(-1), torch.randn(8, 3)))
"""
from __future__ import annotations

from collections import Counter

from .batch_rules import REPORTS
from .vmap import vmap

__all__ = ["BatchingReport", "batching_report"]


class BatchingReport:
    """Counts of (op, how it was batched) while the report is active."""

    def __init__(self):
        self.counts: Counter = Counter()

    def record(self, op_name: str, how: str) -> None:
        self.counts[op_name, how] += 1

    def __enter__(self):
        REPORTS.append(self)
        return self

    def __exit__(self, *exc):
        REPORTS.remove(self)

    def fallbacks(self) -> list:
        return sorted({op for op, how in self.counts if how == "loop fallback"})

    def __str__(self):
        width = max((len(op) for op, _ in self.counts), default=10)
        lines = [f"{'op':<{width}}  calls  batched by"]
        for (op, how), n in sorted(self.counts.items(), key=lambda item: (item[0][1], item[0][0])):
            lines.append(f"{op:<{width}}  {n:>5}  {how}")
        return "\n".join(lines)


def batching_report(func, *args, **vmap_kwargs) -> BatchingReport:
    """Run ``vmap(func, **vmap_kwargs)(*args)`` and report how each op was batched."""
    with BatchingReport() as report:
        vmap(func, **vmap_kwargs)(*args)
    return report
