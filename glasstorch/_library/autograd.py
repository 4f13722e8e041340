"""The Autograd kernel of a custom operator (torch/_library/autograd.py).

``make_autograd_impl(op, info)`` builds, once per operator, an
``autograd.Function`` subclass named ``GeneratedBackwardFor_<ns>_<op>_<overload>``
(so ``y.grad_fn`` is a ``GeneratedBackwardFor_mylib_foo_defaultBackward``) and
the kernel registered at the Autograd alias key:

    autograd_impl(keyset, *args, **kwargs)
        grad mode on and a tensor argument requires grad?
          yes: Generated.apply(*args, metadata)      records the node
          no:  run below autograd
        forward / "below autograd": TLS excludes the autograd keys (so the
        implementation's own ops record nothing) and the op is redispatched
        with ``keyset & after_autograd``: ADInplaceOrView, then the backend.
        setup_context(ctx=, inputs=, output=) runs after the forward, with the
        defaults the dispatcher dropped put back into ``inputs``.

``info`` holds the user's ``_backward_fn`` and ``_setup_context_fn`` and is read
at call time, so ``register_autograd`` may come after the op was defined.  The
extra ``metadata`` argument gets a None gradient and is hidden from the user's
``ctx.needs_input_grad``.  Operators with ``Tensor[]`` arguments or returns
flatten the lists so every tensor is a Function input/output of its own.
"""
from __future__ import annotations

from dataclasses import dataclass

from .._core import dispatch_key as dk
from .._core.dispatch_key import DispatchKey
from .._core.tls import exclude_keys, state as _tls
from .._tensor import Tensor
from ..autograd.function import Function
from .utils import any_requires_grad, fill_defaults, has_kwarg_only_args, has_tensorlist_arg, \
    normalize_arguments

__all__ = ["Info", "make_autograd_impl", "supports_tensorlist"]

# torch._C._after_autograd_keyset: everything below the autograd keys
AFTER_AUTOGRAD = dk.full_after(DispatchKey.AutogradOther)


@dataclass
class Info:
    """Backward and setup_context of an operator registered without custom_op."""
    _backward_fn: object
    _setup_context_fn: object


@dataclass
class _Metadata:
    keyset: int
    keyword_only_args: dict


def make_autograd_impl(op, info):
    """The Autograd kernel (KEYSET convention) of ``op``."""
    name = f"GeneratedBackwardFor_{op.namespace}_{op.overloadpacket.__name__}_{op._overloadname}"
    has_kwarg_only = has_kwarg_only_args(op._schema)

    def run_below_autograd(args, metadata):
        with exclude_keys(dk.AUTOGRAD_KEYS):    # AutoDispatchBelowAutograd
            return op.redispatch(metadata.keyset & AFTER_AUTOGRAD, *args,
                                 **metadata.keyword_only_args)

    def forward(ctx, *args):
        metadata, args = args[-1], args[:-1]
        result = run_below_autograd(args, metadata)
        if info._setup_context_fn:
            args, kwargs = fill_defaults(op._schema, args, metadata.keyword_only_args)
            with exclude_keys(dk.AUTOGRAD_KEYS):
                if has_kwarg_only:
                    info._setup_context_fn(ctx=ctx, inputs=args, keyword_only_inputs=kwargs,
                                           output=result)
                else:
                    info._setup_context_fn(ctx=ctx, inputs=args, output=result)
        return result

    def backward(ctx, *grads):
        if info._backward_fn:
            needs_input_grad = ctx.needs_input_grad
            try:
                ctx.needs_input_grad = needs_input_grad[:-1]
                result = info._backward_fn(ctx, *grads)
            finally:
                ctx.needs_input_grad = needs_input_grad
            return (*result, None) if isinstance(result, tuple) else (result, None)
        raise RuntimeError(f"Trying to backward through {op} but no autograd formula was "
                           f"registered. Please use register_autograd to add one.")

    generated = type(name, (Function,), {"forward": staticmethod(forward),
                                          "backward": staticmethod(backward)})
    if has_tensorlist_arg(op._schema):
        generated = supports_tensorlist(generated)

    def autograd_impl(keyset, *args, **kwargs):
        args, kwargs = normalize_arguments(op, args, kwargs)
        metadata = _Metadata(keyset, kwargs)
        if _tls.grad_enabled and any_requires_grad(args):
            return generated.apply(*args, metadata)
        return run_below_autograd(args, metadata)

    return autograd_impl


# -- lists of tensors -------------------------------------------------------------------
# A "spec" records, per top-level value, None (kept as is) or the length of the
# list of tensors it was flattened into.

def _flatten(values, is_list):
    flat, spec = [], []
    for value in values:
        if is_list(value):
            flat.extend(value)
            spec.append(len(value))
        else:
            flat.append(value)
            spec.append(None)
    return flat, tuple(spec)


def _unflatten(flat, spec):
    out, i = [], 0
    for n in spec:
        if n is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + n]))
            i += n
    return tuple(out)


def _is_tensor_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, Tensor) for v in value)


def _is_optional_tensor_list(value) -> bool:
    return isinstance(value, list) and all(v is None or isinstance(v, Tensor) for v in value)


@dataclass
class _TensorListMetadata:
    input_spec: tuple
    output_spec: tuple | None = None
    result_is_tuple: bool | None = None


def supports_tensorlist(cls):
    """Let ``cls`` (an autograd.Function) take and return lists of tensors: each
    list is spread into separate arguments/outputs around the original
    forward/backward, so autograd sees every tensor."""
    orig_forward, orig_backward, orig_apply = cls.forward, cls.backward, cls.apply

    def new_forward(ctx, *args):
        metadata, args = args[-1], args[:-1]
        result = orig_forward(ctx, *_unflatten(args, metadata.input_spec))
        metadata.result_is_tuple = isinstance(result, tuple)
        flat, metadata.output_spec = _flatten(result if metadata.result_is_tuple else (result,),
                                              _is_tensor_list)
        ctx._pt_metadata = metadata
        return tuple(flat)

    def new_backward(ctx, *grads):
        metadata = ctx._pt_metadata
        needs_input_grad = ctx.needs_input_grad
        try:
            ctx.needs_input_grad = _unflatten(needs_input_grad[:-1], metadata.input_spec)
            grad_inputs = orig_backward(ctx, *_unflatten(grads, metadata.output_spec))
        finally:
            ctx.needs_input_grad = needs_input_grad
        if not isinstance(grad_inputs, tuple):
            grad_inputs = (grad_inputs,)
        flat, spec = _flatten(grad_inputs, _is_optional_tensor_list)
        if spec != metadata.input_spec:
            raise RuntimeError(f"Expected the return from backward to be of the same structure "
                               f"as the inputs. Got: {spec} (return from backward), "
                               f"{metadata.input_spec} (inputs)")
        return (*flat, None)

    def new_apply(*args):
        flat, spec = _flatten(args, _is_tensor_list)
        metadata = _TensorListMetadata(spec)
        result = _unflatten(orig_apply(*flat, metadata), metadata.output_spec)
        return result if metadata.result_is_tuple else result[0]

    cls.forward = staticmethod(new_forward)
    cls.backward = staticmethod(new_backward)
    cls.apply = staticmethod(new_apply)
    return cls
