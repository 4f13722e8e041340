"""``torch.fx.experimental``: make_fx (``proxy_tensor``)."""
