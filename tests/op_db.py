"""How many of PyTorch's own OpInfos glasstorch matches (issue 16).

    python -m tests.op_db                   # run every OpInfo, print the report
    python -m tests.op_db --write           # ... and rewrite docs/op-db.md
    python -m tests.op_db --only add linalg.svd    # just these OpInfos, with details

PyTorch's test suite describes its operators in
``torch.testing._internal.common_methods_invocations.op_db``: one ``OpInfo``
per operator (or per variant of one), with the dtypes it supports on each
device and a generator of sample inputs.  This driver runs every OpInfo's CPU
samples through torch and through glasstorch and compares what comes back.

An OpInfo *matches* when, for each of its CPU dtypes that glasstorch has, every
sample gives the same dtype, shape and values (``torch.testing.assert_close``'s
tolerances for the dtype, raised to the OpInfo's own tolerance overrides for
CPU) in

* the function, called as a user would: ``op.op`` mapped to glasstorch by its
  qualified name (``torch.linalg.svd`` -> ``glasstorch.linalg.svd``,
  ``torch.Tensor.add`` -> ``glasstorch.Tensor.add``); the lambdas the OpInfo
  files define are re-run with ``torch`` in their globals meaning glasstorch,
  as ``import glasstorch as torch`` would make them;
* the method and in-place variants where the OpInfo has them, and ``out=``
  where it ``supports_out``;

and, where it ``supports_autograd``, the float64 gradients (``autograd.grad``
of the outputs with fixed random grad_outputs) equal torch's.  When torch
raises on a sample, glasstorch must raise the same exception type and message.
A comparison the OpInfo itself marks as failing or skipped in torch on CPU
(a ``DecorateInfo`` of ``unittest.expectedFailure`` or ``unittest.skip`` on
the test that makes that comparison: ``test_variant_consistency_eager``,
``test_out``, ``TestBwdGradients``) is not made, and counted.

Both libraries' random generators get the same seed before each call, so
random ops are compared by value too (glasstorch reproduces torch's streams).
Samples are drawn as ``op.sample_inputs`` draws them, torch's generator seeded
before each one, so a run of one OpInfo sees the samples the full run sees.
"""
from __future__ import annotations

import argparse
import collections
import functools
import importlib
import itertools
import pathlib
import re
import sys
import time
import types
import unittest
import warnings

import numpy as np
import torch

from torch.testing._internal.common_device_type import onlyCUDA
from torch.testing._internal.common_utils import SEED as TEST_SEED
from torch.testing._internal.common_utils import set_rng_seed

import glasstorch

from .helpers import to_numpy

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "op-db.md"
SEED = 0

# The public torch module of a callable's ``__module__``, where they differ
# (the builtins behind torch.linalg, torch.special, ... live in torch._C).
_PUBLIC = {
    "torch._C._VariableFunctions": "torch", "torch.functional": "torch", "torch._tensor": "torch",
    "torch._C._linalg": "torch.linalg", "torch._C._special": "torch.special",
    "torch._C._fft": "torch.fft", "torch._C._nn": "torch.nn.functional",
    "torch._C._sparse": "torch.sparse", "torch._C._nested": "torch.nested",
    "torch.masked._ops": "torch.masked", "torch.signal.windows.windows": "torch.signal.windows",
}

# OpInfos whose results are uninitialized memory: dtypes and shapes compared,
# not values (PyTorch's own tests call them "not comparable").
UNINITIALIZED = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty",
                 "new_empty_strided"}
# Decompositions whose results are unique only up to the signs or phases of
# singular/eigen vectors (LAPACK builds differ): compared after the sample's
# output_process_fn_grad, the invariant form PyTorch's gradient tests use.
NOT_UNIQUE = {"svd", "linalg.svd", "linalg.eig", "linalg.eigh", "svd_lowrank", "pca_lowrank"}

TORCH_ONLY_RESULT = "torch-only result dtype"
# tests/test_op_db.py checks the first samples of each dtype only (the full run
# takes minutes).
MAX_TEST_SAMPLES = 2

# The tests of PyTorch's suite that make each comparison, for honouring an
# OpInfo's skips: (class, test) pairs, None matching any test of the class.
_TESTS = {
    "method": {("TestCommon", "test_variant_consistency_eager")},
    "inplace": {("TestCommon", "test_variant_consistency_eager")},
    "out": {("TestCommon", "test_out")},
    "grad": {("TestBwdGradients", "test_fn_grad"), ("TestBwdGradients", None),
             ("TestGradients", "test_fn_grad"), ("TestGradients", None)},
}


def load_op_db() -> list:
    """PyTorch's OpInfos (importing the module draws from torch's generator)."""
    torch.manual_seed(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return list(op_db)


def op_id(op) -> str:
    """The OpInfo's name as PyTorch's test ids spell it (name.variant)."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


class Missing(Exception):
    """A name glasstorch does not have."""


class Unsupported(Exception):
    """A sample glasstorch cannot represent (a dtype or layout it lacks)."""


class Mismatch(Exception):
    """A difference from torch: ``kind`` (the report's reason) and a detail."""

    def __init__(self, kind, detail=""):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind, self.detail = kind, detail


# --- torch objects -> glasstorch objects -------------------------------------

def glasstorch_dtype(dtype):
    """The glasstorch dtype of a torch dtype's name, or None."""
    ours = getattr(glasstorch, str(dtype).removeprefix("torch."), None)
    return ours if isinstance(ours, glasstorch.dtype) else None


def _attribute_path(module_name: str, qualname: str):
    """``module_name.qualname`` looked up attribute by attribute (Missing if absent)."""
    try:
        value = importlib.import_module(module_name)
    except ImportError:
        raise Missing(f"{module_name}.{qualname} (no module {module_name})") from None
    path = module_name
    for part in qualname.split("."):
        path += "." + part
        if not hasattr(value, part):
            raise Missing(path)
        value = getattr(value, part)
    return value


def _counterpart_module(name: str) -> str:
    return "glasstorch" + _PUBLIC.get(name, name).removeprefix("torch")


@functools.cache
def _public_names(module_name: str) -> dict:
    """id -> public name of the callables of a public torch module (its builtins'
    own ``__name__`` is e.g. ``linalg_svd`` for ``torch.linalg.svd``)."""
    module = importlib.import_module(module_name)
    names = {}
    for name in dir(module):
        if not name.startswith("_") or name.startswith("__"):
            names.setdefault(id(getattr(module, name)), name)
    return names


def _public_name(fn, module_name: str) -> str:
    public = _public_names(_PUBLIC.get(module_name, module_name)).get(id(fn))
    if public is not None:
        return public
    if isinstance(fn, types.FunctionType):
        return fn.__qualname__
    return getattr(fn, "__name__", type(fn).__name__)      # a jiterator function has none


def _is_torch_name(module_name) -> bool:
    return isinstance(module_name, str) and (module_name == "torch" or module_name.startswith("torch."))


def _is_testing_code(fn) -> bool:
    """A Python function written in torch's test helpers (an OpInfo's lambda)."""
    return (isinstance(fn, types.FunctionType)
            and str(fn.__globals__.get("__name__", "")).startswith("torch.testing"))


def _wrapper_set_seed(op, *args, **kwargs):
    """glasstorch's side of ``torch.testing._utils.wrapper_set_seed``: the op under
    seed 42, the generator's state restored afterwards."""
    with glasstorch.random.fork_rng():
        glasstorch.manual_seed(42)
        return op(*args, **kwargs)


class _Globals(dict):
    """A test module's globals as its code sees them under ``import glasstorch as
    torch``: each name is translated on its first lookup."""

    def __init__(self, original):
        super().__init__(__builtins__=original["__builtins__"], __name__=original["__name__"])
        self._original = original

    def __missing__(self, name):
        value = translate(self._original[name])      # KeyError: on to the builtins
        self[name] = value
        return value


_GLOBALS: dict = {}
_REBOUND: dict = {}


def _rebind(fn):
    """``fn``'s code run with glasstorch in place of torch (globals, defaults and
    closure translated)."""
    if fn in _REBOUND:
        return _REBOUND[fn]
    module = fn.__globals__["__name__"]
    scope = _GLOBALS.setdefault(module, _Globals(fn.__globals__))
    closure = None if fn.__closure__ is None else tuple(
        types.CellType(translate(cell.cell_contents)) for cell in fn.__closure__)
    ours = types.FunctionType(fn.__code__, scope, fn.__name__,
                              translate(fn.__defaults__), closure)
    ours.__kwdefaults__ = translate(fn.__kwdefaults__)
    ours.__qualname__ = fn.__qualname__
    _REBOUND[fn] = ours
    return ours


def _missing_callable(name):
    def missing(*args, **kwargs):
        raise Missing(name)
    return missing


def glasstorch_callable(fn):
    """The glasstorch callable a user would reach for in place of torch's ``fn``
    (Missing when glasstorch has no such name)."""
    if isinstance(fn, functools.partial):
        return functools.partial(glasstorch_callable(fn.func), *translate(fn.args),
                                 **translate(fn.keywords))
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return _attribute_path("glasstorch", f"ops.{fn}")         # ops.aten.slice.Tensor
    if fn is torch.testing._utils.wrapper_set_seed:
        return _wrapper_set_seed
    if _is_testing_code(fn):
        return _rebind(fn)
    owner = getattr(fn, "__objclass__", None)                 # a method of TensorBase
    if owner is not None and issubclass(owner, torch._C.TensorBase):
        return _attribute_path("glasstorch", f"Tensor.{fn.__name__}")
    module = getattr(fn, "__module__", None)
    if _is_torch_name(module) and not module.startswith("torch.testing"):
        return _attribute_path(_counterpart_module(module), _public_name(fn, module))
    return fn                                                  # operator.add, print, ...


class Translator:
    """torch values -> glasstorch values: tensors copied with their sizes, strides
    and storage offset, views of one storage made views of one glasstorch
    storage (so aliasing survives); dtypes, devices and sizes mapped by name,
    torch functions by ``glasstorch_callable``, modules to glasstorch's.
    ``leaves`` pairs each torch tensor that requires grad with its glasstorch
    leaf."""

    def __init__(self):
        self._tensors, self._storages = {}, {}
        self._resolved = []     # kept alive: a freed copy's address could key another's storage
        self.leaves = []

    def __call__(self, value):
        if isinstance(value, torch.Tensor):
            if id(value) not in self._tensors:
                self._tensors[id(value)] = self._tensor(value)
            return self._tensors[id(value)]
        if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
            items = [self(v) for v in value]
            return items if isinstance(value, list) else (
                type(value)(*items) if hasattr(value, "_fields") else type(value)(items))
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        return _translate_object(value)

    def _tensor(self, t):
        if t.layout in (torch.sparse_coo, torch.sparse_csr):
            return self._sparse(t)
        if t.layout != torch.strided:
            raise Unsupported(f"layout {t.layout}")
        dtype = glasstorch_dtype(t.dtype)
        if dtype is None:
            raise Unsupported(f"dtype {t.dtype}")
        values = t.detach()
        if values.is_conj() or values.is_neg():     # resolved: a copy with its own strides
            values = values.resolve_conj().resolve_neg()
            self._resolved.append(values)
        storage = values.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes(), values.dtype)
        if key not in self._storages:
            # the whole storage: as_strided samples reach outside the view's extent
            flat = torch.as_strided(values, (storage.nbytes() // values.itemsize,), (1,), 0)
            self._storages[key] = glasstorch.from_numpy(np.array(to_numpy(flat))).to(dtype)
        ours = glasstorch.as_strided(self._storages[key], tuple(values.shape), values.stride(),
                                     values.storage_offset()).detach()
        if t.requires_grad:
            ours.requires_grad_(True)
            self.leaves.append((t, ours))
        return ours


    def _sparse(self, t):
        """A sparse COO or CSR tensor, rebuilt from its translated parts."""
        if t.layout == torch.sparse_coo:
            ours = glasstorch.sparse_coo_tensor(self(t._indices()), self(t._values().detach()),
                                                tuple(t.shape), is_coalesced=t.is_coalesced())
        else:
            ours = glasstorch.sparse_csr_tensor(self(t.crow_indices()), self(t.col_indices()),
                                                self(t.values().detach()), tuple(t.shape))
        if t.requires_grad:
            ours.requires_grad_(True)
            self.leaves.append((t, ours))
        return ours


def translate(value):
    """A torch value -> its glasstorch counterpart (what has none is unchanged)."""
    return Translator()(value)


def _translate_object(value):
    """A torch value other than a tensor or container -> glasstorch's."""
    if isinstance(value, torch.dtype):
        ours = glasstorch_dtype(value)
        if ours is None:
            raise Unsupported(f"dtype {value}")
        return ours
    if isinstance(value, torch.Size):
        return glasstorch.Size(value)
    if isinstance(value, torch.device):
        return glasstorch.device(str(value))
    if isinstance(value, (torch.memory_format, torch.layout)):
        return getattr(glasstorch, str(value).removeprefix("torch."))
    if isinstance(value, types.ModuleType):
        if not _is_torch_name(value.__name__) or value.__name__.startswith("torch.testing"):
            return value
        try:
            return importlib.import_module(_counterpart_module(value.__name__))
        except ImportError:
            return _MissingModule(_counterpart_module(value.__name__))
    if value is torch.Tensor:
        return glasstorch.Tensor
    if isinstance(value, torch.nn.Module):
        return _translate_module(value)
    if callable(value) and not isinstance(value, type):
        try:
            return glasstorch_callable(value)
        except Missing as exc:
            return _missing_callable(str(exc))
    return value


def _translate_module(module):
    """A stateless torch module (a sample's ``nn.PairwiseDistance()``) -> the
    glasstorch module of that name with the same settings."""
    if any(True for _ in module.parameters()) or any(True for _ in module.buffers()) or \
            any(True for _ in module.children()):
        raise Unsupported(f"module {type(module).__name__} with state")
    cls = getattr(glasstorch.nn, type(module).__name__, None)
    if cls is None:
        raise Unsupported(f"module {type(module).__name__}")
    ours = cls.__new__(cls)
    glasstorch.nn.Module.__init__(ours)
    for name, value in vars(module).items():
        if not name.startswith("_"):
            setattr(ours, name, _translate_object(value))
    return ours


class _MissingModule(types.ModuleType):
    """A torch module glasstorch lacks, as a test lambda's globals see it."""

    def __getattr__(self, name):
        raise Missing(f"{self.__name__}.{name} (no module {self.__name__})")


# --- comparing results ------------------------------------------------------

def _tolerances(op, dtype):
    """(rtol, atol) the OpInfo allows for samples of ``dtype`` on CPU: the largest
    override any of its decorators states (0 without one); ``compare`` raises
    them to torch.testing's defaults for each result's dtype."""
    rtol = atol = 0.0
    for info in op.decorators:
        if hasattr(info, "decorators"):
            if info.device_type not in (None, "cpu") or not info.active_if or (
                    info.dtypes is not None and dtype not in info.dtypes):
                continue
            decorators = info.decorators
        else:
            decorators = [info]
        for dec in decorators:
            override = getattr(dec, "d", None)
            if not isinstance(override, dict) or dtype not in override:
                continue
            value = override[dtype]
            if hasattr(value, "rtol"):
                rtol, atol = max(rtol, value.rtol), max(atol, value.atol)
            else:                            # precisionOverride: an atol
                atol = max(atol, value)
    return rtol, atol


def _closeness(message: str) -> str:
    """assert_close's message in one line: how many elements differ, and the
    largest absolute difference with what was allowed."""
    found = {}
    for line in message.splitlines():
        line = line.strip().rstrip(".")
        if line.startswith("Mismatched elements"):
            found["count"] = line.removeprefix("Mismatched elements: ").split(" (")[0]
        elif line.startswith(("Greatest absolute", "Absolute difference")):
            found["diff"] = re.sub(r"^(Greatest absolute|Absolute) difference: ", "", line)
    if not found:
        return _shorten(message)
    return (f"{found['count']} elements differ, " if "count" in found else "") + \
        f"largest absolute difference {found.get('diff', '?')}"


def _shorten(text: str, limit=110) -> str:
    text = re.sub(r"0x[0-9a-f]+", "0x...", str(text).strip().splitlines()[0] if str(text).strip() else "")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def compare(ours, theirs, tolerances, where=""):
    """Mismatch unless ``ours`` (glasstorch) is ``theirs`` (torch): structure,
    dtype, shape and (unless ``tolerances`` is None) values."""
    if isinstance(theirs, torch.Tensor):
        if not isinstance(ours, glasstorch.Tensor):
            raise Mismatch("type", f"{where}{type(ours).__name__} instead of a tensor")
        if theirs.layout in (torch.sparse_coo, torch.sparse_csr):
            if str(ours.layout) != str(theirs.layout):
                raise Mismatch("layout", f"{where}{ours.layout} instead of {theirs.layout}")
            compare(ours.to_dense(), theirs.to_dense(), tolerances, f"{where}dense ")
            return
        if theirs.layout != torch.strided:
            raise Mismatch("torch-only-layout", f"{where}torch returns {theirs.layout}")
        if str(ours.dtype) != str(theirs.dtype):
            raise Mismatch("dtype", f"{where}{ours.dtype} instead of {theirs.dtype}")
        if tuple(ours.shape) != tuple(theirs.shape):
            raise Mismatch("shape", f"{where}{tuple(ours.shape)} instead of {tuple(theirs.shape)}")
        if ours.device.type == "meta" or theirs.device.type == "meta" or tolerances is None:
            return
        as_torch = torch.from_numpy(np.array(to_numpy(ours))).to(theirs.dtype)
        rtol, atol = (max(a, b) for a, b in zip(
            tolerances, torch.testing._comparison.default_tolerances(theirs.dtype)))
        try:
            torch.testing.assert_close(as_torch, theirs.detach().resolve_conj().resolve_neg(),
                                       rtol=rtol, atol=atol, equal_nan=True, check_dtype=False,
                                       check_stride=False)
        except AssertionError as exc:
            raise Mismatch("value", where + _closeness(str(exc))) from None
        return
    if isinstance(theirs, (list, tuple)) and not isinstance(theirs, torch.Size):
        if not isinstance(ours, (list, tuple)) or len(ours) != len(theirs):
            raise Mismatch("type", f"{where}{_describe(ours)} instead of {_describe(theirs)}")
        for i, (o, t) in enumerate(zip(ours, theirs)):
            compare(o, t, tolerances, f"{where}[{i}] ")
        return
    if isinstance(theirs, torch.dtype):
        if str(ours) != str(theirs):
            raise Mismatch("dtype", f"{where}{ours} instead of {theirs}")
        return
    if tolerances is None and isinstance(theirs, (bool, int, float, complex)):
        return
    if isinstance(theirs, (float, complex)) and isinstance(ours, (int, float, complex)):
        rtol, atol = (max(a, b) for a, b in zip(tolerances, (1.3e-6, 1e-5)))
        if type(ours) is not type(theirs) or not np.isclose(ours, theirs, rtol, atol, equal_nan=True):
            raise Mismatch("value", f"{where}{ours!r} instead of {theirs!r}")
        return
    if isinstance(theirs, torch.Size):
        theirs = tuple(theirs)
        ours = tuple(ours) if isinstance(ours, glasstorch.Size) else ours
    elif type(theirs).__module__.startswith("torch"):          # a device, layout, ...
        theirs, ours = str(theirs), str(ours)
    if type(ours) is not type(theirs) or ours != theirs:
        raise Mismatch("value", f"{where}{ours!r} instead of {theirs!r}")


def _describe(value):
    return f"{type(value).__name__} of {len(value)}" if isinstance(value, (list, tuple)) \
        else type(value).__name__


# --- running one OpInfo -----------------------------------------------------

def _skipped_in_torch(op, comparison, dtype) -> bool:
    """Whether the OpInfo marks the test making ``comparison`` as skipped or
    expected to fail on CPU for ``dtype``."""
    tests = _TESTS[comparison]
    for info in op.decorators:
        if not hasattr(info, "decorators") or not info.active_if:
            continue
        if info.device_type not in (None, "cpu") or (info.dtypes is not None
                                                     and dtype not in info.dtypes):
            continue
        if (info.cls_name, info.test_name) not in tests and (info.cls_name, None) not in tests:
            continue
        if any(dec is unittest.expectedFailure or
               getattr(dec, "__qualname__", "").startswith("skip") for dec in info.decorators):
            return True
    return False


def _call(fn, seed, args, kwargs):
    """("returned", value) or ("raised", exception), both generators seeded with
    ``seed`` first; an AttributeError naming a glasstorch attribute is Missing."""
    torch.manual_seed(seed)
    glasstorch.manual_seed(seed)
    try:
        return "returned", fn(*args, **kwargs)
    except Missing:
        raise
    except AttributeError as exc:
        missing = _missing_name(exc)
        if missing:
            raise Missing(missing) from None
        return "raised", exc
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return "raised", exc


def _missing_name(exc):
    """The glasstorch name an AttributeError says is absent, if it says one."""
    text = str(exc)
    match = re.match(r"module '(glasstorch[\w.]*)' has no attribute '(\w+)'", text)
    if match:
        return f"{match[1]}.{match[2]}"
    match = re.match(r"(?:type object )?'Tensor'(?: object)? has no attribute '(\w+)'", text)
    return f"glasstorch.Tensor.{match[1]}" if match else None


def _outcomes_agree(ours, theirs, tolerances, where, process=None):
    """Compare two _call outcomes (their results passed through ``process``, a
    torch.testing function, first when given)."""
    if theirs[0] == "raised":
        if ours[0] != "raised":
            raise Mismatch("no-error", f"{where}torch raises {type(theirs[1]).__name__}: "
                                       f"{_shorten(theirs[1], 70)}")
        if type(ours[1]).__name__ != type(theirs[1]).__name__ or str(ours[1]) != str(theirs[1]):
            raise Mismatch("wrong-error", f"{where}{type(ours[1]).__name__}: "
                                          f"'{_shorten(ours[1], 70)}' instead of "
                                          f"{type(theirs[1]).__name__}: '{_shorten(theirs[1], 70)}'")
        return
    if ours[0] == "raised":
        raise Mismatch("error", f"{where}{type(ours[1]).__name__}: {_shorten(ours[1])}")
    if process is None:
        compare(ours[1], theirs[1], tolerances, where)
    else:
        compare(glasstorch_callable(process)(ours[1]), process(theirs[1]), tolerances, where)


def _tensors(value):
    """The tensors among the leaves of nested lists/tuples."""
    if isinstance(value, (torch.Tensor, glasstorch.Tensor)):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


def _compare_gradients(sample, ours_out, theirs_out, convert, tolerances, where, seed):
    """The gradients of the (processed) outputs for fixed random grad_outputs."""
    theirs_out = list(_tensors(sample.output_process_fn_grad(theirs_out)))
    ours_out = list(_tensors(glasstorch_callable(sample.output_process_fn_grad)(ours_out)))
    if len(ours_out) != len(theirs_out):
        raise Mismatch("grad", f"{where}{len(ours_out)} outputs instead of {len(theirs_out)}")
    pairs = [(o, t) for o, t in zip(ours_out, theirs_out) if t.requires_grad]
    lost = [i for i, (o, t) in enumerate(zip(ours_out, theirs_out)) if t.requires_grad != o.requires_grad]
    if lost:
        raise Mismatch("grad", f"{where}output {lost[0]} requires_grad={ours_out[lost[0]].requires_grad}")
    if not pairs or not convert.leaves:
        return
    rng = np.random.default_rng(seed)
    grad_outputs = []
    for _, t in pairs:
        values = rng.uniform(-1, 1, size=tuple(t.shape))
        if t.is_complex():
            values = values + 1j * rng.uniform(-1, 1, size=tuple(t.shape))
        grad_outputs.append(torch.tensor(values, dtype=t.dtype))
    inputs_t = [t for t, _ in convert.leaves]
    inputs_o = [o for _, o in convert.leaves]
    theirs = _call(lambda: torch.autograd.grad([t for _, t in pairs], inputs_t, grad_outputs,
                                               allow_unused=True), seed, (), {})
    ours = _call(lambda: glasstorch.autograd.grad([o for o, _ in pairs], inputs_o,
                                                  [Translator()(g) for g in grad_outputs],
                                                  allow_unused=True), seed, (), {})
    if theirs[0] == "returned" and ours[0] == "returned":      # None counts as zeros
        theirs = ("returned", [torch.zeros_like(i) if g is None else g
                               for g, i in zip(theirs[1], inputs_t)])
        ours = ("returned", [glasstorch.zeros_like(i) if g is None else g
                             for g, i in zip(ours[1], inputs_o)])
    try:
        _outcomes_agree(ours, theirs, tolerances, f"{where}backward: ")
    except Mismatch as exc:
        raise Mismatch("grad", f"{exc.kind}: {exc.detail}") from None


class Result:
    """One OpInfo's outcome: ``reason`` ("match" or why not), its detail, and
    what was run or left out."""

    def __init__(self, name):
        self.name, self.reason, self.detail = name, "match", ""
        self.samples = self.grad_samples = 0
        self.grad_skipped = False
        self.skipped_dtypes: list = []
        self.skipped_checks = collections.Counter()
        self.seconds = 0.0

    def __repr__(self):
        return f"{self.name}: {self.reason}" + (f" ({self.detail})" if self.detail else "")


def variants(op) -> dict:
    """The OpInfo's variants to compare: name -> (torch's callable, glasstorch's)."""
    found = {"function": (op.op, glasstorch_callable(op.op))}
    if op.method_variant is not None:
        found["method"] = (op.method_variant, glasstorch_callable(op.method_variant))
    if op.inplace_variant is not None:
        found["inplace"] = (op.inplace_variant, glasstorch_callable(op.inplace_variant))
    return found


def _torch_clone(value):
    """A copy of a sample's torch tensors for an in-place call (strides kept)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone(memory_format=torch.preserve_format)
    if isinstance(value, (list, tuple)):
        return type(value)(_torch_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _torch_clone(v) for k, v in value.items()}
    return value


def _out_buffers(lib, result):
    """Empty ``out=`` tensors of the result's shapes and dtypes."""
    if isinstance(result, torch.Tensor):
        return lib.empty(tuple(result.shape), dtype=translate(result.dtype) if lib is glasstorch
                         else result.dtype)
    return tuple(_out_buffers(lib, r) for r in result)


def _check_sample(op, found, sample, dtype, index, tolerances, grad):
    """Compare one sample's outcomes (yields the names of comparisons left out)."""
    where = f"{str(dtype).removeprefix('torch.')} sample {index}: "
    if op_id(op) in UNINITIALIZED:
        tolerances = None
    process = sample.output_process_fn_grad if op_id(op) in NOT_UNIQUE else None
    seed = SEED + index
    convert = Translator()
    args = (convert(sample.input), *convert(list(sample.args)))
    kwargs = convert(sample.kwargs)
    t_args, t_kwargs = (sample.input, *sample.args), sample.kwargs
    torch_fn, ours_fn = found["function"]
    theirs = _call(torch_fn, seed, t_args, t_kwargs)
    if theirs[0] == "returned" and any(isinstance(t, torch.Tensor) and glasstorch_dtype(t.dtype) is None
                                       for t in _flat(theirs[1])):
        yield TORCH_ONLY_RESULT                    # e.g. view_as_complex(float16) -> complex32
        return
    ours = _call(ours_fn, seed, args, kwargs)
    _outcomes_agree(ours, theirs, tolerances, where, process)
    if grad:
        if theirs[0] == "returned":
            _compare_gradients(sample, ours[1], theirs[1], convert, tolerances, where, seed)
        return
    for name in ("method", "inplace"):
        if name in found:
            if _skipped_in_torch(op, name, dtype):
                yield name
                continue
            t_fn, o_fn = found[name]
            inputs = Translator()
            o_args, o_kwargs = (inputs(sample.input), *inputs(list(sample.args))), inputs(sample.kwargs)
            clone_args = _torch_clone(t_args) if name == "inplace" else t_args
            clone_kwargs = _torch_clone(t_kwargs) if name == "inplace" else t_kwargs
            try:
                _outcomes_agree(_call(o_fn, seed, o_args, o_kwargs),
                                _call(t_fn, seed, clone_args, clone_kwargs), tolerances,
                                f"{where}{name}: ", process)
            except Mismatch as exc:
                raise Mismatch(name if exc.kind in ("value", "dtype", "shape", "type")
                               else exc.kind, f"{exc.detail}") from None
    outputs = _flat(theirs[1]) if theirs[0] == "returned" else []
    if op.supports_out and outputs and all(isinstance(t, torch.Tensor) for t in outputs):
        if _skipped_in_torch(op, "out", dtype):
            yield "out"
            return
        t_out = _out_buffers(torch, theirs[1])
        o_out = _out_buffers(glasstorch, theirs[1])
        t_res = _call(torch_fn, seed, t_args, {**t_kwargs, "out": t_out})
        o_res = _call(ours_fn, seed, args, {**kwargs, "out": o_out})
        try:
            _outcomes_agree(o_res, t_res, tolerances, f"{where}out=: ", process)
            if t_res[0] == "returned":
                _outcomes_agree(("returned", o_out), ("returned", t_out), tolerances,
                                f"{where}out= buffer: ", process)
        except Mismatch as exc:
            raise Mismatch("out" if exc.kind in ("value", "dtype", "shape", "type")
                           else exc.kind, exc.detail) from None


def _flat(value):
    """The leaves of nested lists/tuples."""
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [value]


def sample_inputs(op, dtype, requires_grad):
    """``op.sample_inputs("cpu", dtype, requires_grad)``'s samples: the generators
    seeded with PyTorch's test SEED before each one, as there, but without its
    search of the call stack for a unittest test (slow under pytest)."""
    samples = iter(op.sample_inputs_func(op, "cpu", dtype, requires_grad))
    while True:
        set_rng_seed(TEST_SEED)
        try:
            yield next(samples)
        except StopIteration:
            return


def check_opinfo(op, max_samples=None) -> Result:
    """Run one OpInfo's CPU samples in both libraries (the first ``max_samples``
    of each dtype when given) and classify the outcome."""
    result = Result(op_id(op))
    start = time.perf_counter()
    try:
        _check(op, result, max_samples)
    except Missing as exc:
        result.reason, result.detail = "missing", str(exc)
    except Mismatch as exc:
        result.reason, result.detail = exc.kind, exc.detail
    except Unsupported as exc:
        result.reason = "torch-only-" + str(exc).split()[0]
        result.detail = str(exc)
    result.seconds = time.perf_counter() - start
    return result


def _check(op, result, max_samples):
    """Every dtype's samples (and float64's again with gradients); raises the
    first difference."""
    dtypes = sorted(op.supported_dtypes("cpu"), key=str)
    if not dtypes or onlyCUDA in op.decorators:
        raise Mismatch("cuda-only", "no CPU dtypes" if not dtypes else "decorated onlyCUDA")
    result.skipped_dtypes = [d for d in dtypes if glasstorch_dtype(d) is None]
    ours_dtypes = [d for d in dtypes if glasstorch_dtype(d) is not None]
    if not ours_dtypes:
        raise Unsupported("dtype " + ", ".join(map(str, dtypes)))
    found = variants(op)
    backward = set(op.supported_backward_dtypes("cpu")) if op.supports_autograd else set()
    passes = [(d, False) for d in ours_dtypes]
    if torch.float64 in backward and torch.float64 in ours_dtypes:
        if _skipped_in_torch(op, "grad", torch.float64):
            result.grad_skipped = True
        else:
            passes.append((torch.float64, True))
    for dtype, grad in passes:
        tolerances = _tolerances(op, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            samples = list(itertools.islice(sample_inputs(op, dtype, grad), max_samples))
            for index, sample in enumerate(samples):
                for skipped in _check_sample(op, found, sample, dtype, index, tolerances, grad):
                    result.skipped_checks[skipped] += 1
                result.samples += 1
                result.grad_samples += grad


# --- the report -------------------------------------------------------------

def run_all(ops, max_samples=None, progress=None) -> list:
    results = []
    for op in ops:
        results.append(check_opinfo(op, max_samples))
        if progress:
            progress(results[-1])
    return results


def document(results, seconds: float) -> str:
    """docs/op-db.md: the totals, every OpInfo that does not match with its
    reason, and the list of those that match."""
    matched = sorted(r.name for r in results if r.reason == "match")
    cpu = [r for r in results if r.reason != "cuda-only"]
    by_reason = collections.defaultdict(list)
    for r in results:
        if r.reason != "match":
            by_reason[r.reason].append(r)
    reasons = sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0]))
    skipped_dtypes = collections.Counter(str(d).removeprefix("torch.")
                                         for r in results for d in r.skipped_dtypes)
    left_out = sum((r.skipped_checks for r in results), collections.Counter())
    lines = ["# PyTorch's OpInfo database against glasstorch",
             "",
             "Generated by `python -m tests.op_db --write`; its docstring says what is compared.",
             "`tests/test_op_db.py` checks that every OpInfo listed as matching still matches",
             f"(on the first {MAX_TEST_SAMPLES} samples of each dtype, to stay fast).",
             "Issue 16's target: 90% of the CPU OpInfos match fully.",
             "",
             f"**{len(matched)} of {len(cpu)} CPU OpInfos match fully "
             f"({100 * len(matched) / len(cpu):.1f}%)**",
             f"({len(results) - len(cpu)} more have no CPU test: `cuda-only` below),",
             f"over {sum(r.samples for r in results)} samples, with float64 gradients compared on "
             f"{sum(r.grad_samples for r in results)} of them;",
             f"the full run took {seconds / 60:.0f} minutes on the 2-core development machine.",
             "",
             "| reason | OpInfos |", "|---|---|", f"| match | {len(matched)} |"]
    lines += [f"| {reason} | {len(rs)} |" for reason, rs in reasons]
    lines += ["",
              "Reasons: `missing`: glasstorch lacks the name; `error`: glasstorch raises where",
              "torch returns; `no-error` / `wrong-error`: torch raises and glasstorch does not,",
              "or raises another exception type or message; `value` / `dtype` / `shape` /",
              "`type` / `layout`: the function's result differs (a sparse result compared",
              "dense after its layout); `method` / `inplace` / `out`: that",
              "variant's result differs; `grad`: the float64 gradients differ (or their",
              "computation does); `torch-only-dtype` / `torch-only-layout`: the samples need",
              "a dtype or layout glasstorch has not; `cuda-only`: the OpInfo has no CPU test.",
              "The detail names the first failing dtype and sample (the sample's index in",
              "`op.sample_inputs('cpu', dtype)`, which seeds torch before each sample).",
              "",
              "Left out, and counted:",
              "",
              "- dtypes glasstorch has no counterpart for (OpInfos listing each): "
              + (", ".join(f"{d} ({n})" for d, n in sorted(skipped_dtypes.items())) or "none") + ";",
              "- comparisons the OpInfo marks as expected to fail or skipped in torch's own",
              "  tests on CPU (samples): "
              + (", ".join(f"{k} ({n})" for k, n in sorted(left_out.items())
                           if k in _TESTS and k != "grad") or "none")
              + f"; float64 gradients of {sum(r.grad_skipped for r in results)} OpInfos;",
              f"- samples whose torch result has a dtype glasstorch lacks (complex32): "
              f"{left_out[TORCH_ONLY_RESULT]};",
              "- the values (not dtypes and shapes) of " + ", ".join(f"`{n}`" for n in sorted(UNINITIALIZED))
              + ": uninitialized memory;",
              "- " + ", ".join(f"`{n}`" for n in sorted(NOT_UNIQUE)) + " are compared after the",
              "  sample's `output_process_fn_grad` (singular and eigenvectors are unique only up",
              "  to sign or phase).",
              "", "## Not matching, by reason", ""]
    for reason, rs in reasons:
        lines += [f"### {reason} ({len(rs)})", ""]
        lines += [f"- `{r.name}`" + (f": {r.detail}" if r.detail else "")
                  for r in sorted(rs, key=lambda r: r.name)]
        lines.append("")
    lines += ["## Matching", "", ", ".join(f"`{name}`" for name in matched)]
    return "\n".join(lines).rstrip() + "\n"


def matching_names(text: str) -> list:
    """The OpInfo names the document lists as matching."""
    section = text.split("## Matching", 1)[1]
    return re.findall(r"`([^`]+)`", section)


def main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.op_db")
    parser.add_argument("--write", action="store_true", help=f"rewrite {DOC.name}")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="just these OpInfos")
    parser.add_argument("--max-samples", type=int, default=None,
                        help="the first N samples of each dtype only")
    options = parser.parse_args(argv)
    ops = load_op_db()
    if options.only:
        ops = [op for op in ops if op_id(op) in options.only or op.name in options.only]
    start = time.perf_counter()
    results = run_all(ops, options.max_samples,
                      progress=(lambda r: print(f"{r}  [{r.samples} samples, {r.seconds:.1f}s]",
                                                flush=True)) if options.only else None)
    seconds = time.perf_counter() - start
    text = document(results, seconds)
    if options.write:
        if options.only or options.max_samples:
            parser.error("--write needs the full run (no --only, no --max-samples)")
        DOC.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
