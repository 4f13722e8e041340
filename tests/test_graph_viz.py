"""``make_dot`` (glasstorch/autograd/graph_viz.py) against real PyTorch's graphs.

torchviz is not installed, so the oracle is PyTorch's own graph: the same program
runs in both libraries, PyTorch's graph is walked through ``grad_fn``,
``next_functions``, ``AccumulateGrad.variable``, the ``_saved_*`` attributes and
a custom Function's ``saved_tensors``, and the DOT text we write (parsed back
here) must describe the same nodes, edges, leaves, saved tensors and outputs,
as multisets.  The SVG from the built-in layout must parse, hold every label,
every node and every edge, keep boxes apart and draw edges downwards.
"""
from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
import torch
from hypothesis import given, strategies as st

import glasstorch as gt
from glasstorch.autograd import graph_viz
from glasstorch.autograd.graph_viz import Digraph, make_dot, to_dot

SVG = "{http://www.w3.org/2000/svg}"


# -- the programs, written once for both libraries --------------------------------------

def seed_addmm(T):
    """/work/shared/seeds/000, exercise 2."""
    x = T.randn(4, 4, requires_grad=True)
    w = T.randn(4, 4, requires_grad=True)
    b = T.randn(4, requires_grad=True)
    return T.addmm(b, x, w).sum(), dict(x=x, w=w, b=b)


def mlp(T):
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(5, 4), T.nn.ReLU(), T.nn.Linear(4, 3))
    loss = T.nn.functional.cross_entropy(model(T.randn(2, 5)), T.tensor([0, 2]))
    return loss, dict(model.named_parameters())


def shared_subexpression(T):
    """``s`` feeds three nodes, ``s * s`` and ``a + a`` use one tensor twice."""
    a = T.randn(3, requires_grad=True)
    s = a * 2
    return (s * s + s.sin() + (a + a)).sum(), {"a": a}


def two_outputs(T):
    a = T.randn(2, 3, requires_grad=True)
    b = T.randn(3, requires_grad=True)
    h = (a * b).tanh()
    return (h.exp(), h.mean() + b.sum()), dict(a=a, b=b)


def indexing(T):
    """IndexBackward0 saves a list of tensors (one of them None)."""
    x = T.randn(3, 4, requires_grad=True)
    return x[T.tensor([0, 2]), 1:][:, T.tensor([1, 0])].sum(), {"x": x}


def custom_function(T):
    class Scale(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, None, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, _, b = ctx.saved_tensors
            return grad * b, grad * a
    a = T.randn(2, 3, requires_grad=True)
    b = T.randn(3, requires_grad=True)
    return Scale.apply(a, b).sum(), dict(a=a, b=b)


def view_output(T):
    w = T.randn(3, requires_grad=True)
    return (w * 2).view(3, 1)[1:], {"w": w}


PROGRAMS = [seed_addmm, mlp, shared_subexpression, two_outputs, indexing, custom_function,
            view_output]


# -- reading what we wrote ----------------------------------------------------------------

_ID = r'"(?:[^"\\]|\\.)*"|[^\s\[\]"]+'
_STATEMENT = re.compile(rf'\t(?P<tail>{_ID})(?: -> (?P<head>{_ID}))?(?: \[(?P<attrs>.*)\])?')
_ATTRIBUTE = re.compile(rf'(\w+)=({_ID})')


def _unquote(text):
    if not text.startswith('"'):
        return text
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text[1:-1])


def parse_dot(source):
    """(nodes: name -> attributes, edges: [(tail, head, attributes)]) of a DOT text."""
    lines = source.rstrip("\n").split("\n")
    assert lines[0] == "digraph {" and lines[-1] == "}"
    nodes, edges = {}, []
    for line in lines[1:-1]:
        match = _STATEMENT.fullmatch(line)
        assert match, line
        attrs = {k: _unquote(v) for k, v in _ATTRIBUTE.findall(match["attrs"] or "")}
        if match["tail"] in ("graph", "node", "edge"):
            continue
        tail = _unquote(match["tail"])
        if match["head"] is None:
            nodes.setdefault(tail, {}).update(attrs)
        else:
            edges.append((tail, _unquote(match["head"]), attrs))
    return nodes, edges


def tensor_label(label):
    """``"name\\n (2, 3)"`` -> ("name", (2, 3)); ``[freed]`` is kept as text."""
    name, size = label.split("\n")
    size = size.strip()
    if size.startswith("["):
        return name, size
    return name, tuple(int(v) for v in size.strip("()").split(",") if v.strip())


def dot_structure(source):
    """What our DOT says: backward nodes, the edges between them, leaves (with the
    node they feed), saved tensors (with the node that saved them), outputs."""
    nodes, edges = parse_dot(source)

    def kind(name):
        return nodes[name].get("fillcolor", "backward")

    def title(name):
        return nodes[name].get("label", name).split("\n")[0]
    structure = {"nodes": Counter(title(n) for n in nodes if kind(n) == "backward"),
                 "edges": Counter(), "leaves": Counter(), "saved": Counter(), "outputs": Counter()}
    for tail, head, attrs in edges:
        if kind(tail) == kind(head) == "backward":
            assert attrs == {}
            structure["edges"][title(tail), title(head)] += 1
        elif kind(tail) == "lightblue":
            structure["leaves"][title(head), tensor_label(nodes[tail]["label"])] += 1
        elif kind(head) == "orange":
            assert attrs == {"dir": "none", "style": "dashed"}
            structure["saved"][(title(tail),) + tensor_label(nodes[head]["label"])] += 1
        elif kind(head) == "darkolivegreen1" and kind(tail) == "backward":
            structure["outputs"][title(tail), tensor_label(nodes[head]["label"])] += 1
    return structure


# -- the oracle: PyTorch's graph, walked -------------------------------------------------

def _unreadable(error):
    message = str(error)
    if message.startswith("Trying to backward through the graph a second time"):
        return "[freed]"
    assert message.startswith("one of the variables needed for gradient computation has been "
                              "modified by an inplace operation"), message
    return "[modified in place]"


def _saved_of(fn, show_saved):
    """(name, size) of each tensor ``fn`` saved (custom Functions' always)."""
    found = []
    attrs = [a for a in dir(fn) if a.startswith("_saved_")] if show_saved else []
    if hasattr(fn, "saved_tensors"):
        attrs.append("saved_tensors")
    for attr in attrs:
        name = attr[len("_saved_"):] if attr.startswith("_saved_") else attr
        try:
            value = getattr(fn, attr)
        except RuntimeError as error:
            found.append((name, _unreadable(error)))
            continue
        if torch.is_tensor(value):
            found.append((name, tuple(value.shape)))
        elif isinstance(value, (tuple, list)):
            found += [(f"{name}[{i}]", tuple(t.shape)) for i, t in enumerate(value)
                      if torch.is_tensor(t)]
    return found


def torch_structure(outputs, params=None, show_saved=False):
    names = {id(p): name for name, p in (params or {}).items()}
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    structure = {key: Counter() for key in ("nodes", "edges", "leaves", "saved", "outputs")}
    stack, seen = [], set()
    for t in outputs:
        structure["outputs"][type(t.grad_fn).__name__, (names.get(id(t), ""), tuple(t.shape))] += 1
        stack.append(t.grad_fn)
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        kind = type(fn).__name__
        structure["nodes"][kind] += 1
        if hasattr(fn, "variable"):
            leaf = fn.variable
            structure["leaves"][kind, (names.get(id(leaf), ""), tuple(leaf.shape))] += 1
        for name, size in _saved_of(fn, show_saved):
            structure["saved"][kind, name, size] += 1
        for next_fn, _ in fn.next_functions:
            if next_fn is not None:
                structure["edges"][type(next_fn).__name__, kind] += 1
                stack.append(next_fn)
    return structure


def without_saved_names(structure):
    """Saved tensors as (node, size) only: where our attribute names differ."""
    saved = Counter()
    for (node, _, size), count in structure["saved"].items():
        saved[node, size] += count
    return {**structure, "saved": saved}


def both(program, **options):
    """Run ``program`` in both libraries; our drawing and PyTorch's graph."""
    theirs, their_params = program(torch)
    ours, our_params = program(gt)
    dot = make_dot(ours, params=our_params, **options)
    return dot, torch_structure(theirs, their_params, options.get("show_saved", False))


# -- the graph -------------------------------------------------------------------------

@pytest.mark.parametrize("program", [seed_addmm, shared_subexpression, two_outputs, indexing,
                                     custom_function, view_output])
@pytest.mark.parametrize("show_saved", [False, True])
def test_graph_matches_pytorch(program, show_saved):
    dot, expected = both(program, show_saved=show_saved)
    assert dot_structure(dot.source) == expected


def test_mlp_graph_matches_pytorch():
    """nn.Linear/ReLU/cross_entropy, leaves named by ``named_parameters``.  Saved
    tensors compare by size: NllLossBackward0 names its total weight ``result1``
    (PyTorch: ``total_weight``)."""
    dot, expected = both(mlp, show_saved=True)
    ours = dot_structure(dot.source)
    assert without_saved_names(ours) == without_saved_names(expected)
    leaf_labels = {label for _, label in ours["leaves"]}
    assert ("0.weight", (4, 5)) in leaf_labels and ("2.bias", (3,)) in leaf_labels


def test_seed_graph_labels():
    """The seed's walk (SumBackward0, AddmmBackward0, AccumulateGrad) and torchviz's
    labels: ``name\\n (sizes)``, class names, the output unnamed."""
    x, w, b = (gt.randn(4, 4, requires_grad=True), gt.randn(4, 4, requires_grad=True),
               gt.randn(4, requires_grad=True))
    z = gt.addmm(b, x, w).sum()
    nodes, edges = parse_dot(make_dot(z, params=dict(x=x, w=w, b=b)).source)
    labels = Counter(attrs["label"] for attrs in nodes.values())
    assert labels == Counter({"SumBackward0": 1, "AddmmBackward0": 1, "AccumulateGrad": 3,
                              "x\n (4, 4)": 1, "w\n (4, 4)": 1, "b\n (4)": 1, "\n ()": 1})
    assert nodes[str(id(z))]["fillcolor"] == "darkolivegreen1"
    assert nodes[str(id(x))]["fillcolor"] == "lightblue"
    assert (str(id(x)), str(id(z.grad_fn.next_functions[0][0].next_functions[1][0])), {}) in edges


@pytest.mark.parametrize("retain_graph", [False, True])
def test_saved_tensors_after_backward(retain_graph):
    """Freed saved tensors show ``[freed]`` exactly where PyTorch refuses to read them."""
    def program(T):
        loss, params = mlp(T)
        loss.backward(retain_graph=retain_graph)
        return loss, params
    dot, expected = both(program, show_saved=True)
    assert without_saved_names(dot_structure(dot.source)) == without_saved_names(expected)
    freed = sum(count for key, count in expected["saved"].items() if key[-1] == "[freed]")
    assert (freed > 0) is not retain_graph


def test_saved_tensor_modified_in_place():
    def program(T):
        x = T.randn(3, requires_grad=True)
        y = x.sigmoid()
        z = y * 3
        y.mul_(2)
        return z, {"x": x}
    dot, expected = both(program, show_saved=True)
    assert dot_structure(dot.source) == expected
    assert ("SigmoidBackward0", "result", "[modified in place]") in expected["saved"]


def test_view_output_draws_its_base():
    """An output that is a view: its base in darkolivegreen3, joined by a dotted edge."""
    w = gt.randn(3, requires_grad=True)
    base = w * 2
    v = base.view(3, 1)[1:]
    nodes, edges = parse_dot(make_dot(v).source)
    assert nodes[str(id(v._base))]["fillcolor"] == "darkolivegreen3"
    assert v._base is base
    assert (str(id(base)), str(id(v)), {"style": "dotted"}) in edges
    assert (str(id(base.grad_fn)), str(id(base)), {}) in edges


def _attribute_tables(source):
    """(class name, {attribute: shown value}) of every backward node."""
    nodes, _ = parse_dot(source)
    tables = []
    for attrs in nodes.values():
        title, *rows = attrs.get("label", "").split("\n")
        if "fillcolor" not in attrs:
            rows = rows[1:]     # (under the rule)
            tables.append((title, dict(tuple(p.strip() for p in row.split(":", 1))
                                       for row in rows)))
    return tables


@pytest.mark.parametrize("program", [seed_addmm, shared_subexpression, two_outputs])
def test_show_attrs_lists_pytorchs_saved_values(program):
    """Each value PyTorch exposes on a node appears in one of our nodes of that
    class as ``name: value`` (saved tensors as ``[saved tensor]``)."""
    theirs, _ = program(torch)
    ours, _ = program(gt)
    tables = _attribute_tables(make_dot(ours, show_attrs=True).source)
    stack, seen = [t.grad_fn for t in (theirs if isinstance(theirs, tuple) else (theirs,))], set()
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        shown = {}
        for attr in (a for a in dir(fn) if a.startswith("_saved_")):
            value = getattr(fn, attr)
            shown[attr[len("_saved_"):]] = "[saved tensor]" if torch.is_tensor(value) \
                else str(value)
        match = next(t for t in tables if t[0] == type(fn).__name__
                     and shown.items() <= t[1].items())
        tables.remove(match)
        stack += [next_fn for next_fn, _ in fn.next_functions if next_fn is not None]
    assert tables == []


def test_show_attrs_cuts_long_values():
    x = gt.randn(2, 3, 4, 5, 6, 7, requires_grad=True)
    dot = make_dot(x.sum(), show_attrs=True, max_attr_chars=10)
    label = next(a["label"] for a in dot.nodes.values() if a.get("label", "").startswith("Sum"))
    title, rule, row = label.split("\n")
    assert row == "self_sym_sizes: (2, 3, ..."
    assert rule == "-" * len(row)


def test_to_dot_from_nodes():
    """``to_dot(grad_fn)``: the same graph without the output tensors."""
    theirs, their_params = two_outputs(torch)
    ours, our_params = two_outputs(gt)
    source = to_dot([t.grad_fn for t in ours], params=our_params, show_saved=True)
    expected = torch_structure(theirs, their_params, show_saved=True)
    assert dot_structure(source) == {**expected, "outputs": Counter()}
    assert to_dot(ours[0].grad_fn) == to_dot((ours[0].grad_fn,))


def test_make_dot_accepts_a_leaf_and_a_list():
    a = gt.randn(2, requires_grad=True)
    nodes, edges = parse_dot(make_dot([a, a * 2]).source)
    assert sum(attrs.get("fillcolor") == "darkolivegreen1" for attrs in nodes.values()) == 2
    assert len(edges) == 3          # a -> AccumulateGrad -> MulBackward0 -> a * 2


def test_bad_arguments():
    a = gt.randn(2, requires_grad=True)
    with pytest.raises(TypeError, match="expected a Tensor or a sequence of Tensors"):
        make_dot(3)
    with pytest.raises(TypeError, match="params must be a dict mapping names to Tensors"):
        make_dot(a * 2, params={"a": 3})
    with pytest.raises(TypeError, match="expected an autograd Node"):
        to_dot(a)


def test_public_place():
    assert gt.autograd.make_dot is graph_viz.make_dot


# -- the DOT text ------------------------------------------------------------------------

def test_dot_quoting_round_trips():
    dot = Digraph()
    dot.node("node", 'say "hi" \\ bye\nline two', fillcolor="orange")
    dot.node("n1", "plain")
    dot.edge("node", "n1", style="dashed")
    nodes, edges = parse_dot(dot.source)
    assert nodes == {"node": {"label": 'say "hi" \\ bye\nline two', "fillcolor": "orange"},
                     "n1": {"label": "plain"}}
    assert edges == [("node", "n1", {"style": "dashed"})]
    assert str(dot) == dot.source


# -- the SVG -----------------------------------------------------------------------------

def svg_drawing(dot):
    """(boxes: title -> (x0, y0, x1, y1), labels: title -> lines, edges: [(title, path, arrow)])."""
    root = ET.fromstring(dot.pipe())
    assert root.tag == SVG + "svg" and root.get("version") == "1.1"
    boxes, labels, edges = {}, {}, []
    for group in root.iter(SVG + "g"):
        title = group.find(SVG + "title").text if group.find(SVG + "title") is not None else None
        if group.get("class") == "node":
            rect = group.find(SVG + "rect")
            x, y = float(rect.get("x")), float(rect.get("y"))
            boxes[title] = (x, y, x + float(rect.get("width")), y + float(rect.get("height")))
            labels[title] = [span.text or "" for span in group.iter(SVG + "tspan")]
        elif group.get("class") == "edge":
            edges.append((title, group.find(SVG + "path").get("d"),
                          group.find(SVG + "polygon") is not None))
    return boxes, labels, edges


def _overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def check_drawing(dot, acyclic=True):
    boxes, labels, edges = svg_drawing(dot)
    names = set(dot.nodes) | {n for t, h, _ in dot.edges for n in (t, h)}
    assert set(boxes) == names
    for name, attrs in dot.nodes.items():
        assert labels[name] == attrs.get("label", name).split("\n")
    assert sorted(title for title, _, _ in edges) == sorted(f"{t}->{h}" for t, h, _ in dot.edges)
    placed = list(boxes.values())
    for i, a in enumerate(placed):
        assert not any(_overlap(a, b) for b in placed[i + 1:])
    for (tail, head, attrs), (_, path, arrow) in zip(dot.edges, edges):
        assert arrow == (attrs.get("dir") != "none" and tail != head)
        if acyclic:     # top to bottom, from the tail's bottom side into the head's top side
            x0, y0 = map(float, re.match(r"M([\d.-]+),([\d.-]+)", path).groups())
            t, h = boxes[tail], boxes[head]
            assert t[3] <= h[1]
            assert t[0] < x0 < t[2] and y0 == pytest.approx(t[3], abs=0.01)
            x1, y1 = map(float, re.findall(r"([\d.-]+),([\d.-]+)", path)[-1])
            assert h[0] < x1 < h[2] and y1 <= h[1] + 0.01


@pytest.mark.parametrize("program", PROGRAMS)
def test_svg_draws_every_node_and_edge(program):
    outputs, params = program(gt)
    check_drawing(make_dot(outputs, params=params, show_saved=True, show_attrs=True))


@st.composite
def graphs(draw, acyclic):
    n = draw(st.integers(1, 12))
    pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    edges = draw(st.lists(pairs, max_size=20))
    dot = Digraph(node_attr={"shape": "box"})
    for i in range(n):
        dot.node(f"n{i}", "\n".join(["x" * draw(st.integers(0, 12))] * draw(st.integers(1, 3))))
    for t, h in edges:
        if acyclic and t >= h:
            t, h = h, t
            if t == h:
                continue
        dot.edge(f"n{t}", f"n{h}", **({"dir": "none"} if (t + h) % 3 == 0 else {}))
    return dot


@given(graphs(acyclic=True))
def test_svg_layout_of_random_dags(dot):
    check_drawing(dot)


@given(graphs(acyclic=False))
def test_svg_layout_survives_cycles(dot):
    check_drawing(dot, acyclic=False)


def test_barycenter_ordering_untangles_a_tree():
    """A tree whose layers start in an order full of crossings is drawn without any."""
    layers = [["r"], ["b", "a"], ["a2", "b1", "a1", "b2"]]
    down = {"r": ["a", "b"], "a": ["a1", "a2"], "b": ["b1", "b2"],
            "a1": [], "a2": [], "b1": [], "b2": []}
    up = {v: [u for u in down if v in down[u]] for v in down}
    assert graph_viz._crossings(layers, down) > 0
    assert graph_viz._crossings(graph_viz._order_layers(layers, up, down), down) == 0


def test_closest_ordered_is_least_squares_under_the_gaps():
    assert graph_viz._closest_ordered([5.0, 5.0, 5.0], [2.0, 2.0]) == [3.0, 5.0, 7.0]
    assert graph_viz._closest_ordered([0.0, 10.0], [2.0]) == [0.0, 10.0]
    assert graph_viz._closest_ordered([3.0, 0.0], [2.0]) == [0.5, 2.5]


# -- files and notebooks -----------------------------------------------------------------

def test_save_render_pipe_and_jupyter(tmp_path):
    a = gt.randn(2, requires_grad=True)
    dot = make_dot((a * 2).sum())
    source_path = dot.save("graph.gv", directory=str(tmp_path))
    assert open(source_path).read() == dot.source
    svg_path = dot.render(str(tmp_path / "drawn"), cleanup=True)
    assert svg_path == str(tmp_path / "drawn") + ".svg"
    assert not (tmp_path / "drawn").exists()
    svg = open(svg_path, encoding="utf-8").read()
    assert svg == dot.pipe(encoding="utf-8") == dot._repr_svg_()
    assert dot._repr_mimebundle_() == {"image/svg+xml": svg}
    assert dot._repr_mimebundle_(include={"text/plain"}) == {}
    assert isinstance(dot.pipe(), bytes)


@pytest.mark.skipif(shutil.which("dot") is not None, reason="Graphviz is installed")
def test_other_formats_need_graphviz():
    dot = make_dot(gt.randn(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError, match="needs Graphviz's 'dot' executable"):
        dot.pipe(format="png")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graphviz_reads_our_source():
    """Where Graphviz exists, ``dot`` accepts our DOT and draws other formats."""
    import subprocess
    for program in PROGRAMS:
        outputs, params = program(gt)
        dot = make_dot(outputs, params=params, show_saved=True, show_attrs=True)
        subprocess.run(["dot", "-Tsvg"], input=dot.source.encode(), capture_output=True,
                       check=True)
    assert dot.pipe(format="png").startswith(b"\x89PNG\r\n\x1a\n")
