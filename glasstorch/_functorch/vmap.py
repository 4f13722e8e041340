"""``vmap``'s Python half (torch/_functorch/vmap.py): checking ``in_dims`` against
the inputs, wrapping them as BatchedTensors of a new level, running the
function, and unwrapping its outputs at ``out_dims``.

    vmap(f, in_dims=0, out_dims=0)(x, y)
      level = push a VmapInterpreter(batch_size, randomness)
      f(BatchedTensor(x, in_dim, level), ...)          every op batched by its rule
      outputs: value with the batch dim moved to out_dim
      pop the interpreter
"""
from __future__ import annotations

import functools

from .._tensor import Tensor
from ..utils import _pytree as pytree
from .batched_tensor import add_batch_dim, remove_batch_dim
from .pyfunctorch import VmapInterpreter, interpreter_scope, next_level

__all__ = ["vmap_impl"]

_RANDOMNESS = ("error", "different", "same")


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _check_randomness(randomness) -> None:
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def _check_in_dims(func, in_dims, args) -> None:
    if not isinstance(in_dims, int) and not isinstance(in_dims, tuple):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected "
                         f"`in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. The "
                         "latter is unsupported.")


def _flat_in_dims(func, in_dims, args):
    """One in_dim per leaf of ``args`` (PyTorch's _process_batched_inputs checks)."""
    flat_args, args_spec = pytree.tree_flatten(args)
    if isinstance(in_dims, int):
        return flat_args, [in_dims] * len(flat_args), args_spec
    try:
        flat_dims = pytree._broadcast_to_and_flatten(in_dims, args_spec)
    except Exception:
        flat_dims = None
    if flat_dims is None:
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
            f"with the structure of `inputs`. in_dims has structure "
            f"{pytree.tree_flatten(in_dims)[1]} but inputs has structure {args_spec}.")
    return flat_args, flat_dims, args_spec


def _batch_size(func, in_dims, flat_args, flat_dims) -> int:
    sizes = []
    for arg, dim in zip(flat_args, flat_dims):
        if dim is None:
            continue
        if not isinstance(dim, int):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                             f"in_dim={dim} for an input but in_dim must be either an integer "
                             "dimension or None.")
        if not isinstance(arg, Tensor):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                             f"in_dim={dim} for an input but the input is of type {type(arg)}. "
                             "We cannot vmap over non-Tensor arguments, please use None as the "
                             "respective in_dim")
        if not -arg.dim() <= dim < arg.dim():
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                             f"in_dim={dim} for some input, but that input is a Tensor of "
                             f"dimensionality {arg.dim()} so expected in_dim to satisfy "
                             f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        sizes.append(arg.shape[dim])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one "
                         "input must be a Tensor with a non-None in_dim (there is no dimension "
                         "to vmap over)")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _unwrap_outputs(func, outputs, out_dims, level, batch_size):
    flat_out, out_spec = pytree.tree_flatten(outputs)
    if isinstance(out_dims, int) or out_dims is None:
        flat_dims = [out_dims] * len(flat_out)
    else:
        flat_dims = pytree._broadcast_to_and_flatten(out_dims, out_spec)
        if flat_dims is None:
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                f"compatible with the structure of `outputs`. out_dims has structure "
                f"{pytree.tree_flatten(out_dims)[1]} but outputs has structure {out_spec}.")
    result = []
    for out, dim in zip(flat_out, flat_dims):
        if dim is None:
            if isinstance(out, Tensor) and getattr(out, "_level", None) == level:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 "BatchedTensor when out_dim is None")
            result.append(out)
            continue
        if not isinstance(out, Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(out)}. Did you mean to set out_dims= to "
                             "None for output?")
        result.append(remove_batch_dim(out, level, batch_size, dim))
    return pytree.tree_unflatten(result, out_spec)


def vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    _check_randomness(randomness)
    _check_in_dims(func, in_dims, args)
    flat_args, flat_dims, args_spec = _flat_in_dims(func, in_dims, args)
    batch_size = _batch_size(func, in_dims, flat_args, flat_dims)
    if chunk_size is not None and chunk_size < batch_size:
        return _chunked(func, in_dims, out_dims, randomness, chunk_size, flat_args, flat_dims,
                        args_spec, batch_size, kwargs)
    return _flat_vmap(func, out_dims, randomness, flat_args, flat_dims, args_spec, batch_size,
                      kwargs)


def _flat_vmap(func, out_dims, randomness, flat_args, flat_dims, args_spec, batch_size, kwargs):
    level = next_level()
    with interpreter_scope(VmapInterpreter(level, batch_size, randomness)):
        batched = [arg if dim is None else add_batch_dim(arg, dim, level)
                   for arg, dim in zip(flat_args, flat_dims)]
        outputs = func(*pytree.tree_unflatten(batched, args_spec), **kwargs)
        return _unwrap_outputs(func, outputs, out_dims, level, batch_size)


def _chunked(func, in_dims, out_dims, randomness, chunk_size, flat_args, flat_dims, args_spec,
             batch_size, kwargs):
    """``chunk_size``: vmap over slices of at most ``chunk_size`` examples, outputs
    concatenated along their out_dims (randomness "same" draws once per chunk, as PyTorch's)."""
    chunks = []
    for start in range(0, batch_size, chunk_size):
        size = min(chunk_size, batch_size - start)
        sliced = [arg if dim is None else arg.narrow(dim, start, size)
                  for arg, dim in zip(flat_args, flat_dims)]
        chunks.append(_flat_vmap(func, out_dims, randomness, sliced, flat_dims, args_spec, size,
                                 kwargs))
    flat_chunks = [pytree.tree_flatten(c)[0] for c in chunks]
    out_spec = pytree.tree_flatten(chunks[0])[1]
    flat_dims_out = [out_dims] * len(flat_chunks[0]) if isinstance(out_dims, int) or \
        out_dims is None else pytree._broadcast_to_and_flatten(out_dims, out_spec)
    from .. import cat
    joined = [parts[0] if dim is None else cat(list(parts), dim)
              for parts, dim in zip(zip(*flat_chunks), flat_dims_out)]
    return pytree.tree_unflatten(joined, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``torch.vmap`` / ``torch.func.vmap``: ``func`` over a batch dimension of its inputs."""
    _check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
    return wrapped
