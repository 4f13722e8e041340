"""Random number generators (ATen's CPUGeneratorImpl and at::mt19937).

PyTorch's CPU generator is a 32-bit Mersenne Twister (mt19937) seeded with
the classic ``init_genrand`` — the same seeding numpy's legacy
``MT19937._legacy_seeding`` performs for an integer seed — so we keep the
engine state in a ``numpy.random.MT19937`` bit generator and draw raw 32-bit
words from it (``random_raw``), vectorized.  The distributions in
``glasstorch/_ops/kernels/random.py`` turn words into values with PyTorch's
transformations (aten/src/ATen/core/TransformationHelper.h), so CPU streams
are bit-identical to PyTorch's for the same seed where the transformation is
the portable one.

Besides the engine, the generator caches one spare normal sample of each
precision (Box-Muller makes two at a time), as CPUGeneratorImpl does.

The serialized state (``get_state``) is CPUGeneratorImplState, byte for byte:

    offset  field
    0       uint64 the_initial_seed
    8       int32  left           (draws left before the twister regenerates + 1)
    12      int32  seeded
    16      uint64 next           (index of the next word)
    24      uint64 state[624]     (the 32-bit words, widened)
    5016    double normal_x, normal_y, normal_rho
    5040    int32  normal_is_valid       (normal_y holds the spare double sample)
    5048    float  next_float_normal_sample
    5052    bool   is_next_float_normal_sample_valid
    5056    (size)
"""
from __future__ import annotations

import os
import struct
import threading

import numpy as np

from .device import device as Device

__all__ = ["Generator", "default_generator", "STATE_SIZE"]

STATE_SIZE = 5056
_N = 624
_U64 = (1 << 64) - 1


class Generator:
    """``torch.Generator(device='cpu')``."""

    def __init__(self, device="cpu"):
        self.device = Device(device)
        if self.device.type == "cuda":
            from .. import cuda
            cuda._lazy_init()
        self._lock = threading.RLock()
        self.manual_seed(67280421310721)  # c10::detail::default_rng_seed_val

    # -- seeding -------------------------------------------------------------------

    def manual_seed(self, seed) -> "Generator":
        seed = _unpack_seed(seed)
        with self._lock:
            self._seed = seed
            self._engine = np.random.MT19937(0)
            self._engine._legacy_seeding(seed & 0xFFFFFFFF)
            self._next_double = None
            self._next_float = None
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Seed from the OS's entropy source and return the seed used."""
        seed = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self.manual_seed(seed)
        return seed

    # -- state ---------------------------------------------------------------------

    def get_state(self):
        """A ByteTensor (uint8, 5056 bytes) laid out as PyTorch's CPU generator state."""
        from .._creation import from_numpy
        with self._lock:
            st = self._engine.state["state"]
            key, pos = st["key"], int(st["pos"])
            buf = bytearray(STATE_SIZE)
            struct.pack_into("<QiiQ", buf, 0, self._seed, _N + 1 - pos, 1, pos % _N)
            buf[24:24 + 8 * _N] = np.asarray(key, dtype=np.uint64).astype("<u8").tobytes()
            if self._next_double is not None:
                struct.pack_into("<d", buf, 5024, self._next_double)
                struct.pack_into("<i", buf, 5040, 1)
            if self._next_float is not None:
                struct.pack_into("<f", buf, 5048, self._next_float)
                buf[5052] = 1
        return from_numpy(np.frombuffer(bytes(buf), dtype=np.uint8).copy())

    def set_state(self, new_state) -> "Generator":
        from .._tensor import Tensor
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype.name != "uint8":
            raise TypeError("expected a torch.ByteTensor, but got "
                            f"{_tensor_type_name(new_state)}")
        data = new_state._cpu_array().tobytes()
        if len(data) != STATE_SIZE:
            raise RuntimeError(f"Expected either a THGeneratorState of size 5048 or a "
                               f"CPUGeneratorImplState of size {STATE_SIZE} but found the input "
                               f"RNG state size to be {len(data)}")
        seed, left, _seeded, _next = struct.unpack_from("<QiiQ", data, 0)
        key = np.frombuffer(data, dtype="<u8", count=_N, offset=24).astype(np.uint32)
        with self._lock:
            self._seed = seed
            engine = np.random.MT19937(0)
            engine.state = {"bit_generator": "MT19937",
                            "state": {"key": key, "pos": _N + 1 - left}}
            self._engine = engine
            valid_double = struct.unpack_from("<i", data, 5040)[0]
            self._next_double = struct.unpack_from("<d", data, 5024)[0] if valid_double else None
            self._next_float = struct.unpack_from("<f", data, 5048)[0] if data[5052] else None
        return self

    def clone_state(self) -> "Generator":
        g = Generator(self.device)
        g.set_state(self.get_state())
        return g

    # -- raw draws (used by the distribution kernels) ---------------------------------

    def random(self, n: int) -> np.ndarray:
        """``n`` 32-bit words (``generator->random()``), as uint64."""
        if n <= 0:
            return np.empty((0,), np.uint64)
        return self._engine.random_raw(n)

    def random64(self, n: int) -> np.ndarray:
        """``n`` 64-bit words (``random64()``: two 32-bit draws, the first is the high half)."""
        words = self.random(2 * n)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    def __repr__(self):
        return f"<torch._C.Generator object at {hex(id(self))}>"

    def __getstate__(self):
        return {"device": str(self.device), "state": self.get_state()._np().copy()}

    def __setstate__(self, d):
        self.__init__(d["device"])
        from .._creation import from_numpy
        self.set_state(from_numpy(d["state"]))


def _unpack_seed(seed) -> int:
    if hasattr(seed, "item") and not isinstance(seed, int):
        seed = seed.item()
    if isinstance(seed, float) or not hasattr(seed, "__index__"):
        raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = seed.__index__()
    if seed < -(1 << 63) or seed > _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _U64


def _tensor_type_name(t) -> str:
    return f"torch.{t.dtype._short}Tensor"


default_generator = Generator()


def get_generator(generator) -> Generator:
    """The generator an op uses: the one given, else the default CPU generator."""
    return default_generator if generator is None else generator
