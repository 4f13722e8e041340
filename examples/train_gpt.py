"""Train a character-level GPT on Shakespeare's Sonnets, then sample from it.

    python examples/train_gpt.py                 # ~30 s of training on 2 cores
    python examples/train_gpt.py --steps 2000 --n-embd 128 --n-layer 4

500 steps take the loss from 4.1 to about 2.0 and the samples look like
words.  The matrices are small: on a busy machine, ``OPENBLAS_NUM_THREADS=1``
(one BLAS thread) is several times faster than numpy's default.

A plain PyTorch training script: the only glasstorch-specific lines are the
library import below and the data import (the sonnets ship inside the
glasstorch package as plain text).  To run it on PyTorch, write
``import torch`` instead of ``import glasstorch as torch`` here and in
``gpt.py`` (the model file, which must use the same library).

``python -m glasstorch demo`` runs this same training, then shows what the
runtime did during one step.
"""
import argparse
import math
import sys
import time

import glasstorch as torch  # `import torch` runs this script on PyTorch (see the docstring)
from glasstorch.data import load_sonnets

from gpt import GPT, GPTConfig, torch as model_library

assert model_library is torch, "gpt.py imports the other library: change its import line too"


class CharData:
    """The text as a tensor of character ids, split 90/10 into train and val."""

    def __init__(self, text, val_fraction=0.1):
        self.chars = sorted(set(text))
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        ids = torch.tensor(self.encode(text), dtype=torch.long)
        n_train = int(len(ids) * (1 - val_fraction))
        self.splits = {"train": ids[:n_train], "val": ids[n_train:]}

    @property
    def vocab_size(self):
        return len(self.chars)

    def encode(self, text):
        return [self.stoi[ch] for ch in text]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)

    def batch(self, split, batch_size, block_size):
        """Random windows: inputs x and the same windows shifted by one, y."""
        data = self.splits[split]
        starts = torch.randint(len(data) - block_size, (batch_size, 1))
        positions = starts + torch.arange(block_size + 1)      # (batch_size, block_size + 1)
        windows = data[positions]
        return windows[:, :-1], windows[:, 1:]


@torch.no_grad()
def estimate_loss(model, data, block_size, batch_size=32, batches=4):
    """Mean loss over a few random batches of each split, in eval mode."""
    model.eval()
    out = {}
    for split in ("train", "val"):
        losses = [model(*data.batch(split, batch_size, block_size))[1].item()
                  for _ in range(batches)]
        out[split] = sum(losses) / len(losses)
    model.train()
    return out


class ProgressBar:
    """One stdout line rewritten in place (``\\r``): bar, step, loss, speed.
    Redrawn at most ten times a second, so logs stay short."""

    def __init__(self, steps, width=30):
        self.steps, self.width = steps, width
        self.started = self.drawn = time.perf_counter()

    def update(self, step, loss, force=False):
        now = time.perf_counter()
        if not force and step < self.steps and now - self.drawn < 0.1:
            return
        self.drawn = now
        done = self.width * step // self.steps
        rate = step / max(now - self.started, 1e-9)
        sys.stdout.write(f"\r[{'#' * done}{'.' * (self.width - done)}] step {step:4d}/{self.steps}"
                         f"  loss {loss:.3f}  {rate:5.1f} steps/s")
        sys.stdout.flush()

    def print(self, line):
        """A line of its own above the bar (the bar is redrawn by the next update)."""
        sys.stdout.write("\r" + line.ljust(self.width + 45) + "\n")
        sys.stdout.flush()


def train(model, data, *, steps, batch_size, learning_rate, eval_every, warmup=20):
    """AdamW with a linear warmup and cosine decay; prints progress.  Returns
    the training loss of every step."""
    block_size = model.config.block_size
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=learning_rate,
                                           betas=(0.9, 0.99))
    losses, bar = [], ProgressBar(steps)
    for step in range(1, steps + 1):
        lr = learning_rate * min(1.0, step / warmup) * \
            (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / steps)))
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = data.batch("train", batch_size, block_size)
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        bar.update(step, losses[-1])
        if step == 1 or step % eval_every == 0 or step == steps:
            est = estimate_loss(model, data, block_size)
            bar.print(f"step {step:4d}: train loss {est['train']:.3f}, val loss {est['val']:.3f}")
            bar.update(step, losses[-1], force=True)
    print()
    return losses


def sample(model, data, prompt, max_new_tokens, temperature=0.8, top_k=10):
    idx = torch.tensor([data.encode(prompt)], dtype=torch.long)
    out = model.generate(idx, max_new_tokens, temperature=temperature, top_k=top_k)
    return data.decode(out[0].tolist())


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--block-size", type=int, default=32)
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=64)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--sample-tokens", type=int, default=300)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--threads", type=int, default=1,
                   help="intra-op threads (default 1: the matrices are small)")
    return p


def run(args):
    """Build data and model, train, sample.  Returns (model, data, losses)."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    data = CharData(load_sonnets())
    config = GPTConfig(vocab_size=data.vocab_size, block_size=args.block_size,
                       n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd)
    model = GPT(config)
    print(f"{torch.__name__}: GPT with {model.get_num_params() / 1e3:.1f}K parameters "
          f"({config.n_layer} layers, {config.n_head} heads, n_embd {config.n_embd}, "
          f"context {config.block_size}); {data.vocab_size} characters, "
          f"{len(data.splits['train'])} training tokens")
    started = time.perf_counter()
    losses = train(model, data, steps=args.steps, batch_size=args.batch_size,
                   learning_rate=args.lr, eval_every=args.eval_every)
    print(f"trained {args.steps} steps in {time.perf_counter() - started:.1f} s; "
          f"first loss {losses[0]:.3f}, last loss {losses[-1]:.3f}")
    if args.sample_tokens:
        print("\nsample:\n" + sample(model, data, "\n", args.sample_tokens).strip() + "\n")
    return model, data, losses


if __name__ == "__main__":
    run(build_parser().parse_args())
