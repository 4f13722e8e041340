"""examples/gpt.py on glasstorch and on PyTorch, side by side.

The model file is loaded twice (``examples.dual.load_example``: its
``import glasstorch as torch`` line reads ``import torch`` for PyTorch, every
other line is the same), torch's initial weights are copied into ours, and
the two must agree on the loss, the logits, every gradient, a few AdamW
steps, the optimizer's parameter groups, weight tying and sampling.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import glasstorch as gt
from examples.dual import load_example

from .differential import assert_normal_float32_close
from .helpers import to_numpy
from .nn_differential import copy_state

CONFIG = dict(vocab_size=23, block_size=16, n_layer=2, n_head=2, n_embd=32)


@pytest.fixture(scope="module")
def gpt():
    """The model file as a module per library: {"torch": ..., "glasstorch": ...}."""
    return {lib: load_example("gpt.py", lib) for lib in ("torch", "glasstorch")}


def build(gpt, *, copy=True, **overrides):
    """(theirs, ours) built from the same seed; ``copy``: ours gets torch's weights."""
    config = {**CONFIG, **overrides}
    torch.manual_seed(0)
    gt.manual_seed(0)
    theirs = gpt["torch"].GPT(gpt["torch"].GPTConfig(**config))
    ours = gpt["glasstorch"].GPT(gpt["glasstorch"].GPTConfig(**config))
    if copy:
        copy_state(theirs, ours)
    return theirs, ours


def tokens(lib, batch=4, length=CONFIG["block_size"], seed=0):
    """(inputs, targets): random token windows, the same numbers for both libraries."""
    ids = np.random.default_rng(seed).integers(0, CONFIG["vocab_size"], (batch, length + 1))
    return lib.from_numpy(ids[:, :-1].copy()), lib.from_numpy(ids[:, 1:].copy())


def close(ours, theirs, what, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.cpu_paths
def test_same_seed_gives_the_same_initial_weights(gpt):
    """glasstorch's generator and nn.init follow torch's, so no copy is needed
    (up to float32 rounding: normal_ on 16 or more elements differs from
    torch's vectorized Box-Muller by one ulp in some elements; under ATen's
    DEFAULT capability torch's scalar float loop is less accurate, and the
    stated accuracy is 16 ulp of the values' scale, see tests/test_random.py)."""
    theirs, ours = build(gpt, copy=False)
    t_state, o_state = theirs.state_dict(), ours.state_dict()
    assert list(o_state) == list(t_state)
    for name in t_state:
        assert_normal_float32_close(to_numpy(o_state[name]), to_numpy(t_state[name]), name)


def test_loss_logits_and_gradients_match(gpt):
    theirs, ours = build(gpt)
    t_logits, t_loss = theirs(*tokens(torch))
    o_logits, o_loss = ours(*tokens(gt))
    assert tuple(o_logits.shape) == tuple(t_logits.shape) == (4, CONFIG["block_size"], 23)
    close(o_loss, t_loss, "loss")
    close(o_logits, t_logits, "logits", atol=1e-5)
    assert type(o_loss.grad_fn).__name__ == type(t_loss.grad_fn).__name__
    t_loss.backward()
    o_loss.backward()
    t_params, o_params = dict(theirs.named_parameters()), dict(ours.named_parameters())
    assert list(o_params) == list(t_params)
    for name, p in t_params.items():
        close(o_params[name].grad, p.grad, f"{name}.grad", atol=1e-6, rtol=1e-4)


def test_inference_returns_last_position_logits(gpt):
    theirs, ours = build(gpt)
    theirs.eval()
    ours.eval()
    t_logits, t_loss = theirs(tokens(torch)[0])
    o_logits, o_loss = ours(tokens(gt)[0])
    assert o_loss is None and t_loss is None
    assert tuple(o_logits.shape) == tuple(t_logits.shape) == (4, 1, 23)
    close(o_logits, t_logits, "last-position logits", atol=1e-5)


def test_adamw_steps_match_and_lower_the_loss(gpt):
    theirs, ours = build(gpt)
    optimizers = [m.configure_optimizers(weight_decay=0.1, learning_rate=3e-3, betas=(0.9, 0.95))
                  for m in (theirs, ours)]
    losses = {"torch": [], "glasstorch": []}
    for step in range(4):
        for lib, model, opt in ((torch, theirs, optimizers[0]), (gt, ours, optimizers[1])):
            _, loss = model(*tokens(lib, seed=step % 2))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses[lib.__name__].append(loss.item())
    np.testing.assert_allclose(losses["glasstorch"], losses["torch"], rtol=1e-4)
    assert losses["glasstorch"][-1] < losses["glasstorch"][0] - 0.05
    for name, p in theirs.named_parameters():
        close(dict(ours.named_parameters())[name], p, f"{name} after 4 steps", atol=1e-5, rtol=1e-4)


def test_configure_optimizers_builds_the_same_groups(gpt):
    theirs, ours = build(gpt)
    t_opt = theirs.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95))
    o_opt = ours.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95))
    assert type(o_opt).__name__ == type(t_opt).__name__ == "AdamW"

    def described(model, opt):
        names = {id(p): n for n, p in model.named_parameters()}
        return [({k: v for k, v in g.items() if k != "params"}, [names[id(p)] for p in g["params"]])
                for g in opt.param_groups]

    assert described(ours, o_opt) == described(theirs, t_opt)
    decayed = described(ours, o_opt)[0][1]
    # the tied weight is named after its first occurrence, the embedding
    assert "transformer.wte.weight" in decayed and "lm_head.weight" not in decayed
    assert not any(n.endswith(".bias") or ".ln_" in n for n in decayed)


def test_weight_tying(gpt):
    theirs, ours = build(gpt)
    assert ours.transformer.wte.weight is ours.lm_head.weight
    assert isinstance(ours.lm_head.weight, gt.nn.Parameter)
    # one Parameter, listed once, but under both names in state_dict, as torch does
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert {"transformer.wte.weight", "lm_head.weight"} <= set(ours.state_dict())
    assert ours.get_num_params() == theirs.get_num_params()
    assert ours.get_num_params(non_embedding=False) == theirs.get_num_params(non_embedding=False)
    # the shared weight receives the gradient of both uses
    _, loss = ours(*tokens(gt))
    loss.backward()
    assert ours.transformer.wte.weight.grad is ours.lm_head.weight.grad


@pytest.mark.parametrize("top_k", [None, 5])
def test_generate(gpt, top_k):
    theirs, ours = build(gpt)
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    torch.manual_seed(7)
    t_out = theirs.generate(torch.from_numpy(prompt), 15, temperature=0.9, top_k=top_k)
    gt.manual_seed(7)
    o_out = ours.generate(gt.from_numpy(prompt), 15, temperature=0.9, top_k=top_k)
    assert tuple(o_out.shape) == (2, 18) and o_out.dtype == gt.int64
    assert not o_out.requires_grad
    np.testing.assert_array_equal(to_numpy(o_out)[:, :3], prompt)
    # same weights, same seed: torch.multinomial's draws are matched bit for bit
    np.testing.assert_array_equal(to_numpy(o_out), to_numpy(t_out))


def test_dropout_in_training_matches_with_the_same_seed(gpt):
    theirs, ours = build(gpt, dropout=0.1)
    torch.manual_seed(3)
    gt.manual_seed(3)
    close(ours(*tokens(gt))[1], theirs(*tokens(torch))[1], "loss with dropout")
