"""Do the DiT's sampler and training objective agree (issue 46, item 1)?

The GPU DiT-B run's loss fell to 0.0037 while its samples were colour noise: either the
sampler inverts a different parameterisation than the loss trains (timestep convention,
noise / velocity parameterisation, schedule direction, conditioning injection), or the
model is the problem.  The first is checked here without training: the exact minimiser of
the objective on a finite set of clips (the posterior mean given the noisy clip, written
in the objective's own parameterisation) is handed to the sampler, which must then give
back the clip whose condition frames it was given, for both objectives.  Any convention
mismatch (t reversed, v for eps, a flipped sign, condition frames noised to the wrong
level) makes the samples miss by O(1).
"""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("diffusers")
pytestmark = pytest.mark.slow  # ~5 s of CPU: the slow tier (docs/testing.md)

from phybench_baselines.dit.diffusion import condition, make_scheduler, sample, training_loss  # noqa: E402


class Oracle(torch.nn.Module):
    """The objective's optimum on a dataset (K, C, T, H, W): E[target | x_t] in the loss's parameterisation."""

    def __init__(self, data: torch.Tensor, objective: str, prediction: str = "native"):
        super().__init__()
        self.data, self.objective, self.prediction = data, objective, prediction
        self.alphas_cumprod = make_scheduler().alphas_cumprod.double()  # (1000,)

    def forward(self, inp: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        C = self.data.shape[1]
        x = inp[:, :C].double().flatten(1)  # (N, D): the noisy clip (the condition channels are not needed)
        if self.objective == "ddpm":  # x_t = sqrt(ab) x0 + sqrt(1 - ab) eps, target sqrt(ab) eps - sqrt(1 - ab) x0
            ab = self.alphas_cumprod[t.long().cpu()].view(-1, 1)
            a, s = ab.sqrt(), (1 - ab).sqrt()
        else:  # x_s = (1 - s) x0 + s eps, s = t / 1000, target eps - x0
            s = (t.double().cpu() / 1000).view(-1, 1)
            a = 1 - s
        X = self.data.flatten(1).double()  # (K, D)
        d2 = ((x[:, None] - a[:, :, None] * X[None]) ** 2).sum(-1)  # (N, K)
        x0 = torch.softmax(-d2 / (2 * s.clamp_min(1e-6) ** 2), dim=1) @ X  # (N, D): posterior mean
        if self.prediction == "x0_residual":  # the clean clip minus the condition channels
            return (x0.view(inp.shape[0], C, *inp.shape[2:]) - inp[:, C:2 * C].double()).to(inp.dtype)
        eps = (x - a * x0) / s.clamp_min(1e-6)
        v = a * eps - s * x0 if self.objective == "ddpm" else eps - x0
        return v.view(inp.shape[0], C, *inp.shape[2:]).to(inp.dtype)


@pytest.mark.parametrize("fill,prediction", [("zeros", "native"), ("last", "native"), ("last", "x0_residual")])
@pytest.mark.parametrize("objective", ["ddpm", "flow"])
def test_objectives_optimum_regenerates_its_clips(objective, fill, prediction):
    torch.manual_seed(0)
    data = torch.rand(4, 3, 6, 8, 8) * 2 - 1  # 4 clips of 6 frames, 3 given
    cond, mask = condition(data, 3, fill)
    oracle = Oracle(data, objective, prediction)
    for steps in (10, 50):
        out = sample(oracle, cond, mask, steps, objective, torch.Generator().manual_seed(1), prediction=prediction)
        assert (out - data).abs().max() < 1e-3, (objective, steps)
    # and the oracle is what the loss trains toward: a model that is off by a constant is worse
    loss = training_loss(oracle, data, cond, mask, objective, generator=torch.Generator().manual_seed(2),
                         prediction=prediction)
    shifted = training_loss(lambda i, t: oracle(i, t) + 0.3, data, cond, mask, objective,
                            generator=torch.Generator().manual_seed(2), prediction=prediction)
    assert loss < shifted - 0.05


def test_condition_fill_and_change_weights():
    x0 = torch.zeros(1, 3, 5, 4, 4)
    x0[:, :, :, 0, 0] = torch.arange(5.0).view(1, 1, 5)  # one cell changes every frame
    padded, mask = condition(x0, 2, "zeros")
    assert padded[:, :, 2:].abs().sum() == 0 and mask[0, 0, :, 0, 0].tolist() == [1, 1, 0, 0, 0]
    padded, _ = condition(x0, 2, "last")
    assert torch.equal(padded[:, :, 2:], x0[:, :, 1:2].expand(-1, -1, 3, -1, -1))  # the last given frame, repeated
    from phybench_baselines.dit.diffusion import change_weights

    w = change_weights(x0, mask, 20.0)  # (1, 1, 5, 4, 4)
    assert w[0, 0, 2:, 0, 0].tolist() == [21, 21, 21] and w[0, 0, 1, 0, 0] == 1 and w[0, 0, :, 1:, :].eq(1).all()
    assert change_weights(x0, mask, 0.0).eq(1).all()
    with pytest.raises(ValueError, match="fill"):
        condition(x0, 2, "mean")


def _uniform_clips(tmp_path, n: int = 2) -> torch.Tensor:
    """(n, 3, 8, 32, 32) in [-1, 1]: n uniform training rows, rendered at 32 px (the GPU run's pixels)."""
    import numpy as np

    from phybench.data.generate import generate
    from phybench.data.split import SplitReader, make_plan, render_row
    from phybench.tasks import get_task

    generate(make_plan(get_task("uniform"), "train-30k", None, 64, None), tmp_path / "train", progress=False)
    rows = list(SplitReader(tmp_path / "train").rows())
    idx = np.linspace(0, len(rows) - 1, n).round().astype(int)
    return torch.stack([torch.from_numpy(render_row(rows[i], 32, slice(0, 8))).permute(3, 0, 1, 2).float() / 127.5 - 1
                        for i in idx])


@pytest.mark.parametrize("bf16", [False, True])
def test_tiny_dit_overfits_and_regenerates_its_clips(tmp_path, bf16):
    """A tiny DiT (2 layers, width 64, 4x4 patches: 512 tokens, the GPU run's count) trained on 2 clips
    with the issue-46 recipe (last-frame fill, prediction as condition + residual, change-weighted loss)
    gives them back from their condition frames, training and sampling under bf16 autocast too.  The
    old default (zero fill, v-prediction, plain MSE) fails this: after the same 600 steps its samples
    are noise, MSE 0.100 against copy-last's 0.0305 (benchmarks/dit_overfit.py, docs/baselines.md)."""
    from phybench_baselines.dit.models import DiT

    clips = _uniform_clips(tmp_path)
    cond, mask = condition(clips, 3, "last")
    torch.manual_seed(0)
    model = DiT(dict(depth=2, width=64, heads=2), in_channels=7, out_channels=3, patch=4, frames=8, height=32, width=32)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0)
    gen, sched = torch.Generator().manual_seed(0), make_scheduler()
    for _ in range(600):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = training_loss(model, clips, cond, mask, "ddpm", generator=gen, scheduler=sched,
                                 change_weight=20.0, prediction="x0_residual")
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
    model.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        out = sample(model, cond, mask, 50, "ddpm", torch.Generator().manual_seed(1), sched,
                     prediction="x0_residual").float()
    truth = clips[:, :, 3:]
    mse, copy_last = ((out[:, :, 3:] - truth) ** 2).mean(), ((clips[:, :, 2:3] - truth) ** 2).mean()
    assert mse < 0.2 * copy_last, (float(mse), float(copy_last))
    background = (truth > 0.99).all(1, keepdim=True).expand_as(truth)
    assert (out[:, :, 3:][background] - 1).abs().mean() < 0.05  # no colour noise on the white background
