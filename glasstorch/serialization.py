"""``torch.serialization``: ``save`` / ``load`` in PyTorch's own checkpoint format.

A checkpoint is a zip archive (caffe2's PyTorchStreamWriter over miniz), every
record stored uncompressed under one folder named after the file::

    model/data.pkl                  the object, pickled (protocol 2) with storages
                                    left out as persistent ids
    model/.format_version           b"1"
    model/.storage_alignment        b"64"
    model/byteorder                 b"little"
    model/data/0, data/1 ...        one record per storage: its raw bytes
    model/version                   b"3\\n"
    model/.data/serialization_id    40 digits identifying this write

Each record's bytes start on a 64-byte boundary (padding goes in an "FB" extra
field of the local header), so a loader may map the file and view storages in
place.  A tensor pickles as ``torch._utils._rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, hooks)`` and its storage as the persistent id
``('storage', torch.FloatStorage, key, location, numel)``: views of one storage
share one record and come back sharing one storage.

We write ``torch.*`` names (``torch._utils._rebuild_tensor_v2``, ``torch.float32``,
``torch.nn.parameter.Parameter`` ...) so real PyTorch loads our files, and map
them back onto glasstorch when loading.  ``load`` defaults to ``weights_only``:
a restricted unpickler that only calls the allowlisted globals (tensors,
storages, dtypes, containers ...), so a malicious checkpoint cannot run code.
"""
from __future__ import annotations

import collections
import importlib
import io
import os
import pickle
import pickletools
import re
import struct
import sys
import types
import warnings
import zlib
from _codecs import encode as _codecs_encode
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING

import numpy as np

from ._core import dtype as dt
from ._core.allocator import cpu_allocator
from ._core.device import device as Device
from ._core import layout as _layouts
from ._core.layout import layout, strided
from ._core.storage import LEGACY_STORAGE_CLASSES, TypedStorage, UntypedStorage
from ._tensor import Size, Tensor
from . import _utils

__all__ = ["save", "load", "location_tag", "default_restore_location", "add_safe_globals",
           "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
_STORAGE_ALIGNMENT = 64
_FILE_FORMAT_VERSION = 3            # caffe2's kProducedFileFormatVersion for torch.save
_MIN_FILE_FORMAT_VERSION = 1

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only if "
    "you got the file from a trusted source.")


# ===================================================================================
# glasstorch <-> torch names in pickles
# ===================================================================================

_TORCH_MODULE_RENAMES = {"torch.tensor": "torch._tensor"}   # files from PyTorch < 1.8


# Objects whose torch name is not their module path with ``glasstorch`` -> ``torch``.
_SPECIAL_TORCH_NAMES = {
    TypedStorage: ("torch.storage", "TypedStorage"),
    UntypedStorage: ("torch.storage", "UntypedStorage"),
    _utils._rebuild_from_type_v2: ("torch._tensor", "_rebuild_from_type_v2"),
    **{cls: ("torch", cls.__name__) for cls in LEGACY_STORAGE_CLASSES.values()},
}
_SPECIAL_BY_ID = {id(obj): where for obj, where in _SPECIAL_TORCH_NAMES.items()}
_SPECIAL_BY_NAME = {where: obj for obj, where in _SPECIAL_TORCH_NAMES.items()}


def _torch_location(obj, name=None):
    """``(module, qualname)`` a checkpoint should name ``obj`` by, or None when
    ``obj`` is not glasstorch's (then it keeps its own name)."""
    special = _SPECIAL_BY_ID.get(id(obj))
    if special is not None:
        return special
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or not (module == "glasstorch" or
                                           module.startswith("glasstorch.")):
        return None
    if name is None:
        name = getattr(obj, "__qualname__", None) or obj.__name__
    import glasstorch
    if getattr(glasstorch, name, None) is obj:      # public at top level: torch.float32, torch.Size
        return "torch", name
    return "torch" + module[len("glasstorch"):], name


def _torch_path(obj) -> str:
    """``module.qualname`` as a checkpoint names ``obj`` (the safe-globals key)."""
    where = _torch_location(obj)
    if where is None:
        where = obj.__module__, obj.__qualname__
    return ".".join(where)


def _glasstorch_global(module: str, name: str):
    """The glasstorch object a checkpoint's ``torch`` global ``module.name`` means."""
    module = _TORCH_MODULE_RENAMES.get(module, module)
    if module == "torch.cuda" and name.endswith("Storage"):   # storage types of CUDA checkpoints
        module = "torch"
    special = _SPECIAL_BY_NAME.get((module, name))
    if special is not None:
        return special
    ours = "glasstorch" + module[len("torch"):]
    try:
        obj = importlib.import_module(ours)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise AttributeError(f"Can't get attribute '{name}' on module '{module}': glasstorch has "
                             f"no counterpart of {module}.{name}") from None
    return obj


def _get_layout(name: str):
    """``torch.serialization._get_layout``: layouts pickle as their name."""
    layouts = {repr(lay): lay for lay in vars(_layouts).values() if isinstance(lay, layout)}
    return layouts[name]


def _reduce_device(d):
    # torch's device.type is a new str on each access; a shared one would be memoized
    kind = d.type.encode().decode()
    return Device, ((kind,) if d.index is None else (kind, d.index))


# How torch pickles these three (dtype: a global; layout: through _get_layout;
# device: without a None index), so that the bytes match torch's.
_TORCH_REDUCERS = {dt.dtype: lambda d: d.name,
                   layout: lambda lay: (_get_layout, (repr(lay),)),
                   Device: _reduce_device}


class _TorchNamesPickler(pickle._Pickler):
    """The (pure-Python) pickler, writing glasstorch globals under their torch names.

    The C pickler cannot be taught to rename a global; the Python one sends
    every object through ``reducer_override`` and every global through
    ``save_global``.
    """

    def reducer_override(self, obj):
        reducer = _TORCH_REDUCERS.get(type(obj))
        if reducer is not None:
            return reducer(obj)
        if isinstance(obj, (type, types.FunctionType)):
            if _torch_location(obj) is not None:
                return obj.__qualname__     # a global: save_global writes its torch name
            if "<locals>" in obj.__qualname__:    # the C pickler's words (torch.save uses it)
                raise AttributeError(f"Can't pickle local object {obj.__qualname__!r}")
        return NotImplemented

    def save_global(self, obj, name=None):
        where = _torch_location(obj, name)
        if where is None:
            return super().save_global(obj, name)
        module, qualname = where
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            text = f"{module}\n{qualname}\n"
            self.write(pickle.GLOBAL + text.encode("utf-8" if self.proto >= 3 else "ascii"))
        self.memoize(obj)


def _rebuild_tensor_args(tensor):
    """``Tensor.__reduce_ex__``: how a tensor pickles (torch's ``_reduce_ex_internal``).

    A plain tensor is a ``_rebuild_tensor_v2`` call over its (typed) storage; a
    meta tensor keeps only its geometry; a subclass, or a tensor carrying Python
    attributes, is wrapped in ``_rebuild_from_type_v2`` to restore them.
    """
    if tensor.layout is not strided:
        return _sparse_tensor_args(tensor)
    # fresh tuples, as torch's size()/stride() are: the pickle memoizes by identity
    size, stride = (*tensor._shape,), (*tensor._stride,)
    if tensor.device.type == "meta":
        func, args = _utils._rebuild_meta_tensor_no_storage, (
            tensor.dtype, size, stride, tensor.requires_grad)
    elif tensor.dtype in dt.BAREBONES_UNSIGNED:    # no legacy storage class: saved untyped
        func, args = _utils._rebuild_tensor_v3, (
            tensor._storage, tensor._offset, size, stride, tensor.requires_grad,
            collections.OrderedDict(), tensor.dtype)
    else:
        storage = TypedStorage(wrap_storage=tensor._storage, dtype=tensor.dtype, _internal=True)
        func, args = _utils._rebuild_tensor_v2, (
            storage, tensor._offset, size, stride, tensor.requires_grad, collections.OrderedDict())
    state = _utils._get_obj_state(tensor)
    if type(tensor) is Tensor and not state:
        return func, args
    return _utils._rebuild_from_type_v2, (func, type(tensor), args, state)


def _sparse_tensor_args(tensor):
    """A sparse tensor pickles as a ``_rebuild_sparse_tensor`` call over its parts."""
    p = tensor._storage
    if tensor.is_sparse:
        data = (p.indices, p.values, Size(tensor._shape), p.coalesced)
    else:
        data = (p.compressed_indices, p.plain_indices, p.values, Size(tensor._shape))
    return _utils._rebuild_sparse_tensor, (tensor.layout, data)


# ===================================================================================
# the zip container (caffe2::serialize::PyTorchStreamWriter / Reader over miniz)
# ===================================================================================

_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")        # 30 bytes
_CENTRAL_HEADER = struct.Struct("<IHHHHHHIIIHHHHHII")  # 46 bytes
_END_RECORD = struct.Struct("<IHHHHIIH")              # 22 bytes
_ZIP64_END_RECORD = struct.Struct("<IQHHIIQQQQ")      # 56 bytes
_ZIP64_LOCATOR = struct.Struct("<IIQI")               # 20 bytes
_LOCAL_SIG, _CENTRAL_SIG, _DESCRIPTOR_SIG = 0x04034B50, 0x02014B50, 0x08074B50
_END_SIG, _ZIP64_END_SIG, _ZIP64_LOCATOR_SIG = 0x06054B50, 0x06064B50, 0x07064B50
_FLAG_DESCRIPTOR, _FLAG_UTF8 = 0x0008, 0x0800
_U16_MAX, _U32_MAX, _U64_MASK = 0xFFFF, 0xFFFFFFFF, (1 << 64) - 1
# Sizes and offsets at or above this go to zip64 extra fields, as miniz does
# (a module constant so tests can exercise the zip64 path with small files).
_ZIP64_THRESHOLD = _U32_MAX
_MINIZ_ERROR_SUFFIX = (
    ". This is an internal miniz error. If you are seeing this error, there is a high "
    "likelihood that your checkpoint file is corrupted. This can happen if the checkpoint was "
    "not saved properly, was transferred incorrectly, or the file was modified after saving.")


def _hash_combine(seed: int, value: int) -> int:
    """c10::hash_combine on 64-bit size_t."""
    return (seed ^ (value + 0x9E3779B9 + (seed << 6) + (seed >> 2))) & _U64_MASK


# -- the serialization id (caffe2's writeSerializationId) ------------------------------
# 20 digits hashing the record names, then 20 combining the records' CRCs.  The name
# half combines std::hash of each name in the iteration order of the std::unordered_set
# the writer collected them in; we reproduce libstdc++'s string hash (_Hash_bytes) and
# that set's layout, so our files are byte-identical to torch.save's.

_STD_HASH_MUL = 0xC6A4A7935BD1E995
_STD_HASH_SEED = 0xC70F6907
# Bucket counts of libstdc++'s prime rehash policy: 13 at the first insert, then the
# next listed prime >= twice the count whenever the set outgrows its buckets.
_BUCKET_COUNTS = (13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229,
                  172933, 351061, 712697)


def _std_hash(data: bytes) -> int:
    """libstdc++'s std::hash<std::string> (_Hash_bytes, 64-bit MurmurHash2 variant)."""
    def shift_mix(v):
        return v ^ (v >> 47)
    h = (_STD_HASH_SEED ^ (len(data) * _STD_HASH_MUL)) & _U64_MASK
    aligned = len(data) & ~7
    for i in range(0, aligned, 8):
        word = int.from_bytes(data[i:i + 8], "little")
        h ^= (shift_mix((word * _STD_HASH_MUL) & _U64_MASK) * _STD_HASH_MUL) & _U64_MASK
        h = (h * _STD_HASH_MUL) & _U64_MASK
    if len(data) & 7:
        h ^= int.from_bytes(data[aligned:], "little")
        h = (h * _STD_HASH_MUL) & _U64_MASK
    return shift_mix((shift_mix(h) * _STD_HASH_MUL) & _U64_MASK)


class _StdUnorderedSet:
    """Just enough of libstdc++'s unordered_set to know its iteration order.

    The elements form one singly linked list.  A new node goes first in its
    bucket's run, or first in the whole list when its bucket is empty; a rehash
    relinks the old list, front to back, by the same rule.  ``bucket_start[b]``
    is the node just before bucket b's run (``_HEAD`` = before the list).
    """

    _HEAD = -1

    def __init__(self):
        self.codes = []
        self.after = {self._HEAD: None}     # node -> next node; nodes are insertion indices
        self.n_buckets = _BUCKET_COUNTS[0]
        self.bucket_start = {}
        self.first_bucket = 0                # bucket of the list's first node

    def _link(self, node: int) -> None:
        bucket = self.codes[node] % self.n_buckets
        after = self.after
        if bucket in self.bucket_start:
            prev = self.bucket_start[bucket]
            after[node], after[prev] = after[prev], node
        else:
            after[node], after[self._HEAD] = after[self._HEAD], node
            if after[node] is not None:
                self.bucket_start[self.first_bucket] = node
            self.bucket_start[bucket], self.first_bucket = self._HEAD, bucket

    def insert(self, code: int) -> None:
        if len(self.codes) + 1 > self.n_buckets and self.n_buckets != _BUCKET_COUNTS[-1]:
            self.n_buckets = _BUCKET_COUNTS[_BUCKET_COUNTS.index(self.n_buckets) + 1]
            old = list(self)
            self.after[self._HEAD], self.bucket_start, self.first_bucket = None, {}, 0
            for node in old:
                self._link(node)
        self.codes.append(code)
        self._link(len(self.codes) - 1)

    def __iter__(self):
        node = self.after[self._HEAD]
        while node is not None:
            yield node
            node = self.after[node]


def _serialization_id(names: list, crc_hash: int) -> str:
    written = _StdUnorderedSet()
    for name in names:
        written.insert(_std_hash(name.encode()))
    name_hash = 0
    for node in written:
        name_hash = _hash_combine(name_hash, written.codes[node])
    return f"{name_hash:020d}{crc_hash:020d}"


def _zip64_extra(values) -> bytes:
    """The zip64 extended-information extra field holding ``values`` (8 bytes each)."""
    if not values:
        return b""
    return struct.pack(f"<HH{len(values)}Q", 0x0001, 8 * len(values), *values)


def _u32(value: int) -> int:
    """A 32-bit header field: the value, or 0xFFFFFFFF when it lives in zip64 extra."""
    return _U32_MAX if value >= _ZIP64_THRESHOLD else value


def _archive_name_for(file_name: str) -> str:
    """The folder torch.save names the records after: the file's basename up to
    its last dot (``model.v2.pt`` -> ``model.v2``)."""
    start = max(file_name.rfind("/"), file_name.rfind("\\")) + 1
    base = file_name[start:]
    dot = base.rfind(".")
    return base[:dot] if dot >= 0 else base


class _ZipWriter:
    """Records appended to a stream, laid out byte for byte as miniz lays out
    PyTorch's: stored, UTF-8 names, a data descriptor after each non-empty
    record, zero timestamps, data aligned to 64 bytes, zip64 end records."""

    def __init__(self, stream, archive_name: str):
        self._stream = stream
        self._prefix = archive_name + "/"
        self._offset = 0
        self._central = []
        self._written = {}          # record names, in write order
        self._crc_hash = 0          # hash_combine of every data descriptor's CRC, in order

    def _write(self, data) -> None:
        view = memoryview(data).cast("B")
        self._stream.write(view)
        self._offset += view.nbytes
        # torch spots data descriptors in its write callback by their signature
        # (so a record whose bytes start with one counts too)
        if view.nbytes >= 8 and view[:4] == struct.pack("<I", _DESCRIPTOR_SIG):
            self._crc_hash = _hash_combine(self._crc_hash, struct.unpack("<I", view[4:8])[0])

    def write_record(self, name: str, data) -> None:
        if name in self._written:
            raise RuntimeError(f"Tried to serialize file twice: {name}")
        self._written[name] = None
        full_name = (self._prefix + name).encode("utf-8")
        size = memoryview(data).nbytes
        header_offset = self._offset
        big_size, big_offset = size >= _ZIP64_THRESHOLD, header_offset >= _ZIP64_THRESHOLD
        # miniz writes the local zip64 field before the data, with a compressed size of 0
        local_zip64 = _zip64_extra(([size, 0] if big_size else []) +
                                   ([header_offset] if big_offset else []))
        data_start = header_offset + _LOCAL_HEADER.size + len(full_name) + len(local_zip64) + 4
        padding = -data_start % _STORAGE_ALIGNMENT
        extra = local_zip64 + b"FB" + struct.pack("<H", padding) + b"Z" * padding
        flags = _FLAG_UTF8 | (_FLAG_DESCRIPTOR if size else 0)
        crc = zlib.crc32(data)
        self._write(_LOCAL_HEADER.pack(_LOCAL_SIG, 0, flags, 0, 0, 0, 0, 0, 0,
                                       len(full_name), len(extra)))
        self._write(full_name)
        self._write(extra)
        if size:
            self._write(data)
            if local_zip64:
                self._write(struct.pack("<IIQQ", _DESCRIPTOR_SIG, crc, size, size))
            else:
                self._write(struct.pack("<IIII", _DESCRIPTOR_SIG, crc, size, size))
        central_zip64 = _zip64_extra(([size, size] if big_size else []) +
                                     ([header_offset] if big_offset else []))
        self._central.append(
            _CENTRAL_HEADER.pack(_CENTRAL_SIG, 0, 0, flags, 0, 0, 0, crc, _u32(size), _u32(size),
                                 len(full_name), len(central_zip64), 0, 0, 0, 0,
                                 _u32(header_offset)) + full_name + central_zip64)

    def finish(self) -> None:
        """The records torch adds last (version, serialization id), then the
        central directory and the zip64 and plain end records."""
        if "version" not in self._written and ".data/version" not in self._written:
            self.write_record("version", f"{_FILE_FORMAT_VERSION}\n".encode())
        if "byteorder" not in self._written:
            self.write_record("byteorder", sys.byteorder.encode())
        self.write_record(".data/serialization_id",
                          _serialization_id(list(self._written), self._crc_hash).encode())
        central_offset = self._offset
        for entry in self._central:
            self._write(entry)
        central_size = self._offset - central_offset
        count = len(self._central)
        zip64_end_offset = self._offset
        self._write(_ZIP64_END_RECORD.pack(_ZIP64_END_SIG, _ZIP64_END_RECORD.size - 12, 0x031E,
                                           0x002D, 0, 0, count, count, central_size,
                                           central_offset))
        self._write(_ZIP64_LOCATOR.pack(_ZIP64_LOCATOR_SIG, 0, zip64_end_offset, 1))
        self._write(_END_RECORD.pack(_END_SIG, 0, 0, min(count, _U16_MAX), min(count, _U16_MAX),
                                     min(central_size, _U32_MAX), min(central_offset, _U32_MAX),
                                     0))


class _Entry:
    """One central-directory entry."""

    __slots__ = ("flags", "method", "crc", "compressed_size", "size", "header_offset")

    def __init__(self, flags, method, crc, compressed_size, size, header_offset):
        self.flags, self.method, self.crc = flags, method, crc
        self.compressed_size, self.size, self.header_offset = compressed_size, size, header_offset


class _ZipReader:
    """Reads PyTorch's archives (and any plain zip) from a seekable binary file,
    with PyTorchStreamReader's checks and messages.  Unlike PyTorch it verifies
    each record's CRC-32 (when one was written), so corrupted bytes are refused
    instead of loaded."""

    def __init__(self, file):
        self._file = file
        self._base = file.tell()
        file.seek(0, io.SEEK_END)
        self._size = file.tell() - self._base
        if self._size > 8 and self._read(0, 8) == b"PYTORCH1":
            raise RuntimeError("File is an unsupported archive format from the preview release.")
        self._entries = self._read_central_directory()
        if not self._entries:
            raise RuntimeError("archive does not contain any files")
        first = next(iter(self._entries))
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self._prefix = first[: first.index("/") + 1]
        self._check_version()

    # -- structure ---------------------------------------------------------------

    @staticmethod
    def _fail(what: str, why: str):
        raise RuntimeError(f"PytorchStreamReader failed {what}: {why}{_MINIZ_ERROR_SUFFIX}")

    def _read(self, offset: int, n: int) -> bytes:
        """Up to ``n`` bytes at ``offset`` (fewer past the end: callers check)."""
        if offset > self._size:
            return b""
        self._file.seek(self._base + offset)
        return self._file.read(min(n, self._size - offset))

    def _read_central_directory(self) -> dict:
        """``{name: _Entry}`` from the end records and the central directory."""
        corrupted = "invalid header or archive is corrupted"
        if self._size < _END_RECORD.size:
            self._fail("reading zip archive", "not a ZIP archive")
        tail_start = max(0, self._size - _END_RECORD.size - _U16_MAX)
        tail = self._read(tail_start, self._size - tail_start)
        at = tail.rfind(struct.pack("<I", _END_SIG), 0, len(tail) - _END_RECORD.size + 4)
        if at < 0:
            self._fail("reading zip archive", "failed finding central directory")
        end_offset = tail_start + at
        (_, disk, central_disk, disk_count, count, central_size, central_offset,
         _) = _END_RECORD.unpack_from(tail, at)
        if disk or central_disk or disk_count != count:
            self._fail("reading zip archive", "unsupported multidisk archive")
        central_end = end_offset
        locator_offset = end_offset - _ZIP64_LOCATOR.size
        if locator_offset >= 0:
            locator = self._read(locator_offset, _ZIP64_LOCATOR.size)
            if struct.unpack_from("<I", locator)[0] == _ZIP64_LOCATOR_SIG:
                _, _, zip64_offset, _ = _ZIP64_LOCATOR.unpack(locator)
                record = self._read(zip64_offset, _ZIP64_END_RECORD.size)
                if (zip64_offset + _ZIP64_END_RECORD.size > locator_offset or
                        struct.unpack_from("<I", record)[0] != _ZIP64_END_SIG):
                    self._fail("reading zip archive", corrupted)
                (_, _, _, _, disk, central_disk, disk_count, count, central_size,
                 central_offset) = _ZIP64_END_RECORD.unpack(record)
                if disk or central_disk or disk_count != count:
                    self._fail("reading zip archive", "unsupported multidisk archive")
                central_end = zip64_offset
        if central_offset + central_size > central_end:
            self._fail("reading zip archive", corrupted)
        self._data_end = central_offset
        central = self._read(central_offset, central_size)
        entries = {}
        pos = 0
        for _ in range(count):
            if pos + _CENTRAL_HEADER.size > len(central):
                self._fail("reading zip archive", corrupted)
            (sig, _, _, flags, method, _, _, crc, compressed_size, size, name_len, extra_len,
             comment_len, _, _, _, header_offset) = _CENTRAL_HEADER.unpack_from(central, pos)
            name_start = pos + _CENTRAL_HEADER.size
            extra_start = name_start + name_len
            pos = extra_start + extra_len + comment_len
            if sig != _CENTRAL_SIG or pos > len(central):
                self._fail("reading zip archive", corrupted)
            big = [f for f in (size, compressed_size, header_offset) if f == _U32_MAX]
            if big:
                values = self._zip64_values(central[extra_start: extra_start + extra_len],
                                            len(big))
                fields = [size, compressed_size, header_offset]
                for i, f in enumerate(fields):
                    if f == _U32_MAX:
                        fields[i] = values.pop(0)
                size, compressed_size, header_offset = fields
            # a record lies before the central directory; deflate expands at most ~1032x
            if header_offset + _LOCAL_HEADER.size + compressed_size > self._data_end or \
                    (method == 0 and size != compressed_size) or size > 1032 * compressed_size + 64:
                self._fail("reading zip archive", corrupted)
            name = central[name_start:extra_start].decode("utf-8", "replace")
            entries[name] = _Entry(flags, method, crc, compressed_size, size, header_offset)
        if pos != len(central):
            self._fail("reading zip archive", corrupted)
        return entries

    def _zip64_values(self, extra: bytes, wanted: int) -> list:
        """The first ``wanted`` 64-bit values of the zip64 field in ``extra``."""
        pos = 0
        while pos + 4 <= len(extra):
            field_id, field_size = struct.unpack_from("<HH", extra, pos)
            if field_id == 0x0001 and 8 * wanted <= field_size <= len(extra) - pos - 4:
                return list(struct.unpack_from(f"<{wanted}Q", extra, pos + 4))
            pos += 4 + field_size
        self._fail("reading zip archive", "invalid header or archive is corrupted")

    def _check_version(self) -> None:
        name = ".data/version" if self.has_record(".data/version") else "version"
        if not self.has_record(name):
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.')
        text = self.get_record(name).decode("utf-8", "replace")
        try:
            version = int(text)
        except ValueError:
            raise RuntimeError(f"Couldn't parse the version {text} as Long Long.") from None
        if version < _MIN_FILE_FORMAT_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {version}, but the minimum "
                f"supported version for reading is {_MIN_FILE_FORMAT_VERSION}. Your PyTorch "
                "script module file is too old. Please regenerate it with latest version of "
                "PyTorch to mitigate this issue.")

    # -- records -----------------------------------------------------------------

    def has_record(self, name: str) -> bool:
        return self._prefix + name in self._entries

    def _locate(self, name: str):
        """``(entry, offset of its data)``, the local header checked."""
        entry = self._entries.get(self._prefix + name)
        if entry is None:
            self._fail(f"locating file {name}", "file not found")
        if entry.flags & 0x41:
            self._fail(f"retrieving file meta-data for {name}", "unsupported encryption")
        if entry.method not in (0, 8):
            self._fail(f"retrieving file meta-data for {name}", "unsupported method")
        header = self._read(entry.header_offset, _LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or struct.unpack_from("<I", header)[0] != _LOCAL_SIG:
            self._fail(f"reading file {name}", "invalid header or archive is corrupted")
        name_len, extra_len = struct.unpack_from("<HH", header, 26)
        data_offset = entry.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        if data_offset + entry.compressed_size > self._data_end:
            self._fail(f"reading file {name}", "invalid header or archive is corrupted")
        return entry, data_offset

    def record_size(self, name: str) -> int:
        return self._locate(name)[0].size

    def stored_record_offset(self, name: str):
        """Where an uncompressed record's bytes start (None if it is compressed)."""
        entry, data_offset = self._locate(name)
        return data_offset if entry.method == 0 else None

    def get_record(self, name: str) -> bytes:
        array = np.empty(self.record_size(name), np.uint8)
        self.read_record_into(name, array)
        return array.tobytes()

    def read_record_into(self, name: str, array: np.ndarray) -> None:
        """Fill ``array`` (uint8, the record's size) with the record, CRC-checked."""
        entry, data_offset = self._locate(name)
        out = memoryview(array)
        if entry.method == 0:
            self._file.seek(self._base + data_offset)
            got = self._readinto(out)
        else:
            raw = self._read(data_offset, entry.compressed_size)
            try:
                plain = zlib.decompressobj(-15).decompress(raw)
            except zlib.error:
                self._fail(f"reading file {name}", "decompression failed or archive is corrupted")
            got = min(len(plain), len(out))
            out[:got] = plain[:got]
            if len(plain) != entry.size:
                self._fail(f"reading file {name}", "unexpected decompressed size")
        if got != entry.size:
            self._fail(f"reading file {name}", "file read failed")
        # torch writes a zero CRC when CRC computation is switched off
        if entry.crc and zlib.crc32(out) != entry.crc:
            self._fail(f"reading file {name}", "CRC-32 check failed")

    def _readinto(self, out: memoryview) -> int:
        readinto = getattr(self._file, "readinto", None)
        if readinto is not None:
            return readinto(out) or 0
        data = self._file.read(len(out))
        out[: len(data)] = data
        return len(data)


def _is_zipfile(f) -> bool:
    """Starts with a local file header (stricter than zipfile.is_zipfile)."""
    start = f.tell()
    magic = f.read(4)
    f.seek(start)
    return magic == b"PK\x03\x04"


# ===================================================================================
# save
# ===================================================================================

def _is_path(f) -> bool:
    return isinstance(f, (str, os.PathLike))


def location_tag(storage) -> str:
    """The location a storage is saved with: ``'cpu'``, ``'meta'``, ``'cuda:0'`` ..."""
    device = storage.device
    if device.type in ("cpu", "meta") or device.index is None:
        return device.type
    return f"{device.type}:{device.index}"


def _pickle_with_storages(obj, pickle_module, protocol, legacy=False):
    """``(data.pkl bytes, {key: (storage, dtype)})``: the pickle with storages replaced
    by persistent ids, and the storages those ids name (with the dtype they were
    first saved as), in first-seen order.  The zip format numbers the keys; the
    legacy format keys storages by address and adds a (never used) view field."""
    storages: dict = {}
    keys: dict = {}
    dtypes: dict = {}

    def persistent_id(item):
        if isinstance(item, TypedStorage):
            storage, dtype = item._untyped_storage, item.dtype
            storage_type, numel = LEGACY_STORAGE_CLASSES[dtype], item._size()
        elif type(item) is UntypedStorage:
            storage, dtype = item, dt.uint8
            storage_type, numel = UntypedStorage, item.nbytes()
        else:
            return None
        if storage.device.type != "meta" and storage.data_ptr() != 0:
            if dtypes.setdefault(storage.data_ptr(), dtype) is not dtype:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                                   "data as different types")
        key = keys.setdefault(id(storage), str(id(storage) if legacy else len(keys)))
        storages.setdefault(key, (storage, dtype))
        saved_id = ("storage", storage_type, key, location_tag(storage), numel)
        return saved_id + (None,) if legacy else saved_id

    if pickle_module is pickle:
        pickler_class = _TorchNamesPickler
    elif issubclass(pickle_module.Pickler, pickle._Pickler):   # a pure-Python pickler (dill)
        pickler_class = type("PyTorchPickler", (_TorchNamesPickler, pickle_module.Pickler), {})
    else:                                                     # C picklers cannot rename globals
        pickler_class = pickle_module.Pickler
    buffer = io.BytesIO()
    pickler = pickler_class(buffer, protocol=protocol)
    pickler.persistent_id = persistent_id
    pickler.dump(obj)
    return buffer.getvalue(), storages


def _storage_bytes(storage):
    if storage._data is None:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    return storage._bytes()


class _WriterTarget:
    """Opens what ``save`` writes to (a path or a buffer) around a _ZipWriter."""

    def __init__(self, f):
        self._f = f
        self._file = None

    def __enter__(self) -> _ZipWriter:
        f = self._f
        if _is_path(f):
            name = os.fspath(f)
            archive = _archive_name_for(name) if name.isascii() else "archive"
            if not archive:
                raise RuntimeError(f"invalid file name: {name}")
            parent = os.path.dirname(name)
            if parent and not os.path.isdir(parent):
                raise RuntimeError(f"Parent directory {parent} does not exist.")
            try:
                self._file = stream = open(name, "wb")
            except OSError as e:     # (a directory, no permission ...): PyTorch's writer's words
                raise RuntimeError("[enforce fail at inline_container.cc:747] . open file failed "
                                   f"with strerror: {e.strerror}") from None
        else:
            if not callable(getattr(f, "write", None)):
                msg = f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'write'"
                raise (AttributeError if not hasattr(f, "write") else TypeError)(msg)
            stream, archive = f, "archive"
        self._writer = _ZipWriter(stream, archive)
        return self._writer

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self._writer.finish()
        finally:
            if self._file is not None:
                self._file.close()
            elif hasattr(self._f, "flush"):
                self._f.flush()


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False) -> None:
    """save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True)

    Saves ``obj`` to ``f`` (a path, ``os.PathLike`` or a binary file-like object
    with ``write``) as a PyTorch checkpoint that ``torch.load`` reads.  The
    object is pickled before the file is opened, so an object that cannot be
    pickled leaves an existing file untouched.
    """
    if not _is_path(f) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    if not _use_new_zipfile_serialization:
        return _legacy_save(obj, f, pickle_module, pickle_protocol)
    data_pkl, storages = _pickle_with_storages(obj, pickle_module, pickle_protocol)
    with _WriterTarget(f) as writer:
        writer.write_record("data.pkl", data_pkl)
        writer.write_record(".format_version", b"1")
        writer.write_record(".storage_alignment", str(_STORAGE_ALIGNMENT).encode())
        if not _disable_byteorder_record:
            writer.write_record("byteorder", sys.byteorder.encode())
        for key, (storage, _) in storages.items():
            writer.write_record(f"data/{key}", _storage_bytes(storage))


# ===================================================================================
# the legacy format (torch.save(..., _use_new_zipfile_serialization=False))
# ===================================================================================
#
#   pickle(MAGIC_NUMBER) pickle(PROTOCOL_VERSION) pickle(sys_info)
#   pickle(obj, storages as persistent ids) pickle(sorted storage keys)
#   then per key: int64 element count, the storage's bytes

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_LEGACY_SYS_INFO = {"protocol_version": PROTOCOL_VERSION,
                    "little_endian": sys.byteorder == "little",
                    "type_sizes": {"short": 2, "int": 4, "long": 4}}   # PyTorch's constants


def _legacy_save(obj, f, pickle_module, protocol) -> None:
    """PyTorch's ``_legacy_save``: one stream of pickles followed by raw storages."""
    data_pkl, storages = _pickle_with_storages(obj, pickle_module, protocol, legacy=True)
    out = io.BytesIO()
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, _LEGACY_SYS_INFO):
        pickle_module.dump(header, out, protocol=protocol)
    out.write(data_pkl)
    keys = sorted(storages)
    pickle_module.dump(keys, out, protocol=protocol)
    for key in keys:
        storage, dtype = storages[key]
        data = _storage_bytes(storage)
        out.write(struct.pack("<q", len(data) // dtype.itemsize))
        out.write(data)
    if _is_path(f):
        with open(f, "wb") as stream:
            stream.write(out.getvalue())
    else:
        f.write(out.getvalue())
        if hasattr(f, "flush"):
            f.flush()


def _read_exactly(f, n: int) -> bytes:
    data = f.read(n)
    if len(data) < n:
        raise RuntimeError(f"unexpected EOF, expected {n - len(data)} more bytes. The file might "
                           "be corrupted.")
    return data


def _legacy_load(f, map_location, unpickler_class, **pickle_load_args):
    """PyTorch's ``_legacy_load`` (its pre-1.0 tar variant aside): check the header
    pickles, unpickle the object over empty storages, then fill them in key order."""
    def load_one():
        return unpickler_class(f, **pickle_load_args).load()

    if load_one() != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = load_one()
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    load_one()                                   # sys_info: nothing in it is checked
    restore_location = _get_restore_location(map_location)
    storages: dict = {}

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        typename = _decode_ascii(saved_id[0])
        if typename == "module":                 # a pickled nn.Module class and its source
            return saved_id[1]
        if typename != "storage":
            raise RuntimeError(f"Unknown saved id type: {saved_id[0]}")
        storage_type, key, location, numel, view = saved_id[1:]
        if view is not None:
            raise RuntimeError("glasstorch.load does not read storage views of the legacy "
                               "format (PyTorch has not written them since 0.4)")
        dtype = dt.uint8 if storage_type is UntypedStorage else storage_type.dtype
        if key not in storages:
            storage = restore_location(UntypedStorage(numel * dtype.itemsize),
                                       _decode_ascii(location))
            storages[key] = TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)
        return storages[key]

    unpickler = unpickler_class(f, **pickle_load_args)
    unpickler.persistent_load = persistent_load
    result = unpickler.load()
    for key in load_one():
        typed = storages[key]
        expected = typed._untyped_storage.nbytes()
        nbytes = struct.unpack("<q", _read_exactly(f, 8))[0] * typed.dtype.itemsize
        if nbytes != expected:
            raise RuntimeError(f"storage has wrong byte size: expected {expected} got {nbytes}")
        typed._untyped_storage._bytes()[:] = np.frombuffer(_read_exactly(f, nbytes), np.uint8)
    return result


# ===================================================================================
# locations (map_location)
# ===================================================================================

def _validate_cuda_device(location: str) -> None:
    from . import cuda
    if not cuda.is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
            "False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")
    index = Device(location).index or 0
    if index >= cuda.device_count():
        raise RuntimeError(
            f"Attempting to deserialize object on CUDA device {index} but "
            f"torch.cuda.device_count() is {cuda.device_count()}. Please use torch.load with "
            "map_location to map your storages to an existing device.")


def default_restore_location(storage, location: str):
    """Put a freshly read (CPU) storage where ``location`` says."""
    if location == "cpu":
        return storage
    if location == "meta":
        return UntypedStorage(storage.nbytes(), device="meta")
    if location == "cuda" or re.match(r"cuda(:|[0-9]+)", location):
        _validate_cuda_device(location)
        raise RuntimeError("glasstorch has no CUDA storage; load with map_location='cpu'")
    raise RuntimeError(f"don't know how to restore data location of "
                       f"torch.storage.{type(storage).__name__} "
                       f"(tagged with {location})")


def _get_restore_location(map_location):
    """``map_location`` (None, str, device, dict or callable) as one function
    ``(storage, saved location) -> storage``."""
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        return lambda storage, location: default_restore_location(
            storage, map_location.get(location, location))
    if isinstance(map_location, (str, bytes, Device)):
        target = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        return lambda storage, location: default_restore_location(storage, target)

    def restore_location(storage, location):
        result = map_location(storage, location)
        return default_restore_location(storage, location) if result is None else result
    return restore_location


def _is_meta_location(map_location) -> bool:
    if isinstance(map_location, str):
        return map_location == "meta"
    return isinstance(map_location, Device) and map_location.type == "meta"


# ===================================================================================
# weights_only: the restricted unpickler
# ===================================================================================

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_marked_safe_globals: set = set()


def add_safe_globals(safe_globals) -> None:
    """Mark functions/classes (or ``(obj, "module.qualname")`` pairs) as safe for
    ``weights_only`` loading."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals | set(safe_globals)


def get_safe_globals() -> list:
    """The user-added globals that are safe for ``weights_only`` load."""
    return list(_marked_safe_globals)


def clear_safe_globals() -> None:
    """Forget every global ``add_safe_globals`` added."""
    global _marked_safe_globals
    _marked_safe_globals = set()


class safe_globals:
    """Context manager: ``add_safe_globals`` for the duration of a ``with`` block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, exc_type, exc, tb):
        global _marked_safe_globals
        _marked_safe_globals = _marked_safe_globals - set(self.safe_globals)


def _user_allowed_globals() -> dict:
    allowed = {}
    for item in _marked_safe_globals:
        if isinstance(item, tuple):
            if len(item) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(item)}")
            if type(item[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(item[1])}")
            allowed[item[1]] = item[0]
        else:
            allowed[_torch_path(item)] = item
    return allowed


def _default_allowed_globals() -> dict:
    """What ``weights_only`` loads may name, keyed as checkpoints name them."""
    from collections import Counter, OrderedDict
    from .nn.parameter import Parameter
    allowed = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter, "torch.serialization._get_layout": _get_layout,
        "torch.Size": Size, "torch.Tensor": Tensor, "torch.device": Device,
        "_codecs.encode": _codecs_encode, "builtins.bytearray": bytearray, "builtins.set": set,
        "builtins.complex": complex,
        "torch.storage.TypedStorage": TypedStorage, "torch.storage.UntypedStorage": UntypedStorage,
        "torch._tensor._rebuild_from_type_v2": _utils._rebuild_from_type_v2,
    }
    allowed.update({repr(d): d for d in dt.ALL_DTYPES})
    for cls in LEGACY_STORAGE_CLASSES.values():
        allowed[f"torch.{cls.__name__}"] = allowed[f"torch.cuda.{cls.__name__}"] = cls
    for fn in (_utils._rebuild_tensor, _utils._rebuild_tensor_v2, _utils._rebuild_tensor_v3,
               _utils._rebuild_parameter,
               _utils._rebuild_parameter_with_state, _utils._rebuild_meta_tensor_no_storage,
               _utils._rebuild_sparse_tensor):
        allowed[f"torch._utils.{fn.__name__}"] = fn
    return allowed


class _WeightsOnlyUnpickler:
    """``torch._weights_only_unpickler.Unpickler``: interprets the pickle opcodes
    itself, only those protocol-2 state dicts use.  Globals come from the
    allowlist (never imported by name); only allowlisted callables are called,
    only allowlisted classes built, and containers only filled in place."""

    def __init__(self, file, *, encoding: str = "bytes"):
        self.read = file.read
        self.readline = file.readline
        self.encoding = encoding
        self.memo: dict = {}
        self.proto = -1
        self._allowed = _default_allowed_globals()
        self._user_allowed = _user_allowed_globals()
        self._allowed_ids = {id(v) for v in self._allowed.values()}
        self._allowed_ids.update(id(v) for v in self._user_allowed.values())

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("unsupported persistent id encountered")

    def load(self):
        self.metastack, self.stack = [], []
        ops = _WEIGHTS_ONLY_OPS
        while True:
            key = self.read(1)
            if not key:
                raise EOFError
            if key == pickle.STOP:
                return self.stack.pop()
            op = ops.get(key[0])
            if op is None:
                raise pickle.UnpicklingError(f"Unsupported operand {key[0]}")
            op(self)

    def _pop_mark(self) -> list:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    # -- the risky opcodes: globals, calls, object construction ------------------

    def _global(self):
        module = self.readline()[:-1].decode("utf-8")
        name = self.readline()[:-1].decode("utf-8")
        if (module, name) in NAME_MAPPING:
            module, name = NAME_MAPPING[module, name]
        elif module in IMPORT_MAPPING:
            module = IMPORT_MAPPING[module]
        full_path = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose "
                                         f"module {module} is blocked.")
        if full_path in self._allowed:
            self.stack.append(self._allowed[full_path])
        elif full_path in self._user_allowed:
            self.stack.append(self._user_allowed[full_path])
        else:
            if full_path.startswith("builtins"):   # torch's spelling: builtins.print -> print
                rest = full_path[len("builtins"):]
                full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
            raise pickle.UnpicklingError(
                f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
                f"Please use `torch.serialization.add_safe_globals([{full_path}])` or the "
                f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist "
                "this global if you trust this class/function.")

    def _newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        if cls is self._allowed["torch.nn.parameter.Parameter"]:
            self.stack.append(cls(*args))
        elif id(cls) in self._allowed_ids:
            self.stack.append(cls.__new__(cls, *args))
        else:
            raise pickle.UnpicklingError("Can only create new object for nn.Parameter or classes "
                                         f"allowlisted via `add_safe_globals` but got {cls}")

    def _reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if id(func) not in self._allowed_ids:
            message = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                message += f" which belongs to {func.__self__}"
            raise pickle.UnpicklingError(message)
        self.stack[-1] = func(*args)

    def _build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is collections.OrderedDict:
            inst.__dict__.update(state)
        elif id(type(inst)) in self._allowed_ids:
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                _utils._set_obj_state(inst, state)
        else:
            raise pickle.UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)}")

    def _persid(self):
        pid = self.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(f"persistent_load id must be tuple or int, but got "
                                         f"{type(pid)}")
        if type(pid) is tuple and pid and _decode_ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError("Only persistent_load of storage is allowed, but got "
                                         f"{type(pid[0])}")
        self.stack.append(self.persistent_load(pid))

    # -- containers: filled in place, only the plain types ------------------------

    def _append(self):
        item = self.stack.pop()
        target = self.stack[-1]
        if type(target) is not list:
            raise pickle.UnpicklingError(f"Can only append to lists, but got {type(target)}")
        target.append(item)

    def _appends(self):
        items = self._pop_mark()
        target = self.stack[-1]
        if type(target) is not list:
            raise pickle.UnpicklingError(f"Can only extend lists, but got {type(target)}")
        target.extend(items)

    def _check_setitem_target(self, opcode: str):
        if type(self.stack[-1]) not in (dict, collections.OrderedDict, collections.Counter):
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but "
                f"got {type(self.stack[-1])}")

    def _setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._check_setitem_target("SETITEM")
        self.stack[-1][key] = value

    def _setitems(self):
        items = self._pop_mark()
        self._check_setitem_target("SETITEMS")
        target = self.stack[-1]
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _mark(self):
        self.metastack.append(self.stack)
        self.stack = []

    def _tuple(self):
        items = tuple(self._pop_mark())
        self.stack.append(items)

    # -- values ----------------------------------------------------------------------

    def _binunicode(self):
        (length,) = struct.unpack("<I", self.read(4))
        if length > sys.maxsize:
            raise pickle.UnpicklingError("String is too long")
        self.stack.append(str(self.read(length), "utf-8", "surrogatepass"))

    def _short_binstring(self):
        data = self.read(self.read(1)[0])
        if self.encoding != "bytes":
            data = data.decode(self.encoding, "strict")
        self.stack.append(data)

    def _long1(self):
        self.stack.append(pickle.decode_long(self.read(self.read(1)[0])))

    def _proto(self):
        self.proto = self.read(1)[0]
        if self.proto != 2:
            warnings.warn(
                f"Detected pickle protocol {self.proto} in the checkpoint, which was not the "
                "default pickle protocol used by `torch.load` (2). The weights_only Unpickler "
                "might not support all instructions implemented by this protocol, please file an "
                "issue for adding support if you encounter this.", stacklevel=2)


def _push(value_of):
    """An opcode that pushes ``value_of(unpickler)``."""
    def op(self):
        self.stack.append(value_of(self))
    return op


def _tuple_of(n: int):
    """TUPLE1/2/3: the top ``n`` items become one tuple."""
    def op(self):
        items = tuple(self.stack[len(self.stack) - n:])
        del self.stack[len(self.stack) - n:]
        self.stack.append(items)
    return op


def _memo_get(index_format: str):
    def op(self):
        (index,) = struct.unpack(index_format, self.read(struct.calcsize(index_format)))
        self.stack.append(self.memo[index])
    return op


def _memo_put(index_format: str):
    def op(self):
        (index,) = struct.unpack(index_format, self.read(struct.calcsize(index_format)))
        self.memo[index] = self.stack[-1]
    return op


_W = _WeightsOnlyUnpickler
_WEIGHTS_ONLY_OPS = {
    pickle.GLOBAL[0]: _W._global, pickle.NEWOBJ[0]: _W._newobj, pickle.REDUCE[0]: _W._reduce,
    pickle.BUILD[0]: _W._build, pickle.BINPERSID[0]: _W._persid,
    pickle.APPEND[0]: _W._append, pickle.APPENDS[0]: _W._appends,
    pickle.SETITEM[0]: _W._setitem, pickle.SETITEMS[0]: _W._setitems,
    pickle.MARK[0]: _W._mark, pickle.TUPLE[0]: _W._tuple,
    pickle.TUPLE1[0]: _tuple_of(1), pickle.TUPLE2[0]: _tuple_of(2), pickle.TUPLE3[0]: _tuple_of(3),
    pickle.NONE[0]: _push(lambda self: None),
    pickle.NEWFALSE[0]: _push(lambda self: False),
    pickle.NEWTRUE[0]: _push(lambda self: True),
    pickle.EMPTY_TUPLE[0]: _push(lambda self: ()),
    pickle.EMPTY_LIST[0]: _push(lambda self: []),
    pickle.EMPTY_DICT[0]: _push(lambda self: {}),
    pickle.EMPTY_SET[0]: _push(lambda self: set()),
    pickle.BININT[0]: _push(lambda self: struct.unpack("<i", self.read(4))[0]),
    pickle.BININT1[0]: _push(lambda self: self.read(1)[0]),
    pickle.BININT2[0]: _push(lambda self: struct.unpack("<H", self.read(2))[0]),
    pickle.BINFLOAT[0]: _push(lambda self: struct.unpack(">d", self.read(8))[0]),
    pickle.BINUNICODE[0]: _W._binunicode, pickle.SHORT_BINSTRING[0]: _W._short_binstring,
    pickle.LONG1[0]: _W._long1,
    pickle.BINGET[0]: _memo_get("<B"), pickle.LONG_BINGET[0]: _memo_get("<I"),
    pickle.BINPUT[0]: _memo_put("<B"), pickle.LONG_BINPUT[0]: _memo_put("<I"),
    pickle.PROTO[0]: _W._proto,
}
del _W


def _decode_ascii(value):
    return value.decode("ascii") if isinstance(value, bytes) else value


def _weights_only_message(message: str) -> str:
    """torch's wrapping of a weights-only refusal: what happened and the two ways out."""
    docs = ("\n\nCheck the documentation of torch.load to learn more about types accepted by "
            "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the checkpoint"
                f"\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following error "
                "message.\n\tWeightsUnpickler error: " + message + docs)
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        text += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return text + "\n\n" + message + docs


def get_unsafe_globals_in_checkpoint(f) -> list:
    """The ``module.name`` globals a checkpoint's pickle names that ``weights_only``
    would refuse (found by reading the opcodes, without unpickling)."""
    safe = set(_default_allowed_globals()) | set(_user_allowed_globals())
    with _open_file_like(f) as opened:
        if not _is_zipfile(opened):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        reader = _ZipReader(opened)
        if reader.has_record("constants.pkl"):
            raise ValueError("Expected input to be a checkpoint returned by torch.save but got a "
                             "torchscript checkpoint")
        found = set()
        for opcode, arg, _ in pickletools.genops(reader.get_record("data.pkl")):
            if opcode.name == "GLOBAL":
                module, name = arg.split(" ", 1)
                if (module, name) in NAME_MAPPING:
                    module, name = NAME_MAPPING[module, name]
                elif module in IMPORT_MAPPING:
                    module = IMPORT_MAPPING[module]
                found.add(f"{module}.{name}")
    return list(found - safe)


# ===================================================================================
# load
# ===================================================================================

class _open_file_like:
    """A binary file to read: opened (and closed) here for a path, else the given
    object, which must be seekable."""

    def __init__(self, f):
        self._f = f
        self._opened = None

    def __enter__(self):
        if _is_path(self._f):
            self._opened = open(self._f, "rb")
            return self._opened
        try:
            self._f.seek(self._f.tell())
        except (io.UnsupportedOperation, AttributeError) as e:
            if "seek" in str(e) or "tell" in str(e):
                raise type(e)(str(e) + ". You can only torch.load from a file that is seekable. "
                              "Please pre-load the data into a buffer like io.BytesIO and try to "
                              "load from it instead.") from None
            raise
        return self._f

    def __exit__(self, exc_type, exc, tb):
        if self._opened is not None:
            self._opened.close()


def _unpickler_class(pickle_module):
    """``pickle_module.Unpickler`` reading ``torch.*`` globals as glasstorch's."""
    class UnpicklerWrapper(pickle_module.Unpickler):
        def find_class(self, module, name):
            if module == "torch" or module.startswith("torch."):
                return _glasstorch_global(module, name)
            return super().find_class(module, name)
    return UnpicklerWrapper


def _load(reader: _ZipReader, map_location, unpickler_class, mapped=None, **pickle_load_args):
    """Unpickle ``data.pkl``, reading each storage record the first time it is named."""
    restore_location = _get_restore_location(map_location)
    to_meta = _is_meta_location(map_location)
    byteorder = reader.get_record("byteorder") if reader.has_record("byteorder") else b"little"
    if byteorder not in (b"little", b"big"):
        raise ValueError("Unknown endianness type: " + byteorder.decode("utf-8", "replace"))
    loaded: dict = {}

    def read_storage(key: str, nbytes: int, dtype) -> UntypedStorage:
        name = f"data/{key}"
        if to_meta:
            return UntypedStorage(nbytes, device="meta")
        record_size = reader.record_size(name)
        if record_size != nbytes:
            raise RuntimeError(f"record size ({record_size} bytes) does not match expected size "
                               f"({nbytes} bytes = {nbytes} elements * 1 bytes/element) for "
                               "dtype Byte")
        offset = reader.stored_record_offset(name) if mapped is not None else None
        if offset is not None:    # mmap: a copy-on-write view of the file, read lazily
            storage = UntypedStorage._wrap(mapped[offset: offset + nbytes], Device("cpu"), None)
        else:
            array = cpu_allocator.allocate(nbytes, np.uint8)
            reader.read_record_into(name, array)
            storage = UntypedStorage._wrap(array, Device("cpu"), cpu_allocator)
        if byteorder.decode() != sys.byteorder and dtype.itemsize > 1:
            storage._bytes().view(dtype.numpy).byteswap(inplace=True)
        return storage

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        typename = _decode_ascii(saved_id[0])
        if typename != "storage":
            raise AssertionError("Unknown typename for persistent_load, expected 'storage' but "
                                 f"got '{typename}'")
        storage_type, key, location, numel = saved_id[1:]
        dtype = dt.uint8 if storage_type is UntypedStorage else storage_type.dtype
        if key not in loaded:
            storage = read_storage(key, numel * dtype.itemsize, dtype)
            if not to_meta:
                storage = restore_location(storage, _decode_ascii(location))
            loaded[key] = TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)
        return loaded[key]

    unpickler = unpickler_class(io.BytesIO(reader.get_record("data.pkl")), **pickle_load_args)
    unpickler.persistent_load = persistent_load
    return unpickler.load()


def _weights_only_default(weights_only, pickle_module) -> bool:
    """None means True unless a pickle module was given; the TORCH_FORCE_* variables
    override (the NO variant only when the caller did not choose)."""
    forced_on, forced_off = (os.getenv(var, "0").lower() in ("1", "y", "yes", "true")
                             for var in ("TORCH_FORCE_WEIGHTS_ONLY_LOAD",
                                         "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"))
    if forced_on and forced_off:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if forced_on:
        return True
    if weights_only is None:
        if forced_off:
            warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                          "the`weights_only` argument was not explicitly passed to `torch.load`, "
                          "forcing weights_only=False.", UserWarning, stacklevel=3)
            return False
        return pickle_module is None
    return bool(weights_only)


def _load_safetensors(path: str, map_location):
    """``torch.load`` of a ``.safetensors`` path goes through the safetensors loader."""
    from .utils.safetensors import load_file
    device = "cpu"
    if map_location is not None:
        if isinstance(map_location, (str, bytes, Device)):
            device = str(map_location)
        elif isinstance(map_location, dict):
            raise RuntimeError("Loading safetensors file with dict map_location is not supported. "
                               "Use a device string or torch.device instead.")
        elif callable(map_location):
            raise RuntimeError("Loading safetensors file with callable map_location is not "
                               "supported. Use a device string or torch.device instead.")
    return load_file(path, device=device)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """load(f, map_location=None, pickle_module=pickle, *, weights_only=True, mmap=None,
    **pickle_load_args)

    Loads an object saved with ``torch.save`` (PyTorch's or ours).

    ``map_location`` remaps storages: a device or string (``'cpu'``, ``'meta'``), a
    dict from saved to wanted locations, or a callable ``(storage, location)``
    returning a storage (or None for the default).  ``weights_only`` (the default
    unless a ``pickle_module`` is given) restricts unpickling to tensors,
    primitive containers and ``add_safe_globals`` entries; ``weights_only=False``
    runs the full unpickler and may execute code from the file.  ``mmap=True``
    maps the file (copy-on-write) instead of reading storages into memory (mapped
    storages are read lazily, so their CRCs are not checked).
    A damaged file raises a RuntimeError and nothing is returned.
    """
    weights_only = _weights_only_default(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if _is_path(f) and os.fspath(f).endswith(".safetensors"):
        return _load_safetensors(os.fspath(f), map_location)

    with _open_file_like(f) as opened:
        if not _is_zipfile(opened):
            if mmap:
                name = f"{f}, " if isinstance(f, str) else ""
                raise RuntimeError(
                    "mmap can only be used with files saved with "
                    f"`torch.save({name}_use_new_zipfile_serialization=True), please torch.save "
                    "your checkpoint with this option in order to use mmap.")
            if not weights_only:
                return _legacy_load(opened, map_location, _unpickler_class(pickle_module),
                                    **pickle_load_args)
            try:
                return _legacy_load(opened, map_location, _WeightsOnlyUnpickler,
                                    encoding=pickle_load_args["encoding"])
            except pickle.UnpicklingError as e:
                raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
        reader = _ZipReader(opened)
        if reader.has_record("constants.pkl"):
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives "
                                   "passed to ``torch.load``. " + UNSAFE_MESSAGE)
            raise RuntimeError("This is a TorchScript archive; glasstorch has no torch.jit to "
                               "load it with.")
        mapped = None
        if mmap:
            if not _is_path(f):
                raise ValueError("f must be a file path in order to use the mmap argument")
            mapped = np.memmap(os.fspath(f), dtype=np.uint8, mode="c")   # MAP_PRIVATE
        if weights_only:
            try:
                return _load(reader, map_location, _WeightsOnlyUnpickler, mapped,
                             encoding=pickle_load_args["encoding"])
            except pickle.UnpicklingError as e:
                raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
        return _load(reader, map_location, _unpickler_class(pickle_module), mapped,
                     **pickle_load_args)
