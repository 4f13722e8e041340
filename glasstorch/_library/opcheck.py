"""``torch.library.opcheck``: is an operator registered as it behaves?
(torch/testing/_internal/optests: generate_tests.opcheck and its checkers)

Each check runs on fresh clones of the sample inputs:

test_schema
    Run the op below autograd and compare every argument before and after
    (values, strides, storage) and every output's memory against the
    arguments: a mutation of an argument not declared ``Tensor(a!)``, an
    output aliasing an input or another output without a shared alias
    annotation, or an input returned as-is, fails with the messages of
    PyTorch's SchemaCheckMode.  PyTorch checks every operator the call
    reaches; this checks the operator itself.
test_autograd_registration
    With an input requiring grad: the op must have a kernel at the Autograd
    key of the inputs' device (or Autograd, or CompositeImplicitAutograd), or
    else produce no output that requires grad.
test_faketensor
    Run the op on FakeTensors (FakeTensorMode.from_tensor) and on the real
    inputs, below autograd, and compare the outputs' count, aliasing, sizes,
    dtypes, devices, significant strides, storage offsets and requires_grad
    (PyTorch's CrossRefFakeMode).
test_aot_dispatch_dynamic / _static
    glasstorch has no AOTAutograd yet.  PyTorch traces the op's forward (and,
    if an output requires grad, its backward: ``autograd.grad`` of the sum of
    the outputs' abs-sums) on FakeTensors, then runs the traced graph on the
    real inputs and compares values and gradients with eager mode.  Here the
    same forward/backward runs on FakeTensors (it must not fail: fake impl,
    setup_context and backward have to work without data), and a second
    eager run with the same seed must reproduce the first one's values and
    gradients.  Functionalization and dynamic shapes are not exercised.
"""
from __future__ import annotations

import functools

from .._core import dispatch_key as dk
from .._core.tls import exclude_keys
from .._dispatcher.dispatcher import OpOverload, OpOverloadPacket
from .._tensor import Tensor
from .custom_ops import CustomOpDef
from .utils import fill_defaults, is_builtin, normalize_arguments

__all__ = ["opcheck", "OpCheckError"]


class OpCheckError(Exception):
    pass


def opcheck(op, args, kwargs, *, test_utils, raise_exception, rtol, atol) -> dict:
    """Run the checks named in ``test_utils`` on ``op(*args, **kwargs)``; returns
    ``{check: "SUCCESS" or the exception}``, or raises OpCheckError at the first
    failure when ``raise_exception``."""
    if (rtol is None) ^ (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify "
                         "both")
    kwargs = {} if kwargs is None else kwargs
    if isinstance(op, CustomOpDef):
        op = op._opoverload
    if isinstance(op, OpOverloadPacket):
        op = _resolve_unique_overload_or_throw(op)
    if not isinstance(op, OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. "
                         f"torch.ops.aten.sin.default, got {type(op)}")
    if test_utils == "ALL":
        test_utils = tuple(ALL_TEST_UTILS)
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils) <= set(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be "
                         f"subset of {tuple(ALL_TEST_UTILS)} but it was not")
    results = {}
    for name in test_utils:
        try:
            ALL_TEST_UTILS[name](op, args, kwargs, rtol=rtol, atol=atol)
            results[name] = "SUCCESS"
        except Exception as ex:  # noqa: BLE001 - the failure is the check's result
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {ex} (scroll up for "
                                   f"stack trace)") from ex
            results[name] = ex
    return results


def _resolve_unique_overload_or_throw(packet):
    names = packet.overloads()
    if len(names) != 1:
        overload_names = ["" if n == "default" else n for n in names]
        raise RuntimeError(f"opcheck can only test operators without overloads. Got the "
                           f"following overloads for {packet._qualified_name.replace('.', '::')}"
                           f": {overload_names}")
    return getattr(packet, names[0])


# -- shared helpers ---------------------------------------------------------------------

def _map_tensors(fn, value):
    """``fn`` applied to every tensor in (nested lists/tuples/dicts of) ``value``."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: _map_tensors(fn, v) for k, v in value.items()}
    return value


def _leaves(value) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


def _clone_input(t):
    """A copy with the same strides; a leaf keeps its requires_grad."""
    from ..autograd.grad_mode import no_grad
    with no_grad():
        copy = t.clone()
    if t.is_leaf:
        copy.requires_grad_(t.requires_grad)
    return copy


def _is_abstract(t) -> bool:
    return t.is_meta or hasattr(t, "fake_mode")


def _skip(args, kwargs) -> bool:
    """Checks do not apply to meta or fake inputs."""
    return any(_is_abstract(t) for t in _leaves((args, kwargs)) if isinstance(t, Tensor))


def _below_autograd():
    return exclude_keys(dk.AUTOGRAD_KEYS)


def _storage(t):
    return id(t.untyped_storage())


def _overlaps(a, b) -> bool:
    """Do two tensors share bytes? (``torch._C._overlaps``)"""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or _storage(a) != _storage(b):
        return False
    return _extent(a)[0] < _extent(b)[1] and _extent(b)[0] < _extent(a)[1]


def _extent(t):
    """The byte range [first, last + 1) that ``t`` covers in its storage."""
    if t.numel() == 0:
        return (0, 0)
    last = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    return (t.storage_offset() * t.element_size(), (last + 1) * t.element_size())


def _same_values(before, after) -> bool:
    from .. import allclose, equal
    if before.dtype.is_floating_point or before.dtype.is_complex:
        return allclose(before, after, equal_nan=True)
    return equal(before, after)


# -- test_schema --------------------------------------------------------------------------

def check_schema(op, args, kwargs, *, rtol=None, atol=None):
    args, kwargs = _map_tensors(_clone_input, (args, kwargs))
    if _skip(args, kwargs):
        return None
    schema = op._schema
    bound_args, bound_kwargs = fill_defaults(schema, *normalize_arguments(op, args, kwargs))
    values = list(bound_args) + [bound_kwargs[a.name] for a in schema.arguments if a.kwarg_only]
    before = [_map_tensors(_clone_input, v) for v in values]
    layout = [[(t.stride(), _storage(t)) if isinstance(t, Tensor) else None for t in _leaves(v)]
              for v in values]
    with _below_autograd():
        out = op(*args, **kwargs)
    outputs = out if isinstance(out, tuple) else (out,)
    for i, (arg, after) in enumerate(zip(schema.arguments, values)):
        if after is None:
            continue
        name = "input" if arg.name == "self" else arg.name
        for j, output in enumerate(outputs):
            if _overlaps(output, after) and not _may_alias(arg, _return(schema, j)):
                raise RuntimeError(f"Argument {name} is not defined to alias output but was "
                                   f"aliasing")
            if after is output and isinstance(after, Tensor) and not arg.is_write:
                raise RuntimeError("Dispatcher operators below autograd are not allowed to "
                                   f"directly return inputs.\nHowever, we found that "
                                   f"`outputs[{j}] is {name}")
        mutated = any(_has_mutated(b, a, md) for b, a, md in
                      zip(_leaves(before[i]), _leaves(after), layout[i]))
        if mutated and not arg.is_write:
            raise RuntimeError(f"Argument {name} is not defined as mutable but was mutated")
    for i in range(len(outputs)):
        for j in range(i + 1, len(outputs)):
            if _overlaps(outputs[i], outputs[j]) and \
                    not _may_alias(_return(schema, i), _return(schema, j)):
                raise RuntimeError(f"Outputs {i} and {j} alias unexpectedly")
    return out


def _return(schema, j):
    return schema.returns[j] if j < len(schema.returns) else None


def _may_alias(a, b) -> bool:
    """Do two schema arguments/returns share an alias set (``Tensor(a)``)?"""
    return a is not None and b is not None and \
        a.alias_info is not None and b.alias_info is not None and \
        bool(a.alias_info.before_set & b.alias_info.before_set)


def _has_mutated(before, after, layout) -> bool:
    if not (type(before) is Tensor and type(after) is Tensor) or layout is None:
        return False
    stride, storage = layout
    return not (before.shape == after.shape and _same_values(before, after)
                and stride == after.stride() and storage == _storage(after))


# -- test_autograd_registration --------------------------------------------------------------

def check_autograd_registration(op, args, kwargs, *, rtol=None, atol=None):
    from .. import _C
    if _skip(args, kwargs):
        return
    args, kwargs = _map_tensors(_clone_input, (args, kwargs))
    flat_args = _leaves((args, kwargs))
    tensors = [a for a in flat_args if isinstance(a, Tensor)]
    if not any(t.requires_grad for t in tensors):
        return
    device_types = {t.device.type for t in tensors}
    if not device_types <= {"cpu", "cuda", "xpu"}:
        raise NotImplementedError(f"autograd_registration_check: NYI devices other than "
                                  f"CPU/CUDA/XPU, got {device_types}")
    key = next(f"Autograd{d.upper()}" for d in ("cuda", "cpu", "xpu") if d in device_types)
    if any(_C._dispatch_has_kernel_for_dispatch_key(op.name(), k)
           for k in (key, "Autograd", "CompositeImplicitAutograd")):
        return
    all_outs = op(*args, **kwargs)
    input_ids = {id(a) for a in flat_args}
    if not any(isinstance(t, Tensor) and t.requires_grad and id(t) not in input_ids
               for t in _leaves(all_outs)):
        return
    raise AssertionError(
        f"{op.name()}: at least one output of this operator has requires_grad=True but the "
        f"operator does not have an autograd kernel defined at an autograd key (e.g. "
        f"DispatchKey::Autograd). This could mean that you have incorrectly registered an "
        f"autograd kernel to a non-Autograd DispatchKey, which may lead to silently incorrect "
        f"results. If your operator consists of regular PyTorch operations, consider not using "
        f"an operator at all or registering your operator as CompositeImplicitAutograd. If you "
        f"have an autograd.Function registered to a backend (CPU/CUDA/XPU) key, the correct "
        f"location for it is the Autograd key.")


# -- test_faketensor ------------------------------------------------------------------------

def _fake_copies(mode, value):
    return _map_tensors(functools.partial(mode.from_tensor, static_shapes=True), value)


def _metadata_mismatch(message):
    from .._subclasses.fake_tensor import MetadataMismatchError
    return MetadataMismatchError(message)


def check_faketensor(op, args, kwargs, *, rtol=None, atol=None):
    from .._subclasses.fake_tensor import FakeTensorMode, MetadataMismatchError
    if _skip(args, kwargs):
        return
    args, kwargs = _map_tensors(_clone_input, (args, kwargs))
    context = f"When comparing the output of {op} on FakeTensor and concrete Tensors, found"
    with _below_autograd():
        fake_r = None
        if not is_builtin(op):
            with FakeTensorMode() as mode:
                fake_args, fake_kwargs = _fake_copies(mode, (args, kwargs))
                fake_r = op(*fake_args, **fake_kwargs)
        r = op(*args, **kwargs)
    if fake_r is None:
        return
    r_flat, f_flat = _leaves(r), _leaves(fake_r)
    if len(f_flat) != len(r_flat):
        raise AssertionError(f"{context} mismatch in number of returns {len(f_flat)} != "
                             f"{len(r_flat)}")
    _check_alias_info(context, r, (args, kwargs), fake_r, (fake_args, fake_kwargs))
    for idx, (r_out, f_out) in enumerate(zip(r_flat, f_flat)):
        if isinstance(r_out, Tensor) != isinstance(f_out, Tensor):
            raise AssertionError(f"{context} mismatched number of tensor outputs")
        if isinstance(r_out, Tensor):
            try:
                _check_fake_real_tensors(r_out, f_out)
            except MetadataMismatchError as e:
                where = "" if len(r_flat) == 1 else f" for output[{idx}]"
                raise _metadata_mismatch(f"{context} mismatched tensor metadata{where}: "
                                         f"{e}") from e


def _tensors(value) -> list:
    return [t for t in _leaves(value) if isinstance(t, Tensor)]


def _check_alias_info(context, real_out, real_in, fake_out, fake_in):
    def outputs_alias_inputs(outputs, inputs):
        storages = {_storage(t) for t in _tensors(inputs)}
        return any(_storage(t) in storages for t in _tensors(outputs))

    def outputs_are_inputs(outputs, inputs):
        ids = {id(t) for t in _tensors(inputs)}
        return any(id(t) in ids for t in _tensors(outputs))

    def outputs_alias_each_other(outputs):
        storages = [_storage(t) for t in _tensors(outputs)]
        return len(set(storages)) != len(storages)

    for what, check in (("outputs_alias_inputs", outputs_alias_inputs),
                        ("outputs_are_inputs", outputs_are_inputs)):
        real, fake = check(real_out, real_in), check(fake_out, fake_in)
        if real != fake:
            raise _metadata_mismatch(f"{context} mismatch in {what} check {fake} != {real}")
    real, fake = outputs_alias_each_other(real_out), outputs_alias_each_other(fake_out)
    if real != fake:
        raise _metadata_mismatch(f"{context} mismatch in outputs_alias_each_other check "
                                    f"{fake} != {real}")


def _check_fake_real_tensors(real, fake):
    if real.requires_grad != fake.requires_grad:
        raise _metadata_mismatch(
            " mismatched requires_grad-ness of outputs. This usually means that you have added "
            "autograd support for your operator at a dispatch key other than Autograd, which "
            "will lead to problems")
    if real.storage_offset() != fake.storage_offset():
        raise _metadata_mismatch(" mismatched storage offset")
    _compare_tensor_meta(real, fake, check_strides=True)


def _compare_tensor_meta(a, b, check_strides):
    """``torch._prims_common.compare_tensor_meta``."""
    if a.shape != b.shape:
        raise _metadata_mismatch(f"Shapes {a.shape} and {b.shape} are not equal!")
    if a.dtype != b.dtype:
        raise _metadata_mismatch(f"Dtypes {a.dtype} and {b.dtype} are not equal!")
    if a.device != b.device:
        raise _metadata_mismatch(f"Devices {a.device} and {b.device} are not equal!")
    if check_strides:
        mismatch = next((i for i, n in enumerate(a.shape)
                         if n > 1 and a.stride(i) != b.stride(i)), None)
        if mismatch is not None:
            raise _metadata_mismatch(f"Stride mismatch! Strides are {a.stride()} and "
                                        f"{b.stride()} (mismatched at {mismatch})!")


# -- test_aot_dispatch ----------------------------------------------------------------------

_OUTPUTS_MSG = ("Outputs of the operator are different in eager-mode PyTorch vs AOTDispatcher "
                "tracing. This means the operator will have incorrect output underneath "
                "torch.compile. This could be because the operator's implementation not "
                "traceable.")
_GRADIENTS_MSG = ("Gradients of the operator are different in eager-mode PyTorch vs "
                  "AOTDispatcher. This means the operator will have incorrect gradients "
                  "underneath torch.compile. This could be because the operator's backward is "
                  "incorrectly registered or not traceable.")


def check_aot_dispatch(op, args, kwargs, *, rtol=None, atol=None):
    from .. import clone
    from .._subclasses.fake_tensor import FakeTensorMode
    if _skip(args, kwargs):
        return

    def func(*args, **kwargs):     # the op must not see (and mutate) the caller's tensors
        args, kwargs = _map_tensors(clone, (args, kwargs))
        return op(*args, **kwargs)

    def run(args, kwargs):
        """outputs, and gradients of the outputs' summed abs-sums if any are needed."""
        out = _with_seed(func, args, kwargs)
        diff_args = [t for t in _tensors((args, kwargs)) if t.requires_grad]
        if not (diff_args and any(t.requires_grad for t in _tensors(out))):
            return out, None
        total = 0
        for t in _tensors(out):
            total = total + t.sum().abs()
        from ..autograd import grad
        return out, grad(total, diff_args, allow_unused=True)

    out, grads = run(args, kwargs)
    with FakeTensorMode() as mode:     # "tracing": the forward and backward work without data
        run(*_fake_copies(mode, (args, kwargs)))
    again_out, again_grads = run(args, kwargs)
    _expect(lambda: _assert_close(again_out, out, rtol, atol), _OUTPUTS_MSG)
    _expect(lambda: _assert_close(again_grads, grads, rtol, atol), _GRADIENTS_MSG)


def _expect(check, message):
    try:
        check()
    except AssertionError as e:
        raise AssertionError(message) from e


def _with_seed(fn, args, kwargs):
    """torch.testing._utils.wrapper_set_seed: seed 42, caller's RNG state kept."""
    from ..random import fork_rng, manual_seed
    with fork_rng():
        manual_seed(42)
        return fn(*args, **kwargs)


# torch.testing.assert_close's default tolerances: dtype name -> (rtol, atol)
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}


def _assert_close(actual, expected, rtol, atol):
    from .. import allclose, equal
    actual, expected = _leaves(actual), _leaves(expected)
    assert len(actual) == len(expected), f"{len(actual)} values != {len(expected)} values"
    for a, e in zip(actual, expected):
        if not isinstance(e, Tensor):
            assert a == e, f"{a!r} != {e!r}"
            continue
        assert (a.shape, a.dtype) == (e.shape, e.dtype), \
            f"{a.shape} {a.dtype} != {e.shape} {e.dtype}"
        default_rtol, default_atol = _TOLERANCES.get(str(e.dtype)[len("torch."):], (0, 0))
        a, e = a.detach(), e.detach()
        close = allclose(a, e, rtol=default_rtol if rtol is None else rtol,
                         atol=default_atol if atol is None else atol, equal_nan=True) \
            if e.dtype.is_floating_point or e.dtype.is_complex else equal(a, e)
        assert close, "Tensor-likes are not close!"


ALL_TEST_UTILS = {
    "test_schema": check_schema,
    "test_autograd_registration": check_autograd_registration,
    "test_faketensor": check_faketensor,
    "test_aot_dispatch_static": check_aot_dispatch,     # without AOTAutograd, static and
    "test_aot_dispatch_dynamic": check_aot_dispatch,    # dynamic shapes check the same
}
