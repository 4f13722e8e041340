"""Drawing the autograd graph: torchviz's ``make_dot`` built in.

PyTorch itself draws nothing; its users draw graphs with torchviz
(github.com/szagoruyko/pytorchviz), whose ``make_dot`` hands a ``graphviz.Digraph``
to the Graphviz ``dot`` program.  This module offers the same call and a small
``Digraph`` of its own, and lays the graph out itself, so SVG needs neither
Graphviz nor any package:

    from glasstorch.autograd import make_dot
    dot = make_dot(loss, params=dict(model.named_parameters()), show_saved=True)
    print(dot)                      # the DOT source
    dot.render("graph.gv")          # writes graph.gv (the source) and graph.gv.svg
    dot                             # in Jupyter: the drawing

What the drawing shows (torchviz's colours):

    lightgrey        a backward node, labelled with its class (``AddmmBackward0``);
                     ``show_attrs=True`` adds its saved non-tensor values
                     (``_saved_alpha``, ``_saved_dim`` ...) as a table
    lightblue        a leaf that requires grad, drawn above its ``AccumulateGrad``
                     and named from ``params`` (``weight\\n (3, 4)``)
    orange           a tensor a node saved for backward, with its size (or
                     ``[freed]`` once backward released it), joined to the node
                     by a dashed line; built-in nodes' with ``show_saved=True``,
                     a custom ``Function``'s ``saved_tensors`` always
    darkolivegreen1  an output given to ``make_dot``; darkolivegreen3: the base
                     of an output that is a view (dotted line)

Arrows run as the forward pass ran, from inputs to outputs (the reverse of
``next_functions``), so the graph reads top to bottom and ends in the outputs.
``to_dot(grad_fn)`` returns the DOT text of the graph below one or more nodes.

The SVG comes from a layered ("Sugiyama") layout, the outline of what ``dot``
does; ``_layout`` runs the steps in order:

    _measure         box sizes from the label text (a monospace estimate)
    _break_cycles    only a hand-made Digraph can have a cycle; its closing edges
                     are laid out reversed
    _assign_layers   longest path: a node sits one layer above its highest
                     consumer; sinks (outputs, saved tensors) just below their
                     lowest producer
    _add_dummies     an edge spanning layers becomes a chain of points, one per
                     layer crossed, so it is routed around the boxes
    _order_layers    barycenter sweeps down and up, keeping the order with the
                     fewest crossings
    _place_x         every point as near the mean of its neighbours as the
                     boxes' widths allow (isotonic regression, no overlaps)
    _route           vertical stubs through layers joined by cubic Béziers

``Digraph.pipe``/``render`` use this layout for SVG; other formats (png, pdf)
need Graphviz's ``dot`` on PATH and use it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from bisect import bisect_right, insort
from dataclasses import dataclass

from .._tensor import Tensor
from .graph import ERR_BACKWARD_TWICE, Node

__all__ = ["make_dot", "to_dot", "Digraph"]


# -- the graph description: the part of graphviz.Digraph torchviz uses ---------------

_DOT_KEYWORDS = {"node", "edge", "graph", "digraph", "subgraph", "strict"}


def _quote(text) -> str:
    """A DOT ID: bare when it is an identifier or a number, else a quoted string."""
    text = str(text)
    if text.lower() not in _DOT_KEYWORDS and (
            text.isidentifier() and text.isascii() or _is_numeral(text)):
        return text
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def _is_numeral(text) -> bool:
    digits = text[1:] if text.startswith("-") else text
    whole, _, fraction = digits.partition(".")
    return bool(whole or fraction) and (whole + fraction).isdigit() and digits.count(".") <= 1


def _attr_list(attrs) -> str:
    return " [" + " ".join(f"{key}={_quote(value)}" for key, value in attrs.items()) + "]" \
        if attrs else ""


class Digraph:
    """A directed graph described as Graphviz's DOT language: ``node``, ``edge``,
    ``source``, ``save``, ``render``, ``pipe``, as ``graphviz.Digraph`` offers them.
    Its nodes and edges are also kept as data, which the built-in layout reads."""

    def __init__(self, name=None, comment=None, filename=None, directory="", format="svg",
                 graph_attr=None, node_attr=None, edge_attr=None):
        self.name = name
        self.comment = comment
        self.filename = filename or f"{name or 'Digraph'}.gv"
        self.directory = directory
        self.format = format
        self.graph_attr = dict(graph_attr or {})
        self.node_attr = dict(node_attr or {})
        self.edge_attr = dict(edge_attr or {})
        self.body = []          # the DOT statements, one a line
        self.nodes = {}         # name -> attributes (a node declared twice merges them)
        self.edges = []         # (tail, head, attributes)

    def node(self, name, label=None, **attrs) -> None:
        name = str(name)
        if label is not None:
            attrs = {"label": label, **attrs}
        self.nodes.setdefault(name, {}).update(attrs)
        self.body.append(f"\t{_quote(name)}{_attr_list(attrs)}")

    def edge(self, tail_name, head_name, **attrs) -> None:
        tail, head = str(tail_name), str(head_name)
        self.edges.append((tail, head, attrs))
        self.body.append(f"\t{_quote(tail)} -> {_quote(head)}{_attr_list(attrs)}")

    @property
    def source(self) -> str:
        lines = [f"// {self.comment}"] if self.comment else []
        lines.append(f"digraph {_quote(self.name)} {{" if self.name else "digraph {")
        for kind, attrs in (("graph", self.graph_attr), ("node", self.node_attr),
                            ("edge", self.edge_attr)):
            if attrs:
                lines.append(f"\t{kind}{_attr_list(attrs)}")
        lines.extend(self.body)
        lines.append("}")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.source

    def save(self, filename=None, directory=None) -> str:
        """Write the DOT source; return its path."""
        if filename is not None:
            self.filename = filename
        if directory is not None:
            self.directory = directory
        path = os.path.join(self.directory, self.filename)
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.source)
        return path

    def render(self, filename=None, directory=None, cleanup=False, format=None) -> str:
        """Write the source and its drawing ``<source path>.<format>``; return the
        drawing's path (``cleanup=True`` removes the source afterwards)."""
        source_path = self.save(filename, directory)
        out_path = f"{source_path}.{format or self.format}"
        with open(out_path, "wb") as f:
            f.write(self.pipe(format))
        if cleanup:
            os.remove(source_path)
        return out_path

    def pipe(self, format=None, encoding=None):
        """The drawing as bytes (str when ``encoding`` is given)."""
        format = format or self.format
        if format == "svg":
            data = to_svg(self).encode("utf-8")
        else:
            data = _run_graphviz(self.source, format)
        return data.decode(encoding) if encoding is not None else data

    def _repr_svg_(self) -> str:
        return to_svg(self)

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        """What Jupyter displays."""
        wanted = "image/svg+xml"
        if (include is not None and wanted not in include) or (exclude and wanted in exclude):
            return {}
        return {wanted: to_svg(self)}


def _run_graphviz(source, format) -> bytes:
    """Formats other than SVG come from Graphviz's ``dot`` program, when installed."""
    executable = shutil.which("dot")
    if executable is None:
        raise RuntimeError(f"the {format!r} format needs Graphviz's 'dot' executable on PATH; "
                           f"the built-in layout writes 'svg'")
    return subprocess.run([executable, f"-T{format}"], input=source.encode("utf-8"),
                          capture_output=True, check=True).stdout


# -- from the autograd graph to a Digraph (torchviz's make_dot) ----------------------

SAVED_PREFIX = "_saved_"
NODE_ATTR = {"style": "filled", "shape": "box", "align": "left", "fontsize": "10",
             "ranksep": "0.1", "height": "0.2", "fontname": "monospace"}
_INPLACE_ERROR = "one of the variables needed for gradient computation has been modified by an " \
                 "inplace operation"


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50) -> Digraph:
    """The autograd graph behind ``var`` (a tensor or a sequence of tensors).

    ``params``: a dict name -> tensor (``dict(model.named_parameters())``) naming
    the leaves; ``show_attrs``: list each node's saved non-tensor values;
    ``show_saved``: draw the tensors built-in nodes saved for backward;
    ``max_attr_chars``: cut attribute values longer than this."""
    outputs = (var,) if isinstance(var, Tensor) else var
    if not isinstance(outputs, (tuple, list)) or not all(isinstance(t, Tensor) for t in outputs):
        raise TypeError(f"make_dot(): expected a Tensor or a sequence of Tensors as var, but got "
                        f"{type(var).__name__}")
    builder = _GraphBuilder(params, show_attrs, show_saved, max_attr_chars)
    for t in outputs:
        builder.add_output(t)
    return builder.finish()


def to_dot(grad_fn, params=None, show_attrs=False, show_saved=False, max_attr_chars=50) -> str:
    """The DOT text of the graph below ``grad_fn`` (a node or a sequence of nodes),
    with ``make_dot``'s options."""
    roots = (grad_fn,) if isinstance(grad_fn, Node) else grad_fn
    if not isinstance(roots, (tuple, list)) or not all(isinstance(fn, Node) for fn in roots):
        raise TypeError(f"to_dot(): expected an autograd Node or a sequence of Nodes as grad_fn, "
                        f"but got {type(grad_fn).__name__}")
    builder = _GraphBuilder(params, show_attrs, show_saved, max_attr_chars)
    for fn in roots:
        builder.add_backward_graph(fn)
    return builder.finish().source


def _size_str(t) -> str:
    return "(" + ", ".join(str(int(s)) for s in t.shape) + ")"


class _Unreadable:
    """A saved value backward can no longer read: freed by a backward without
    ``retain_graph``, or modified in place since it was saved."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


def _read(fn, attr):
    try:
        return getattr(fn, attr)
    except RuntimeError as error:
        if str(error) == ERR_BACKWARD_TWICE:
            return _Unreadable("[freed]")
        if str(error).startswith(_INPLACE_ERROR):
            return _Unreadable("[modified in place]")
        raise


class _GraphBuilder:
    """Walks the graph from its outputs (or root nodes) through ``next_functions``
    and describes what it meets, each node and tensor once."""

    def __init__(self, params, show_attrs, show_saved, max_attr_chars):
        if params is not None:
            if not hasattr(params, "items") or not all(isinstance(p, Tensor)
                                                       for p in params.values()):
                raise TypeError("make_dot(): params must be a dict mapping names to Tensors")
            self.param_names = {id(p): name for name, p in params.items()}
        else:
            self.param_names = {}
        self.show_attrs = show_attrs
        self.show_saved = show_saved
        self.max_attr_chars = max_attr_chars
        self.dot = Digraph(node_attr=NODE_ATTR, graph_attr={"size": "12,12"})
        self.seen = set()       # ids of the nodes and tensors drawn
        self.outputs = set()    # ids of the outputs drawn

    def tensor_label(self, t, name=None) -> str:
        if not name:
            name = self.param_names.get(id(t), "")
        return f"{name}\n {_size_str(t)}"

    def add_output(self, t, color="darkolivegreen1") -> None:
        """An output keeps its colour even when it is also a leaf of the graph."""
        if id(t) in self.outputs:
            return
        self.outputs.add(id(t))
        self.seen.add(id(t))
        self.dot.node(str(id(t)), self.tensor_label(t), fillcolor=color)
        if t.grad_fn is not None:
            self.add_backward_graph(t.grad_fn)
            self.dot.edge(str(id(t.grad_fn)), str(id(t)))
        if t._is_view():
            self.add_output(t._base, color="darkolivegreen3")
            self.dot.edge(str(id(t._base)), str(id(t)), style="dotted")

    def add_backward_graph(self, root) -> None:
        """Depth first, each node before the nodes its gradient flows to."""
        stack = [root]
        while stack:
            fn = stack.pop()
            if id(fn) in self.seen:
                continue
            self.seen.add(id(fn))
            saved = [(attr[len(SAVED_PREFIX):], _read(fn, attr)) for attr in dir(fn)
                     if attr.startswith(SAVED_PREFIX)] if self.show_attrs or self.show_saved else []
            if self.show_saved:
                for name, value in saved:
                    self.add_saved(fn, name, value)
            variable = getattr(fn, "variable", None)     # an AccumulateGrad's leaf
            if isinstance(variable, Tensor):
                if id(variable) not in self.seen:
                    self.seen.add(id(variable))
                    self.dot.node(str(id(variable)), self.tensor_label(variable),
                                  fillcolor="lightblue")
                self.dot.edge(str(id(variable)), str(id(fn)))
            self.dot.node(str(id(fn)), self.node_label(fn, saved))
            following = [next_fn for next_fn, _ in fn.next_functions if next_fn is not None]
            for next_fn in following:
                self.dot.edge(str(id(next_fn)), str(id(fn)))
            self.add_custom_saved(fn)
            stack.extend(reversed(following))

    def add_saved(self, fn, name, value) -> None:
        """One orange box per saved tensor (per element of a saved list)."""
        if isinstance(value, _Unreadable):   # (only a saved tensor can be unreadable)
            self._saved_box(fn, name, f"{name}\n {value}")
        elif isinstance(value, Tensor):
            self._saved_box(fn, name, self.tensor_label(value, name))
        elif isinstance(value, (tuple, list)):
            for i, t in enumerate(value):
                if isinstance(t, Tensor):
                    self._saved_box(fn, f"{name}[{i}]", self.tensor_label(t, f"{name}[{i}]"))

    def add_custom_saved(self, fn) -> None:
        """A custom Function's ``ctx.saved_tensors`` (not read when reading would
        clear them: ``clear_saved_tensors_on_access``)."""
        forward_cls = getattr(fn, "_forward_cls", None)
        if not hasattr(fn, "saved_tensors") or getattr(forward_cls,
                                                       "clear_saved_tensors_on_access", False):
            return
        tensors = _read(fn, "saved_tensors")
        if isinstance(tensors, _Unreadable):
            self._saved_box(fn, "saved_tensors", f"saved_tensors\n {tensors}")
            return
        for i, t in enumerate(tensors):
            if isinstance(t, Tensor):
                name = f"saved_tensors[{i}]"
                self._saved_box(fn, name, self.tensor_label(t, name))

    def _saved_box(self, fn, name, label) -> None:
        box = f"{id(fn)}.{name}"
        self.dot.node(box, label, fillcolor="orange")
        self.dot.edge(str(id(fn)), box, dir="none", style="dashed")

    def node_label(self, fn, saved) -> str:
        """The class name, then (show_attrs) a table of the saved values."""
        name = type(fn).__name__
        if not self.show_attrs:
            return name
        rows = {}
        for attr, value in saved:
            if isinstance(value, Tensor):
                rows[attr] = "[saved tensor]"
            elif isinstance(value, (tuple, list)) and any(isinstance(v, Tensor) for v in value):
                rows[attr] = "[saved tensors]"
            else:
                rows[attr] = str(value)
        if not rows:
            return name
        return name + "\n" + _table(name, rows, self.max_attr_chars)

    def finish(self) -> Digraph:
        """torchviz's resize_graph: the drawing may grow with its content."""
        size = max(12, len(self.dot.body) * 0.15)
        self.dot.graph_attr["size"] = f"{size:g},{size:g}"
        return self.dot


def _table(title, rows, max_chars) -> str:
    """``name: value`` rows, names left- and values right-aligned, values cut
    to ``max_chars`` with ``...``, under a rule as wide as the table."""
    max_chars = max(max_chars, 3)
    key_width = max(len(k) for k in rows)
    value_width = min(max(len(v) for v in rows.values()), max_chars)

    def cut(v):
        return v[:value_width - 3] + "..." if len(v) > value_width else v
    rule = "-" * max(key_width + value_width + 2, len(title))
    return rule + "\n" + "\n".join(f"{k:<{key_width}}: {cut(v):>{value_width}}"
                                   for k, v in rows.items())


# -- the built-in layout ----------------------------------------------------------------

POINTS_PER_INCH = 72.0
CHAR_WIDTH = 0.6            # of the font size: a monospace advance
LINE_HEIGHT = 1.2           # of the font size
LABEL_MARGIN = (0.11 * POINTS_PER_INCH, 0.055 * POINTS_PER_INCH)  # Graphviz's box margin
NODE_SEP = 0.25 * POINTS_PER_INCH       # Graphviz's defaults: nodesep 0.25in,
RANK_SEP = 0.5 * POINTS_PER_INCH        # ranksep 0.5in, pad 4pt
PAD = 4.0
ARROW_LENGTH, ARROW_HALF_WIDTH = 10.0, 3.5
LOOP_WIDTH = 24.0
ORDERING_SWEEPS = 4
PLACEMENT_SWEEPS = 6
# the X11 colour names torchviz uses that SVG does not know
X11_COLORS = {"darkolivegreen1": "#caff70", "darkolivegreen3": "#a2cd5a"}
DASHES = {"dashed": "5,2", "dotted": "1,5"}


@dataclass
class _Box:
    """A node's box: its label lines, size and (once placed) its centre."""
    lines: list
    width: float
    height: float
    attrs: dict
    x: float = 0.0
    y: float = 0.0

    @property
    def top(self) -> float:
        return self.y - self.height / 2

    @property
    def bottom(self) -> float:
        return self.y + self.height / 2


@dataclass
class _Layout:
    """Placed boxes (node name -> _Box) and, per edge, ``(tail, head, attrs,
    columns, reversed)``: the columns ``_route`` made (None for a self-loop),
    and whether the edge was laid out upside down to break a cycle."""
    boxes: dict
    paths: list
    width: float
    height: float


def _measure(graph) -> dict:
    """A box per node, sized to hold its label (Graphviz's defaults for what the
    graph does not set: fontsize 14, width 0.75in, height 0.5in)."""
    names = list(graph.nodes)
    for tail, head, _ in graph.edges:       # an edge may name a node never declared
        for name in (tail, head):
            if name not in graph.nodes and name not in names:
                names.append(name)
    boxes = {}
    for name in names:
        attrs = {**graph.node_attr, **graph.nodes.get(name, {})}
        lines = str(attrs.get("label", name)).split("\n")
        font = float(attrs.get("fontsize", 14))
        text_width = max(len(line) for line in lines) * CHAR_WIDTH * font
        text_height = len(lines) * LINE_HEIGHT * font
        boxes[name] = _Box(lines,
                           max(float(attrs.get("width", 0.75)) * POINTS_PER_INCH,
                               text_width + 2 * LABEL_MARGIN[0]),
                           max(float(attrs.get("height", 0.5)) * POINTS_PER_INCH,
                               text_height + 2 * LABEL_MARGIN[1]),
                           attrs)
    return boxes


def _break_cycles(names, edges) -> set:
    """Indices of the edges that close a cycle in a depth-first search: laying
    them out reversed leaves a DAG.  (Self-loops are left out beforehand.)"""
    out = {name: [] for name in names}
    for i, (tail, head) in enumerate(edges):
        out[tail].append((head, i))
    ON_STACK, DONE = 1, 2
    state, closing = {}, set()
    for start in names:
        if start in state:
            continue
        state[start] = ON_STACK
        stack = [(start, iter(out[start]))]
        while stack:
            name, pending = stack[-1]
            for head, i in pending:
                if state.get(head) == ON_STACK:
                    closing.add(i)
                elif head not in state:
                    state[head] = ON_STACK
                    stack.append((head, iter(out[head])))
                    break
            else:
                state[name] = DONE
                stack.pop()
    return closing


def _assign_layers(names, edges) -> dict:
    """Layer of each node, 0 at the top, every edge pointing down.  Longest path
    from the sinks places a node one layer above its highest consumer (a leaf
    right above where it is used); then each sink moves up to just below its
    lowest producer (a saved tensor right under its node); empty layers go."""
    succ = {name: [] for name in names}
    pred = {name: [] for name in names}
    for tail, head in edges:
        succ[tail].append(head)
        pred[head].append(tail)
    order = _topological_order(names, succ, pred)
    height = {}
    for name in reversed(order):
        height[name] = 1 + max(height[s] for s in succ[name]) if succ[name] else 0
    top = max(height.values(), default=0)
    layer = {name: top - height[name] for name in names}
    for name in order:
        if not succ[name]:
            layer[name] = 1 + max(layer[p] for p in pred[name]) if pred[name] else 0
    used = {value: i for i, value in enumerate(sorted(set(layer.values())))}
    return {name: used[value] for name, value in layer.items()}


def _topological_order(names, succ, pred) -> list:
    waiting = {name: len(pred[name]) for name in names}
    order = [name for name in names if waiting[name] == 0]
    for name in order:          # (the list grows while it is walked)
        for s in succ[name]:
            waiting[s] -= 1
            if waiting[s] == 0:
                order.append(s)
    return order


def _add_dummies(edges, layer) -> list:
    """Each edge as the chain of points it passes: its tail, one dummy point per
    layer strictly between, its head.  Dummies get their layers in ``layer``."""
    chains = []
    for i, (tail, head) in enumerate(edges):
        dummies = [("dummy", i, k) for k in range(layer[tail] + 1, layer[head])]
        for dummy in dummies:
            layer[dummy] = dummy[2]
        chains.append([tail, *dummies, head])
    return chains


def _order_layers(layers, up, down) -> list:
    """Reorder each layer by the mean position of its neighbours in the layer
    above (sweeping down), then below (sweeping up); keep the best order seen."""
    best = [list(layer) for layer in layers]
    best_crossings = _crossings(best, down)
    for _ in range(ORDERING_SWEEPS):
        if best_crossings == 0:
            break
        for k in range(1, len(layers)):
            _sort_by_barycenter(layers[k], layers[k - 1], up)
        for k in range(len(layers) - 2, -1, -1):
            _sort_by_barycenter(layers[k], layers[k + 1], down)
        crossings = _crossings(layers, down)
        if crossings < best_crossings:
            best, best_crossings = [list(layer) for layer in layers], crossings
    return best


def _sort_by_barycenter(layer, fixed, neighbours) -> None:
    position = {v: i for i, v in enumerate(fixed)}

    def barycenter(item):
        i, v = item
        near = [position[n] for n in neighbours[v]]
        return sum(near) / len(near) if near else i
    layer[:] = [v for _, v in sorted(enumerate(layer), key=barycenter)]


def _crossings(layers, down) -> int:
    """Edge crossings between adjacent layers: pairs of edges whose ends come
    in opposite orders (inversions, counted with a sorted list)."""
    total = 0
    for upper, lower in zip(layers, layers[1:]):
        position = {v: i for i, v in enumerate(lower)}
        ends = sorted((i, position[w]) for i, v in enumerate(upper) for w in down[v])
        seen = []
        for _, end in ends:
            total += len(seen) - bisect_right(seen, end)
            insort(seen, end)
    return total


def _place_x(layers, up, down, widths) -> dict:
    """Centre x of every box and dummy: repeatedly move each layer's points
    towards the mean x of their neighbours, as close as their order and
    widths allow; then shift everything right of the margin."""
    x = {}

    def settle(layer, targets):
        gaps = [(widths[a] + widths[b]) / 2 + (NODE_SEP if widths[a] and widths[b]
                                               else NODE_SEP / 2)
                for a, b in zip(layer, layer[1:])]
        for v, position in zip(layer, _closest_ordered(targets, gaps)):
            x[v] = position
    for layer in layers:
        settle(layer, [0.0] * len(layer))
    for _ in range(PLACEMENT_SWEEPS):
        for layer in layers + layers[::-1]:
            settle(layer, [_mean([x[n] for n in up[v] + down[v]], x[v]) for v in layer])
    left = min((x[v] - widths[v] / 2 for v in x), default=0.0)
    return {v: position - left + PAD for v, position in x.items()}


def _mean(values, default) -> float:
    return sum(values) / len(values) if values else default


def _closest_ordered(targets, gaps) -> list:
    """Positions p (p[i+1] - p[i] >= gaps[i]) nearest to ``targets`` in the
    least-squares sense.  With q[i] = p[i] - (gaps before i) the constraint is
    "q never decreases": isotonic regression, solved by pooling adjacent
    violators (a block's q is the mean of its members' targets)."""
    offsets = [0.0]
    for gap in gaps:
        offsets.append(offsets[-1] + gap)
    blocks = []             # [mean, count]
    for target, offset in zip(targets, offsets):
        blocks.append([target - offset, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, count = blocks.pop()
            blocks[-1] = [(blocks[-1][0] * blocks[-1][1] + mean * count) / (blocks[-1][1] + count),
                          blocks[-1][1] + count]
    q = [mean for mean, count in blocks for _ in range(count)]
    return [qi + offset for qi, offset in zip(q, offsets)]


def _layer_lists(names, chains, layer):
    """The members of each layer (boxes in graph order, then dummies) and each
    point's neighbours in the layer above (``up``) and below (``down``)."""
    layers = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for v in names + [dummy for chain in chains for dummy in chain[1:-1]]:
        layers[layer[v]].append(v)
    up = {v: [] for v in layer}
    down = {v: [] for v in layer}
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            down[a].append(b)
            up[b].append(a)
    return layers, up, down


def _place_y(layers, boxes, layer) -> list:
    """Each layer a band as tall as its tallest box, RANK_SEP apart; boxes are
    centred in their band.  Returns the bands' (top, bottom)."""
    bands, top = [], PAD
    for members in layers:
        height = max((boxes[v].height for v in members if v in boxes), default=0.0)
        bands.append((top, top + height))
        top += height + RANK_SEP
    for name, box in boxes.items():
        band_top, band_bottom = bands[layer[name]]
        box.y = (band_top + band_bottom) / 2
    return bands


def _ports(chains, x) -> dict:
    """("out", box) / ("in", box) -> the chains leaving / entering it, left to
    right by where they go to / come from."""
    ports = {}
    for chain in chains:
        ports.setdefault(("out", chain[0]), []).append(chain)
        ports.setdefault(("in", chain[-1]), []).append(chain)
    for (side, _), members in ports.items():
        members.sort(key=lambda c: x[c[1] if side == "out" else c[-2]])
    return ports


def _route(chain, boxes, x, layer, bands, ports) -> list:
    """The vertical pieces ``(x, top, bottom)`` of an edge's path, top to bottom:
    a stub down from the tail's port to the bottom of its layer, one through
    each layer a dummy holds, one from the top of the head's layer into its
    port (the SVG joins them with Béziers).  A box's ports are spread along
    its bottom (top) side, one per edge leaving (entering) it."""
    tail, head = chain[0], chain[-1]
    columns = [(_port(boxes[tail], ports["out", tail], chain), boxes[tail].bottom,
                bands[layer[tail]][1])]
    for dummy in chain[1:-1]:
        top, bottom = bands[layer[dummy]]
        columns.append((x[dummy], top, bottom))
    columns.append((_port(boxes[head], ports["in", head], chain), bands[layer[head]][0],
                    boxes[head].top))
    return columns


def _port(box, chains, chain) -> float:
    i = next(k for k, c in enumerate(chains) if c is chain)
    return box.x - box.width / 2 + box.width * (i + 1) / (len(chains) + 1)


def _layout(graph) -> _Layout:
    """The steps of the module docstring, in order."""
    boxes = _measure(graph)
    names = list(boxes)
    edges = [(t, h) for t, h, _ in graph.edges if t != h]      # self-loops are drawn apart
    closing = _break_cycles(names, edges)
    edges = [(h, t) if i in closing else (t, h) for i, (t, h) in enumerate(edges)]
    layer = _assign_layers(names, edges)
    chains = _add_dummies(edges, layer)
    layers, up, down = _layer_lists(names, chains, layer)
    layers = _order_layers(layers, up, down)
    x = _place_x(layers, up, down, {v: boxes[v].width if v in boxes else 0.0 for v in layer})
    for name, box in boxes.items():
        box.x = x[name]
    bands = _place_y(layers, boxes, layer)
    ports = _ports(chains, x)
    routes = iter([(_route(chain, boxes, x, layer, bands, ports), i in closing)
                   for i, chain in enumerate(chains)])
    paths = [(t, h, a) + ((None, False) if t == h else next(routes)) for t, h, a in graph.edges]

    right = [box.x + box.width / 2 for box in boxes.values()]
    right += [x[v] for v in x if v not in boxes]        # dummies, where long edges pass
    right += [boxes[t].x + boxes[t].width / 2 + LOOP_WIDTH for t, h, _ in graph.edges if t == h]
    bottom = bands[-1][1] if bands else PAD
    return _Layout(boxes, paths, max(right, default=0.0) + PAD, bottom + PAD)


# -- SVG ------------------------------------------------------------------------------

def to_svg(graph) -> str:
    """A standalone SVG 1.1 drawing of ``graph`` from the built-in layout."""
    layout = _layout(graph)
    width, height = layout.width, layout.height
    scale = _fit(graph.graph_attr.get("size"), width, height)
    out = ['<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
           f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" '
           f'width="{width * scale:.2f}pt" height="{height * scale:.2f}pt" '
           f'viewBox="0 0 {width:.2f} {height:.2f}">',
           '<g id="graph0" class="graph">',
           f'<rect x="0" y="0" width="{width:.2f}" height="{height:.2f}" fill="white"/>']
    for i, (tail, head, attrs, columns, reversed_edge) in enumerate(layout.paths, 1):
        out.append(_svg_edge(i, tail, head, {**graph.edge_attr, **attrs}, columns, reversed_edge,
                             layout.boxes[tail]))
    for i, (name, box) in enumerate(layout.boxes.items(), 1):
        out.append(_svg_node(i, name, box))
    out += ["</g>", "</svg>"]
    return "\n".join(out) + "\n"


def _fit(size, width, height) -> float:
    """Graphviz's ``size="w,h"`` (inches): a larger drawing is scaled down to fit."""
    if not size:
        return 1.0
    max_w, _, max_h = str(size).rstrip("!").partition(",")
    max_w = float(max_w) * POINTS_PER_INCH
    max_h = float(max_h) * POINTS_PER_INCH if max_h else max_w
    return min(1.0, max_w / width, max_h / height)


def escape(text) -> str:
    """Text made safe for XML content and double-quoted attributes."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") \
        .replace('"', "&quot;")


def _color(name) -> str:
    return X11_COLORS.get(name, name)


def _svg_node(i, name, box) -> str:
    attrs = box.attrs
    filled = "filled" in str(attrs.get("style", ""))
    fill = _color(attrs.get("fillcolor", attrs.get("color", "lightgrey"))) if filled else "none"
    font = float(attrs.get("fontsize", 14))
    family = attrs.get("fontname", "Times,serif")
    line = LINE_HEIGHT * font
    first = box.y - len(box.lines) * line / 2 + 0.8 * line
    spans = "".join(f'<tspan x="{box.x:.2f}" y="{first + k * line:.2f}">{escape(text)}</tspan>'
                    for k, text in enumerate(box.lines))
    return (f'<g id="node{i}" class="node"><title>{escape(name)}</title>'
            f'<rect x="{box.x - box.width / 2:.2f}" y="{box.top:.2f}" width="{box.width:.2f}" '
            f'height="{box.height:.2f}" fill="{escape(fill)}" stroke="black"/>'
            f'<text text-anchor="middle" font-family="{escape(family)}" font-size="{font:g}" '
            f'xml:space="preserve">{spans}</text></g>')


def _svg_edge(i, tail, head, attrs, columns, reversed_edge, tail_box) -> str:
    stroke = f'"{escape(_color(attrs.get("color", "black")))}"'
    dashes = DASHES.get(attrs.get("style"))
    dash = f' stroke-dasharray="{dashes}"' if dashes else ""
    arrow = attrs.get("dir", "forward") != "none"
    if columns is None:         # a self-loop, on the box's right side
        r, y = tail_box.x + tail_box.width / 2, tail_box.y
        d, arrow = f"M{r:.2f},{y - 4:.2f} C{r + LOOP_WIDTH:.2f},{y - 16:.2f} " \
                   f"{r + LOOP_WIDTH:.2f},{y + 16:.2f} {r:.2f},{y + 4:.2f}", False
    elif arrow:
        d = _path(_leave_room_for_arrow(columns, reversed_edge))
    else:
        d = _path(columns)
    parts = [f'<g id="edge{i}" class="edge"><title>{escape(tail)}-&gt;{escape(head)}</title>',
             f'<path d="{d}" fill="none" stroke={stroke}{dash}/>']
    if arrow:
        # the arrow points at the edge's head: down into the last box, or up into
        # the first one for an edge laid out reversed
        if reversed_edge:
            tip_x, tip_y, direction = columns[0][0], columns[0][1], -1
        else:
            tip_x, tip_y, direction = columns[-1][0], columns[-1][2], 1
        base = tip_y - direction * ARROW_LENGTH
        parts.append(f'<polygon points="{tip_x - ARROW_HALF_WIDTH:.2f},{base:.2f} '
                     f'{tip_x + ARROW_HALF_WIDTH:.2f},{base:.2f} {tip_x:.2f},{tip_y:.2f}" '
                     f'fill={stroke} stroke={stroke}/>')
    return "".join(parts) + "</g>"


def _leave_room_for_arrow(columns, at_start) -> list:
    """The path stops an arrow's length short of the box it points at."""
    columns = list(columns)
    if at_start:
        x, top, bottom = columns[0]
        columns[0] = (x, top + ARROW_LENGTH, max(bottom, top + ARROW_LENGTH))
    else:
        x, top, bottom = columns[-1]
        columns[-1] = (x, min(top, bottom - ARROW_LENGTH), bottom - ARROW_LENGTH)
    return columns


def _path(columns) -> str:
    """SVG path data: each column a vertical line, consecutive columns joined by
    a cubic Bézier that leaves and arrives vertically."""
    x0, top0, bottom0 = columns[0]
    d = [f"M{x0:.2f},{top0:.2f}"]
    if bottom0 > top0:
        d.append(f"L{x0:.2f},{bottom0:.2f}")
    previous_x, previous_y = x0, bottom0
    for x, top, bottom in columns[1:]:
        middle = (previous_y + top) / 2
        d.append(f"C{previous_x:.2f},{middle:.2f} {x:.2f},{middle:.2f} {x:.2f},{top:.2f}")
        if bottom > top:
            d.append(f"L{x:.2f},{bottom:.2f}")
        previous_x, previous_y = x, bottom
    return " ".join(d)
