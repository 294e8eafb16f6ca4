"""The video DiT baseline: shapes, the paper's parameter counts, a few training steps, RoPE."""

from __future__ import annotations

import pytest
import torch

from phybench_baselines.dit.models import (  # noqa: E402
    DIT_SIZES,
    PAPER_PARAMS,
    DiT,
    apply_rope,
    count_params,
    rope_3d,
)

TINY = dict(depth=2, width=64, heads=4)
SETUP = dict(in_channels=9, out_channels=4, patch=2, frames=4, height=16, width=16)


def test_output_shape():
    torch.manual_seed(0)
    model = DiT(TINY, **SETUP)
    x = torch.randn(3, 9, 4, 16, 16)
    out = model(x, torch.tensor([0, 500, 999]))
    assert out.shape == (3, 4, 4, 16, 16)
    assert torch.all(out == 0)  # adaLN-Zero: the zero-initialised output layer


@pytest.mark.parametrize("size", list(DIT_SIZES))
def test_param_counts_match_paper(size):
    n = count_params(size)
    assert abs(n / PAPER_PARAMS[size] - 1) < 0.01, (size, n)


def test_per_block_adaln_is_the_larger_original_dit():
    assert abs(count_params("S", shared_adaln=False) / 32.5e6 - 1) < 0.01
    assert abs(count_params("XL", shared_adaln=False) / 674e6 - 1) < 0.01


@pytest.mark.slow
def test_loss_falls_on_fixed_batch():
    torch.manual_seed(0)
    model = DiT(TINY, **SETUP)
    x, target = torch.randn(2, 9, 4, 16, 16), torch.randn(2, 4, 4, 16, 16)
    t = torch.tensor([10, 700])
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(20):
        loss = torch.nn.functional.mse_loss(model(x, t), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.9 * losses[0], losses
    blocks = model.blocks[0].attn.qkv.weight
    assert blocks.grad is not None and blocks.grad.abs().sum() > 0  # gates opened


def test_rope_logits_depend_only_on_offset():
    torch.manual_seed(0)
    T, H, W, d = 4, 5, 6, 30
    cos, sin = rope_3d(T, H, W, d)
    q, k = torch.randn(d), torch.randn(d)
    qr = apply_rope(q.expand(T * H * W, d), cos, sin)  # (L, d): same query at every position
    kr = apply_rope(k.expand(T * H * W, d), cos, sin)
    logits = qr @ kr.T  # (L, L)

    def idx(t, h, w):
        return (t * H + h) * W + w

    for offset in [(1, 2, 1), (0, 0, 3), (2, 1, 0), (-1, 3, -2)]:
        pairs = [((t, h, w), (t + offset[0], h + offset[1], w + offset[2]))
                 for t in range(T) for h in range(H) for w in range(W)]
        pairs = [(a, b) for a, b in pairs if 0 <= b[0] < T and 0 <= b[1] < H and 0 <= b[2] < W]
        vals = torch.stack([logits[idx(*a), idx(*b)] for a, b in pairs])
        torch.testing.assert_close(vals, vals[0].expand_as(vals), atol=1e-4, rtol=1e-4)
    # each axis moves the logit on its own: the embedding is not trivial
    base = logits[0, 0]
    for b in [(1, 0, 0), (0, 1, 0), (0, 0, 1)]:
        assert abs(logits[0, idx(*b)] - base) > 1e-3
