"""torch.cuda: placeholder."""
