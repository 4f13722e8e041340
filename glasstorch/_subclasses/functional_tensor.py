"""``torch._subclasses.functional_tensor``: FunctionalTensor and FunctionalTensorMode.

Functionalization runs a program with no mutation and (optionally) no aliasing
left, yet with the program's results: what ``torch.func.functionalize`` and
AOTAutograd hand to compilers.  PyTorch does the work in C++ at the
Functionalize key (FunctionalTensorWrapper, FunctionalStorageImpl,
FunctionalInverses); glasstorch does it here, in one TorchDispatchMode, with
the same bookkeeping (Note [functionalization]).

Note [functionalization]
    Every tensor the program sees is a FunctionalTensor wrapping its current
    value ``elem`` (a plain tensor).  Tensors that alias one another share a
    ``_FunctionalStorage``: the value of their common base, the writes not yet
    folded into it, and a generation counter.  A view remembers how it was
    made from that base: a list of ``_ViewStep`` (op and arguments).

    view op on x            y.elem = view(x.elem)  (view_copy with remove="mutations_and_views");
                            y shares x's storage, its steps are x's plus this one; x is not
                            synced and y starts at generation 0 (as a C++ view wrapper does),
                            so after any write y rebuilds itself at its first use
    x.add_(b) / add(.., out=x)
                            sync the arguments, x.elem = add(x.elem, b) (the functional op),
                            record the write (x.elem, x's steps) on the storage, bump its
                            generation, sync x
    any other op            sync the arguments, run it on the values, wrap the results
    sync(t)                 when t's generation is behind: fold each pending write into the
                            base, by replaying the writer's view steps forward from the base
                            and their inverses backward (select -> select_scatter, slice ->
                            slice_scatter, t -> t, view -> view ...); then rebuild t.elem from
                            the new base through t's own steps

    So ``a = x[0]; a.add_(1)`` on an input x runs ``select, add, select_scatter,
    select`` and ``functionalize`` ends with ``x.copy_(new value)``, in the order
    PyTorch's C++ runs them: a dispatch mode outside sees the same op sequence.
"""
from __future__ import annotations

import threading

from .._core.dispatch_key import DispatchKey
from .._dispatcher.dispatcher import ops
from .._ops.tags import Tag
from .._tensor import Tensor, _disabled_torch_function_impl
from ..utils import _pytree as pytree
from ..utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

__all__ = ["FunctionalTensor", "FunctionalTensorMode"]

aten = ops.aten

_state = threading.local()


def _functionalization_reapply_views_tls():
    """Whether a view taken now is replayed as a view (True) or as its ``*_copy``
    op, with scatters as inverses (False, the default): PyTorch's thread-local
    flag.  Each op of a FunctionalTensorMode runs with it set (True, or
    ``functionalize``'s choice); a view keeps the value it was taken with."""
    return getattr(_state, "reapply_views", False)


def _functionalize_enable_reapply_views(reapply_views):
    """Set the flag; answer its previous value (torch._functionalize_enable_reapply_views)."""
    old = _functionalization_reapply_views_tls()
    _state.reapply_views = bool(reapply_views)
    return old


def _op(name):
    """``aten.<packet>.<overload>`` from ``"packet.overload"``."""
    packet, _, overload = name.partition(".")
    return getattr(getattr(aten, packet), overload or "default")


def _bound(func, args, kwargs):
    """The op's arguments by name, defaults filled in (self included)."""
    values = {}
    for i, arg in enumerate(func._schema.arguments):
        if i < len(args):
            values[arg.name] = args[i]
        elif arg.name in kwargs:
            values[arg.name] = kwargs[arg.name]
        elif arg.has_default_value():
            values[arg.name] = arg.default_value
    return values


# -- view steps and their inverses (PyTorch's ViewMeta and FunctionalInverses) ----------

def _unsqueeze_to(mutated, base, dims, view):
    """The inverse of squeeze: put back base's size-1 dims among ``dims``, lowest first."""
    for d in sorted(d % base.dim() for d in dims):
        if base.shape[d] == 1:
            mutated = _op(view)(mutated, d)
    return mutated


def _expand_inverse(mutated, base, reapply):
    """The inverse of expand: base plus the writes' changes summed back onto it,
    ``base + sum_to(mutated - base)`` (PyTorch's; a clone stands for the sum when
    no dim was broadcast and views are not reapplied)."""
    delta = aten.sub.Tensor(mutated, base)
    leading = mutated.dim() - base.dim()
    dims = list(range(leading)) + [leading + i for i, n in enumerate(base.shape)
                                   if n == 1 and mutated.shape[leading + i] != 1]
    if dims:
        delta = aten.sum.dim_IntList(delta, dims, True)
        if leading:
            delta = _by("view.default", "view_copy.default")(reapply)(delta, list(base.shape))
    elif not reapply:
        delta = aten.clone.default(delta)
    return aten.add.Tensor(base, delta)


def _split_inverse(base, mutated, a, out_index):
    """The inverse of output ``out_index`` of split / split_with_sizes: a
    slice_scatter where that piece starts (dim wrapped, as PyTorch's inverse does)."""
    dim = a["dim"] % base.dim()
    if "split_sizes" in a:
        start = sum(a["split_sizes"][:out_index])
    else:
        start = out_index * a["split_size"]
    return aten.slice_scatter.default(base, mutated, dim, start, start + mutated.shape[dim], 1)


# view op -> (its copying op, inverse(base, mutated, arguments by name, out_index, reapply)).
# ``reapply`` (remove="mutations") undoes a view with a view where one exists; otherwise
# with the copying op or a scatter, as PyTorch's InverseReturnMode does.
def _by(view, copy):
    return lambda reapply: _op(view if reapply else copy)


_VIEWS = {
    "view.default": ("view_copy.default", lambda b, m, a, i, r:
                     _by("view.default", "view_copy.default")(r)(m, list(b.shape))),
    "view.dtype": ("view_copy.dtype", lambda b, m, a, i, r:
                   _by("view.dtype", "view_copy.dtype")(r)(m, b.dtype)),
    "_reshape_alias.default": ("_reshape_alias_copy.default", lambda b, m, a, i, r:
                               _by("view.default", "view_copy.default")(r)(m, list(b.shape))),
    "t.default": ("t_copy.default", lambda b, m, a, i, r: _by("t", "t_copy")(r)(m)),
    "transpose.int": ("transpose_copy.int", lambda b, m, a, i, r:
                      _by("transpose.int", "transpose_copy.int")(r)(m, a["dim0"], a["dim1"])),
    "permute.default": ("permute_copy.default", lambda b, m, a, i, r:
                        _by("permute", "permute_copy")(r)(
                            m, sorted(range(len(a["dims"])),
                                      key=lambda k: a["dims"][k] % len(a["dims"])))),
    "unsqueeze.default": ("unsqueeze_copy.default", lambda b, m, a, i, r:
                          _by("squeeze.dim", "squeeze_copy.dim")(r)(m, a["dim"])),
    "squeeze.default": ("squeeze_copy.default", lambda b, m, a, i, r: _unsqueeze_to(
        m, b, range(b.dim()), "unsqueeze" if r else "unsqueeze_copy")),
    "squeeze.dim": ("squeeze_copy.dim", lambda b, m, a, i, r: _unsqueeze_to(
        m, b, [a["dim"]], "unsqueeze" if r else "unsqueeze_copy")),
    "squeeze.dims": ("squeeze_copy.dims", lambda b, m, a, i, r: _unsqueeze_to(
        m, b, a["dim"], "unsqueeze" if r else "unsqueeze_copy")),
    "select.int": ("select_copy.int", lambda b, m, a, i, r:
                   aten.select_scatter.default(b, m, a["dim"], a["index"])),
    "slice.Tensor": ("slice_copy.Tensor", lambda b, m, a, i, r: aten.slice_scatter.default(
        b, m, a["dim"], a["start"], a["end"], a["step"])),
    "diagonal.default": ("diagonal_copy.default", lambda b, m, a, i, r:
                         aten.diagonal_scatter.default(b, m, a["offset"], a["dim1"], a["dim2"])),
    "as_strided.default": ("as_strided_copy.default", lambda b, m, a, i, r:
                           aten.as_strided_scatter.default(b, m, a["size"], a["stride"],
                                                           a["storage_offset"])),
    "expand.default": ("expand_copy.default", lambda b, m, a, i, r: _expand_inverse(m, b, r)),
    "unfold.default": ("unfold_copy.default", lambda b, m, a, i, r: aten.unfold_backward.default(
        m, list(b.shape), a["dimension"], a["size"], a["step"])),
    "alias.default": ("alias_copy.default", lambda b, m, a, i, r: _by("alias", "alias_copy")(r)(m)),
    "detach.default": ("detach_copy.default", lambda b, m, a, i, r: m),
    "lift_fresh.default": ("lift_fresh_copy.default", lambda b, m, a, i, r: m),
    "split.Tensor": ("split_copy.Tensor", lambda b, m, a, i, r: _split_inverse(b, m, a, i)),
    "split_with_sizes.default": ("split_with_sizes_copy.default",
                                 lambda b, m, a, i, r: _split_inverse(b, m, a, i)),
    "unbind.int": ("unbind_copy.int", lambda b, m, a, i, r:
                   aten.select_scatter.default(b, m, a["dim"] % b.dim(), i)),
}


class _ViewStep:
    """One view taken on the way from the storage's base to a tensor (ViewMeta),
    with the reapply-views flag it was taken under."""

    __slots__ = ("func", "args", "kwargs", "out_index", "reapply")

    def __init__(self, func, args, kwargs, out_index):
        self.func, self.args, self.kwargs, self.out_index = func, args, kwargs, out_index
        self.reapply = _functionalization_reapply_views_tls()

    def forward(self, base):
        op = self.func if self.reapply else _op(_VIEWS[str(self.func)[5:]][0])
        out = op(base, *self.args, **self.kwargs)
        return out if self.out_index is None else out[self.out_index]

    def inverse(self, base, mutated):
        named = _bound(self.func, (base,) + self.args, self.kwargs)
        return _VIEWS[str(self.func)[5:]][1](base, mutated, named, self.out_index, self.reapply)


class _FunctionalStorage:
    """What aliasing FunctionalTensors share (FunctionalStorageImpl): the base's
    value, the writes not yet applied to it and a generation per write."""

    __slots__ = ("base", "updates", "generation")

    def __init__(self, base):
        self.base, self.updates, self.generation = base, [], 0

    def apply_updates(self):
        """Fold each pending write into ``base``: views forward, inverses back."""
        for value, steps in self.updates:
            bases = [self.base]
            for step in steps[:-1]:
                bases.append(step.forward(bases[-1]))
            for step, base in zip(reversed(steps), reversed(bases)):
                value = step.inverse(base, value)
            self.base = value
        self.updates = []


# -- FunctionalTensor ---------------------------------------------------------------------

class FunctionalTensor(Tensor):
    """A tensor whose mutations and views are recorded, not performed: ``elem``
    is its current value (PyTorch's FunctionalTensor holds a C++
    FunctionalTensorWrapper there; this class is both)."""

    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, elem, mode, storage=None, steps=(), generation=0):
        out = cls._make_wrapper_subclass(cls, elem.shape, elem.stride(), elem.storage_offset(),
                                         dtype=elem.dtype, device=elem.device)
        out.elem = elem
        out._mode = mode
        out._fstorage = storage if storage is not None else _FunctionalStorage(elem)
        out._steps = tuple(steps)
        out._generation = generation
        return out

    @staticmethod
    def to_functional(x, mode=None):
        """Wrap plain tensor ``x`` for ``mode`` (the innermost FunctionalTensorMode).

        The wrapper mirrors ``x``'s requires_grad (PyTorch's
        ``_mirror_autograd_meta_to``), so autograd records on the wrappers,
        above the mode, and the backward's ops are functionalized too: how
        AOTAutograd traces a joint graph.  ``torch.func.functionalize`` wraps
        without it, as PyTorch's does."""
        if mode is None:
            mode = next(m for m in reversed(_get_current_dispatch_mode_stack())
                        if isinstance(m, FunctionalTensorMode))
        out = FunctionalTensor(x, mode)
        if x.requires_grad:
            out.requires_grad_()
        return out

    def from_functional(self):
        """The current value, pending writes applied."""
        self._sync()
        return self.elem

    def __repr__(self):
        return f"FunctionalTensor({self.elem!r})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        """An op on functional tensors outside their mode: run it in the mode."""
        if any(isinstance(m, FunctionalTensorMode) for m in _get_current_dispatch_mode_stack()):
            return NotImplemented
        mode = next(t._mode for t in pytree.tree_leaves((args, kwargs))
                    if isinstance(t, FunctionalTensor))
        with mode:
            return func(*args, **(kwargs or {}))

    # -- the wrapper's bookkeeping (FunctionalTensorWrapper's methods) --------------------
    def _replace(self, value):
        """Take ``value`` as the current value, and its geometry."""
        self.elem = value
        self._shape, self._stride, self._offset = tuple(value.shape), value.stride(), \
            value.storage_offset()
        self._contiguous = None

    def _commit_update(self):
        storage = self._fstorage
        storage.updates.append((self.elem, self._steps))
        storage.generation += 1

    def _sync(self):
        storage = self._fstorage
        if self._generation == storage.generation:
            return
        storage.apply_updates()
        value = storage.base
        for step in self._steps:
            value = step.forward(value)
        self._replace(value)
        self._generation = storage.generation


# -- FunctionalTensorMode -------------------------------------------------------------------

def _functional_variant(func):
    """The out-of-place overload an in-place or out= overload computes:
    add_.Tensor -> add.Tensor; add.out -> the overload with add.out's
    arguments minus ``out`` (add.Tensor)."""
    schema = func._schema
    packet = func.overloadpacket
    if schema.kind() == "inplace":
        name = packet.__name__.rstrip("_")
        target = getattr(getattr(aten, name, None), func._overloadname, None)
    else:
        wanted = [(a.name, a.type) for a in schema.arguments if not a.is_out]
        target = next((getattr(packet, o) for o in packet.overloads()
                       if [(a.name, a.type) for a in getattr(packet, o)._schema.arguments]
                       == wanted), None)
    if target is None:
        raise NotImplementedError(f"functionalization: {func} has no functional variant")
    return target


def _tracing():
    """Whether make_fx's proxy mode is on the dispatch stack."""
    return any(type(m).__name__ == "ProxyTorchDispatchMode"
               for m in _get_current_dispatch_mode_stack())


class FunctionalTensorMode(TorchDispatchMode):
    """The dispatch mode that functionalizes every op on FunctionalTensors
    (PyTorch's FunctionalTensorMode over the Functionalize key): see Note
    [functionalization].

    Two uses, as PyTorch's two front ends behave:

    * as constructed (AOTAutograd's Python functionalization): each op runs
      with the reapply-views flag set, so views stay views; under make_fx the
      arguments' pending writes are replayed before the op (PyTorch syncs
      them there to label the replayed views);
    * ``functionalize``'s (functorch's C++ level): ``_level_reapply_views``
      is its ``remove`` choice and arguments are synced lazily.
    """

    def __init__(self, pre_dispatch=False, export=False, _allow_token_discovery=False):
        super().__init__()
        self.pre_dispatch = pre_dispatch
        self.export = export
        self._level_reapply_views = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        level = self._level_reapply_views
        old = _functionalize_enable_reapply_views(True if level is None else level)
        try:
            if level is None and _tracing():
                self._values((args, kwargs))
            return self._dispatch(func, args, kwargs or {})
        finally:
            _functionalize_enable_reapply_views(old)

    def _dispatch(self, func, args, kwargs):
        if func._entry.has_kernel(DispatchKey.CompositeImplicitAutograd):
            with self:          # functionalize its pieces
                return func.decompose(*args, **kwargs)
        self_arg = args[0] if args else None
        if isinstance(self_arg, FunctionalTensor) and str(func)[5:] in _VIEWS:
            return self._view(func, args, kwargs)
        if func._schema.is_mutable:
            targets = self._written(func, args, kwargs)
            if any(isinstance(t, FunctionalTensor) for t in targets):
                if Tag.inplace_view in func.tags:
                    return self._inplace_view(func, args, kwargs)
                return self._mutation(func, args, kwargs, targets)
        return self._wrap(func(*self._values(args), **self._values(kwargs)))

    # -- the three kinds of op ---------------------------------------------------------------
    def _view(self, func, args, kwargs):
        src = args[0]
        op = func if _functionalization_reapply_views_tls() else _op(_VIEWS[str(func)[5:]][0])
        out = op(src.elem, *args[1:], **kwargs)
        if isinstance(out, Tensor):
            return self._view_of(src, out, _ViewStep(func, args[1:], kwargs, None))
        return [self._view_of(src, o, _ViewStep(func, args[1:], kwargs, i))
                for i, o in enumerate(out)]

    def _view_of(self, src, value, step):
        return FunctionalTensor(value, self, src._fstorage, src._steps + (step,))

    def _inplace_view(self, func, args, kwargs):
        """``x.unsqueeze_(0)``: x becomes its own view (one more step)."""
        self_arg = args[0]
        view = _op(f"{func.overloadpacket.__name__.rstrip('_')}.{func._overloadname}")
        step = _ViewStep(view, args[1:], kwargs, None)
        self_arg._replace(step.forward(self_arg.elem))
        self_arg._steps += (step,)
        return self_arg

    def _mutation(self, func, args, kwargs, targets):
        functional = _functional_variant(func)
        for t in pytree.tree_leaves((args, kwargs)):
            if isinstance(t, FunctionalTensor):
                t._sync()
        plain_kwargs = {k: v for k, v in kwargs.items()
                        if not any(a.name == k and a.is_out for a in func._schema.arguments)}
        result = functional(*self._values(args), **self._values(plain_kwargs))
        results = [result] if isinstance(result, Tensor) else list(result)
        for t, value in zip(targets, results):
            t._replace(value)
        for t in targets:
            t._commit_update()
        for t in targets:
            t._sync()
        return targets[0] if len(targets) == 1 else tuple(targets)

    def _written(self, func, args, kwargs):
        """The arguments ``func`` writes to (``Tensor(a!)``), in schema order."""
        named = _bound(func, args, kwargs)
        return [named[a.name] for a in func._schema.arguments if a.is_write and a.name in named]

    # -- wrapping --------------------------------------------------------------------------------
    def _values(self, tree):
        """``tree`` with every FunctionalTensor synced and replaced by its value."""
        def value(t):
            if isinstance(t, FunctionalTensor):
                t._sync()
                return t.elem
            return t
        return pytree.tree_map(value, tree)

    def _wrap(self, tree):
        return pytree.tree_map(
            lambda t: FunctionalTensor(t, self) if isinstance(t, Tensor) else t, tree)
