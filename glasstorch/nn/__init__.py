"""torch.nn: modules, parameters, functional, init and utils."""
from .modules import *  # noqa: F401,F403
from .parameter import Buffer, Parameter, UninitializedParameter  # noqa: F401
from . import functional, init, parallel, utils  # noqa: F401
from .parallel import DataParallel  # noqa: F401
