"""Devices (c10::Device): a device type plus an optional index.

``device("cuda:0")`` parses like PyTorch; whether CUDA can actually be used is
asked of the CUDA backend only when memory is requested, so that a machine
without a GPU can still describe CUDA tensors in error messages.
"""
from __future__ import annotations

import re

__all__ = ["device", "KNOWN_DEVICE_TYPES"]

# PyTorch's list, in the order its error message prints it.
KNOWN_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep",
                      "hip", "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta",
                      "hpu", "mtia", "privateuseone")


class device:
    """``torch.device``: immutable, hashable, compares by (type, index)."""

    __slots__ = ("type", "index")
    _cache: dict = {}

    def __new__(cls, type_or_str=None, index=None, *, type=None):
        if type_or_str is None:         # device(type='cpu'), as repr writes it
            if type is None:
                raise TypeError("device() missing required argument 'type' (pos 1)")
            type_or_str = type
        if isinstance(type_or_str, device):
            return type_or_str
        if isinstance(type_or_str, int) and index is None:
            type_or_str, index = "cuda", type_or_str  # torch.device(0) means cuda:0
        key = (type_or_str, index)
        hit = cls._cache.get(key)
        if hit is not None:
            return hit
        dev_type, dev_index = _parse(type_or_str, index)
        self = object.__new__(cls)
        object.__setattr__(self, "type", dev_type)
        object.__setattr__(self, "index", dev_index)
        cls._cache[key] = self
        return self

    def __setattr__(self, name, value):
        raise AttributeError("torch.device is immutable")

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        from . import tls
        tls.push_default_device(self)
        return self

    def __exit__(self, *exc):
        from . import tls
        tls.pop_default_device()


_DEVICE_STRING = re.compile(r"[a-zA-Z_]+(:([1-9][0-9]*|0))?")


def _parse(text, index):
    if not isinstance(text, str):
        raise TypeError(f"device() received an invalid combination of arguments - got ({type(text).__name__})")
    if not text:
        raise RuntimeError("Device string must not be empty")
    if _DEVICE_STRING.fullmatch(text) is None:     # c10::Device's pattern: type[:index]
        raise RuntimeError(f"Invalid device string: '{text}'")
    dev_type, sep, idx = text.partition(":")
    if dev_type not in KNOWN_DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(KNOWN_DEVICE_TYPES)} device type at start "
                           f"of device string: {text}")
    if sep:
        if index is not None:
            raise RuntimeError("type (string) must not include an index because index was passed explicitly: " + text)
        if not idx.isdigit() or (len(idx) > 1 and idx[0] == "0"):
            raise RuntimeError(f"Invalid device string: '{text}'")
        index = int(idx)
    if index is not None:
        if not isinstance(index, int) or index < 0:
            raise RuntimeError("Device index must not be negative")
        if dev_type == "cpu" and index != 0:
            raise RuntimeError(f"CPU device index must be -1 or zero, got {index}")
    return dev_type, index
