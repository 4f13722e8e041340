"""PyTorch's legacy checkpoint format (``_use_new_zipfile_serialization=False``) both
ways, and what torch.load raises for data that is not a checkpoint."""
import io
import pickle
import pickletools
import struct

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import glasstorch
from tests.differential import differential, observe


def _objects(lib):
    """Tensors, a view sharing its base's storage, a Parameter, a state_dict, containers."""
    lib.manual_seed(0)
    base = lib.arange(12.0).reshape(3, 4)
    linear = lib.nn.Linear(3, 2)
    return {"base": base, "row": base[1], "column": base[:, 2], "ints": lib.tensor([1, -2, 3]),
            "half": lib.tensor([1.5, 2.0], dtype=lib.float16), "flag": lib.tensor([True]),
            "param": lib.nn.Parameter(lib.ones(2, 2)), "state": linear.state_dict(),
            "nested": [(1, 2.5, "x"), {"t": base[0, :2]}], "empty": lib.zeros(0)}


def _legacy_bytes(lib, obj):
    buffer = io.BytesIO()
    lib.save(obj, buffer, _use_new_zipfile_serialization=False)
    return buffer.getvalue()


def _check_sharing(loaded):
    base = loaded["base"]
    assert loaded["row"].untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert loaded["nested"][1]["t"].untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert (loaded["row"].storage_offset(), loaded["column"].stride()) == (4, (4,))


@pytest.mark.parametrize("weights_only", [True, False])
def test_load_legacy_file_written_by_torch(weights_only):
    data = _legacy_bytes(torch, _objects(torch))
    ours = glasstorch.load(io.BytesIO(data), weights_only=weights_only)
    theirs = torch.load(io.BytesIO(data), weights_only=weights_only)
    assert observe(ours) == observe(theirs)
    assert type(ours["param"]).__name__ == "Parameter" and type(ours["state"]) is type(theirs["state"])
    assert list(ours["state"]) == list(theirs["state"])
    _check_sharing(ours)


def test_legacy_file_written_by_glasstorch_loads_in_torch():
    data = _legacy_bytes(glasstorch, _objects(glasstorch))
    theirs = torch.load(io.BytesIO(data), weights_only=True)
    assert observe(theirs) == observe(torch.load(io.BytesIO(_legacy_bytes(torch, _objects(torch))),
                                                 weights_only=True))
    _check_sharing(theirs)


def test_legacy_layout_matches_torchs():
    """Same header pickles, same data pickle up to the storage keys (addresses in
    both libraries), same storage records."""
    def parts(data):
        f = io.BytesIO(data)
        headers = [pickle.load(f) for _ in range(3)]
        start = f.tell()
        for _ in pickletools.genops(f):      # the data pickle, up to its STOP
            pass
        body = data[start: f.tell()]
        keys = pickle.load(f)
        return headers, body, keys, data[f.tell():]

    ours = parts(_legacy_bytes(glasstorch, {"w": glasstorch.arange(4.0)}))
    theirs = parts(_legacy_bytes(torch, {"w": torch.arange(4.0)}))
    assert ours[0] == theirs[0]
    def blank_key(body, key):        # the key as a BINUNICODE: length, then text
        return body.replace(struct.pack("<I", len(key)) + key.encode(), b"KEY")
    assert blank_key(ours[1], ours[2][0]) == blank_key(theirs[1], theirs[2][0])
    assert ours[3] == theirs[3]


@given(values=st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=8),
       dtype=st.sampled_from(["float32", "float64", "int64", "int16", "uint8", "bool"]))
def test_round_trip_values(values, dtype):
    ours = glasstorch.tensor(values).to(getattr(glasstorch, dtype))
    back = torch.load(io.BytesIO(_legacy_bytes(glasstorch, ours)), weights_only=True)
    expected = torch.tensor(values).to(getattr(torch, dtype))
    assert back.dtype == expected.dtype and np.array_equal(back.numpy(), expected.numpy())
    again = glasstorch.load(io.BytesIO(_legacy_bytes(torch, expected)))
    assert np.array_equal(again.numpy(), expected.numpy())


_LEGACY = None


def _legacy_sample():
    global _LEGACY
    if _LEGACY is None:
        _LEGACY = _legacy_bytes(torch, {"a": torch.arange(6.0), "b": [1, 2]})
    return _LEGACY


BAD_DATA = {
    "text": lambda: b"these are my notes, not a checkpoint\n",
    "empty": lambda: b"",
    "bare pickle": lambda: pickle.dumps({"weights": [1.0, 2.0]}),
    "bare pickle protocol 2": lambda: pickle.dumps([1, 2, 3], protocol=2),
    "magic number only": lambda: pickle.dumps(MAGIC, protocol=2),
    "wrong protocol version": lambda: pickle.dumps(MAGIC, protocol=2) + pickle.dumps(7, protocol=2),
    "truncated storage": lambda: _legacy_sample()[:-10],
    "truncated in the pickle": lambda: _legacy_sample()[: len(_legacy_sample()) // 2],
    "zip magic only": lambda: b"PK\x03\x04" + b"\x00" * 40,
}
MAGIC = 0x1950A86A20F9469CFC6C


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("case", sorted(BAD_DATA))
def test_bad_data_raises_torchs_error(case, weights_only):
    data = BAD_DATA[case]()
    differential(lambda t: t.load(io.BytesIO(data), weights_only=weights_only), may_raise=True,
                 warning_types=())
