"""Run by tests/test_dynamo.py under another Python (3.12): compiled programs
against glasstorch's own eager results (real torch, the oracle, is installed
for 3.11 only).  Exits non-zero, naming the program, on any difference."""
from __future__ import annotations

import sys

import glasstorch as torch


def helper(y):
    print("inside", tuple(y.shape))
    return y * 2


def programs():
    def loops_and_comprehensions(x, ys, n):
        out = x
        for i, y in enumerate(ys):
            out = out + y * n
        if n > 1:
            out = out.relu()
        z = [a * 2 for a in ys]
        return helper(out) + z[0], x[:, 0].sum()

    def branch_on_data(x, ys, n):
        if x.sum() > 0:
            return x + 1
        return x - 1

    def item_and_cond(x, ys, n):
        k = x.sum().item()
        return torch.cond(x.sum() > 0, lambda a: a.sin(), lambda a: a.cos(), (x * k,))

    def with_no_grad(x, ys, n):
        with torch.no_grad():
            y = x * 2
        return y + x, {"n": n, "shape": x.shape}

    def generators_and_super(x, ys, n):
        class Base:
            def scale(self, t):
                return t * n

        class Child(Base):
            def scale(self, t):
                return super().scale(t) + 1
        y = x.clone()
        y[0] += 1
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = (x @ x.T).float()
        return sum(v * 2 for v in ys), Child().scale(y), z
    return [loops_and_comprehensions, branch_on_data, item_and_cond, with_no_grad,
            generators_and_super]


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return torch.allclose(a, b)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def main() -> int:
    torch.manual_seed(0)
    for fn in programs():
        for backend in ("eager", "aot_eager"):
            for dynamic in (None, True):
                torch._dynamo.reset()
                compiled = torch.compile(fn, backend=backend, dynamic=dynamic)
                for rows in (3, 5, 7):
                    args = (torch.randn(rows, 3), [torch.randn(rows, 3)] * 2, 2)
                    if not same(compiled(*args), fn(*args)):
                        print(f"MISMATCH {fn.__name__} {backend} dynamic={dynamic} rows={rows}")
                        return 1
    print(f"ok {sys.version_info[:2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
