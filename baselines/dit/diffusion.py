"""Diffusion objectives of the DiT baseline: DDPM (v-prediction, zero terminal SNR) and rectified flow.

Conditioning as in the paper: the model sees the noisy clip, the condition frames
zero-padded to full length, and a binary mask video, concatenated on channels.
"""

from __future__ import annotations

import copy

import torch
from diffusers import DDPMScheduler

from ..seeding import batch_noise

OBJECTIVES = ("ddpm", "flow")


def make_scheduler(num_train_timesteps: int = 1000) -> DDPMScheduler:
    """DDPM with v-prediction, zero terminal SNR and trailing timestep spacing."""
    return DDPMScheduler(num_train_timesteps=num_train_timesteps, prediction_type="v_prediction",
                         rescale_betas_zero_snr=True, timestep_spacing="trailing", clip_sample=False)


def condition(x0: torch.Tensor, num_cond: int):
    """Condition frames zero-padded to full length, and the mask: (N,C,T,H,W), (N,1,T,H,W)."""
    N, _, T, H, W = x0.shape
    mask = torch.zeros(N, 1, T, H, W, device=x0.device, dtype=x0.dtype)
    mask[:, :, :num_cond] = 1
    return x0 * mask, mask


def _model_in(x, cond, mask):
    return torch.cat([x, cond, mask], dim=1)  # (N, 2C+1, T, H, W)


def _call(model, x, t, y):
    """The model on (x, t), and on y too when there is a state or text condition."""
    return model(x, t) if y is None else model(x, t, y)


def training_loss(model, x0, cond, mask, objective: str = "ddpm", generator=None,
                  scheduler: DDPMScheduler | None = None, noise: torch.Tensor | None = None,
                  u: torch.Tensor | None = None, y: torch.Tensor | None = None) -> torch.Tensor:
    """MSE on the generated (not given) cells; x0 (N,C,T,H,W) in model space; y the extra condition.

    noise (like x0) and u (N,) uniform in [0, 1) pick the noise and the timestep; drawn
    from `generator` when not given.  The trainer draws them for the global batch and
    slices its rank's share, so a run's numbers do not depend on the process count.
    """
    N = x0.shape[0]
    if noise is None:
        noise = torch.randn(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype)
    if u is None:
        u = torch.rand(N, generator=generator, device=x0.device)
    if objective == "ddpm":
        scheduler = scheduler or make_scheduler()
        T = scheduler.config.num_train_timesteps
        t = (u * T).long().clamp_max(T - 1)  # uniform over the T training timesteps
        xt = scheduler.add_noise(x0, noise, t)  # sqrt(ab) x0 + sqrt(1-ab) eps
        target = scheduler.get_velocity(x0, noise, t)  # sqrt(ab) eps - sqrt(1-ab) x0
        t_model = t
    elif objective == "flow":
        sb = u.to(x0.dtype).view(N, 1, 1, 1, 1)
        xt = (1 - sb) * x0 + sb * noise  # straight path from data (s=0) to noise (s=1)
        target = noise - x0  # its constant velocity
        t_model = u * 1000
    else:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    pred = _call(model, _model_in(xt, cond, mask), t_model, y).float()
    keep = (mask < 1).float()  # (N, 1, T, H, W): all but the cells given in full
    err = (pred - target.float()) ** 2 * keep
    return err.sum() / (keep.sum() * x0.shape[1]).clamp_min(1)


@torch.no_grad()
def sample(model, cond, mask, steps: int = 100, objective: str = "ddpm", generator=None,
           scheduler: DDPMScheduler | None = None, y: torch.Tensor | None = None) -> torch.Tensor:
    """Generate clips (N,C,T,H,W) from condition frames (and y, a state or text condition); condition frames are copied in.

    `generator`: one for the batch, or a list of one per clip (`phybench_baselines.seeding`: each
    clip's noise its own, drawn on the CPU; diffusers' DDPM step takes the list the same way).

    Before each model call the given cells of the noisy input are set to the condition
    noised to the current level, which is what the model saw there in training (left to
    the sampler, they would drift into states it never saw).
    """
    x = batch_noise(cond.shape, generator, device=cond.device, dtype=cond.dtype)
    given = mask >= 1  # (N, 1, T, H, W)
    N = x.shape[0]

    def fresh_noise():
        return batch_noise(cond.shape, generator, device=cond.device, dtype=cond.dtype)

    if objective == "ddpm":
        sched = copy.deepcopy(scheduler or make_scheduler())
        sched.set_timesteps(steps, device=cond.device)
        for t in sched.timesteps:
            x = torch.where(given, sched.add_noise(cond, fresh_noise(), t.view(1)), x)
            v = _call(model, _model_in(x, cond, mask), t.expand(N), y).to(x.dtype)
            x = sched.step(v, t, x, generator=generator).prev_sample
    elif objective == "flow":
        grid = torch.linspace(1, 0, steps + 1, device=cond.device)
        for s, s_next in zip(grid[:-1], grid[1:]):
            x = torch.where(given, (1 - s) * cond + s * fresh_noise(), x)
            u = _call(model, _model_in(x, cond, mask), (s * 1000).expand(N), y).to(x.dtype)
            x = x + (s_next - s) * u  # Euler step toward the data end
    else:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    return torch.where(given, cond, x)  # cells given in full are copied in
