"""``torch.fx.subgraph_rewriter``: replace every occurrence of a pattern.

``replace_pattern(gm, pattern, replacement)`` traces both functions, finds the
pattern in ``gm``'s graph (see Note [subgraph matching] in
``passes/utils/matcher_utils.py``) and, match by match, copies the replacement's
nodes in before the first user of what the match returned (its placeholders
bound to what the pattern's were), reroutes those users, and erases the matched
nodes, the pattern's last node first.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import NamedTuple

from ..nn.modules.module import Module
from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


class Match(NamedTuple):
    anchor: Node         # the node the match was found from
    nodes_map: dict      # pattern node -> graph node


@dataclass
class ReplacedPatterns:
    anchor: Node
    nodes_map: dict
    replacements: list   # the nodes added to the graph


def replace_pattern(gm: GraphModule, pattern, replacement) -> list:
    """Replace each non-overlapping occurrence of ``pattern`` (a function, Graph
    or GraphModule) in ``gm`` by ``replacement``; the matches, as ``Match``es."""
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map)
            for m in _replace_pattern(gm, pattern, replacement)]


def replace_pattern_with_filters(gm: GraphModule, pattern, replacement=None,
                                 match_filters=None, ignore_literals: bool = False,
                                 replacement_callback=None, node_name_match: str = "") -> list:
    """``replace_pattern`` keeping only the matches every ``match_filters``
    function accepts (called as ``f(match, original_graph, pattern_graph)``);
    ``replacement_callback(match, original_graph, pattern_graph)`` may build
    each replacement graph."""
    return _replace_pattern(gm, pattern, replacement, match_filters, ignore_literals,
                            replacement_callback, node_name_match)


def _graph_of(fn_or_graph) -> Graph:
    if isinstance(fn_or_graph, GraphModule):
        return fn_or_graph.graph
    if isinstance(fn_or_graph, Graph):
        return fn_or_graph
    return symbolic_trace(fn_or_graph).graph


def _replace_pattern(gm, pattern, replacement=None, match_filters=None, ignore_literals=False,
                     replacement_callback=None, node_name_match=""):
    from .passes.utils.matcher_utils import SubgraphMatcher
    graph, pattern_graph = gm.graph, _graph_of(pattern)
    matcher = SubgraphMatcher(pattern_graph, match_output=False, match_placeholder=False,
                              remove_overlapping_matches=True, ignore_literals=ignore_literals)
    matches = [m for m in matcher.match(graph, node_name_match=node_name_match)
               if all(f(m, graph, pattern_graph) for f in match_filters or [])]
    if replacement is None and replacement_callback is None:
        raise AssertionError("Must provide either a replacement GraphModule or a replacement "
                             "callback")
    common = None if replacement is None else _graph_of(replacement)
    changed: dict = {}        # a returned node of an earlier match -> its replacement
    replaced = []
    for match in matches:
        replacement_graph = replacement_callback(match, graph, pattern_graph) \
            if replacement_callback is not None else common
        placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(match.placeholder_nodes) != len(placeholders):
            raise AssertionError(f"Placeholder count mismatch: {len(match.placeholder_nodes)} "
                                 f"vs {len(placeholders)}")
        val_map = {}
        for rn, gn in zip(placeholders, match.placeholder_nodes):
            if isinstance(gn, Node) and gn in changed:   # rewritten by an earlier match
                new = changed[gn]
                match.placeholder_nodes[match.placeholder_nodes.index(gn)] = new
                for pn, mapped in match.nodes_map.items():
                    if mapped is gn:
                        match.nodes_map[pn] = new
                        break
                gn = new
            val_map[rn] = gn
        users = {u for n in match.returning_nodes for u in n.users}
        insert_point = next((n for n in graph.nodes if n in users), None)
        if insert_point is None:     # nothing uses the result: after the last returned node
            returned = [n for n in graph.nodes if n in match.returning_nodes]
            insert_point = returned[-1].next
        with graph.inserting_before(insert_point):
            copied = graph.graph_copy(replacement_graph, val_map)
        copied = (copied,) if isinstance(copied, Node) else copied
        if len(match.returning_nodes) != len(copied):
            raise AssertionError(f"Returning nodes count mismatch: "
                                 f"{len(match.returning_nodes)} vs {len(copied)}")
        for gn, new in zip(match.returning_nodes, copied):
            gn.replace_all_uses_with(new)
            changed[gn] = new
        for pn in reversed(list(pattern_graph.nodes)):
            if pn.op not in ("placeholder", "output"):
                graph.erase_node(match.nodes_map[pn])
        replaced.append(ReplacedPatterns(
            anchor=match.anchors[0], nodes_map=match.nodes_map,
            replacements=[v for v in val_map.values() if v not in match.placeholder_nodes]))
    gm.recompile()
    if isinstance(replacement, Module):
        _copy_attributes(gm, replacement)
    return replaced


def _copy_attributes(gm: GraphModule, replacement: Module) -> None:
    """Give ``gm`` the submodules and attributes the replacement's nodes name
    (copies), dropping the ones no node names any more."""
    gm.delete_all_unused_submodules()

    def find(module, target):
        path, _, name = target.rpartition(".")
        try:
            return getattr(module.get_submodule(path), name, None)
        except AttributeError:
            return None
    for node in gm.graph.nodes:
        if node.op not in ("call_module", "get_attr") or find(gm, node.target) is not None:
            continue
        value = find(replacement, node.target)
        if value is None:
            raise RuntimeError('Attempted to create a "', node.op,
                               f'" node during subgraph rewriting with target {node.target}, '
                               "but the referenced attribute does not exist in the replacement "
                               "GraphModule")
        if isinstance(value, Module):
            gm.add_submodule(node.target, copy.deepcopy(value))
        else:
            setattr(gm, node.target, copy.deepcopy(value))
