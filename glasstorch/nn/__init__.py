"""torch.nn: modules, parameters, functional, init and utils."""
from .modules import *  # noqa: F401,F403
from . import functional  # noqa: F401
# WIP-FRAGMENTS (temporary): parameter/init/utils are imported when they exist.
import importlib as _importlib
for _name in ("parameter", "init", "utils"):
    try:
        _importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as _e:
        if _e.name != f"{__name__}.{_name}":
            raise
try:
    from .parameter import Parameter, Buffer, UninitializedParameter  # noqa: F401
except ImportError:
    pass
