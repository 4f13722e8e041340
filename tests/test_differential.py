"""The differential helper itself: both libraries raising is a failure unless
the test says raising is the point; dtypes compare by name."""
import pytest

from .differential import differential, raised, returned


def test_both_raising_fails_unless_may_raise():
    with pytest.raises(AssertionError, match="both libraries raised IndexError: list index"):
        differential(lambda lib: [lib][1])
    outcome = differential(lambda lib: [lib][1], may_raise=True)
    assert raised(outcome, "IndexError") == "list index out of range"


def test_a_difference_fails_even_when_raising_may_happen():
    with pytest.raises(AssertionError, match="glasstorch: "):
        differential(lambda lib: lib.__name__, may_raise=True)


def test_dtypes_are_compared_by_name():
    assert returned(differential(lambda lib: (lib.bfloat16, lib.ones(1).dtype))) == \
        (("dtype", "torch.bfloat16"), ("dtype", "torch.float32"))
    with pytest.raises(AssertionError):
        differential(lambda lib: lib.float16 if lib.__name__ == "torch" else lib.bfloat16)


def test_normalize_applies_to_both_outcomes():
    outcome = differential(lambda lib: lib.__name__, normalize=lambda o: o[:1])
    assert outcome == ("returned",)
