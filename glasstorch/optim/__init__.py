"""torch.optim: optimization algorithms and learning-rate schedules.

Each algorithm lives in its own module as in PyTorch (``optim/sgd.py`` holds
``SGD`` and the functional ``sgd`` ...); the classes are re-exported here and
``lr_scheduler`` is a submodule.
"""
from . import lr_scheduler, swa_utils
from ._adafactor import Adafactor
from ._muon import Muon
from ._stateless import swap_in_optimizer_params_and_state
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

del adadelta, adagrad, adam, adamax, adamw, asgd, lbfgs, nadam, optimizer, radam  # noqa: F821
del rmsprop, rprop, sgd, sparse_adam  # noqa: F821  (as torch.optim does)

__all__ = ["Adafactor", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS",
           "lr_scheduler", "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD",
           "SparseAdam", "swap_in_optimizer_params_and_state", "swa_utils"]
