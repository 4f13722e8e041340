"""``torch.export``: a Module captured whole, ahead of time, as one graph of
ATen ops with its state lifted to inputs (``_trace.py``), a signature saying
which input is what (``graph_signature.py``), symbolic sizes where the caller
allows them (``dynamic_shapes.py``), and a program that can be run, lowered
to core ATen or printed (``exported_program.py``)."""
from ._trace import export
from .dynamic_shapes import Dim, dims
from .exported_program import ExportedProgram
from .graph_signature import ExportGraphSignature

__all__ = ["Dim", "ExportGraphSignature", "ExportedProgram", "dims", "export"]
