"""``torch.fx.passes.utils``: helpers shared by graph passes."""
