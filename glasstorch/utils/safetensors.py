"""The safetensors checkpoint format, with the ``safetensors.torch`` API.

``from glasstorch.utils import safetensors`` gives what ``import safetensors.torch``
gives PyTorch code: ``save_file(tensors, filename, metadata=None)``,
``load_file(filename, device="cpu")``, ``save(tensors, metadata=None) -> bytes``,
``load(data) -> dict`` and ``safe_open(filename, framework="pt")`` (``keys()``,
``offset_keys()``, ``metadata()``, ``get_tensor(name)``, ``get_slice(name)``),
with the same checks and the same bytes on disk.

A file is::

    8 bytes     N, the header's length (little-endian u64)
    N bytes     a JSON header, padded with spaces so the data starts 8-aligned:
                {"__metadata__": {str: str},
                 name: {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
    the rest    every tensor's bytes (C order, little-endian), back to back, with no
                gaps; offsets count from the start of this buffer

Tensors are laid out widest dtype first (the reverse of the dtype list below,
which keeps every tensor aligned), then by name; the header lists them in that
order, ``__metadata__`` first.  Unlike ``torch.save`` nothing is pickled, so
loading cannot run code; and tensors sharing memory are refused, since each
name owns its bytes.
"""
from __future__ import annotations

import json
import os
import struct
import sys
from collections import defaultdict

import numpy as np

from .._core import dtype as dt
from .._core.device import device as Device
from .._core.layout import strided
from .._tensor import Tensor

__all__ = ["save", "save_file", "load", "load_file", "safe_open", "SafetensorError"]


class SafetensorError(Exception):
    """``safetensors.SafetensorError``: a file or buffer that is not valid safetensors."""


# Every safetensors dtype, in the format's order (its Rust enum): layout sorts on it.
_DTYPE_ORDER = ("BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
                "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64")
_DTYPE_BITS = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
               "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
               "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64}
_TO_GLASSTORCH = {"BOOL": dt.bool_, "U8": dt.uint8, "I8": dt.int8, "I16": dt.int16,
                  "F16": dt.float16, "BF16": dt.bfloat16, "I32": dt.int32, "F32": dt.float32,
                  "C64": dt.complex64, "F64": dt.float64, "I64": dt.int64}
_FROM_GLASSTORCH = {d: name for name, d in _TO_GLASSTORCH.items()}
_MAX_HEADER_SIZE = 100_000_000
_USIZE_MAX = (1 << 64) - 1


# -- writing ---------------------------------------------------------------------------

def _find_shared_tensors(tensors: dict) -> list:
    """Names grouped by the storage they live in (safetensors' ``_find_shared_tensors``)."""
    groups = defaultdict(set)
    for name, t in tensors.items():
        storage = t.untyped_storage()
        if t.device.type != "meta" and storage.data_ptr() != 0 and storage.nbytes() != 0:
            groups[(str(t.device), storage.data_ptr(), storage.nbytes())].add(name)
    return list(groups.values())


def _tensor_bytes(tensor: Tensor, name: str) -> np.ndarray:
    """The tensor's bytes as a flat uint8 array (no copy for a CPU tensor)."""
    if tensor.layout is not strided:
        raise ValueError(f"You are trying to save a sparse tensor: `{name}` which this library "
                         "does not support. You can make it a dense tensor before saving with "
                         "`.to_dense()` but be aware this might make a much larger file than "
                         "needed.")
    if not tensor.is_contiguous():
        raise ValueError(
            f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. It "
            "either means you are trying to save tensors which are reference of each other in "
            "which case it's recommended to save only the full tensors, and reslice at load "
            "time, or simply call `.contiguous()` on your tensor to pack it before saving.")
    if tensor.device.type != "cpu":
        tensor = tensor.to("cpu")
    array = tensor._np().reshape(-1)
    if sys.byteorder == "big":
        array = array.byteswap()
    return array.view(np.uint8)


def _serialize(tensors: dict, metadata) -> tuple:
    """``(header bytes with their length prefix, [tensor bytes in file order])``."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received "
                             f"{type(t)}")
    failing = [names for names in _find_shared_tensors(tensors) if len(names) > 1]
    if failing:
        raise RuntimeError(
            "\n            Some tensors share memory, this will lead to duplicate memory on disk "
            f"and potential differences when loading them again: {failing}.\n            A "
            "potential way to correctly save your model is to use `save_model`.\n            More "
            "information at https://huggingface.co/docs/safetensors/torch_shared_tensors\n"
            "            ")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise TypeError(f"argument 'metadata': '{type(metadata).__name__}' object cannot be "
                            "converted to 'PyDict'")
        for key, value in metadata.items():
            if not isinstance(key, str) or not isinstance(value, str):
                bad = key if not isinstance(key, str) else value
                raise TypeError(f"argument 'metadata': '{type(bad).__name__}' object cannot be "
                                "converted to 'PyString'")
    entries = []
    for name, t in tensors.items():
        code = _FROM_GLASSTORCH.get(t.dtype)
        if code is None:
            raise SafetensorError(f"dtype {t.dtype.name} is not covered")
        entries.append((name, code, t))
    # widest dtype first, then by name
    entries.sort(key=lambda e: (-_DTYPE_ORDER.index(e[1]), e[0]))
    header = {} if metadata is None else {"__metadata__": dict(metadata)}
    chunks, offset = [], 0
    for name, code, t in entries:
        data = _tensor_bytes(t, name)
        header[name] = {"dtype": code, "shape": list(t.shape),
                        "data_offsets": [offset, offset + data.nbytes]}
        offset += data.nbytes
        chunks.append(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, chunks


def save(tensors: dict, metadata=None) -> bytes:
    """The safetensors bytes of ``tensors`` (``{name: tensor}``) and optional
    ``metadata`` (``{str: str}``)."""
    head, chunks = _serialize(tensors, metadata)
    return b"".join([head, *(c.tobytes() for c in chunks)])


def save_file(tensors: dict, filename, metadata=None) -> None:
    """Write ``tensors`` to ``filename`` in the safetensors format."""
    head, chunks = _serialize(tensors, metadata)
    with open(os.fspath(filename), "wb") as f:
        f.write(head)
        for chunk in chunks:
            f.write(memoryview(chunk))


# -- reading ---------------------------------------------------------------------------

def _header_error(reason: str):
    return SafetensorError(f"Error while deserializing header: {reason}")


def _read_header(prefix: bytes, read, total_len: int):
    """Parse and validate the header: ``(data start, metadata, {name: info})`` with
    ``info = (dtype code, shape, begin, end)``, names in offset order.  ``read(n)``
    returns the ``n`` header bytes after the length prefix."""
    if total_len < 8:
        raise _header_error("HeaderTooSmall")
    (n,) = struct.unpack("<Q", prefix[:8])
    if n > _MAX_HEADER_SIZE:
        raise _header_error("HeaderTooLarge")
    if n + 8 > total_len:
        raise _header_error("InvalidHeaderLength")
    try:
        text = read(n).decode("utf-8")
    except UnicodeDecodeError:
        raise _header_error("InvalidHeader") from None
    if not text.startswith("{"):
        raise _header_error("InvalidHeaderStart")
    try:
        header = json.loads(text)
        metadata, infos = _check_header(header)
    except (ValueError, TypeError):
        raise _header_error("InvalidHeaderDeserialization") from None
    infos.sort(key=lambda item: (item[3], item[4]))
    start = 0
    for name, code, shape, begin, end in infos:
        if begin != start or end < begin:
            raise _header_error(f"InvalidOffset({json.dumps(name, ensure_ascii=False)})")
        numel = 1
        for size in shape:
            numel *= size
        if numel * _DTYPE_BITS[code] // 8 > _USIZE_MAX:
            raise _header_error("ValidationOverflow")
        if end - begin != numel * _DTYPE_BITS[code] // 8:
            raise _header_error("TensorInvalidInfo")
        start = end
    if start + 8 + n != total_len:
        raise _header_error("MetadataIncompleteBuffer")
    return 8 + n, metadata, {name: (code, shape, begin, end)
                             for name, code, shape, begin, end in infos}


def _check_header(header) -> tuple:
    """The header's pieces, or ValueError when its JSON has the wrong shape."""
    def is_usize(x):
        return type(x) is int and 0 <= x <= _USIZE_MAX
    if not isinstance(header, dict):
        raise ValueError
    metadata = header.get("__metadata__")
    if metadata is not None and not (isinstance(metadata, dict) and
                                     all(isinstance(v, str) for v in metadata.values())):
        raise ValueError
    infos = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise ValueError
        code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if code not in _DTYPE_BITS or not isinstance(shape, list) or \
                not all(is_usize(s) for s in shape) or not isinstance(offsets, list) or \
                len(offsets) != 2 or not all(is_usize(o) for o in offsets):
            raise ValueError
        infos.append((name, code, tuple(shape), offsets[0], offsets[1]))
    return metadata, infos


def _new_tensor(code: str, shape: tuple, name: str) -> Tensor:
    from .. import empty
    dtype = _TO_GLASSTORCH.get(code)
    if dtype is None:
        raise SafetensorError(f"glasstorch has no dtype for safetensors dtype {code} "
                              f"(tensor {name})")
    return empty(shape, dtype=dtype)


def _finish(tensor: Tensor, device) -> Tensor:
    if sys.byteorder == "big":
        tensor._np().byteswap(inplace=True)
    return tensor if device.type == "cpu" else tensor.to(device)


def _as_device(device) -> Device:
    return Device(f"cuda:{device}") if isinstance(device, int) else Device(device)


def load(data: bytes) -> dict:
    """The tensors in a safetensors byte string, in file order."""
    view = memoryview(data)
    data_start, _, infos = _read_header(bytes(view[:8]), lambda n: bytes(view[8:8 + n]),
                                        len(view))
    result = {}
    for name, (code, shape, begin, end) in infos.items():
        t = _new_tensor(code, shape, name)
        t.untyped_storage()._bytes()[:] = np.frombuffer(view[data_start + begin:data_start + end],
                                                        np.uint8)
        result[name] = _finish(t, Device("cpu"))
    return result


class safe_open:
    """``safe_open(filename, framework="pt", device="cpu")``: read a safetensors file
    lazily, tensor by tensor.  Use as a context manager (or call ``close()``)."""

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "torch", "np", "numpy"):
            raise SafetensorError(f"framework {framework} is invalid")
        self._numpy = framework in ("np", "numpy")
        self._device = _as_device(device)
        self._file = open(os.fspath(filename), "rb")
        try:
            total = os.fstat(self._file.fileno()).st_size
            prefix = self._file.read(8)
            self._data_start, self._metadata, self._infos = _read_header(
                prefix, self._file.read, total)
        except BaseException:
            self._file.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()

    def close(self) -> None:
        self._file.close()

    def keys(self) -> list:
        """The tensor names, sorted."""
        return sorted(self._infos)

    def offset_keys(self) -> list:
        """The tensor names in file order."""
        return list(self._infos)

    def metadata(self):
        """The ``__metadata__`` dict, or None."""
        return self._metadata

    def _info(self, name: str):
        info = self._infos.get(name)
        if info is None:
            raise SafetensorError(f"File does not contain tensor {name}")
        return info

    def get_tensor(self, name: str):
        """The tensor ``name``, read from the file now."""
        code, shape, begin, end = self._info(name)
        t = _new_tensor(code, shape, name)
        self._file.seek(self._data_start + begin)
        if self._file.readinto(memoryview(t.untyped_storage()._bytes())) != end - begin:
            raise SafetensorError(f"Error while reading tensor {name}: file read failed")
        t = _finish(t, self._device)
        return t.numpy() if self._numpy else t

    def get_slice(self, name: str) -> "_Slice":
        """A handle on tensor ``name`` that reports its dtype and shape and can be indexed."""
        self._info(name)
        return _Slice(self, name)


class _Slice:
    """``safe_open(...).get_slice(name)``: ``get_shape()``, ``get_dtype()``, ``[index]``."""

    def __init__(self, handle: safe_open, name: str):
        self._handle, self._name = handle, name

    def get_shape(self) -> list:
        return list(self._handle._info(self._name)[1])

    def get_dtype(self) -> str:
        return self._handle._info(self._name)[0]

    def __getitem__(self, index):
        return self._handle.get_tensor(self._name)[index]


def load_file(filename, device="cpu") -> dict:
    """Every tensor of a safetensors file, in file order, on ``device``."""
    with safe_open(filename, framework="pt", device=device) as f:
        return {name: f.get_tensor(name) for name in f.offset_keys()}
