"""Snapshot restoration by replay (torch/utils/data/datapipes/utils/snapshot.py)."""
from __future__ import annotations

from .._hook_iterator import _SnapshotState
from ...graph_settings import apply_random_seed


def _simple_graph_snapshot_restoration(datapipe, n_iterations: int, rng=None) -> None:
    """Bring ``datapipe`` (and the pipeline behind it) back to where it stood after
    ``n_iterations`` items, by resetting it, reseeding its random DataPipes from
    ``rng`` (the generator in its initial state) and replaying that many items.

    The next ``iter(datapipe)`` then continues from there instead of resetting;
    a DataPipe cannot be restored again before it has been iterated.
    """
    if datapipe._snapshot_state == _SnapshotState.Restored:
        raise RuntimeError(
            "Snapshot restoration cannot be applied. You can only restore simple snapshot to "
            "the graph if your graph has not been restored.")
    # a restored DataPipe ignores its first reset: this one leaves it Iterating, so that
    # iter() below really resets it
    datapipe.reset()
    apply_random_seed(datapipe, rng)
    it = iter(datapipe)
    for _ in range(n_iterations):
        try:
            next(it)
        except StopIteration as e:
            raise RuntimeError(f"Fast-forward {datapipe} by {n_iterations} iterations "
                               "exceeds the number of samples available.") from e
    datapipe._fast_forward_iterator = it
    datapipe._snapshot_state = _SnapshotState.Restored
