"""glasstorch.save / glasstorch.load against torch.save / torch.load.

Checkpoints go both ways bit for bit (our files are byte-identical to torch's),
storage sharing survives, map_location and weights_only behave as torch's, and
damaged files are refused with a clear error instead of being half loaded.
"""
from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch import serialization

from .differential import differential, raised, run

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64", "complex128"]


def _values(T, dtype: str, shape, seed: int):
    """The same tensor in either library, from seeded numpy values."""
    gen = np.random.default_rng(seed)
    real = gen.standard_normal(shape) * 8
    if dtype.startswith("complex"):
        data = real + 1j * gen.standard_normal(shape)
    elif dtype == "bool":
        data = real > 0
    elif dtype.startswith(("int", "uint")):
        data = np.abs(real).astype(np.int64) if dtype == "uint8" else real.astype(np.int64)
    else:
        data = real
    return T.tensor(data.tolist(), dtype=getattr(T, dtype))


def _state(T, seed=0):
    """A checkpoint exercising dtypes, 0-d and empty tensors, views sharing one
    storage, a Parameter and nested containers."""
    sd = collections.OrderedDict((d, _values(T, d, (3, 4), seed + i)) for i, d in enumerate(DTYPES))
    sd["zero_d"] = T.tensor(3.5)
    sd["empty"] = T.zeros(0, 3)
    base = _values(T, "float32", (4, 6), seed + 99)
    sd["base"] = base
    sd["transposed"] = base.t()
    sd["strided"] = base[1:3, ::2]
    sd["row"] = base[2]
    sd["weight"] = T.nn.Parameter(_values(T, "float32", (2, 2), seed + 7))
    sd["frozen"] = T.nn.Parameter(_values(T, "float64", (3,), seed + 8), requires_grad=False)
    sd["grad_leaf"] = _values(T, "float32", (2,), seed + 9).requires_grad_()
    sd["nested"] = {"list": [1, 2.5, "s", None, (3, 4), b"raw", {1, 2}, 1 + 2j],
                    "tuple": (base[0], True), "od": collections.OrderedDict(a=1, b=[base[1]]),
                    "meta": {"epoch": 3, "dtype": T.float16, "size": T.Size([2, 3]),
                             "device": T.device("cpu")}}
    return sd


def _storage_key(t):
    return id(t.untyped_storage()) if isinstance(t, gt.Tensor) else t.untyped_storage().data_ptr()


def _describe(obj, storages):
    """A library-independent, bit-exact description of a loaded object; tensors
    name their storage by first appearance, so sharing is compared too."""
    if isinstance(obj, (torch.Tensor, gt.Tensor)):
        storage = obj.untyped_storage()
        key = storages.setdefault(_storage_key(obj), len(storages))
        data = bytes(storage) if isinstance(obj, torch.Tensor) else storage._bytes().tobytes()
        return ("tensor", type(obj).__name__, str(obj.dtype), tuple(obj.shape), tuple(obj.stride()),
                obj.storage_offset(), obj.requires_grad, key, data)
    if isinstance(obj, (gt.dtype, torch.dtype, gt.device, torch.device)):
        return ("named", repr(obj))
    if isinstance(obj, (gt.Size, torch.Size)):
        return ("size", tuple(obj))
    if isinstance(obj, dict):
        return (type(obj).__name__, [(k, _describe(v, storages)) for k, v in obj.items()])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_describe(v, storages) for v in obj])
    return obj


def _saved(lib, obj, **kwargs) -> bytes:
    buffer = io.BytesIO()
    lib.save(obj, buffer, **kwargs)
    return buffer.getvalue()


def _loaded(lib, data: bytes, **kwargs):
    return lib.load(io.BytesIO(data), **kwargs)


# -- the format ------------------------------------------------------------------------

@pytest.mark.parametrize("n_storages", [0, 6, 7, 22, 23])   # the id's set rehashes at 14 records
def test_files_are_byte_identical_to_torch_save(n_storages):
    def state(T):
        return {f"p{i}": _values(T, "float32", (i % 3 + 1,), i) for i in range(n_storages)}
    assert _saved(gt, state(gt)) == _saved(torch, state(torch))


def test_rich_checkpoint_is_byte_identical_to_torch_save():
    assert _saved(gt, _state(gt)) == _saved(torch, _state(torch))


def test_record_that_looks_like_a_data_descriptor():
    """torch's writer hashes any written chunk that starts like a data descriptor
    into the serialization id, record bytes included."""
    def state(T):
        return {"a": T.tensor([0x08074B50, 7], dtype=T.int32)}
    assert _saved(gt, state(gt)) == _saved(torch, state(torch))


def test_record_layout():
    data = _saved(gt, {"a": gt.ones(3)})
    archive = zipfile.ZipFile(io.BytesIO(data))
    names = [info.filename for info in archive.infolist()]
    assert names == ["archive/data.pkl", "archive/.format_version", "archive/.storage_alignment",
                     "archive/byteorder", "archive/data/0", "archive/version",
                     "archive/.data/serialization_id"]
    for info in archive.infolist():
        header = data[info.header_offset: info.header_offset + 30]
        start = info.header_offset + 30 + int.from_bytes(header[26:28], "little") + \
            int.from_bytes(header[28:30], "little")
        assert start % 64 == 0 and info.compress_type == zipfile.ZIP_STORED
    assert archive.read("archive/version") == b"3\n"


@pytest.mark.parametrize("name", ["model.pt", "my.model.v2.pt", "noext", "dir.d/file.tar.gz",
                                  "trailing."])
def test_archive_folder_named_after_the_file(tmp_path, name):
    ours, theirs = tmp_path / "g" / name, tmp_path / "t" / name
    ours.parent.mkdir(parents=True)
    theirs.parent.mkdir(parents=True)
    gt.save({"a": gt.ones(2)}, ours)
    torch.save({"a": torch.ones(2)}, theirs)
    assert zipfile.ZipFile(ours).namelist() == zipfile.ZipFile(theirs).namelist()
    assert ours.read_bytes() == theirs.read_bytes()


def test_invalid_file_names(tmp_path):
    with pytest.raises(RuntimeError, match="invalid file name: .*hidden"):
        gt.save({}, str(tmp_path / ".hidden"))
    with pytest.raises(RuntimeError, match="invalid file name"):
        torch.save({}, str(tmp_path / ".hidden"))
    missing = tmp_path / "no_such_dir" / "m.pt"
    parent = tmp_path / "no_such_dir"
    with pytest.raises(RuntimeError, match=f"Parent directory {parent} does not exist."):
        gt.save({}, missing)
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist."):
        torch.save({}, missing)


def test_paths_pathlib_and_open_files(tmp_path):
    sd = _state(gt)
    expected = _describe(sd, {})
    gt.save(sd, str(tmp_path / "a.pt"))
    gt.save(sd, tmp_path / "b.pt")
    with open(tmp_path / "c.pt", "wb") as f:
        gt.save(sd, f)
    for name in ("a.pt", "b.pt", "c.pt"):
        assert _describe(gt.load(tmp_path / name), {}) == expected
        with open(tmp_path / name, "rb") as f:
            assert _describe(gt.load(f), {}) == expected


def test_saving_appends_at_the_buffer_position():
    buffer = io.BytesIO()
    buffer.write(b"header")
    gt.save({"a": gt.ones(2)}, buffer)
    buffer.seek(6)
    assert gt.load(buffer)["a"].tolist() == [1.0, 1.0]


# -- both directions, bit for bit ------------------------------------------------------

def test_torch_save_glasstorch_load():
    theirs = _state(torch)
    assert _describe(_loaded(gt, _saved(torch, theirs)), {}) == _describe(theirs, {})


def test_glasstorch_save_torch_load():
    ours = _state(gt)
    assert _describe(_loaded(torch, _saved(gt, ours)), {}) == _describe(ours, {})


def test_sharing_preserved_in_both_directions():
    for lib_save, lib_load, T in ((torch, gt, torch), (gt, torch, gt)):
        base = T.arange(12.0)
        loaded = _loaded(lib_load, _saved(lib_save, {"x": base.view(3, 4), "y": base[2:5],
                                                     "z": T.ones(2)}))
        assert _storage_key(loaded["x"]) == _storage_key(loaded["y"]) != _storage_key(loaded["z"])
        assert loaded["y"].storage_offset() == 2


@settings(max_examples=15)
@given(dtype=st.sampled_from(DTYPES), shape=st.lists(st.integers(0, 4), max_size=3),
       seed=st.integers(0, 2**16), transpose=st.booleans(), step=st.integers(1, 2))
def test_random_views_round_trip(dtype, shape, seed, transpose, step):
    def view(T):
        t = _values(T, dtype, shape, seed)
        if transpose and t.dim() >= 2:
            t = t.transpose(0, 1)
        if t.dim() >= 1:
            t = t[::step]
        return {"view": t, "base": t}
    ours, theirs = view(gt), view(torch)
    assert _saved(gt, ours) == _saved(torch, theirs)
    assert _describe(_loaded(gt, _saved(torch, theirs)), {}) == _describe(theirs, {})
    assert _describe(_loaded(torch, _saved(gt, ours)), {}) == _describe(ours, {})


@pytest.mark.parametrize("protocol", [3, 4])
def test_other_pickle_protocols(protocol):
    ours, theirs = _saved(gt, _state(gt), pickle_protocol=protocol), \
        _saved(torch, _state(torch), pickle_protocol=protocol)
    expected = _describe(_state(torch), {})
    assert _describe(_loaded(torch, ours, weights_only=False), {}) == expected
    assert _describe(_loaded(gt, theirs, weights_only=False), {}) == expected
    assert _describe(_loaded(gt, ours, weights_only=False), {}) == expected
    if protocol == 4:   # the weights_only unpickler knows protocol 2's opcodes (no FRAME)
        raised(differential(lambda T: T.load(io.BytesIO(_saved(T, {"a": T.ones(1)},
                                                               pickle_protocol=4))),
                            may_raise=True), "UnpicklingError")


def test_storages_and_meta_tensors():
    def scenario(T):
        t = T.arange(6, dtype=T.int16)
        saved = _saved(T, {"u": t.untyped_storage(), "meta": T.empty(2, 3, device="meta")})
        out = _loaded(T, saved)
        return (type(out["u"]).__name__, str(out["u"].dtype), out["u"].tolist(),
                str(out["meta"].device), tuple(out["meta"].shape))
    differential(scenario, warning_types=())
    assert _saved(gt, {"m": gt.empty(2, device="meta")}) == \
        _saved(torch, {"m": torch.empty(2, device="meta")})


def test_storages_viewed_as_two_dtypes_are_refused():
    differential(lambda T: T.save([T.zeros(4), T.zeros(4)[:2].view(T.int32)], io.BytesIO()))


def test_plain_pickle_keeps_sharing():
    base = gt.arange(6.0)
    a, b = pickle.loads(pickle.dumps((base, base[2:])))
    assert a.untyped_storage() is b.untyped_storage() and b.tolist() == [2.0, 3.0, 4.0, 5.0]
    param = pickle.loads(pickle.dumps(gt.nn.Parameter(gt.ones(2))))
    assert type(param) is gt.nn.Parameter and param.tolist() == [1.0, 1.0] and param.requires_grad


def test_unpicklable_object_leaves_existing_file_untouched(tmp_path):
    path = tmp_path / "m.pt"
    gt.save({"a": gt.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        gt.save({"f": lambda: 0}, path)
    assert path.read_bytes() == before


def test_bad_targets():
    differential(lambda T: T.save({}, 42), may_raise=True)
    differential(lambda T: T.save({}, type("W", (), {"write": 1})()), may_raise=True)

    class NoSeek(io.RawIOBase):
        def readable(self):
            return True
    differential(lambda T: T.load(NoSeek()), may_raise=True)


# -- map_location ----------------------------------------------------------------------

@pytest.mark.parametrize("where", ["cpu", "device", "dict", "callable", "callable_none"])
def test_map_location_to_cpu(where):
    def scenario(T):
        location = {"cpu": "cpu", "device": T.device("cpu"), "dict": {"cpu": "cpu"},
                    "callable": lambda storage, loc: storage,
                    "callable_none": lambda storage, loc: None}[where]
        return _describe(_loaded(T, _saved(T, _state(T)), map_location=location), {})
    assert scenario(gt) == scenario(torch)


def test_map_location_meta():
    def scenario(T):
        out = _loaded(T, _saved(T, {"a": T.ones(2, 3), "b": T.zeros(4, dtype=T.int64)}),
                      map_location="meta")
        return [(str(t.device), str(t.dtype), tuple(t.shape)) for t in out.values()]
    differential(scenario)


@pytest.mark.parametrize("location", ["cuda", "cuda:1", {"cpu": "cuda:0"}, "foo", {"cpu": "xyz"}])
def test_map_location_errors(location):
    differential(lambda T: _loaded(T, _saved(T, {"a": T.ones(2)}), map_location=location),
                 may_raise=True)


def test_callable_sees_the_saved_location():
    seen = []
    gt.load(io.BytesIO(_saved(torch, {"a": torch.ones(2)})),
            map_location=lambda storage, loc: seen.append((loc, storage.nbytes())))
    assert seen == [("cpu", 8)]


def test_mmap(tmp_path):
    path = tmp_path / "m.pt"
    torch.save(_state(torch), path)
    before = path.read_bytes()
    loaded = gt.load(path, mmap=True)
    assert _describe(loaded, {}) == _describe(_state(torch), {})
    loaded["base"].add_(1)                       # copy-on-write: the file is untouched
    assert path.read_bytes() == before
    differential(lambda T: T.load(io.BytesIO(_saved(T, {})), mmap=True), may_raise=True)


# -- weights_only ----------------------------------------------------------------------

class _Payload:
    """Unpickling calls ``os.system``: it would create ``marker``."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


class _Custom:
    def __init__(self, value=0):
        self.value = value


def test_weights_only_refuses_code_execution(tmp_path):
    marker = tmp_path / "pwned"
    data = _saved(torch, {"weights": torch.ones(2), "evil": _Payload(marker)})
    outcomes = [run(lambda T: T.load(io.BytesIO(data)), lib) for lib in (torch, gt)]
    assert outcomes[0] == outcomes[1]
    raised(outcomes[1], "UnpicklingError")
    assert "Weights only load failed" in outcomes[1][2] and "posix.system" in outcomes[1][2]
    assert not marker.exists()


@pytest.mark.parametrize("payload", [eval, print, collections.namedtuple, _Custom])
def test_weights_only_refusals_match_torch(payload):
    obj = payload if payload is not _Custom else _Custom(3)
    data = _saved(torch, {"x": obj})
    differential(lambda T: T.load(io.BytesIO(data)), may_raise=True)


def test_weights_only_refuses_files_we_wrote():
    data = _saved(gt, {"custom": _Custom(1)})
    differential(lambda T: T.load(io.BytesIO(data)), may_raise=True)


def test_safe_globals():
    data = _saved(torch, {"custom": _Custom(5), "t": torch.ones(1)})
    assert gt.serialization.get_safe_globals() == []
    with gt.serialization.safe_globals([_Custom]):
        assert gt.serialization.get_safe_globals() == [_Custom]
        assert gt.load(io.BytesIO(data))["custom"].value == 5
    assert gt.serialization.get_safe_globals() == []
    gt.serialization.add_safe_globals([(_Custom, f"{__name__}._Custom")])
    try:
        assert gt.load(io.BytesIO(data))["custom"].value == 5
    finally:
        gt.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        gt.load(io.BytesIO(data))


def test_get_unsafe_globals_in_checkpoint():
    data = _saved(torch, {"c": _Custom(), "e": eval, "t": torch.ones(1), "s": {1}})
    def scenario(T):
        return sorted(T.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)))
    differential(scenario)


def test_full_unpickler_maps_torch_globals():
    data = _saved(torch, {"custom": _Custom(2), "dtype": torch.bfloat16, "t": torch.ones(2),
                          "layout": torch.strided})
    out = gt.load(io.BytesIO(data), weights_only=False)
    assert out["custom"].value == 2 and out["dtype"] is gt.bfloat16
    assert out["layout"] is gt.strided and isinstance(out["t"], gt.Tensor)
    assert gt.load(io.BytesIO(data), pickle_module=pickle)["custom"].value == 2


def test_weights_only_with_pickle_module():
    differential(lambda T: T.load(io.BytesIO(_saved(T, {})), pickle_module=pickle,
                                  weights_only=True), may_raise=True)


# -- damaged files ---------------------------------------------------------------------

def _outcome(data: bytes):
    try:
        return ("loaded", _describe(gt.load(io.BytesIO(data)), {}))
    except Exception as exc:  # noqa: BLE001 - what failed is the observation
        return ("raised", type(exc).__name__, str(exc))


def test_truncated_files_are_refused():
    data = _saved(torch, {"a": torch.arange(6.0), "b": torch.ones(2, 3, dtype=torch.float64)})
    for cut in range(4, len(data), 5):
        outcome = _outcome(data[:cut])
        assert outcome[:2] == ("raised", "RuntimeError"), (cut, outcome)
    differential(lambda T: T.load(io.BytesIO(data[:len(data) // 2])), may_raise=True)
    differential(lambda T: T.load(io.BytesIO(data[:10])), may_raise=True)


def test_flipped_bytes_never_load_wrong_values():
    """Every single-byte corruption either leaves what is loaded unchanged (a byte
    nothing reads: padding, the id) or raises a RuntimeError; one in the zip
    signature makes the data a (bad) legacy-format pickle: torch's error then."""
    data = _saved(torch, {"a": torch.arange(6.0), "b": torch.ones(2, dtype=torch.float64)})
    expected = _outcome(data)
    for pos in range(len(data)):
        corrupted = bytearray(data)
        corrupted[pos] ^= 0xFF
        if pos < 4:
            differential(lambda T: T.load(io.BytesIO(bytes(corrupted))), may_raise=True)
            continue
        outcome = _outcome(bytes(corrupted))
        assert outcome == expected or outcome[:2] == ("raised", "RuntimeError"), (pos, outcome)


def test_crc_mismatch_message():
    data = bytearray(_saved(gt, {"a": gt.arange(16.0)}))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("archive/data/0")
    data[info.header_offset + 30 + len("archive/data/0") + 4 + 60] ^= 1   # a data byte
    outcome = _outcome(bytes(data))
    assert outcome[:2] == ("raised", "RuntimeError")
    assert outcome[2].startswith(
        "PytorchStreamReader failed reading file data/0: CRC-32 check failed")


def test_not_a_checkpoint():
    """Data that is not a zip is read as the legacy format, as torch reads it (more
    cases in test_serialization_legacy.py)."""
    for data in (b"", b"hello world, not a checkpoint", b"\x80\x02}q\x00."):
        for weights_only in (True, False):
            differential(lambda T: T.load(io.BytesIO(data), weights_only=weights_only),
                         may_raise=True)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("flat.txt", "no folder")
    messages = [raised(run(lambda T: T.load(io.BytesIO(archive.getvalue())), lib), "RuntimeError")
                for lib in (gt, torch)]
    assert messages[0] == "file in archive is not in a subdirectory: flat.txt"
    assert messages[1].endswith(messages[0])    # torch prefixes its C++ source line


def test_zip64_records(monkeypatch):
    """Sizes and offsets past the 32-bit fields go to zip64 extra fields; lowering
    the threshold exercises that layout on a small file."""
    monkeypatch.setattr(serialization, "_ZIP64_THRESHOLD", 100)
    data = _saved(gt, _state(gt))
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo("archive/data/1")
    assert info.header_offset > 100 and len(info.extra) > 0      # zipfile reads the zip64 fields
    assert _describe(_loaded(torch, data), {}) == _describe(_state(gt), {})
    assert _describe(_loaded(gt, data), {}) == _describe(_state(gt), {})


def test_big_endian_checkpoint():
    """A 'big' byteorder record: storages are byte-swapped on load, as torch does."""
    values = np.arange(6, dtype=np.float32)
    buffer = io.BytesIO()
    writer = serialization._ZipWriter(buffer, "archive")
    pickled = zipfile.ZipFile(io.BytesIO(_saved(torch, {"a": torch.zeros(6)}))).read(
        "archive/data.pkl")
    writer.write_record("data.pkl", pickled)
    writer.write_record("byteorder", b"big")
    writer.write_record("data/0", values.astype(">f4").tobytes())
    writer.finish()
    differential(lambda T: T.load(io.BytesIO(buffer.getvalue()))["a"].tolist())


# -- storage API -------------------------------------------------------------------------

def test_typed_storage():
    def scenario(T):
        s = T.arange(5, dtype=T.int16)[1:].storage()
        return (type(s).__name__, str(s.dtype), s.size(), len(s), s.nbytes(), s.element_size(),
                s.tolist(), s[2], str(s.device))
    differential(scenario, warning_types=())   # torch warns once per process


# -- models ------------------------------------------------------------------------------

def test_whole_modules_cross_load():
    """A pickled module names its class (torch.nn.modules.linear.Linear): each
    library rebuilds its own, with the same weights."""
    ours, theirs = gt.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    x = np.arange(3, dtype=np.float32)
    from_ours = _loaded(torch, _saved(gt, ours), weights_only=False)
    assert type(from_ours) is torch.nn.Linear
    np.testing.assert_allclose(from_ours(torch.from_numpy(x)).detach().numpy(),
                               ours(gt.from_numpy(x)).detach().numpy(), rtol=1e-6)
    from_theirs = _loaded(gt, _saved(torch, theirs), weights_only=False)
    assert type(from_theirs) is gt.nn.Linear
    np.testing.assert_allclose(from_theirs(gt.from_numpy(x)).detach().numpy(),
                               theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)


def test_optimizer_and_module_state_dicts():
    model = gt.nn.Linear(3, 2)
    opt = gt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(gt.ones(3)).sum().backward()
    opt.step()
    checkpoint = {"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 1}
    assert _describe(_loaded(torch, _saved(gt, checkpoint)), {}) == _describe(checkpoint, {})
    assert _describe(_loaded(gt, _saved(gt, checkpoint)), {}) == _describe(checkpoint, {})
