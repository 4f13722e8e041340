"""The machinery behind ``torch.library``'s high-level API (torch/_library).

    custom_ops.py     ``custom_op`` and ``CustomOpDef``: one Python function becomes a
                      dispatcher operator with kernels at CompositeExplicitAutograd (or
                      per device), Autograd, ADInplaceOrView and Meta
    infer_schema.py   type hints -> schema string
    autograd.py       the Autograd kernel: an ``autograd.Function`` named
                      ``GeneratedBackwardFor_<ns>_<op>_<overload>``
    fake_impl.py      fake ("meta", "abstract") implementations and ``get_ctx``
    simple_registry.py  per-operator registrations that live outside the dispatch table
    opcheck.py        ``torch.library.opcheck``: does the op behave as registered?
    utils.py          schema helpers shared by the above

Everything registers through ``torch.library.Library``, the same seam the
built-in op library uses, so a custom op is an ordinary operator to the
dispatcher, to dispatch modes and to the profiler.
"""
