"""``torch.random``: the default CPU generator and its seeding functions.

The generator itself (an mt19937 bit-compatible with PyTorch's CPU generator)
lives in ``glasstorch/_core/generator.py``.
"""
from __future__ import annotations

import contextlib

from ._core.generator import Generator, default_generator

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng"]


def manual_seed(seed) -> Generator:
    """Seed the default generator (and CUDA's, when there is one); returns it.
    The seed goes through ``int()`` first, as torch.manual_seed's does."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (PyTorch's 5056-byte layout)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Restore the CPU generator's state on exit."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
