"""Video DiT of the paper's baselines, in pure torch.

Full spatio-temporal self-attention over (t, h, w) tokens with 3D rotary embeddings, and
a single timestep modulation shared by all blocks ("adaLN-single", as in PixArt-alpha /
Open-Sora) with zero-initialised gates, so each block starts as the identity (DiT's
adaLN-Zero).  That variant is what reproduces the paper's parameter counts; the original
per-block adaLN-Zero is kept behind ``shared_adaln=False`` (32.5M / 130M / 457M / 674M).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

DIT_SIZES = {
    "S": dict(depth=12, width=384, heads=6),
    "B": dict(depth=12, width=768, heads=12),
    "L": dict(depth=24, width=1024, heads=16),
    "XL": dict(depth=28, width=1152, heads=16),
}
PAPER_PARAMS = {"S": 22_500_000, "B": 89_500_000, "L": 310_000_000, "XL": 456_000_000}

# Assumed input setup of the paper's counts: a 4-channel latent, 2x2 patches (t=1),
# in = noisy latent (4) + zero-padded condition latent (4) + binary mask (1) = 9 channels,
# out = the 4-channel v-prediction.  The grid size has no parameters (RoPE only).
LATENT_CHANNELS = 4
PAPER_SETUP = dict(in_channels=2 * LATENT_CHANNELS + 1, out_channels=LATENT_CHANNELS,
                   patch=2, frames=8, height=16, width=16)


def rope_3d(frames: int, height: int, width: int, head_dim: int, base: float = 10000.0):
    """cos / sin tables (L, head_dim/2) of 3D RoPE; head_dim is split across t, h, w."""
    d_hw = 2 * (head_dim // 6)  # even share for h and for w
    dims = (head_dim - 2 * d_hw, d_hw, d_hw)  # (t, h, w), each even
    t, h, w = torch.meshgrid(torch.arange(frames), torch.arange(height), torch.arange(width),
                             indexing="ij")
    parts = []
    for pos, d in zip((t, h, w), dims):
        freqs = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)  # (d/2,)
        parts.append(pos.reshape(-1, 1).float() * freqs)  # (L, d/2)
    angles = torch.cat(parts, dim=1)  # (L, head_dim/2)
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate consecutive channel pairs of x (..., L, head_dim) by the position angles."""
    x1, x2 = x.float().unflatten(-1, (-1, 2)).unbind(-1)  # (..., L, head_dim/2) each
    out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)  # (..., L, hd/2, 2)
    return out.flatten(-2).type_as(x)  # (..., L, head_dim)


def modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


class TimestepEmbedder(nn.Module):
    """Sinusoidal timestep features followed by a two-layer MLP (as in DiT)."""

    def __init__(self, hidden: int, freq_dim: int = 256):
        super().__init__()
        self.freq_dim = freq_dim
        self.mlp = nn.Sequential(nn.Linear(freq_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        half = self.freq_dim // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)  # (F/2,)
        args = t.float()[:, None] * freqs[None]  # (N, F/2)
        emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)  # (N, F)
        return self.mlp(emb)  # (N, D)


class Attention(nn.Module):
    """Multi-head self-attention over all tokens, with 3D RoPE on queries and keys."""

    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x, cos, sin):
        N, L, D = x.shape
        qkv = self.qkv(x).reshape(N, L, 3, self.heads, D // self.heads)  # (N, L, 3, h, d)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # (N, h, L, d) each
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # (N, h, L, d)
        x = F.scaled_dot_product_attention(q, k, v)  # (N, h, L, d)
        return self.proj(x.transpose(1, 2).reshape(N, L, D))  # (N, L, D)


class DiTBlock(nn.Module):
    """Pre-norm transformer block with adaLN-Zero modulation (shared or per block)."""

    def __init__(self, hidden: int, heads: int, mlp_ratio: float = 4.0, shared_adaln: bool = True):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.attn = Attention(hidden, heads)
        self.norm2 = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        inner = int(hidden * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(hidden, inner), nn.GELU(approximate="tanh"),
                                 nn.Linear(inner, hidden))
        if shared_adaln:  # per-block offset added to the shared modulation (PixArt)
            self.scale_shift_table = nn.Parameter(torch.zeros(6, hidden))
        else:
            self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 6 * hidden))

    def forward(self, x, c, cos, sin):
        if hasattr(self, "scale_shift_table"):
            mod = c.unflatten(1, (6, -1)) + self.scale_shift_table  # (N, 6, D)
        else:
            mod = self.adaLN_modulation(c).unflatten(1, (6, -1))  # (N, 6, D)
        shift1, scale1, gate1, shift2, scale2, gate2 = mod.unbind(1)  # (N, D) each
        h = self.attn(modulate(self.norm1(x), shift1, scale1), cos, sin)  # (N, L, D)
        x = x + gate1.unsqueeze(1) * h  # (N, L, D)
        h = self.mlp(modulate(self.norm2(x), shift2, scale2))  # (N, L, D)
        x = x + gate2.unsqueeze(1) * h  # (N, L, D)
        return x


class FinalLayer(nn.Module):
    """adaLN-modulated norm and a linear map of each token to a p x p x C_out patch."""

    def __init__(self, hidden: int, patch: int, out_channels: int, shared_adaln: bool = True):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.linear = nn.Linear(hidden, patch * patch * out_channels)
        if shared_adaln:
            self.scale_shift_table = nn.Parameter(torch.zeros(2, hidden))
        else:
            self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 2 * hidden))

    def forward(self, x, t):
        if hasattr(self, "scale_shift_table"):
            shift, scale = (t.unsqueeze(1) + self.scale_shift_table).unbind(1)  # (N, D) each
        else:
            shift, scale = self.adaLN_modulation(t).chunk(2, dim=1)  # (N, D) each
        return self.linear(modulate(self.norm(x), shift, scale))  # (N, L, p*p*C_out)


class DiT(nn.Module):
    """Video diffusion transformer: (N, C_in, T, H, W) latents and timesteps to (N, C_out, T, H, W).

    ``size`` is a key of DIT_SIZES or a dict(depth=, width=, heads=).  ``condition`` adds an
    encoder of the numeric state (``"state"``, a vector of ``state_dim``) or of the prompt
    (``"text"``, token ids over ``vocab_size`` words, ``text_len`` slots), whose output is
    added to the timestep embedding (`conditioning`); None (the default) builds exactly the
    frames-only model, parameters and random draws included.
    """

    def __init__(self, size="S", in_channels: int = 9, out_channels: int = 4, patch: int = 2,
                 frames: int = 8, height: int = 16, width: int = 16, mlp_ratio: float = 4.0,
                 shared_adaln: bool = True, condition: str | None = None, state_dim: int = 0,
                 vocab_size: int = 0, text_len: int = 0):
        super().__init__()
        cfg = DIT_SIZES[size] if isinstance(size, str) else dict(size)
        hidden, heads, depth = cfg["width"], cfg["heads"], cfg["depth"]
        assert hidden % heads == 0 and height % patch == 0 and width % patch == 0
        self.out_channels, self.patch = out_channels, patch
        self.grid = (frames, height // patch, width // patch)
        kernel = (1, patch, patch)  # patchify: t=1, p x p
        self.x_embedder = nn.Conv3d(in_channels, hidden, kernel, stride=kernel)
        self.t_embedder = TimestepEmbedder(hidden)
        self.t_block = (nn.Sequential(nn.SiLU(), nn.Linear(hidden, 6 * hidden))
                        if shared_adaln else None)
        self.blocks = nn.ModuleList(DiTBlock(hidden, heads, mlp_ratio, shared_adaln)
                                    for _ in range(depth))
        self.final_layer = FinalLayer(hidden, patch, out_channels, shared_adaln)
        cos, sin = rope_3d(*self.grid, hidden // heads)
        self.register_buffer("rope_cos", cos, persistent=False)  # (L, d/2)
        self.register_buffer("rope_sin", sin, persistent=False)  # (L, d/2)
        self.initialize_weights()
        self.condition = condition
        if condition is not None:
            self.y_embedder = self._condition_encoder(condition, hidden, heads, state_dim, vocab_size, text_len)

    @staticmethod
    def _condition_encoder(condition: str, hidden: int, heads: int, state_dim: int, vocab_size: int,
                           text_len: int) -> nn.Module:
        """The state or text encoder, built and initialised without touching the global random
        stream: a conditioned model's backbone (same seed) and training noise are the frames-only
        model's, so the three conditions of the modality study differ by their encoder only."""
        from .conditioning import StateEncoder, TextEncoder, init_encoder

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.initial_seed()) + 1)
            if condition == "state":
                enc: nn.Module = StateEncoder(state_dim, hidden)
            elif condition == "text":
                enc = TextEncoder(vocab_size, text_len, hidden, heads)
            else:
                raise ValueError(f"condition must be 'state', 'text' or None, got {condition!r}")
            init_encoder(enc)
        return enc

    def initialize_weights(self):
        def _basic_init(m):
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)
        self.apply(_basic_init)
        w = self.x_embedder.weight
        nn.init.xavier_uniform_(w.view(w.shape[0], -1))
        nn.init.zeros_(self.x_embedder.bias)
        for lin in (self.t_embedder.mlp[0], self.t_embedder.mlp[2]):
            nn.init.normal_(lin.weight, std=0.02)
        # adaLN-Zero: all modulation and the output projection start at zero.
        mods = [self.t_block] if self.t_block is not None else []
        mods += [getattr(b, "adaLN_modulation", None) for b in self.blocks]
        mods += [getattr(self.final_layer, "adaLN_modulation", None)]
        for m in mods:
            if m is not None:
                nn.init.zeros_(m[-1].weight)
                nn.init.zeros_(m[-1].bias)
        nn.init.zeros_(self.final_layer.linear.weight)
        nn.init.zeros_(self.final_layer.linear.bias)

    def unpatchify(self, x: torch.Tensor) -> torch.Tensor:
        T, h, w = self.grid
        p, C = self.patch, self.out_channels
        x = x.reshape(x.shape[0], T, h, w, p, p, C)  # (N, T, h, w, p, p, C)
        x = torch.einsum("nthwpqc->ncthpwq", x)  # (N, C, T, h, p, w, p)
        return x.reshape(x.shape[0], C, T, h * p, w * p)  # (N, C, T, H, W)

    def forward(self, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        """y: the condition's input (state vectors (N, S) or token ids (N, L)) of a conditioned model."""
        assert x.shape[2] == self.grid[0] and x.shape[3] // self.patch == self.grid[1], x.shape
        x = self.x_embedder(x)  # (N, D, T, H/p, W/p)
        x = x.flatten(2).transpose(1, 2)  # (N, L, D), L = T * H/p * W/p
        t = self.t_embedder(t)  # (N, D)
        if self.condition is not None:
            if y is None:
                raise ValueError(f"this DiT is conditioned on {self.condition}: forward needs y")
            t = t + self.y_embedder(y.to(x.device)).to(t.dtype)  # (N, D)
        c = self.t_block(t) if self.t_block is not None else t  # (N, 6D) shared, else (N, D)
        for block in self.blocks:
            x = block(x, c, self.rope_cos, self.rope_sin)  # (N, L, D)
        x = self.final_layer(x, t)  # (N, L, p*p*C_out)
        return self.unpatchify(x)  # (N, C_out, T, H, W)


def count_params(size: str, **setup) -> int:
    """Parameter count of DiT-<size> with PAPER_SETUP overridden by setup, built on meta."""
    with torch.device("meta"):
        model = DiT(size, **{**PAPER_SETUP, **setup})
    return sum(p.numel() for p in model.parameters())


def size_table() -> str:
    """The four sizes beside the paper's parameter counts (`phybench baseline dit --list-sizes`)."""
    lines = ["size  layers  width  heads  params        paper    diff",
             "----  ------  -----  -----  ------------  -------  ------"]
    for name, cfg in DIT_SIZES.items():
        n, paper = count_params(name), PAPER_PARAMS[name]
        lines.append(f"{name:<4}  {cfg['depth']:>6}  {cfg['width']:>5}  {cfg['heads']:>5}  {n:>12,}  "
                     f"{paper / 1e6:>6.1f}M  {100 * (n - paper) / paper:+5.2f}%")
    lines.append("counted with a 4-channel latent, 2x2 patches, 9 input channels (noisy latent, condition "
                 "latent, mask); the grid has no parameters (3D RoPE)")
    return "\n".join(lines)
