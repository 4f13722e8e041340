"""torch.nn: modules, parameters, functional, init and utils."""
from .modules import *  # noqa: F401,F403
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from . import functional, init, parallel, utils  # noqa: F401
from .parallel import DataParallel  # noqa: F401


def factory_kwargs(kwargs):
    """``torch.nn.factory_kwargs``: the factory arguments (device, dtype,
    memory_format) of a module constructor's ``**kwargs`` as one dict, merging
    an explicit ``factory_kwargs`` entry; unknown or doubly given keys raise."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in simple_keys:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result
