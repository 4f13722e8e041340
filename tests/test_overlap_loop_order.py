"""Writes whose source shares memory with the destination in a way PyTorch's
overlap checks cannot judge (both layouts have holes): computed element by
element in TensorIterator's loop order, so later elements read earlier writes,
as in PyTorch (structured.unproven_overlap / in_loop_order)."""
from hypothesis import given, strategies as st

from .differential import differential


@given(rows=st.integers(1, 3), cols=st.integers(1, 3), shift=st.integers(-8, 8),
       transpose=st.booleans(), op=st.sampled_from(["copy_", "add_", "mul_", "out=", "bcast"]))
def test_shifted_2d_windows_match_pytorch(rows, cols, shift, transpose, op):
    def case(L):
        x = L.arange(64.0)
        base = x[16:].as_strided((rows, cols), (8, 2))
        dst, src = base, x[16 + shift:].as_strided((rows, cols), (8, 2))
        if transpose:
            dst, src = dst.t(), src.t()
        if op == "out=":
            L.sub(src, 1, out=dst)
        elif op == "bcast":
            dst.add_(src[:1])
        else:
            getattr(dst, op)(src)
        return x
    differential(case)
