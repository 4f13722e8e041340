"""Sizes no allocator can serve get PyTorch's errors, never numpy's ValueError or
MemoryError: the storage-size overflow checks of ATen's computeStorageNbytes (any
device, meta included), the contiguous-stride overflow check, and the CPU
allocator's out-of-memory RuntimeError.  Every size here is far beyond any
machine's address space, so no case can allocate."""
import pytest

from tests.differential import differential, raised

CASES = {
    "empty 2**62": lambda t: t.empty(2 ** 62),
    "empty 2**61 float32": lambda t: t.empty(2 ** 61),
    "empty 2**62-1 int16": lambda t: t.empty(2 ** 62 - 1, dtype=t.int16),
    "ones 2**32 x 2**32": lambda t: t.ones(2 ** 32, 2 ** 32),
    "empty 2**31 x 2**31 x 4": lambda t: t.empty(2 ** 31, 2 ** 31, 4),
    "overflow before a zero": lambda t: t.empty(2 ** 62, 2 ** 62, 0),
    "stride overflow after a zero": lambda t: t.empty(0, 2 ** 62, 2 ** 62),
    "meta 2**62": lambda t: t.empty(2 ** 62, device="meta"),
    "meta stride overflow": lambda t: t.empty(0, 2 ** 32, 2 ** 31, device="meta"),
    "empty_strided overflow": lambda t: t.empty_strided((2 ** 40,), (2 ** 30,)),
    "empty_strided big stride": lambda t: t.empty_strided((2,), (2 ** 62,)),
    "empty 2**50": lambda t: t.empty(2 ** 50),
    "zeros 2**55 bytes": lambda t: t.zeros(2 ** 55, dtype=t.uint8),
    "full 2**50": lambda t: t.full((2 ** 50,), 1.0),
    "ones 2**50": lambda t: t.ones(2 ** 50),
    "rand 2**50": lambda t: t.rand(2 ** 50),
    "new_empty 2**50": lambda t: t.ones(3).new_empty(2 ** 50),
    "expand then contiguous": lambda t: t.ones(3).expand(2 ** 50, 3).contiguous(),
    "repeat": lambda t: t.tensor([1.0]).repeat(2 ** 50),
    "uint8 2**63-1 bytes": lambda t: t.empty(2 ** 63 - 1, dtype=t.uint8),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_huge_sizes_raise_torchs_runtime_error(case):
    raised(differential(CASES[case], may_raise=True), "RuntimeError")


def test_zero_sized_and_meta_sizes_still_work():
    differential(lambda t: t.empty_strided((0,), (2 ** 62,)).shape)
    differential(lambda t: t.empty(2 ** 60, device="meta").shape)
    differential(lambda t: t.empty_strided((2 ** 40,), (2 ** 30,), device="meta").shape)


TENSOR_VALUES = [
    ([2 ** 70], None), ([2 ** 63], None), ([-2 ** 63 - 1], None), ([[1], [2 ** 64]], None),
    ([True, 2 ** 70], None), ([1.5, 2 ** 70], None), ([1.5, 2 ** 1200], None),
    ([2 ** 63], "int64"), ([2 ** 63], "uint8"), ([2 ** 1200], "float64"), ([2 ** 64], "float16"),
    ([300], "int8"), ([-129], "int8"), ([256], "uint8"), ([-1], "uint8"), ([2 ** 31], "int32"),
    ([1e300], "int32"), ([300.0], "int8"), ([float("nan")], "int32"), ([float("inf")], "int64"),
    ([2.5], "int8"), ([2 ** 70], "complex64"), ([2 ** 70], "bool"),
]


@pytest.mark.parametrize("values, dtype", TENSOR_VALUES)
def test_tensor_value_overflow(values, dtype):
    differential(lambda t: t.tensor(values, dtype=getattr(t, dtype) if dtype else None),
                 may_raise=True)


def _first_line(outcome):
    """torch's unpack errors carry a C++ stack after the first line (and close their
    quote after it): compare the first line, quote dropped."""
    if outcome[0] != "raised":
        return outcome
    return outcome[:2] + (outcome[2].split("\n")[0].rstrip('"'),) + outcome[3:]


INT_ARGUMENTS = {
    "empty 2**63": lambda t: t.empty(2 ** 63),
    "zeros tuple": lambda t: t.zeros((2 ** 63,)),
    "randn second size": lambda t: t.randn(3, 2 ** 63),
    "view": lambda t: t.ones(2).view(2 ** 63),
    "view below int64": lambda t: t.ones(2).view(-2 ** 63 - 1),
    "reshape": lambda t: t.ones(2).reshape(1, 2 ** 63),
    "sum dim": lambda t: t.ones(2).sum(dim=2 ** 63),
    "narrow start": lambda t: t.ones(2).narrow(0, 2 ** 64, 1),
}


@pytest.mark.parametrize("case", sorted(INT_ARGUMENTS))
def test_int_arguments_beyond_int64(case):
    outcome = differential(INT_ARGUMENTS[case], may_raise=True, normalize=_first_line)
    assert "Overflow when unpacking long long" in raised(outcome)
