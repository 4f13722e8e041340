"""``torch.utils._pytree``: nested containers taken apart into leaves and a TreeSpec.

A pytree is a leaf, or a container *node* whose children are pytrees.  The
node types are registered: tuple, list, dict, every namedtuple, OrderedDict,
defaultdict, deque, ``torch.Size`` and the ``torch.return_types`` structseqs
(anything else is a leaf)::

    leaves, spec = tree_flatten({"x": [a, (b, c)], "y": None})
    # leaves == [a, b, c, None]
    # spec   == TreeSpec(dict, ['x', 'y'], [TreeSpec(list, None, [*, ...]), *])
    tree_unflatten(leaves, spec)          # the same structure again

``tree_map(fn, tree)`` rebuilds ``tree`` with ``fn`` applied to each leaf; it is
how ``__torch_dispatch__`` handlers unwrap and rewrap tensors inside their
arguments (``tree_map_only(MyTensor, lambda t: t.elem, args)``).

A node type registers a ``flatten_fn(node) -> (children, context)`` and an
``unflatten_fn(children, context) -> node``; the context is what the children
alone don't say (a dict's keys, a namedtuple's class, a deque's maxlen).
"""
from __future__ import annotations

import dataclasses
import functools
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable, NamedTuple

from .._tensor import Size
from ..return_types import _StructSeq

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "PyTreeSpec", "TreeSpec",
           "LeafSpec", "keystr", "key_get", "register_pytree_node", "tree_is_leaf",
           "tree_flatten", "tree_flatten_with_path", "tree_unflatten", "tree_iter",
           "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map",
           "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all",
           "tree_any", "tree_all_only", "tree_any_only", "treespec_pprint", "is_namedtuple",
           "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
           "is_structseq_class", "is_structseq_instance"]

PyTree = Any
Context = Any
FlattenFn = Callable[[PyTree], "tuple[list, Context]"]
UnflattenFn = Callable[[list, Context], PyTree]


class NodeDef(NamedTuple):
    """How one registered node type comes apart and goes back together."""
    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Callable | None


SUPPORTED_NODES: dict[Any, NodeDef] = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None) -> None:
    """Make ``cls`` a node type: ``flatten_fn(x) -> (children, context)``,
    ``unflatten_fn(children, context) -> x``, and optionally
    ``flatten_with_keys_fn(x) -> ([(key, child), ...], context)`` for key paths.
    (``serialized_type_name`` and the dumpable-context pair only matter to
    TreeSpec serialization, which this module doesn't do; they are checked and kept
    out of the way.)"""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None,
                                  flatten_with_keys_fn=None) -> None:
    """Register (or, with a warning, re-register) a node type."""
    if cls in SUPPORTED_NODES:
        warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous "
                      "registration.", stacklevel=2)
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    if (to_dumpable_context is None) != (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must be "
                         "None or registered.")


def _deregister_pytree_node(cls) -> None:
    del SUPPORTED_NODES[cls]


# -- key paths: where a leaf sits in its tree ----------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp) -> str:
    """``keystr((MappingKey('x'), SequenceKey(0)))`` is ``"['x'][0]"``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value of ``obj`` at key path ``kp``."""
    for k in kp:
        obj = k.get(obj)
    return obj


# -- namedtuples and structseqs -----------------------------------------------------

def is_namedtuple_class(cls) -> bool:
    """A tuple subclass with ``_fields`` (all strings), ``_make`` and ``_asdict``."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj) -> bool:
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


def is_structseq_class(cls) -> bool:
    """The named result types of ops (``torch.return_types.max``)."""
    return isinstance(cls, type) and issubclass(cls, _StructSeq) and cls is not _StructSeq


def is_structseq(obj) -> bool:
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj) -> bool:
    return is_structseq_class(type(obj))


def _register_structseq(cls) -> None:
    """``torch.return_types`` registers every structseq type as a node; glasstorch
    makes those types on demand, so each is registered when first met."""
    _private_register_pytree_node(
        cls, lambda s: (list(s), None), lambda values, context: cls(values),
        flatten_with_keys_fn=lambda s: ([(SequenceKey(i), v) for i, v in enumerate(s)], None))


def _node_type(tree):
    """The registry key of ``tree``'s type: every namedtuple class is filed
    under ``namedtuple`` itself (even one registered on its own)."""
    cls = type(tree)
    if cls is list or cls is tuple or cls is dict:
        return cls
    if is_namedtuple_class(cls):
        return namedtuple
    if cls not in SUPPORTED_NODES and is_structseq_class(cls):
        _register_structseq(cls)
    return cls


def tree_is_leaf(tree, is_leaf=None) -> bool:
    """A leaf is anything that is not a registered node (or that ``is_leaf`` picks)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# -- TreeSpec --------------------------------------------------------------------------

class TreeSpec:
    """The structure of a pytree: the root's node type and context, and one spec
    per child.  A leaf's spec has type None (printed ``*``)."""

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        self.type = type
        self._context = context
        self._children = children_specs
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if children_specs:
                raise AssertionError("leaf node should not have children")
            self.num_nodes = self.num_leaves = 1
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)
            self.num_leaves = sum(c.num_leaves for c in children_specs)
        self.num_children = len(children_specs)

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        inner = indent + 2
        children = (",\n" + " " * inner).join(c.__repr__(inner) for c in self._children)
        return f"TreeSpec({self.type.__name__}, {self._context}, [{children}])"

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        context = self._context
        if self.type is defaultdict:
            context = (context[0], tuple(context[1]))
        elif self.type in (dict, OrderedDict):
            context = tuple(context)
        elif self.type is not None and self.type not in BUILTIN_TYPES:
            context = None      # a custom node's context may be unhashable
        return hash((self.type, context, tuple(self._children)))

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self) -> list:
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to "
                      "access a single child, or `treespec.children()` to get all children.",
                      FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self) -> bool:
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list:
        return list(self._children)

    def child(self, index: int) -> "TreeSpec":
        return self._children[index]

    def flatten_up_to(self, tree) -> list:
        """The subtrees of ``tree`` where this spec has leaves (``tree`` must have
        this spec as a prefix); the error names the first node that differs."""
        subtrees: list = []
        self._flatten_up_to(tree, subtrees)
        return subtrees

    def _flatten_up_to(self, node, subtrees) -> None:
        if self.is_leaf():
            subtrees.append(node)
            return
        node_type = _node_type(node)
        if self.type not in BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got "
                                 f"{len(children)}.")
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            dicts = self.type in _DICT_TYPES and node_type in _DICT_TYPES
            if not dicts and node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got "
                                 f"{node_type!r}.")
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got "
                                 f"{len(node)}.")
            if dicts:     # any dict kind matches any other, by keys
                keys = self._context[1] if self.type is defaultdict else self._context
                missing, extra = set(keys) - set(node), set(node) - set(keys)
                if missing or extra:
                    message = (f"; missing key(s): {missing}" if missing else "") + \
                        (f"; extra key(s): {extra}" if extra else "")
                    raise ValueError(f"Node keys mismatch{message}.")
                children = [node[k] for k in keys]
            else:
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if node_type is not deque and context != self._context:
                    raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                                     f"expected {self._context!r}, but got {context!r}.")
        for child, spec in zip(children, self._children):
            spec._flatten_up_to(child, subtrees)

    def unflatten(self, leaves):
        """Rebuild the pytree with ``leaves`` in leaf order."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but "
                             f"the spec refers to a pytree that holds {self.num_leaves} items "
                             f"({self}).")
        return self._unflatten(iter(leaves))

    def _unflatten(self, leaves):
        if self.type is None:
            return next(leaves)
        children = [c._unflatten(leaves) for c in self._children]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """Deprecated spelling of a leaf's spec (``TreeSpec(None, None, [])``)."""

    __slots__ = ()

    def __init__(self):
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use "
                      "`isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.",
                      FutureWarning, stacklevel=2)
        super().__init__(None, None, [])


with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    _LEAF_SPEC = LeafSpec()     # one shared spec for every leaf


def treespec_leaf() -> TreeSpec:
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /) -> TreeSpec:
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs) -> TreeSpec:
    children = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in children.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {children!r}.")
    return TreeSpec(dict, list(children), list(children.values()))


# -- flatten / unflatten / map -------------------------------------------------------

def tree_flatten(tree, is_leaf=None) -> tuple[list, TreeSpec]:
    """``(leaves, spec)``: the leaves left to right, and the structure around them."""
    leaves: list = []
    return leaves, _flatten_into(tree, leaves, is_leaf)


def _flatten_into(node, leaves, is_leaf) -> TreeSpec:
    if tree_is_leaf(node, is_leaf):
        leaves.append(node)
        return _LEAF_SPEC
    node_type = _node_type(node)
    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
    return TreeSpec(node_type, context, [_flatten_into(c, leaves, is_leaf) for c in children])


def tree_unflatten(leaves, treespec: TreeSpec):
    """The inverse of ``tree_flatten`` (the two arguments may come in either order)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError("Expected `treespec` to be an instance of PyTreeSpec but got item of "
                            f"type {type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def _broadcast_to_and_flatten(tree, treespec: TreeSpec, is_leaf=None):
    """``tree`` (a prefix of ``treespec``'s structure) flattened to one value per
    leaf of ``treespec``, each of its leaves repeated over the subtree it
    covers; None when ``tree`` is no prefix.  What vmap does with ``in_dims``."""
    if tree_is_leaf(tree, is_leaf):
        return [tree] * treespec.num_leaves
    if treespec.is_leaf() or _node_type(tree) != treespec.type:
        return None
    children, context = SUPPORTED_NODES[treespec.type].flatten_fn(tree)
    if len(children) != treespec.num_children or context != treespec.context:
        return None
    flat = []
    for child, spec in zip(children, treespec.children()):
        part = _broadcast_to_and_flatten(child, spec, is_leaf)
        if part is None:
            return None
        flat += part
    return flat


def tree_iter(tree, is_leaf=None):
    """The leaves, lazily, left to right."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None) -> list:
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def arg_tree_leaves(*args, **kwargs) -> list:
    """The leaves of a call's arguments: ``tree_leaves((args, kwargs))``."""
    leaves: list = []
    for a in (*args, *kwargs.values()):
        leaves.extend(tree_iter(a))
    return leaves


def tree_map(func, tree, *rests, is_leaf=None):
    """``tree`` rebuilt with ``func(leaf, *matching_parts_of_rests)`` at each leaf;
    each of ``rests`` must have ``tree``'s structure as a prefix."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *columns))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on each leaf for its side effect; returns ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    deque(map(func, *columns), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """Decorator: apply the function only to leaves of the given type(s) (or that
    the predicate accepts); other leaves pass through unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_flatten_with_path(tree, is_leaf=None):
    """Like ``tree_flatten``, with each leaf paired with its key path."""
    return list(_key_paths((), tree, is_leaf)), tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None) -> list:
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """Like ``tree_map``; ``func`` gets the leaf's key path first."""
    path_leaves, spec = tree_flatten_with_path(tree, is_leaf)
    columns = [[p for p, _ in path_leaves], [x for _, x in path_leaves]] + \
        [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *columns))


def _key_paths(path, tree, is_leaf):
    if is_leaf is not None and is_leaf(tree):
        yield path, tree
        return
    node_type = _node_type(tree)
    node = SUPPORTED_NODES.get(node_type)
    if node is None:
        yield path, tree
        return
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. Please "
                         "pass a flatten_with_keys_fn argument to register_pytree_node.")
    keyed_children, _ = node.flatten_with_keys_fn(tree)
    for key, child in keyed_children:
        yield from _key_paths((*path, key), child, is_leaf)


class _Asterisk(str):
    """A leaf placeholder that prints as a bare ``*``."""

    def __repr__(self):
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """The structure drawn as the container it describes, ``*`` at each leaf."""
    return repr(tree_unflatten([_Asterisk("*")] * treespec.num_leaves, treespec))


# -- the built-in node types ----------------------------------------------------------

def _sequence_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()]


_private_register_pytree_node(
    tuple, lambda t: (list(t), None), lambda values, _: tuple(values),
    flatten_with_keys_fn=lambda t: (_sequence_keys(t), None))
_private_register_pytree_node(
    list, lambda lst: (lst, None), lambda values, _: list(values),
    flatten_with_keys_fn=lambda lst: (_sequence_keys(lst), None))
_private_register_pytree_node(
    dict, _dict_flatten, lambda values, keys: dict(zip(keys, values)),
    flatten_with_keys_fn=lambda d: (_dict_keys(d), list(d)))
_private_register_pytree_node(
    namedtuple, lambda t: (list(t), type(t)), lambda values, cls: cls(*values),
    flatten_with_keys_fn=lambda t: ([(GetAttrKey(f), v) for f, v in zip(t._fields, t)],
                                    type(t)))
_private_register_pytree_node(
    OrderedDict, _dict_flatten, lambda values, keys: OrderedDict(zip(keys, values)),
    flatten_with_keys_fn=lambda d: (_dict_keys(d), list(d)))
_private_register_pytree_node(
    defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d)]),
    lambda values, context: defaultdict(context[0], zip(context[1], values)),
    flatten_with_keys_fn=lambda d: (_dict_keys(d), [d.default_factory, list(d)]))
_private_register_pytree_node(
    deque, lambda d: (list(d), d.maxlen), lambda values, maxlen: deque(values, maxlen=maxlen),
    flatten_with_keys_fn=lambda d: (_sequence_keys(d), d.maxlen))
# torch.Size unflattens to a plain tuple, as PyTorch registers it (so that leaves
# need not stay ints).
_private_register_pytree_node(
    Size, lambda s: (list(s), None), lambda values, _: tuple(values),
    flatten_with_keys_fn=lambda s: (_sequence_keys(s), None))

BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})
_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
