"""glasstorch.utils.safetensors: the safetensors format and the safetensors.torch API.

The bytes are checked against the format's own reference vectors, by parsing
files with struct/json and reading tensor bytes back through torch.frombuffer,
and against the ``safetensors`` package (in the test extra).
"""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch.utils import safetensors as gst

from .test_serialization import DTYPES, _values

SAFETENSORS_DTYPES = [d for d in DTYPES if d != "complex128"]   # the format has no C128
CODES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16", "int64": "I64",
         "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL",
         "complex64": "C64"}


def _parse(data: bytes):
    """(header dict, data buffer) read with struct and json only."""
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n]), data[8 + n:], n


def _torch_view(buffer: bytes, info: dict):
    dtype = getattr(torch, {v: k for k, v in CODES.items()}[info["dtype"]])
    begin, end = info["data_offsets"]
    if begin == end:
        return torch.empty(info["shape"], dtype=dtype)
    return torch.frombuffer(bytearray(buffer[begin:end]), dtype=dtype).reshape(info["shape"])


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    assert ours._np().tobytes() == bytes(theirs.contiguous().untyped_storage())


# -- reference vectors (from the format's specification tests) --------------------------

def test_reference_vectors():
    attn = gt.arange(6.0).reshape(1, 2, 3)
    assert gst.save({"attn.0": attn}) == bytes([64, 0, 0, 0, 0, 0, 0, 0]) + \
        b'{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}' + \
        np.arange(6, dtype="<f4").tobytes()
    # a shorter name: the header is padded with spaces so the data stays 8-aligned
    assert gst.save({"attn0": attn.reshape(1, 1, 2, 3)}) == bytes([72, 0, 0, 0, 0, 0, 0, 0]) + \
        b'{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}' + b" " * 7 + \
        np.arange(6, dtype="<f4").tobytes()
    assert gst.save({}) == bytes([8, 0, 0, 0, 0, 0, 0, 0]) + b"{}" + b" " * 6
    assert gst.save({}, metadata={"framework": "pt"}) == bytes([40, 0, 0, 0, 0, 0, 0, 0]) + \
        b'{"__metadata__":{"framework":"pt"}}' + b" " * 5


def test_layout_widest_dtype_first_then_name():
    tensors = {"b_i8": gt.ones(3, dtype=gt.int8), "a_f32": gt.ones(2),
               "c_f64": gt.ones(1, dtype=gt.float64), "a_bool": gt.ones(5, dtype=gt.bool),
               "z_c64": gt.ones(1, dtype=gt.complex64),
               "y_bf16": gt.ones(2, dtype=gt.bfloat16), "x_i64": gt.ones(1, dtype=gt.int64),
               "a_f64": gt.ones(1, dtype=gt.float64)}
    header, buffer, n = _parse(gst.save(tensors, metadata={"k": "v"}))
    assert list(header) == ["__metadata__", "x_i64", "a_f64", "c_f64", "z_c64", "a_f32", "y_bf16",
                            "b_i8", "a_bool"]
    assert (8 + n) % 8 == 0
    ends = [info["data_offsets"] for name, info in header.items() if name != "__metadata__"]
    assert ends[0][0] == 0 and all(a[1] == b[0] for a, b in zip(ends, ends[1:]))
    assert ends[-1][1] == len(buffer)


# -- round trips -------------------------------------------------------------------------

@settings(max_examples=20)
@given(dtypes=st.lists(st.sampled_from(SAFETENSORS_DTYPES), min_size=1, max_size=5),
       shape=st.lists(st.integers(0, 4), max_size=3), seed=st.integers(0, 2**16))
def test_round_trip_and_torch_reads_the_bytes(dtypes, shape, seed):
    ours = {f"t{i}.{d}": _values(gt, d, shape, seed + i) for i, d in enumerate(dtypes)}
    theirs = {f"t{i}.{d}": _values(torch, d, shape, seed + i) for i, d in enumerate(dtypes)}
    data = gst.save(ours)
    header, buffer, _ = _parse(data)
    for name, t in theirs.items():
        assert header[name]["dtype"] == CODES[str(t.dtype).split(".")[1]]
        assert header[name]["shape"] == list(t.shape)
        assert torch.equal(_torch_view(buffer, header[name]), t)
    loaded = gst.load(data)
    assert set(loaded) == set(theirs)
    for name, t in theirs.items():
        _same(loaded[name], t)


def test_files_and_safe_open(tmp_path):
    path = tmp_path / "model.safetensors"
    tensors = {d: _values(gt, d, (2, 3), i) for i, d in enumerate(SAFETENSORS_DTYPES)}
    tensors["scalar"] = gt.tensor(2.5)
    tensors["empty"] = gt.zeros(0, 4)
    gst.save_file(tensors, path, metadata={"format": "pt", "note": "ünïcode"})
    assert path.read_bytes() == gst.save(tensors, metadata={"format": "pt", "note": "ünïcode"})
    loaded = gst.load_file(path)
    assert list(loaded) == list(_parse(path.read_bytes())[0])[1:]      # file order
    for name, t in tensors.items():
        assert loaded[name]._np().tobytes() == t._np().tobytes()
        assert loaded[name].dtype == t.dtype and loaded[name].shape == t.shape
    with gst.safe_open(str(path), framework="pt") as f:
        assert f.keys() == sorted(tensors)
        assert f.metadata() == {"format": "pt", "note": "ünïcode"}
        assert f.get_tensor("int16").tolist() == tensors["int16"].tolist()
        part = f.get_slice("float32")
        assert part.get_shape() == [2, 3] and part.get_dtype() == "F32"
        assert part[1:, :2].tolist() == tensors["float32"][1:, :2].tolist()
        with pytest.raises(gst.SafetensorError, match="File does not contain tensor missing"):
            f.get_tensor("missing")
    with gst.safe_open(path, framework="np") as f:
        assert isinstance(f.get_tensor("float64"), np.ndarray)
    handle = gst.safe_open(path, "pt")
    assert handle.offset_keys() == list(loaded)
    handle.close()
    assert list(gt.load(path)) == list(loaded)                  # torch.load of a .safetensors path


def test_no_metadata_and_loaded_tensors_own_their_memory():
    data = gst.save({"a": gt.arange(4.0), "b": gt.ones(2)})
    with pytest.raises(KeyError):
        _parse(data)[0]["__metadata__"]
    loaded = gst.load(data)
    loaded["a"].add_(1)
    assert gst.load(data)["a"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert loaded["a"].untyped_storage() is not loaded["b"].untyped_storage()


# -- what save refuses -------------------------------------------------------------------

def test_shared_tensors_are_refused():
    base = gt.arange(6.0)
    with pytest.raises(RuntimeError, match="Some tensors share memory, this will lead to duplicate "
                                           "memory on disk and potential differences"):
        gst.save({"a": base[:3], "b": base[3:]})
    with pytest.raises(RuntimeError, match=r"\[\{'a', 'b'\}\]|\[\{'b', 'a'\}\]"):
        gst.save({"a": base, "b": base})
    gst.save({"a": base[:3].clone(), "b": base[3:].clone()})     # copies are fine


def test_other_refusals():
    with pytest.raises(ValueError, match="You are trying to save a non contiguous tensor: `t`"):
        gst.save({"t": gt.ones(2, 3).t()})
    with pytest.raises(ValueError, match="Key `x` is invalid, expected torch.Tensor but received "
                                         "<class 'int'>"):
        gst.save({"x": 1})
    with pytest.raises(ValueError, match="Expected a dict of \\[str, torch.Tensor\\] but received "
                                         "<class 'list'>"):
        gst.save([gt.ones(1)])
    with pytest.raises(TypeError, match="metadata"):
        gst.save({}, metadata={"k": 1})
    with pytest.raises(gst.SafetensorError, match="complex128"):
        gst.save({"c": gt.ones(1, dtype=gt.complex128)})


# -- damaged files -----------------------------------------------------------------------

def _header_bytes(header: dict, data: bytes = b"", pad: str = "") -> bytes:
    text = json.dumps(header, separators=(",", ":")).encode() + pad.encode()
    return struct.pack("<Q", len(text)) + text + data


@pytest.mark.parametrize("data, reason", [
    (b"\x01\x02", "HeaderTooSmall"),
    (struct.pack("<Q", 200_000_000) + b"{}", "HeaderTooLarge"),
    (struct.pack("<Q", 100) + b"{}", "InvalidHeaderLength"),
    (struct.pack("<Q", 2) + b"\xff\xfe", "InvalidHeader"),
    (struct.pack("<Q", 2) + b"[]", "InvalidHeaderStart"),
    (struct.pack("<Q", 3) + b"{x}", "InvalidHeaderDeserialization"),
    (_header_bytes({"a": {"dtype": "F99", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "InvalidHeaderDeserialization"),
    (_header_bytes({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "InvalidHeaderDeserialization"),
    (_header_bytes({"a": {"dtype": "F32", "shape": [1]}}, b"\0" * 4),
     "InvalidHeaderDeserialization"),
    (_header_bytes({"__metadata__": {"k": 1}}), "InvalidHeaderDeserialization"),
    (_header_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
     'InvalidOffset("a")'),
    (_header_bytes({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4),
     "TensorInvalidInfo"),
    (_header_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 6),
     "MetadataIncompleteBuffer"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_corrupted_headers(tmp_path, data, reason):
    """Each of the format's header errors, from the loader's checks in order."""
    message = f"Error while deserializing header: {reason}"
    with pytest.raises(gst.SafetensorError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gst.load(data)
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(gst.SafetensorError, match="Error while deserializing header"):
        gst.load_file(path)


def test_truncated_files_never_load():
    data = gst.save({"a": gt.arange(6.0), "b": gt.ones(2, dtype=gt.int64)}, metadata={"m": "x"})
    for cut in range(len(data)):
        with pytest.raises(gst.SafetensorError):
            gst.load(data[:cut])


# -- the real package (in the test extra) -------------------------------------------------

# (one metadata key: the package writes several in its hash map's random order)
@pytest.mark.parametrize("metadata", [None, {"format": "pt"}])
def test_matches_safetensors_package(tmp_path, metadata):
    """Byte-identical files, each library reading the other's, in memory and on disk."""
    import safetensors
    import safetensors.torch as reference
    theirs = {d: _values(torch, d, (2, 3), i) for i, d in enumerate(SAFETENSORS_DTYPES)}
    ours = {d: _values(gt, d, (2, 3), i) for i, d in enumerate(SAFETENSORS_DTYPES)}
    assert gst.save(ours, metadata=metadata) == reference.save(theirs, metadata=metadata)
    for name, t in gst.load(reference.save(theirs)).items():
        _same(t, theirs[name])
    for name, t in reference.load(gst.save(ours)).items():
        assert torch.equal(t, theirs[name])
    gst.save_file(ours, tmp_path / "ours.safetensors", metadata=metadata)
    reference.save_file(theirs, tmp_path / "theirs.safetensors", metadata=metadata)
    assert (tmp_path / "ours.safetensors").read_bytes() == \
        (tmp_path / "theirs.safetensors").read_bytes()
    with safetensors.safe_open(tmp_path / "ours.safetensors", framework="pt") as f:
        assert f.metadata() == metadata and sorted(f.keys()) == sorted(theirs)


def test_torch_load_of_safetensors_path_mirrors_torch(tmp_path):
    path = tmp_path / "w.safetensors"
    gst.save_file({"a": gt.ones(2)}, path)
    with pytest.raises(RuntimeError, match="dict map_location is not supported"):
        gt.load(path, map_location={"cpu": "cpu"})
    assert gt.load(path, map_location="cpu")["a"].tolist() == [1.0, 1.0]
