"""Inductor's code generators: ``cpp`` (the C of each fused kernel) and
``wrapper`` (the Python that runs a whole graph)."""
