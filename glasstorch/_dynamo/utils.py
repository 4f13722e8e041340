"""``torch._dynamo.utils``: Dynamo's counters (``counters["stats"]``,
``counters["unimplemented"]``), as PyTorch keeps them."""
from __future__ import annotations

import collections

counters: collections.defaultdict = collections.defaultdict(collections.Counter)
