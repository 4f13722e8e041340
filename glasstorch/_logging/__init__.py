"""``torch._logging``: PyTorch's named log artifacts, switched on by
``TORCH_LOGS="graph_breaks,recompiles,guards,graph_code,dynamo"`` (read at
import) or ``torch._logging.set_logs(graph_breaks=True, ...)``.

Each enabled artifact's messages go to stderr, one line each, prefixed as
PyTorch prefixes them: the frame's compile id and the artifact,
``[0/1] [__recompiles] Recompiling function f in x.py:3``.
"""
from __future__ import annotations

import logging
import os
import sys

__all__ = ["set_logs", "is_enabled", "trace", "trace_graph"]

ARTIFACTS = ("graph_breaks", "recompiles", "guards", "graph_code", "dynamo", "output_code",
             "aot_graphs", "graph", "bytecode", "autotuning", "dynamic")
_enabled: set = set()
_log = logging.getLogger("torch._logging")
if not _log.handlers:
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("%(message)s"))
    _log.addHandler(_handler)
    _log.setLevel(logging.INFO)
    _log.propagate = False


def set_logs(**artifacts) -> None:
    """Turn artifacts on or off (``set_logs(recompiles=True)``); ``dynamo`` also
    takes a logging level.  Called with nothing, turns every artifact off."""
    if not artifacts:
        _enabled.clear()
    for name, on in artifacts.items():
        if name not in ARTIFACTS:
            raise ValueError(f"Unrecognized log or artifact name passed to set_logs: {name}")
        (_enabled.add if on else _enabled.discard)(name)


current_compile_id = ""     # the frame being compiled ("0/1"), for logs made by its backend


def is_enabled(artifact: str) -> bool:
    return artifact in _enabled


def trace(artifact: str, compile_id: str, message: str) -> None:
    """One message of ``artifact``, when it is on."""
    if artifact in _enabled:
        prefix = f"[{compile_id}] [__{artifact}] "
        _log.info("\n".join(prefix + line for line in message.splitlines() or [""]))


def trace_graph(artifact: str, compile_id: str, title: str, gm) -> None:
    """A graph as PyTorch's graph logs show it: ``TRACED GRAPH``, its title,
    then its readable code with dtypes, sizes, strides and devices."""
    if artifact in _enabled:
        trace(artifact, compile_id, f"TRACED GRAPH\n ===== {title} =====\n" +
              gm.print_readable(print_output=False, include_stride=True, include_device=True))


def _from_environment() -> None:
    for name in os.environ.get("TORCH_LOGS", "").split(","):
        name = name.strip().lstrip("+")
        if name in ARTIFACTS:
            _enabled.add(name)


_from_environment()
