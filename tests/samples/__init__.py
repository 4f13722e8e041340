"""Sample inputs per overload (see tests/opinfo.py), one module per family.
Importing the package loads every module, then derives the samples of out=
overloads that have none from their functional overload's."""
import importlib
import pkgutil

from ..opinfo import derive_out_samples

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
derive_out_samples()
