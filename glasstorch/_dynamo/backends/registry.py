"""``torch._dynamo.backends.registry``: compiler backends by name.

A backend takes ``(gm: GraphModule, example_inputs: list)`` and returns a
callable that runs the graph.  Built in: ``"eager"`` (the graph's own Python)
and ``"aot_eager"`` (AOTAutograd's forward and backward graphs, each run as
Python); both are tagged ``debug``, so ``list_backends()`` leaves them out, as
PyTorch's does.  ``"inductor"``, torch.compile's default, generates C (``glasstorch._inductor``).
"""
from __future__ import annotations

__all__ = ["register_backend", "lookup_backend", "list_backends"]

_BACKENDS: dict = {}
_TAGS: dict = {}


def register_backend(compiler_fn=None, name: str | None = None, tags=()):
    """Register ``compiler_fn`` under ``name`` (its ``__name__`` by default); a
    decorator when called without ``compiler_fn``."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    if not callable(compiler_fn):
        raise AssertionError(f"compiler_fn must be callable, got {compiler_fn!r}")
    name = name or compiler_fn.__name__
    if name in _BACKENDS:
        raise AssertionError(f"duplicate name: {name}")
    _BACKENDS[name], _TAGS[name] = compiler_fn, tuple(tags)
    return compiler_fn


def lookup_backend(compiler_fn):
    """A backend given by name, or the callable itself."""
    if isinstance(compiler_fn, str):
        if compiler_fn not in _BACKENDS:
            from ..exc import InvalidBackend
            raise InvalidBackend(name=compiler_fn)
        return _BACKENDS[compiler_fn]
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """The registered names, sorted, without those carrying an excluded tag."""
    excluded = set(exclude_tags or ())
    return sorted(n for n in _BACKENDS if not excluded & set(_TAGS[n]))


@register_backend(name="eager", tags=("debug",))
def eager(gm, fake_tensor_inputs, **kwargs):
    """Run the captured graph as it is."""
    return gm.forward


@register_backend(name="aot_eager", tags=("debug",))
def aot_eager(gm, fake_tensor_inputs, fw_compiler=None, bw_compiler=None, **kwargs):
    """AOTAutograd's forward and backward graphs, each run as its Python code
    (or given to ``fw_compiler`` / ``bw_compiler``, as Inductor does)."""
    from ..._functorch.aot_autograd import aot_module_simplified, nop
    from ..._functorch.partitioners import min_cut_rematerialization_partition
    return aot_module_simplified(gm, fake_tensor_inputs, fw_compiler=fw_compiler or nop,
                                 bw_compiler=bw_compiler or nop,
                                 partition_fn=kwargs.get("partition_fn",
                                                         min_cut_rematerialization_partition),
                                 decompositions=kwargs.get("decompositions"),
                                 inference_compiler=kwargs.get("inference_compiler"))


@register_backend(name="aot_eager_default_partitioner", tags=("debug",))
def aot_eager_default_partitioner(gm, fake_tensor_inputs, **kwargs):
    """``aot_eager`` splitting the joint graph as eager autograd does."""
    from ..._functorch.partitioners import default_partition
    return aot_eager(gm, fake_tensor_inputs, partition_fn=default_partition)


@register_backend(name="inductor")
def inductor(gm, example_inputs, **kwargs):
    """torch.compile's default backend: glasstorch's Inductor (``_inductor.compile_fx``)."""
    from ..._inductor.compile_fx import compile_fx
    return compile_fx(gm, example_inputs, **kwargs)
