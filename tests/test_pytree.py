"""``torch.utils._pytree`` against PyTorch's: flatten, unflatten, TreeSpec printing
and equality, tree_map and friends, key paths, registration, and the errors.

Random nestings of every built-in node type come from hypothesis; the same
Python structure is handed to both libraries.
"""
from __future__ import annotations

import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest
import torch
import torch.utils._pytree as theirs
from hypothesis import given, strategies as st

import glasstorch as gt
import glasstorch.utils._pytree as ours

from .differential import differential, observe, raised, returned

Point = namedtuple("Point", "x y")


def _pytree(lib):
    return theirs if lib is torch else ours


# -- random nestings --------------------------------------------------------------------

_leaves = st.one_of(st.integers(-5, 5), st.none(), st.sampled_from(["a", "b"]), st.floats(0, 1))
_keys = st.sampled_from(["k", "j", "i", "h"])


def _containers(children):
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(_keys, children, max_size=3),
        st.tuples(children, children).map(lambda t: Point(*t)),
        st.dictionaries(_keys, children, max_size=3).map(OrderedDict),
        st.dictionaries(_keys, children, max_size=3).map(lambda d: defaultdict(list, d)),
        st.tuples(st.lists(children, max_size=3), st.sampled_from([None, 3])).map(
            lambda t: deque(t[0], maxlen=t[1])),
    )


trees = st.recursive(_leaves, _containers, max_leaves=12)


def _shape_of(tree):
    """Types and leaves, recursively (containers compare equal across kinds)."""
    if isinstance(tree, (list, tuple, deque)):
        return (type(tree).__name__, [_shape_of(x) for x in tree])
    if isinstance(tree, dict):
        return (type(tree).__name__, [(k, _shape_of(v)) for k, v in tree.items()])
    return tree


@given(trees)
def test_flatten_unflatten_and_spec_match_pytorch(tree):
    def scenario(lib):
        p = _pytree(lib)
        leaves, spec = p.tree_flatten(tree)
        rebuilt = p.tree_unflatten(leaves, spec)
        return (leaves, repr(spec), str(spec), spec.num_leaves, spec.num_nodes, spec.num_children,
                spec.is_leaf(), _shape_of(rebuilt), spec == p.tree_structure(tree),
                hash(spec) == hash(p.tree_structure(tree)), p.treespec_pprint(spec),
                p.tree_leaves(tree), [repr(c) for c in spec.children()])
    outcome = returned(differential(scenario))
    assert outcome[7] == observe(_shape_of(tree))     # the round trip is exact


@given(trees)
def test_tree_map_family_matches_pytorch(tree):
    def scenario(lib):
        p = _pytree(lib)
        seen = []
        return (_shape_of(p.tree_map(lambda x: (x, "seen"), tree)),
                _shape_of(p.tree_map_only(int, lambda x: x * 10, tree)),
                _shape_of(p.tree_map_only((str, type(None)), lambda x: "!", tree)),
                _shape_of(p.tree_map_only(lambda x: x == 0, lambda x: "zero", tree)),
                _shape_of(p.tree_map(lambda a, b: (a, b), tree, tree)),
                p.tree_map_(seen.append, tree) is tree, seen,
                p.tree_all(lambda x: x is not None, tree), p.tree_any(lambda x: x is None, tree),
                p.tree_all_only(int, lambda x: x > 0, tree),
                p.tree_any_only(int, lambda x: x > 0, tree))
    differential(scenario)


@given(trees)
def test_key_paths_match_pytorch(tree):
    def scenario(lib):
        p = _pytree(lib)
        pairs, spec = p.tree_flatten_with_path(tree)
        return ([(p.keystr(path), leaf) for path, leaf in pairs], repr(spec),
                [p.key_get(tree, path) for path, _ in pairs],
                _shape_of(p.tree_map_with_path(lambda path, x: p.keystr(path), tree)),
                [repr(k) for path, _ in p.tree_leaves_with_path(tree) for k in path])
    differential(scenario)


def test_spec_printing_of_nested_containers():
    tree = {"x": [1, (2, 3)], "y": Point(4, None), "z": OrderedDict(b=5, a=6),
            "d": defaultdict(list, {"a": 1}), "q": deque([1, 2], maxlen=3), "e": [], "t": ()}

    def scenario(lib):
        p = _pytree(lib)
        spec = p.tree_structure(tree)
        return repr(spec), p.treespec_pprint(spec), repr(p.tree_structure(7))
    text = returned(differential(scenario))[0]
    assert "TreeSpec(namedtuple, <class 'tests.test_pytree.Point'>, [*,\n" in text


def test_size_and_return_types_are_nodes():
    def scenario(lib):
        p = _pytree(lib)
        size_leaves, size_spec = p.tree_flatten(lib.Size([2, 3]))
        result = lib.max(lib.tensor([[1.0, 5.0], [7.0, 2.0]]), 1)
        leaves, spec = p.tree_flatten({"r": result})
        rebuilt = p.tree_unflatten(leaves, spec)["r"]
        mapped = p.tree_map(lambda t: t * 2, result)
        return (size_leaves, repr(size_spec), type(p.tree_unflatten(size_leaves, size_spec)),
                [t.tolist() for t in leaves], repr(spec), type(rebuilt).__name__,
                rebuilt.indices.tolist(), type(mapped).__name__, mapped.values.tolist(),
                p.is_structseq_instance(result), p.is_namedtuple_instance(result),
                p.is_namedtuple(Point), p.is_namedtuple_class(tuple))
    differential(scenario)


class _Pair:
    """A user container, registered in each library's registry."""

    def __init__(self, a, b):
        self.a, self.b = a, b


def _register_pair(lib):
    p = _pytree(lib)
    if _Pair not in p.SUPPORTED_NODES:
        p.register_pytree_node(
            _Pair, lambda x: ([x.a, x.b], "pair"), lambda values, ctx: _Pair(*values),
            flatten_with_keys_fn=lambda x: ([(p.GetAttrKey("a"), x.a),
                                             (p.GetAttrKey("b"), x.b)], "pair"))
    return p


def test_registering_a_node_type():
    def scenario(lib):
        p = _register_pair(lib)
        tree = [_Pair(1, (2, 3)), 4]
        leaves, spec = p.tree_flatten(tree)
        rebuilt = p.tree_unflatten([x * 10 for x in leaves], spec)
        paths = [p.keystr(path) for path, _ in p.tree_flatten_with_path(tree)[0]]
        return leaves, repr(spec), rebuilt[0].a, rebuilt[0].b, rebuilt[1], paths
    differential(scenario)


def test_registering_twice_is_refused():
    def scenario(lib):
        p = _register_pair(lib)
        p.register_pytree_node(_Pair, lambda x: ([], None), lambda v, c: _Pair(0, 0))
    raised(differential(scenario, may_raise=True), "ValueError")


def test_a_leaf_predicate_stops_descent():
    def scenario(lib):
        p = _pytree(lib)
        tree = {"a": (1, 2), "b": [3, (4, 5)]}
        leaves, spec = p.tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
        sizes = p.tree_map(lambda x: len(x) if isinstance(x, tuple) else -x, tree,
                           is_leaf=lambda x: isinstance(x, tuple))
        return leaves, repr(spec), sizes, _shape_of(sizes)
    differential(scenario)


@pytest.mark.parametrize("case", ["short", "long", "arity", "type", "keys", "context", "spec"])
def test_errors_match_pytorch(case):
    def scenario(lib):
        p = _pytree(lib)
        spec = p.tree_structure({"x": [1, 2], "y": Point(3, 4)})
        if case == "short":
            p.tree_unflatten([1], spec)
        elif case == "long":
            spec.unflatten(range(5))
        elif case == "arity":
            p.tree_map(lambda a, b: a, [1, 2], [1, 2, 3])
        elif case == "type":
            p.tree_map(lambda a, b: a, [1, 2], (1, 2))
        elif case == "keys":
            p.tree_map(lambda a, b: a, {"x": 1}, {"y": 1})
        elif case == "context":
            p.tree_map(lambda a, b: a, deque([1]), Point(1, 2))
        else:
            p.tree_unflatten([1, 2], "not a spec")
    raised(differential(scenario, may_raise=True))


def test_deprecations_warn_as_pytorch():
    def scenario(lib):
        p = _pytree(lib)
        spec = p.tree_structure([1, [2]])
        children = spec.children_specs
        return repr(p.LeafSpec()), [repr(c) for c in children], isinstance(p.LeafSpec(), p.TreeSpec)
    differential(scenario, warning_types=(FutureWarning,))


def test_map_only_rejects_what_is_neither_a_type_nor_callable():
    raised(differential(lambda lib: _pytree(lib).tree_map_only(3, abs, [1]), may_raise=True),
           "TypeError")


def test_importable_from_the_package():
    assert gt.utils._pytree is ours
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ours.tree_structure(1).is_leaf()
