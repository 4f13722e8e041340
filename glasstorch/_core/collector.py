"""Building glasstorch's op library without the cyclic garbage collector.

Importing glasstorch makes about 100k objects that live as long as the process
(operators, schemas, kernels, parsers, autograd nodes' classes).  With the
collector on, each young-generation pass scans the ones made since the last,
and the growing old generation triggers full passes over everything: about
0.1 s of the import, spent finding no garbage.

``paused()`` turns automatic collection off for a block and, at its end, moves
what the block made straight to the oldest generation (``gc.freeze`` then
``gc.unfreeze``), without scanning it.  Nothing is lost: the next full pass
examines those objects as usual and frees any cycle among them.
"""
from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def paused():
    """No automatic collection inside the block; what it made joins the oldest
    generation.  A program that disabled the collector keeps it disabled, and
    one that froze objects itself (``gc.freeze``) keeps them frozen."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:      # unfreeze would thaw the program's own
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
