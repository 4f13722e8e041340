"""The op library (ATen): declarations, registry, structured kernels, backends."""
