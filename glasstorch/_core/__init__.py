"""c10: dtypes, devices, dispatch keys, thread-local state, storage and allocators.
Imports nothing else of glasstorch."""
