"""``torch._functorch.partitioners``: split a joint forward+backward graph into
a forward graph and a backward graph.

The joint graph takes ``(primals, tangents)`` and returns the forward outputs
followed by one gradient per primal.  A partitioner decides which values the
forward hands to the backward (the "saved tensors", what
``ctx.save_for_backward`` would hold) and which the backward computes again:

* ``default_partition`` keeps the split eager autograd makes: every node the
  forward outputs need runs in the forward, and whatever of it the backward
  reads is saved.
* ``min_cut_rematerialization_partition`` saves fewer bytes: cheap ops (pointwise
  and views) whose inputs are saved anyway are recomputed in the backward.  The
  choice is a minimum cut between the forward's inputs and the backward's uses,
  each node costing the bytes of its value (PyTorch solves the same problem
  with networkx; here a small max-flow does it).

Both return ``(forward_module, backward_module)``; the forward returns its
outputs, then the saved values; the backward takes the saved values, then the
tangents.
"""
from __future__ import annotations

from collections import deque

from .._ops.tags import Tag
from ..fx.experimental.symbolic_shapes import hint_int
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx.node import Node

__all__ = ["default_partition", "min_cut_rematerialization_partition"]


def _flat_outputs(joint: GraphModule) -> list:
    output = next(n for n in reversed(joint.graph.nodes) if n.op == "output")
    value = output.args[0]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _ancestors(roots, stop=lambda n: False) -> set:
    """Every node ``roots`` reach through their arguments (``stop`` ends a path)."""
    seen, todo = set(), [r for r in roots if isinstance(r, Node)]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if not stop(node):
            todo.extend(node._input_nodes)
    return seen


def _is_tangent(node: Node) -> bool:
    return node.op == "placeholder" and node.name.startswith("tangents")


def _classify(joint: GraphModule, num_fwd_outputs: int):
    """(forward outputs, backward outputs, forward nodes, backward nodes,
    primals).  Forward nodes: what the forward outputs need, and every node the
    trace tagged ``partitioner_tag="is_forward"`` (autograd's own forward work,
    such as the ``detach`` of a value it saves); backward nodes: the rest that
    the gradients need."""
    outputs = _flat_outputs(joint)
    fw_outputs, bw_outputs = outputs[:num_fwd_outputs], outputs[num_fwd_outputs:]
    primals = [n for n in joint.graph.nodes if n.op == "placeholder" and not _is_tangent(n)]
    forward = _ancestors(fw_outputs) | set(primals)
    tangents = {n for n in joint.graph.nodes if _is_tangent(n)}
    forward |= {n for n in joint.graph.nodes
                if n.meta.get("partitioner_tag") == "is_forward" and n not in tangents}
    for node in joint.graph.nodes:      # a write (a buffer's copy_) runs with the forward
        if node.op == "call_function" and node.is_impure() and \
                not _ancestors([node]) & tangents:
            forward |= _ancestors([node])
    backward = _ancestors(bw_outputs, stop=lambda n: n in forward) - forward
    return fw_outputs, bw_outputs, forward, backward, primals


def _extract(joint: GraphModule, inputs: list, outputs: list, keep: set) -> GraphModule:
    """A graph of the ``keep`` nodes, taking ``inputs`` (placeholders of the same
    names) and returning ``outputs`` as a tuple, dead code removed."""
    graph, env = Graph(), {}
    for node in inputs:
        env[node] = graph.placeholder(node.name)
        env[node].meta = dict(node.meta)
    for node in joint.graph.nodes:
        if node in keep and node not in env and node.op != "placeholder":
            env[node] = graph.node_copy(node, lambda n: env[n])
    graph.output(tuple(env[o] if isinstance(o, Node) else o for o in outputs))
    graph.eliminate_dead_code()
    return GraphModule(joint, graph)


def _saved_values(forward: set, backward: set, joint: GraphModule) -> list:
    """Forward nodes a backward node reads, in graph order."""
    read = {i for n in backward for i in n._input_nodes}
    return [n for n in joint.graph.nodes if n in forward and n in read]


def _split(joint: GraphModule, saved: list, fw_outputs, bw_outputs, forward, backward,
           primals):
    tangents = [n for n in joint.graph.nodes if _is_tangent(n)]
    fw = _extract(joint, primals, list(fw_outputs) + saved, forward)
    bw = _extract(joint, saved + tangents, bw_outputs, backward)
    return fw, bw


def default_partition(joint_module: GraphModule, _joint_inputs, *, num_fwd_outputs: int,
                      static_lifetime_input_indices=None):
    """The forward as eager runs it; its values the backward reads are saved."""
    fw_outputs, bw_outputs, forward, backward, primals = _classify(joint_module, num_fwd_outputs)
    saved = _saved_values(forward, backward, joint_module)
    return _split(joint_module, saved, fw_outputs, bw_outputs, forward, backward, primals)


def _recomputable(node: Node) -> bool:
    """Cheap to run again in the backward: pointwise ops and views (not random
    ones, whose second run would draw other numbers)."""
    if node.op != "call_function":
        return False
    tags = getattr(node.target, "tags", ())
    if Tag.nondeterministic_seeded in tags:
        return False
    schema = getattr(node.target, "_schema", None)
    is_view = schema is not None and schema.returns and \
        getattr(schema.returns[0].alias_info, "is_write", True) is False
    return Tag.pointwise in tags or is_view or node.target.__name__.startswith("getitem")


def _nbytes(node: Node) -> float:
    """What saving ``node`` costs: its bytes, at the traced sizes (a tuple
    result cannot be saved whole: its getitems are)."""
    val = node.meta.get("val")
    if isinstance(val, (tuple, list)):
        return float("inf")
    if val is None or not hasattr(val, "numel"):
        return 1
    return max(1, hint_int(val.numel()) * val.element_size())


def min_cut_rematerialization_partition(joint_module: GraphModule, _joint_inputs, *,
                                        num_fwd_outputs: int, compiler: str = "inductor",
                                        static_lifetime_input_indices=None):
    """Save the cheapest set of values that, with the primals, lets the backward
    recompute everything it needs (see the module docstring)."""
    fw_outputs, bw_outputs, forward, backward, primals = _classify(joint_module, num_fwd_outputs)
    needed = {i for n in backward for i in n._input_nodes if i in forward}
    if not needed:
        return _split(joint_module, [], fw_outputs, bw_outputs, forward, backward, primals)
    # flow network: a forward node is an edge v_in -> v_out costing its bytes;
    # a primal or an op we may not recompute is fed by the source; what the
    # backward reads drains to the sink
    INF = float("inf")
    capacity: dict = {}

    def edge(a, b, c):
        capacity.setdefault(a, {})
        capacity.setdefault(b, {})
        capacity[a][b] = capacity[a].get(b, 0) + c
        capacity[b].setdefault(a, 0)
    for node in forward:
        edge((node, "in"), (node, "out"), _nbytes(node))
        if node.op == "placeholder" or not _recomputable(node):
            edge("source", (node, "in"), INF)
        for user in node.users:
            if user in forward:
                edge((node, "out"), (user, "in"), INF)
        if node in needed:
            edge((node, "out"), "sink", INF)
    reachable = _max_flow_source_side(capacity)
    saved = [n for n in joint_module.graph.nodes
             if n in forward and (n, "in") in reachable and (n, "out") not in reachable]
    recomputed = _ancestors(bw_outputs, stop=lambda n: n in saved) - set(saved)
    backward = {n for n in recomputed if n.op != "placeholder" or _is_tangent(n)}
    return _split(joint_module, saved, fw_outputs, bw_outputs, forward, backward, primals)


def _max_flow_source_side(capacity: dict) -> set:
    """Edmonds-Karp on ``capacity`` (residual capacities, updated in place);
    returns the vertices still reachable from the source: the cut's source side."""
    while True:
        parent, queue = {"source": None}, deque(["source"])
        while queue and "sink" not in parent:
            u = queue.popleft()
            for v, c in capacity[u].items():
                if c > 0 and v not in parent:
                    parent[v] = u
                    queue.append(v)
        if "sink" not in parent:
            return set(parent)
        path, v = [], "sink"
        while parent[v] is not None:
            path.append((parent[v], v))
            v = parent[v]
        flow = min(capacity[u][v] for u, v in path)
        for u, v in path:
            capacity[u][v] -= flow
            capacity[v][u] += flow
