"""``torch.fx.passes.utils.matcher_utils``: finding a pattern graph inside a graph.

Note [subgraph matching]: the pattern's *anchors* are the nodes its output
returns (those used only by the output).  Each graph node equal to an anchor
(same opcode and target) starts a walk backwards through both graphs at once,
argument by argument::

    match(pn, gn): pn already matched -> it must be gn; gn taken -> fail
                   pattern placeholder -> binds gn (a wildcard); else same op/target,
                   then match(arg_p, arg_g) for each argument (literals must be equal)

Several anchors are matched one after another with backtracking.  A match is
kept if it is self-contained (only the returned nodes are used outside it),
fusing it would make no cycle, and it overlaps no earlier match.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ...graph import Graph
from ...node import Node

__all__ = ["InternalMatch", "SubgraphMatcher"]


@dataclass
class InternalMatch:
    """One match: ``nodes_map`` pattern node -> graph node; the graph nodes the
    pattern's placeholders bound and the ones it returns."""

    anchors: list
    nodes_map: dict = field(default_factory=dict)
    placeholder_nodes: list = field(default_factory=list)
    returning_nodes: list = field(default_factory=list)
    name_node_map: dict = field(default_factory=dict)

    def __copy__(self) -> "InternalMatch":
        return InternalMatch(anchors=self.anchors, nodes_map=self.nodes_map.copy(),
                             placeholder_nodes=self.placeholder_nodes.copy(),
                             returning_nodes=self.returning_nodes.copy())


class SubgraphMatcher:
    """Finds ``pattern`` in graphs (see Note [subgraph matching])."""

    def __init__(self, pattern: Graph, match_output: bool = False,
                 match_placeholder: bool = False, remove_overlapping_matches: bool = True,
                 ignore_literals: bool = False):
        if len(pattern.nodes) == 0:
            raise ValueError("SubgraphMatcher cannot be initialized with an empty pattern")
        for node in pattern.nodes:
            if node.op != "output" and not node.is_impure() and not node.users:
                raise AssertionError("SubgraphMatcher cannot be initialized with an pattern "
                                     "with dead code")
        self.pattern = pattern
        self.match_output = match_output
        self.match_placeholder = match_placeholder
        self.remove_overlapping_matches = remove_overlapping_matches
        self.ignore_literals = ignore_literals
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output = list(pattern.nodes)[-1]
        self.pattern_returning_nodes = output.all_input_nodes
        self.pattern_anchors = [output] if match_output else \
            [n for n in output.all_input_nodes if len(n.users) == 1]

    def _nodes_are_equal(self, pn: Node, gn: Node, node_name_match: str = "") -> bool:
        if pn.op == "placeholder" and not self.match_placeholder:
            return True
        if node_name_match and node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op in ("placeholder", "output"):
            return True
        if pn.op == "get_attr":
            from ... import Tensor
            gv = _attr(gn.graph.owning_module, gn.target)
            pv = _attr(pn.graph.owning_module, pn.target)
            if type(pv) is not type(gv):
                return False
            if isinstance(pv, Tensor):
                return True
            raise RuntimeError(f"Unsupported type {pv} when matching attributes")
        return pn.target == gn.target

    def _match_literal(self, pa, ga, nodes_map: dict) -> bool:
        """A pattern placeholder binds a graph constant; constants must be equal."""
        if isinstance(pa, Node):
            if pa.op != "placeholder":
                return False
            if pa in nodes_map:
                return nodes_map[pa] == ga
            nodes_map[pa] = ga
            return True
        if isinstance(ga, Node):
            return False
        return type(ga) is type(pa) and ga == pa

    def _match_args(self, pargs, gargs, nodes_map: dict) -> bool:
        if len(pargs) != len(gargs):
            return False
        for pa, ga in zip(pargs, gargs):
            if isinstance(pa, Node) and isinstance(ga, Node):
                matched = self._match_nodes(pa, ga, nodes_map)
            elif isinstance(pa, (list, tuple)) and isinstance(ga, (list, tuple)):
                matched = self._match_args(pa, ga, nodes_map)
            else:
                matched = self._match_literal(pa, ga, nodes_map) or self.ignore_literals
            if not matched:
                return False
        return True

    def _match_nodes(self, pn: Node, gn: Node, nodes_map: dict, node_name_match: str = "") -> bool:
        """Extend ``nodes_map`` with ``pn -> gn`` and their inputs; on failure it
        is left as it was."""
        if pn in nodes_map:
            return nodes_map[pn] == gn
        if gn in nodes_map.values() or not self._nodes_are_equal(pn, gn, node_name_match):
            return False
        saved = dict(nodes_map)
        nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        if len(pn.args) == len(gn.args) and list(pn.kwargs) == list(gn.kwargs) and \
                self._match_args(list(pn.args) + list(pn.kwargs.values()),
                                 list(gn.args) + list(gn.kwargs.values()), nodes_map):
            return True
        nodes_map.clear()
        nodes_map.update(saved)
        return False

    def _is_contained(self, nodes_map: dict) -> bool:
        inside = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        return all(pn in self.pattern_returning_nodes or all(u in inside for u in gn.users)
                   for gn, pn in inside.items())

    def match(self, graph: Graph, node_name_match: str = "") -> list:
        candidates = [(anchor, [n for n in graph.nodes
                                if self._nodes_are_equal(anchor, n, node_name_match)])
                      for anchor in self.pattern_anchors]
        candidates = [(a, nodes) for a, nodes in candidates if nodes]
        matches = []

        def backtrack(index: int, match: InternalMatch) -> None:
            if index == len(candidates):
                match.placeholder_nodes = [match.nodes_map[p]
                                           for p in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[p] for p in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidates[index]
            for node in nodes:
                attempt = copy.copy(match)
                if self._match_nodes(anchor, node, attempt.nodes_map, node_name_match):
                    backtrack(index + 1, attempt)
        if candidates:
            backtrack(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)
                   and _fusable([gn for pn, gn in m.nodes_map.items()
                                 if pn.op not in ("placeholder", "output")])]
        if self.remove_overlapping_matches:
            matches = _without_overlaps(matches)
        return matches


def _attr(module, target: str):
    for atom in target.split("."):
        module = getattr(module, atom)
    return module


def _fusable(nodes: list) -> bool:
    """Whether the nodes could become one node: no path leaves them and comes back."""
    inside = set(nodes)
    outside = [u for n in nodes for u in n.users if u not in inside]
    seen = set()
    while outside:
        node = outside.pop()
        if node in inside:
            return False
        if node not in seen:
            seen.add(node)
            outside.extend(node.users)
    return True


def _without_overlaps(matches: list) -> list:
    """Drop each match sharing a compute node with an earlier one."""
    kept, taken = [], set()
    for m in matches:
        own = [gn for pn, gn in m.nodes_map.items() if pn.op not in ("placeholder", "output")]
        if not taken.intersection(own):
            kept.append(m)
            taken.update(own)
    return kept
