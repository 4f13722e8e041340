"""torch.backends switches and global precision/determinism flags, against torch."""
import warnings

import pytest

from .differential import differential


def test_backend_defaults_match_torch():
    differential(lambda lib: (lib.backends.cudnn.enabled, lib.backends.cudnn.benchmark,
                              lib.backends.cudnn.deterministic, lib.backends.cudnn.allow_tf32,
                              lib.backends.cuda.matmul.allow_tf32,
                              lib.backends.mps.is_available(),
                              lib.backends.mha.get_fastpath_enabled(),
                              lib.get_float32_matmul_precision(),
                              lib.are_deterministic_algorithms_enabled()))


@pytest.mark.parametrize("precision", ["high", "medium", "highest", "bogus"])
def test_float32_matmul_precision_round_trip(precision):
    def scenario(lib):
        before = lib.get_float32_matmul_precision()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lib.set_float32_matmul_precision(precision)
            return lib.get_float32_matmul_precision()
        finally:
            lib.set_float32_matmul_precision(before)
    differential(scenario)


def test_deterministic_flags_round_trip():
    def scenario(lib):
        lib.use_deterministic_algorithms(True, warn_only=True)
        try:
            return (lib.are_deterministic_algorithms_enabled(),
                    lib.is_deterministic_algorithms_warn_only_enabled())
        finally:
            lib.use_deterministic_algorithms(False)
    differential(scenario)


@pytest.mark.parametrize("value", ["float32", "int64", "int", "list", "Linear"])
def test_typename_matches_torch(value):
    def scenario(lib):
        obj = {"float32": lambda: lib.ones(2), "int64": lambda: lib.ones(2, dtype=lib.int64),
               "int": lambda: 3, "list": lambda: [1], "Linear": lambda: lib.nn.Linear}[value]()
        return lib.typename(obj).replace("glasstorch", "torch")
    differential(scenario)
