"""torch.optim: optimization algorithms and learning-rate schedules.

Each algorithm lives in its own module as in PyTorch (``optim/sgd.py`` holds
``SGD`` and the functional ``sgd`` ...); the classes are re-exported here and
``lr_scheduler`` is a submodule.
"""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

del adagrad, adam, adamw, optimizer, rmsprop, sgd  # noqa: F821  (as torch.optim does)

__all__ = ["Adagrad", "Adam", "AdamW", "lr_scheduler", "Optimizer", "RMSprop", "SGD"]
