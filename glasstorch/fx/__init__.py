"""``torch.fx``: programs as graphs you can print, transform and run.

``symbolic_trace`` records a function or Module into a ``Graph`` of ``Node``s
(placeholder, get_attr, call_function, call_method, call_module, output);
``GraphModule`` runs it as Python source generated from the graph (``.code``,
as PyTorch spells it); ``Interpreter`` runs it node by node, ``Transformer``
rewrites it, ``passes.shape_prop.ShapeProp`` notes each node's tensor metadata,
``subgraph_rewriter.replace_pattern`` swaps one subgraph for another.
"""
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from . import passes
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy
from . import subgraph_rewriter
from .subgraph_rewriter import replace_pattern

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "Proxy", "Tracer", "Transformer",
           "PH", "map_arg", "replace_pattern", "symbolic_trace",
           "wrap"]
