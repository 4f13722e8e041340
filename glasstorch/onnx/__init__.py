"""torch.onnx, as PyTorch spells it: the names programs import at module level.

Exporting to ONNX is not built: ``export`` raises ``OnnxExporterError`` with a
clear message (PyTorch raises that type when an export fails).  The queries
answer what is true: nothing is ever being exported.
"""
from __future__ import annotations

import enum

producer_name = "pytorch"
producer_version = "2.13.0"


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class OperatorExportTypes(enum.IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def is_in_onnx_export() -> bool:
    return False


def export(model, args=(), f=None, **kwargs):
    raise OnnxExporterError("glasstorch cannot export to ONNX: torch.onnx.export is not "
                            "implemented (the module exists so programs that import it run)")


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version) -> None:
    raise OnnxExporterError("glasstorch has no ONNX exporter to register symbolics with")


def unregister_custom_op_symbolic(symbolic_name, opset_version) -> None:
    raise OnnxExporterError("glasstorch has no ONNX exporter to unregister symbolics from")
