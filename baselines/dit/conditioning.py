"""Numeric-state and text conditioning of the video DiT (the paper's modality experiment, A.6.1).

The paper adds, beside the condition frames, either the initial state vector (mapped to an
embedding) or a text description of it (T5 embeddings and cross-attention).  Here, without
downloaded weights and on a CPU budget, both are small encoders trained with the model,
whose output is added to the timestep embedding (so it modulates every block through the
shared adaLN, as the timestep does):

* state: the sample's state at its last condition frame (`phybench.data.conditions`),
  flattened to a fixed-length vector by `state_features` (per body: position, velocity,
  angle, two size numbers, colour, dynamic; then the world's gravity and walls; scaled by
  the world's size so the numbers are O(1)), through a two-layer MLP.
* text: the sample's prompt, cut into words with every number spelled digit by digit (so a
  speed never seen in training is still a sequence of known tokens, never "unknown"), over a
  vocabulary built from the training prompts; an embedding with learned positions, one
  pre-norm transformer layer and a mean over the words, then a linear map.

Both encoders' output layers start at zero (adaLN-Zero's rule): at initialisation a
conditioned model computes exactly what the frames-only model computes.  Every window of a
clip (short models roll out) is conditioned on the same per-sample state or prompt: the one
at the clip's last condition frame, which is all `phybench run` gives a model.
"""
from __future__ import annotations

import math
import re
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

CONDITIONS = ("state", "text")
BODY_FEATURES = 11  # x, y, vx, vy, angle, size a, size b, r, g, b, dynamic
WORLD_FEATURES = 2  # gravity, walls
PAD, UNK = "<pad>", "<unk>"
_TOKEN = re.compile(r"[a-z]+|[0-9]|[^\sa-z0-9]")


# ------------------------------------------------------------------ state
def _sizes(body: dict[str, Any]) -> tuple[float, float]:
    """Two size numbers of any shape: radius twice, width and height, or outer and inner radius."""
    kind = body["shape"]
    if kind == "disc":
        return float(body["radius"]), float(body["radius"])
    if kind == "ring":
        return float(body["outer_radius"]), float(body["inner_radius"])
    if kind in ("rect", "jar"):
        return float(body["width"]), float(body["height"])
    v = np.asarray(body["vertices"], dtype=np.float64)  # a polygon: its bounding box
    return float(np.ptp(v[:, 0])), float(np.ptp(v[:, 1]))


def state_dim(bodies: int) -> int:
    """Length of the state vector of a task with at most `bodies` bodies."""
    return bodies * BODY_FEATURES + WORLD_FEATURES


def state_features(state: dict[str, Any], bodies: int) -> np.ndarray:
    """float32 (state_dim(bodies),): a state (`condition_state`) as numbers; missing bodies are zeros."""
    if len(state["bodies"]) > bodies:
        raise ValueError(f"the state has {len(state['bodies'])} bodies; the model was trained with at most {bodies}")
    scale = float(state["world_size"])
    out = np.zeros(state_dim(bodies), dtype=np.float32)
    for b, body in enumerate(state["bodies"]):
        a, s = _sizes(body)
        out[b * BODY_FEATURES:(b + 1) * BODY_FEATURES] = (
            *(np.asarray(body["position"]) / scale), *(np.asarray(body["velocity"]) / scale), body["angle"],
            a / scale, s / scale, *(np.asarray(body["colour"]) / 255.0), float(body["dynamic"]))
    out[-2:] = (float(state["gravity"]) / scale, float(state["walls"]))
    return out


# ------------------------------------------------------------------ text
def tokenize(text: str) -> list[str]:
    """Lower-cased words, single digits and single punctuation marks, in order."""
    return _TOKEN.findall(text.lower())


def build_vocab(texts: Sequence[str]) -> list[str]:
    """The padding and unknown tokens, then the digits, the decimal point and every token of the
    training prompts, sorted: any unsigned number is spelled in known tokens."""
    words = sorted({tok for text in texts for tok in tokenize(text)} | set("0123456789."))
    return [PAD, UNK, *words]


def encode_texts(texts: Sequence[str], vocab: Sequence[str], length: int) -> torch.Tensor:
    """int64 (N, length): token ids, cut at `length`, padded with 0 (unknown words: 1)."""
    index = {tok: i for i, tok in enumerate(vocab)}
    out = torch.zeros(len(texts), length, dtype=torch.long)
    for n, text in enumerate(texts):
        ids = [index.get(tok, 1) for tok in tokenize(text)][:length]
        out[n, :len(ids)] = torch.tensor(ids, dtype=torch.long)
    return out


def text_length(texts: Sequence[str]) -> int:
    """Token slots of a model: the longest training prompt plus a quarter (longer numbers out of distribution)."""
    longest = max((len(tokenize(t)) for t in texts), default=1)
    return int(math.ceil(longest * 1.25))


# ------------------------------------------------------------------ encoders
class StateEncoder(nn.Module):
    """Two-layer MLP from the state vector to the model width."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        return self.mlp(y.float())  # (N, D)


class TextEncoder(nn.Module):
    """Token and position embeddings, one pre-norm transformer layer, a mean over the words."""

    def __init__(self, vocab_size: int, length: int, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.tokens = nn.Embedding(vocab_size, hidden, padding_idx=0)
        self.positions = nn.Parameter(torch.zeros(length, hidden))
        self.norm1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.GELU(approximate="tanh"),
                                 nn.Linear(2 * hidden, hidden))
        self.out = nn.Linear(hidden, hidden)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        N, L = ids.shape
        keep = ids != 0  # (N, L)
        attend = keep.clone()
        attend[:, 0] |= ~keep.any(1)  # an empty prompt attends to its first slot, not to nothing (NaN)
        x = self.tokens(ids) + self.positions[:L]  # (N, L, D)
        q, k, v = self.qkv(self.norm1(x)).reshape(N, L, 3, self.heads, -1).permute(2, 0, 3, 1, 4).unbind(0)
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=attend[:, None, None, :])  # (N, h, L, d)
        x = x + self.proj(attn.transpose(1, 2).reshape(N, L, -1))
        x = x + self.mlp(self.norm2(x))  # (N, L, D)
        w = keep.unsqueeze(-1).to(x.dtype)
        pooled = (x * w).sum(1) / w.sum(1).clamp_min(1)  # (N, D): mean over the words
        return self.out(pooled)


def init_encoder(module: nn.Module) -> None:
    """Small random weights, the output layer at zero (the encoder starts as a no-op)."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)
    if isinstance(module, TextEncoder):
        nn.init.normal_(module.positions, std=0.02)
        last: nn.Module = module.out
    else:
        assert isinstance(module, StateEncoder), type(module)
        last = module.mlp[-1]
    assert isinstance(last, nn.Linear) and last.bias is not None
    nn.init.zeros_(last.weight)
    nn.init.zeros_(last.bias)


# ------------------------------------------------------------------ per-sample inputs
def condition_inputs(cfg: Any, states: Sequence[dict[str, Any]] | None = None,
                     texts: Sequence[str] | None = None) -> torch.Tensor | None:
    """The model's extra input for a batch: state vectors (N, S) or token ids (N, L); None for frames only.

    cfg is a TrainConfig (its `condition`, `state_bodies`, `text_vocab`, `text_len`).
    """
    if cfg.condition is None:
        return None
    if cfg.condition == "state":
        if states is None:
            raise ValueError("this DiT is conditioned on the numeric state: give it states=")
        return torch.from_numpy(np.stack([state_features(s, cfg.state_bodies) for s in states]))
    if cfg.condition == "text":
        if texts is None:
            raise ValueError("this DiT is conditioned on text: give it prompts=")
        return encode_texts(texts, cfg.text_vocab, cfg.text_len)
    raise ValueError(f"condition must be one of {CONDITIONS} or None, got {cfg.condition!r}")
