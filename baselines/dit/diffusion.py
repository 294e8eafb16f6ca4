"""Diffusion objectives of the DiT baseline: DDPM (v-prediction, zero terminal SNR) and rectified flow.

Conditioning as in the paper: the model sees the noisy clip, the condition frames
zero-padded to full length, and a binary mask video, concatenated on channels.
"""

from __future__ import annotations

import copy

import torch
from diffusers.schedulers.scheduling_ddpm import DDPMScheduler  # the class itself: mypy cannot see through diffusers' lazy top-level names

from ..seeding import batch_noise

OBJECTIVES = ("ddpm", "flow")
FILLS = ("zeros", "last")  # what stands in the condition channels of the frames to generate
PREDICTIONS = ("native", "x0_residual")  # what the network outputs (see `_prediction`)


def make_scheduler(num_train_timesteps: int = 1000) -> DDPMScheduler:
    """DDPM with v-prediction, zero terminal SNR and trailing timestep spacing."""
    return DDPMScheduler(num_train_timesteps=num_train_timesteps, prediction_type="v_prediction",
                         rescale_betas_zero_snr=True, timestep_spacing="trailing", clip_sample=False)


def condition(x0: torch.Tensor, num_cond: int, fill: str = "zeros"):
    """Condition frames padded to full length, and the mask: (N,C,T,H,W), (N,1,T,H,W).

    fill "zeros" is the paper's padding; "last" repeats the last condition frame into every
    frame to generate, so that each token of a generated frame has the static scene (and the
    ball's last place) in its own input channels instead of only through attention to the
    condition frames' tokens (the still background is ~98% of a uniform frame's pixels).
    """
    if fill not in FILLS:
        raise ValueError(f"fill must be one of {FILLS}, got {fill!r}")
    N, _, T, H, W = x0.shape
    mask = torch.zeros(N, 1, T, H, W, device=x0.device, dtype=x0.dtype)
    mask[:, :, :num_cond] = 1
    if fill == "zeros" or num_cond >= T:
        return x0 * mask, mask
    last = x0[:, :, num_cond - 1:num_cond].expand(-1, -1, T - num_cond, -1, -1)
    return torch.cat([x0[:, :, :num_cond], last], dim=2), mask


def change_weights(x0: torch.Tensor, mask: torch.Tensor, change_weight: float) -> torch.Tensor:
    """(N,1,T,H,W) loss weights: 1 + change_weight where a cell differs from the last given
    frame by more than 0.05 (framear's rule: the moving ball's rims, ~1-2% of the cells and
    all of the motion), 1 elsewhere; all ones when change_weight is 0 or no frame is given."""
    given = int((mask[0, 0, :, 0, 0] >= 1).sum())  # frames given in full (the same in every sample)
    if not change_weight or given == 0:
        return torch.ones_like(mask)
    last = x0[:, :, given - 1:given]  # (N, C, 1, H, W)
    changed = ((x0 - last).abs().amax(dim=1, keepdim=True) > 0.05).to(mask.dtype)  # (N, 1, T, H, W)
    return 1 + change_weight * changed


def _model_in(x, cond, mask):
    return torch.cat([x, cond, mask], dim=1)  # (N, 2C+1, T, H, W)


def _call(model, x, t, y):
    """The model on (x, t), and on y too when there is a state or text condition."""
    return model(x, t) if y is None else model(x, t, y)


def _prediction(out: torch.Tensor, cond: torch.Tensor, xt: torch.Tensor, a, s, objective: str,
                prediction: str) -> torch.Tensor:
    """The objective's target (v for ddpm, eps - x0 for flow) from the network's output.

    "native": the output is the target.  "x0_residual": the output is the clean clip minus
    the condition channels (with fill "last": the last given frame), as framear predicts its
    frame as the last frame plus a residual: at initialisation (a zero output layer) the
    model is copy-last, whose samples keep the ball, instead of a v of zero; a,s are the
    signal and noise scales of x_t = a x0 + s eps (broadcastable).
    """
    if prediction == "native":
        return out
    x0_hat = cond.to(out.dtype) + out
    if objective == "ddpm":  # v = a eps - s x0 with eps = (x_t - a x0) / s, and a^2 + s^2 = 1
        return (a * xt - x0_hat) / s
    return (xt - x0_hat) / s  # flow: eps - x0 with x_s = (1 - s) x0 + s eps


def training_loss(model, x0, cond, mask, objective: str = "ddpm", generator=None,
                  scheduler: DDPMScheduler | None = None, noise: torch.Tensor | None = None,
                  u: torch.Tensor | None = None, y: torch.Tensor | None = None,
                  change_weight: float = 0.0, prediction: str = "native") -> torch.Tensor:
    """MSE on the generated (not given) cells; x0 (N,C,T,H,W) in model space; y the extra condition.

    change_weight > 0 weights the cells that change from the last given frame up
    (`change_weights`): unweighted, the loss is ~98% still background, and a model whose
    loss has fallen to a few thousandths may still have learnt nothing about the ball.
    prediction "x0_residual" (`_prediction`) takes the MSE on the clean clip instead of on
    the target (whose error is the clean clip's divided by the noise scale: a v loss weights
    the low-noise levels up without bound).

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
        T = int(scheduler.config["num_train_timesteps"])  # config: a FrozenDict
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
    out = _call(model, _model_in(xt, cond, mask), t_model, y).float()
    if prediction == "x0_residual":
        pred, target = cond.float() + out, x0  # the clean clip, predicted as the condition plus a residual
    elif prediction == "native":
        pred = out
    else:
        raise ValueError(f"prediction must be one of {PREDICTIONS}, got {prediction!r}")
    keep = (mask < 1).float() * change_weights(x0.float(), mask.float(), change_weight)  # (N, 1, T, H, W)
    err = (pred - target.float()) ** 2 * keep
    return err.sum() / (keep.sum() * x0.shape[1]).clamp_min(1)


@torch.no_grad()
def sample(model, cond, mask, steps: int = 100, objective: str = "ddpm", generator=None,
           scheduler: DDPMScheduler | None = None, y: torch.Tensor | None = None,
           prediction: str = "native") -> torch.Tensor:
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
            ab = sched.alphas_cumprod[int(t)].to(x.device, x.dtype)
            v = _prediction(v, cond, x, ab.sqrt(), (1 - ab).sqrt(), objective, prediction)
            out = sched.step(v, t, x, generator=generator)  # return_dict=True: an output, not a tuple
            assert not isinstance(out, tuple)
            x = out.prev_sample
    elif objective == "flow":
        grid = torch.linspace(1, 0, steps + 1, device=cond.device)
        for s, s_next in zip(grid[:-1], grid[1:]):
            x = torch.where(given, (1 - s) * cond + s * fresh_noise(), x)
            u = _call(model, _model_in(x, cond, mask), (s * 1000).expand(N), y).to(x.dtype)
            u = _prediction(u, cond, x, 1 - s, s, objective, prediction)
            x = x + (s_next - s) * u  # Euler step toward the data end
    else:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    return torch.where(given, cond, x)  # cells given in full are copied in
