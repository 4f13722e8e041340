"""torch.nn.modules: every layer class."""
# WIP-FRAGMENTS (temporary): import the public names of every module file here;
# replaced by explicit imports when the nn issue lands.
import importlib as _importlib
import pkgutil as _pkgutil

__all__ = []
for _info in sorted(_pkgutil.iter_modules(__path__), key=lambda i: i.name != "module"):
    _m = _importlib.import_module(f"{__name__}.{_info.name}")
    for _name in getattr(_m, "__all__", []):
        globals()[_name] = getattr(_m, _name)
        __all__.append(_name)
