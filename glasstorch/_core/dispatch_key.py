"""Dispatch keys and key sets (c10/core/DispatchKey.h, DispatchKeySet.h).

A ``DispatchKeySet`` is one 64-bit word, split as PyTorch splits it:

    bits 0..15    backend bits: CPU, CUDA, HIP, ..., PrivateUse3, Meta (Meta highest)
    bits 16..     one bit per *functionality*; functionality k uses bit 16 + k - 1

Some functionalities are "per-backend" (Dense, Quantized, Sparse, SparseCsr,
NestedTensor, AutogradFunctionality): the runtime key is the pair
(functionality, highest backend bit), so Dense + CPU bit reads as ``CPU`` and
AutogradFunctionality + CUDA bit reads as ``AutogradCUDA``.

Dispatch takes the highest set bit, so priority is the enum order:

    highest_priority_key(ks):
        f = highest functionality bit
        if f is per-backend: return runtime key (f, highest backend bit)
        return f

The hot path never builds objects: key sets are plain ints, and
``RUNTIME_KEY_OF`` maps (functionality, backend) to a table slot.
"""
from __future__ import annotations

import enum

__all__ = ["DispatchKey", "DispatchKeySet", "BACKENDS", "NUM_BACKENDS"]

BACKENDS = ("CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy",
            "MTIA", "MAIA", "PrivateUse1", "PrivateUse2", "PrivateUse3", "Meta")
NUM_BACKENDS = len(BACKENDS)
BACKEND_MASK = (1 << NUM_BACKENDS) - 1

# Functionality keys in priority order (value = enum value in PyTorch 2.13).
FUNCTIONALITIES = (
    "Undefined", "Dense", "FPGA", "Vulkan", "Metal", "Quantized", "CustomRNGKeyId",
    "MkldnnCPU", "Sparse", "SparseCsr", "NestedTensor", "BackendSelect", "Fake", "Python",
    "FuncTorchDynamicLayerBackMode", "Functionalize", "Conjugate", "Negative", "ZeroTensor",
    "ADInplaceOrView", "AutogradOther", "AutogradFunctionality", "AutogradNestedTensor",
    "Tracer", "AutocastCPU", "AutocastMTIA", "AutocastMAIA", "AutocastXPU", "AutocastIPU",
    "AutocastHPU", "AutocastXLA", "AutocastMPS", "AutocastCUDA", "AutocastPrivateUse1",
    "FuncTorchBatched", "BatchedNestedTensor", "FuncTorchVmapMode", "Batched", "VmapMode",
    "FuncTorchGradWrapper", "DeferredInit", "PythonTLSSnapshot",
    "FuncTorchDynamicLayerFrontMode", "TESTING_ONLY_GenericWrapper",
    "TESTING_ONLY_GenericMode", "PreDispatch", "PythonDispatcher",
)
END_OF_FUNCTIONALITY = len(FUNCTIONALITIES)

# Per-backend functionality -> prefix of its runtime keys ("" for Dense: CPU, CUDA...).
PER_BACKEND = {"Dense": "", "Quantized": "Quantized", "Sparse": "Sparse",
               "SparseCsr": "SparseCsr", "NestedTensor": "NestedTensor",
               "AutogradFunctionality": "Autograd"}

ALIASES = ("Autograd", "CompositeImplicitAutograd", "FuncTorchBatchedDecomposition",
           "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd",
           "CompositeExplicitAutogradNonFunctional")


def _enum_members():
    members = [(name, i) for i, name in enumerate(FUNCTIONALITIES)]
    value = END_OF_FUNCTIONALITY
    for func, prefix in PER_BACKEND.items():
        for backend in BACKENDS:
            value += 1
            members.append((prefix + backend, value))
    for alias in ALIASES:
        value += 1
        members.append((alias, value))
    return members


DispatchKey = enum.IntEnum("DispatchKey", _enum_members())
DispatchKey.__doc__ = """Functionality keys, per-backend runtime keys, then alias keys."""
DispatchKey.__repr__ = DispatchKey.__str__ = lambda self: f"DispatchKey.{self.name}"
NUM_RUNTIME_KEYS = max(k.value for k in DispatchKey if k.name not in ALIASES) + 1

# -- bit arithmetic ------------------------------------------------------------

FUNC = {name: i for i, name in enumerate(FUNCTIONALITIES)}


def functionality_bit(func_value: int) -> int:
    return 1 << (NUM_BACKENDS + func_value - 1) if func_value else 0


_PER_BACKEND_VALUES = {FUNC[f] for f in PER_BACKEND}
# (functionality value, backend index) -> runtime DispatchKey, and its inverse.
RUNTIME_KEY_OF = {}
_PARTS_OF = {}
for _func, _prefix in PER_BACKEND.items():
    for _b, _backend in enumerate(BACKENDS):
        _key = DispatchKey[_prefix + _backend]
        RUNTIME_KEY_OF[FUNC[_func], _b] = _key
        _PARTS_OF[_key] = (FUNC[_func], _b)
for _name, _v in FUNC.items():
    if _v not in _PER_BACKEND_VALUES:
        _PARTS_OF[DispatchKey[_name]] = (_v, None)


def key_bits(key: DispatchKey) -> int:
    """The key set holding exactly ``key`` (a per-backend key sets two bits)."""
    if key.name in ALIASES:
        return _ALIAS_BITS[key]
    func, backend = _PARTS_OF[key]
    bits = functionality_bit(func)
    if backend is not None:
        bits |= 1 << backend
    return bits


def is_per_backend_functionality(func_value: int) -> bool:
    return func_value in _PER_BACKEND_VALUES


# For each functionality value: None if not per-backend, else a tuple of runtime
# keys indexed by backend. Lets highest_priority_key avoid dict lookups.
_RUNTIME_BY_FUNC = [
    tuple(RUNTIME_KEY_OF[f, b] for b in range(NUM_BACKENDS)) if f in _PER_BACKEND_VALUES else None
    for f in range(END_OF_FUNCTIONALITY)
]
_FUNC_KEYS = [DispatchKey(f) for f in range(END_OF_FUNCTIONALITY)]


def highest_priority_key(ks: int) -> DispatchKey:
    """The runtime key a key set dispatches to: one ``bit_length`` per half."""
    func = (ks >> NUM_BACKENDS).bit_length()
    per_backend = _RUNTIME_BY_FUNC[func]
    if per_backend is None:
        return _FUNC_KEYS[func]
    return per_backend[(ks & BACKEND_MASK).bit_length() - 1]


def highest_backend_index(ks: int) -> int:
    return (ks & BACKEND_MASK).bit_length() - 1


def full_after(key: DispatchKey) -> int:
    """``DispatchKeySet(FULL_AFTER, key)``: every functionality strictly below
    ``key``, all backends, and PythonDispatcher added back (as PyTorch does)."""
    func, _ = _PARTS_OF[key]
    below = functionality_bit(func) - 1 if func else 0
    return below | BACKEND_MASK | functionality_bit(FUNC["PythonDispatcher"])


def remove(ks: int, removed: int) -> int:
    """Removing keys clears functionality bits only; backend bits stay."""
    return ks & (BACKEND_MASK | ~removed)


def keys_of(ks: int):
    """Runtime keys in a set, lowest priority first (PyTorch's print order)."""
    out = []
    backends = [b for b in range(NUM_BACKENDS) if ks >> b & 1]
    for f in range(1, END_OF_FUNCTIONALITY):
        if ks & functionality_bit(f):
            per_backend = _RUNTIME_BY_FUNC[f]
            if per_backend is None:
                out.append(_FUNC_KEYS[f])
            else:
                out.extend(per_backend[b] for b in backends)
    return out


def _bits_of_names(*names) -> int:
    bits = 0
    for n in names:
        bits |= key_bits(DispatchKey[n])
    return bits


def _all_backends_of(func: str) -> int:
    return functionality_bit(FUNC[func]) | BACKEND_MASK


AUTOCAST_KEYS = _bits_of_names(*[f for f in FUNCTIONALITIES if f.startswith("Autocast")])
AUTOGRAD_KEYS = (functionality_bit(FUNC["AutogradFunctionality"])
                 | functionality_bit(FUNC["AutogradOther"])
                 | functionality_bit(FUNC["AutogradNestedTensor"]))
ADINPLACEORVIEW = functionality_bit(FUNC["ADInplaceOrView"])
BACKEND_SELECT = functionality_bit(FUNC["BackendSelect"])
PYTHON = functionality_bit(FUNC["Python"])
PYTHON_TLS_SNAPSHOT = functionality_bit(FUNC["PythonTLSSnapshot"])
# ATen's kTensorSubclassLike: tensors whose values live elsewhere (a Python
# subclass, a function transform's wrapper, a functional tensor); composite
# kernels take their out-of-place paths for them (``is_tensor_subclass_like``).
TENSOR_SUBCLASS_LIKE = (PYTHON | functionality_bit(FUNC["FuncTorchGradWrapper"])
                        | functionality_bit(FUNC["FuncTorchBatched"])
                        | functionality_bit(FUNC["Functionalize"]))
DENSE = functionality_bit(FUNC["Dense"])
SPARSE = functionality_bit(FUNC["Sparse"])           # COO tensors: SparseCPU, SparseMeta
SPARSE_CSR = functionality_bit(FUNC["SparseCsr"])    # compressed ones: SparseCsrCPU ...
AUTOGRAD_FUNCTIONALITY = functionality_bit(FUNC["AutogradFunctionality"])
AUTOCAST_FOR_BACKEND = {"cpu": functionality_bit(FUNC["AutocastCPU"]),
                        "cuda": functionality_bit(FUNC["AutocastCUDA"])}

# What an alias key covers (pytorch-facts §1.6, checked against _dispatch_dump_table),
# as runtime-key bit sets.
def _funcs_bits(funcs) -> int:
    bits = 0
    for f in funcs:
        bits |= _all_backends_of(f) if FUNC[f] in _PER_BACKEND_VALUES else functionality_bit(FUNC[f])
    return bits


_BACKEND_COMPONENT_BITS = _funcs_bits(("Dense", "Quantized", "Sparse", "SparseCsr", "FPGA",
                                       "Vulkan", "Metal", "CustomRNGKeyId", "MkldnnCPU"))
# NonFunctional: no Sparse keys, and not the XLA/Lazy backends (functionalized backends).
_NON_FUNCTIONAL_BITS = (_funcs_bits(("Dense", "Quantized", "SparseCsr", "FPGA", "Vulkan",
                                     "Metal", "CustomRNGKeyId", "MkldnnCPU"))
                        & ~(1 << BACKENDS.index("XLA")) & ~(1 << BACKENDS.index("Lazy")))
_AUTOGRAD_ALIAS_BITS = _all_backends_of("AutogradFunctionality") | AUTOGRAD_KEYS
_ALIAS_BITS = {
    DispatchKey.Autograd: _AUTOGRAD_ALIAS_BITS,
    DispatchKey.CompositeExplicitAutograd: _BACKEND_COMPONENT_BITS,
    DispatchKey.CompositeExplicitAutogradNonFunctional: _NON_FUNCTIONAL_BITS,
    DispatchKey.CompositeImplicitAutograd: _BACKEND_COMPONENT_BITS | _funcs_bits(("NestedTensor",))
    | _AUTOGRAD_ALIAS_BITS,
    DispatchKey.CompositeImplicitAutogradNestedTensor: _all_backends_of("NestedTensor")
    | functionality_bit(FUNC["AutogradNestedTensor"]),
    DispatchKey.FuncTorchBatchedDecomposition: functionality_bit(FUNC["FuncTorchBatched"]),
}


def runtime_keys_of_alias(alias: DispatchKey):
    """The runtime keys (table slots) an alias registration fills, plus Undefined
    for the composite aliases (PyTorch reserves that slot for them)."""
    bits = _ALIAS_BITS[alias]
    keys = [k for k in keys_of(bits) if key_bits(k) & bits == key_bits(k)]
    if alias.name.startswith("Composite"):
        keys.append(DispatchKey.Undefined)
    return keys


def is_alias(key: DispatchKey) -> bool:
    return key.name in ALIASES


def backend_key_for_autograd_key(key: DispatchKey):
    """AutogradCPU -> CPU: the backend whose kernels an Autograd<B> slot depends on."""
    parts = _PARTS_OF.get(key)
    if parts and parts[0] == FUNC["AutogradFunctionality"]:
        return RUNTIME_KEY_OF[FUNC["Dense"], parts[1]]
    return None


class DispatchKeySet:
    """``torch._C.DispatchKeySet``: an immutable wrapper over the int bitset."""

    __slots__ = ("repr",)

    def __init__(self, keys=0):
        if isinstance(keys, DispatchKey):
            keys = key_bits(keys)
        elif isinstance(keys, DispatchKeySet):
            keys = keys.repr
        self.repr = int(keys)

    def has(self, key: DispatchKey) -> bool:
        bits = key_bits(key)
        return self.repr & bits == bits

    def add(self, key: DispatchKey) -> "DispatchKeySet":
        return DispatchKeySet(self.repr | key_bits(key))

    def remove(self, key: DispatchKey) -> "DispatchKeySet":
        return DispatchKeySet(remove(self.repr, key_bits(key)))

    def highestPriorityTypeId(self) -> DispatchKey:
        return highest_priority_key(self.repr)

    def __or__(self, other):
        return DispatchKeySet(self.repr | DispatchKeySet(other).repr)

    def __and__(self, other):
        return DispatchKeySet(self.repr & DispatchKeySet(other).repr)

    def __sub__(self, other):
        return DispatchKeySet(remove(self.repr, DispatchKeySet(other).repr))

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self.repr == other.repr

    def __hash__(self):
        return hash(self.repr)

    def __iter__(self):
        return iter(keys_of(self.repr))

    def __repr__(self):
        return "DispatchKeySet(" + ", ".join(k.name for k in keys_of(self.repr)) + ")"

    __str__ = __repr__
