"""``torch.fx.passes``: analyses and rewrites over FX graphs."""
