"""Example programs written against the PyTorch API, run on glasstorch.

* ``gpt.py``: a small GPT model (the model file).
* ``train_gpt.py``: char-level GPT on Shakespeare's Sonnets, with samples.
* ``train_classifier.py``: an MLP on the shipped 16x16 digit images.
* ``dual.py``: load an example file on either library (tests and benchmarks
  run ``gpt.py`` on glasstorch and on PyTorch side by side).
"""
