"""Helpers of the DataLoader (torch/utils/data/_utils): collation, fetching, worker
processes and the signal handling that notices when one dies."""
import atexit

MP_STATUS_CHECK_INTERVAL = 5.0
"""Seconds between checks that the other side of a queue is still alive (the main
process waiting for data, a worker waiting for indices), so neither hangs."""

python_exit_status = False
"""Set once the interpreter starts exiting: iterators then leave their workers to
``multiprocessing``'s own exit handler instead of shutting them down."""


def _set_python_exit_flag() -> None:
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)

from . import collate, fetch, signal_handling, worker  # noqa: E402,F401
