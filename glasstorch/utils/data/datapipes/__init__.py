"""DataPipes (torch/utils/data/datapipes): composable dataset steps.  ``iter``
holds the iterable-style ones, ``map`` the map-style ones; see ``datapipe.py``."""
from . import iter, map  # noqa: F401,A004  (PyTorch's names)
