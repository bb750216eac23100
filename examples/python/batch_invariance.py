"""Batch invariance of a transformer-style block, forward and backward, with and without detred.torch.

The block: token embedding, RMSNorm, causal single-head attention (softmax over masked scores), a residual, LayerNorm,
an output projection and a per-token log-softmax loss; the loss is summed and back-propagated. The same 64 sequences
are run in batches of their first B for B = 1 .. 64, and every sequence's logits, log-probabilities, loss, gradient of
the logits and gradient of the embedded input rows are compared, bit for bit, with the same sequence's in the batch
of 64.

Four configurations:
  plain PyTorch            torch.matmul (cuBLAS) and PyTorch's own norm/softmax/reduction kernels
  PyTorch, fixed matmul    PyTorch's kernels, matmuls by a fixed-order product (below)
  detred, torch.matmul     detred.torch.batch_invariant(), matmuls by cuBLAS
  detred, fixed matmul     detred.torch.batch_invariant() and the fixed-order product: the batch-invariant stack

The fixed-order product accumulates a[:, k] * b[k, :] for k = 0, 1, ... with one rounding per multiply and per add,
element-wise: each output element's arithmetic is the same whatever the batch (and so is its gradient, which uses the
same product). detred.torch does not cover matrix products: pair it with a batch-invariant matmul such as this one or
a persistent fixed-tile kernel.

Usage: python examples/python/batch_invariance.py [--device cuda] [--max-batch 64]
"""

from __future__ import annotations

import argparse
import dataclasses

import torch
import torch.nn.functional as F

import detred.torch as dt

VOCAB, DIM, SEQ = 256, 64, 16


class FixedOrderMatmul(torch.autograd.Function):
    """a @ b by a fixed sequence of element-wise multiplies and adds over k (a: [..., M, K], b: [..., K, N])."""

    @staticmethod
    def product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        acc = a[..., :, 0:1] * b[..., 0:1, :]
        for k in range(1, a.shape[-1]):
            acc = acc + a[..., :, k : k + 1] * b[..., k : k + 1, :]
        return acc

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return FixedOrderMatmul.product(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        da = FixedOrderMatmul.product(grad, b.transpose(-1, -2).contiguous())
        if b.dim() == 2:  # a weight shared by every row: its gradient sums over the batch (not compared)
            db = FixedOrderMatmul.product(a.reshape(-1, a.shape[-1]).t().contiguous(), grad.reshape(-1, grad.shape[-1]))
        else:
            db = FixedOrderMatmul.product(a.transpose(-1, -2).contiguous(), grad)
        return da, db


def make_params(device):
    g = torch.Generator().manual_seed(0)

    def p(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g) * scale).to(device).requires_grad_(True)

    return {
        "emb": p(VOCAB, DIM), "w1": p(DIM, scale=0.5).add(1).detach().requires_grad_(True),
        "wq": p(DIM, DIM, scale=DIM**-0.5), "wk": p(DIM, DIM, scale=DIM**-0.5), "wv": p(DIM, DIM, scale=DIM**-0.5),
        "wo": p(DIM, DIM, scale=DIM**-0.5), "w2": p(DIM), "b2": p(DIM), "wout": p(DIM, VOCAB, scale=DIM**-0.5),
    }


def make_tokens(batch, device):
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (batch, SEQ + 1), generator=g)
    return tokens[:, :-1].to(device), tokens[:, 1:].to(device)


def block(params, tokens, targets, matmul):
    """The per-token outputs and the gradients of the summed loss (each [B, T, ...])."""
    mm = FixedOrderMatmul.apply if matmul == "fixed" else torch.matmul
    h0 = params["emb"][tokens]
    h0.retain_grad()
    a = F.rms_norm(h0, [DIM], params["w1"], 1e-6)
    q, k, v = mm(a, params["wq"]), mm(a, params["wk"]), mm(a, params["wv"])
    scores = mm(q, k.transpose(-1, -2).contiguous()) * DIM**-0.5
    causal = torch.ones(SEQ, SEQ, dtype=torch.bool, device=tokens.device).triu(1)
    attn = torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
    h1 = h0 + mm(mm(attn, v), params["wo"])
    b = F.layer_norm(h1, [DIM], params["w2"], params["b2"], 1e-5)
    logits = mm(b, params["wout"])
    logits.retain_grad()
    logp = torch.log_softmax(logits, dim=-1)
    loss = -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    for p in params.values():
        p.grad = None
    loss.sum().backward()
    return {"logits": logits.detach(), "log_softmax": logp.detach(), "loss": loss.detach(),
            "d_logits": logits.grad.detach(), "d_embedded": h0.grad.detach()}


@dataclasses.dataclass
class Row:
    config: str
    tensor: str
    batch_sizes: int
    mismatched_batch_sizes: int
    first_mismatch: int | None
    max_abs_diff: float

    def __str__(self):
        first = "-" if self.first_mismatch is None else str(self.first_mismatch)
        return (f"{self.config:24} {self.tensor:12} {self.mismatched_batch_sizes:4d} / {self.batch_sizes:<4d} "
                f"{first:>6} {self.max_abs_diff:10.3e}")


CONFIGS = {
    "plain PyTorch": (False, "torch"),
    "PyTorch, fixed matmul": (False, "fixed"),
    "detred, torch.matmul": (True, "torch"),
    "detred, fixed matmul": (True, "fixed"),
}


def compare(batch_sizes=range(1, 65), invariant=True, matmul="fixed", device="cuda", name=None):
    """Rows of the table for one configuration: per tensor, how many batch sizes B gave a sequence any bit other than
    the largest batch's, the first such B and the largest difference."""
    batch_sizes = list(batch_sizes)
    params = make_params(device)
    tokens, targets = make_tokens(max(batch_sizes), device)
    with dt.batch_invariant(invariant):
        ref = block(params, tokens, targets, matmul)
        stats = {t: [0, None, 0.0] for t in ref}
        for b in batch_sizes:
            out = block(params, tokens[:b], targets[:b], matmul)
            for t, v in out.items():
                r = ref[t][:b]
                same = torch.equal(v.contiguous().view(torch.int32), r.contiguous().view(torch.int32))
                if not same:
                    s = stats[t]
                    s[0] += 1
                    s[1] = b if s[1] is None else s[1]
                    s[2] = max(s[2], float((v - r).abs().max()))
    label = name or f"{'detred' if invariant else 'PyTorch'}, {matmul} matmul"
    return [Row(label, t, len(batch_sizes), *s) for t, s in stats.items()]


SINGLE_OPS = {
    "x.sum(-1)": lambda x: x.sum(-1),
    "x.mean(-1)": lambda x: x.mean(-1),
    "torch.logsumexp": lambda x: torch.logsumexp(x, -1),
    "torch.softmax": lambda x: torch.softmax(x, -1),
    "torch.log_softmax": lambda x: torch.log_softmax(x, -1),
    "F.layer_norm": lambda x: F.layer_norm(x, [x.shape[-1]]),
    "F.rms_norm": lambda x: F.rms_norm(x, [x.shape[-1]]),
}


def single_ops(device="cuda", rows=256, cols=16384, dtype=torch.float32):
    """Single operations on long rows, forward: for how many k in 1, 2, 4, ..., rows f(x[:k]) != f(x)[:k] (bits)."""
    g = torch.Generator().manual_seed(2)
    x = (torch.randn(rows, cols, generator=g) * 3).to(dtype).to(device)
    ks = [1 << i for i in range(rows.bit_length()) if (1 << i) < rows]
    out = []
    for invariant in (False, True):
        with dt.batch_invariant(invariant):
            for name, f in SINGLE_OPS.items():
                full = f(x)
                bad = [k for k in ks if not torch.equal(f(x[:k]).view(torch.int32 if dtype == torch.float32
                                                                       else torch.int16),
                                                        full[:k].view(torch.int32 if dtype == torch.float32
                                                                      else torch.int16))]
                out.append((("detred" if invariant else "PyTorch"), name, len(bad), len(ks), bad[:4]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--max-batch", type=int, default=64)
    args = parser.parse_args()
    sizes = range(1, args.max_batch + 1)
    print(f"{SEQ}-token sequences, batch sizes 1..{args.max_batch}, float32, compared with the batch of "
          f"{args.max_batch} bit for bit ({torch.cuda.get_device_name() if args.device == 'cuda' else 'CPU'}, "
          f"torch {torch.__version__})")
    print(f"{'configuration':24} {'tensor':12} {'mismatched B':>12} {'first':>6} {'max |diff|':>10}")
    rows = []
    for name, (invariant, matmul) in CONFIGS.items():
        for r in compare(sizes, invariant, matmul, args.device, name):
            rows.append(r)
            print(r)
    print()
    print(f"single ops, forward, x [256 x 16384] float32: batch sizes k in 1, 2, 4, .., 128 where f(x[:k]) != "
          f"f(x)[:k]")
    for mode, name, bad, total, first in single_ops(args.device):
        print(f"{mode:8} {name:18} {bad:2d} / {total}  {first if bad else ''}")
    ok = all(r.mismatched_batch_sizes == 0 for r in rows if r.config == "detred, fixed matmul")
    print("batch-invariant stack (detred + fixed-order matmul):", "every row bitwise equal" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
