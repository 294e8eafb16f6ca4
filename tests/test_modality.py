"""The DiT's numeric-state and text conditioning (issue 28 item 4) and `phybench study modality`.

Conditioning is off by default and then changes nothing (the frames-only model's weights and
forward are pinned from before it existed); on, it changes the output with the state or the
prompt, deterministically; a conditioned run gets its states / prompts through `phybench run`,
which records the track.
"""
from __future__ import annotations

import hashlib
import json

import pytest
import torch

pytest.importorskip("accelerate")
pytest.importorskip("diffusers")

from phybench_baselines.dit import conditioning as cond  # noqa: E402
from phybench_baselines.dit.config import TrainConfig  # noqa: E402
from phybench_baselines.dit.models import DiT  # noqa: E402
from phybench.cli import main  # noqa: E402

SETUP = dict(in_channels=7, out_channels=3, patch=4, frames=4, height=16, width=16)
SIZE = dict(depth=2, width=32, heads=2)
# Pinned before conditioning existed (commit fe5fe56), by the recipe of `_frames_only_output`.
INIT_SHA256 = "10de236a7ad3ef6714034c792ea8d59c05c8121be8186d74cbfddc79210ed9ba"
OUT_SUM, OUT_ABS_SUM = -33.25948420003988, 3353.025799865136
OUT_VALUES = [0.2527911961078644, 1.078051209449768, 0.3717833161354065, -0.41835737228393555,
              0.7590738534927368, -0.721748411655426, 1.5148594379425049]


def _state(x: float, vx: float, colour=(255, 0, 0)) -> dict:
    body = {"shape": "disc", "radius": 0.8, "colour": list(colour), "colour_name": "red", "dynamic": True,
            "position": [x, 5.0], "velocity": [vx, 0.0], "angle": 0.0}
    return {"world_size": 10.0, "gravity": 0.0, "walls": False, "bodies": [body]}


def _randomise(model: torch.nn.Module, seed: int = 1) -> torch.Generator:
    """Every parameter drawn at random (a fresh DiT's output layer is zero: its output would be too)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.1 * torch.randn(p.shape, generator=g))
    return g


def _frames_only_output() -> tuple[str, torch.Tensor]:
    torch.manual_seed(0)
    model = DiT(SIZE, **SETUP)
    sd = model.state_dict()
    h = hashlib.sha256()
    for k in sorted(sd):
        h.update(k.encode())
        h.update(sd[k].contiguous().numpy().tobytes())
    g = _randomise(model)
    x = torch.randn(2, 7, 4, 16, 16, generator=g)
    with torch.no_grad():
        return h.hexdigest(), model(x, torch.tensor([3, 800]))


def test_default_off_is_the_frames_only_model_as_before():
    digest, out = _frames_only_output()
    assert digest == INIT_SHA256  # same parameters, names and initial values (seeded CPU draws)
    # The parameters are pinned bit for bit above; the forward's floats are not portable across CPUs: the
    # pinned sums were recorded on an AMD Zen 4 host, and an Intel Xeon gives a sum 3e-5 (relative) away
    # (oneDNN/MKL kernels sum in another order).  A real change of the model moves them by far more.
    assert out.double().sum().item() == pytest.approx(OUT_SUM, rel=2e-4)
    assert out.double().abs().sum().item() == pytest.approx(OUT_ABS_SUM, rel=2e-4)
    assert out.flatten()[::997][:7].tolist() == pytest.approx(OUT_VALUES, rel=2e-4, abs=1e-5)
    # a frames-only config.json has no conditioning fields (existing runs' configs are unchanged)
    assert not {"condition", "state_bodies", "text_vocab", "text_len"} & set(TrainConfig().to_dict())
    assert TrainConfig(condition="state").to_dict()["condition"] == "state"


def _conditioned(condition: str, **extra) -> DiT:
    torch.manual_seed(0)
    return DiT(SIZE, **SETUP, condition=condition, **extra)


def test_a_conditioned_model_starts_as_the_frames_only_model():
    """Same seed: same backbone weights; the encoder's zero output layer makes the forward equal too."""
    torch.manual_seed(0)
    plain = DiT(SIZE, **SETUP)
    model = _conditioned("state", state_dim=cond.state_dim(1))
    sd = model.state_dict()
    assert all(torch.equal(v, sd[k]) for k, v in plain.state_dict().items())
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():  # open the adaLN gates and the output layer of both, identically
        for (_, p), (_, q) in zip(plain.named_parameters(), [(n, q) for n, q in model.named_parameters()
                                                              if not n.startswith("y_embedder")]):
            p.copy_(0.1 * torch.randn(p.shape, generator=g))
            q.copy_(p)
    x = torch.randn(2, 7, 4, 16, 16, generator=g)
    y = torch.from_numpy(cond.state_features(_state(2.0, 1.5), 1)).expand(2, -1)
    with torch.no_grad():
        assert torch.equal(model(x, torch.tensor([3, 800]), y), plain(x, torch.tensor([3, 800])))
    with pytest.raises(ValueError, match="conditioned on state"):
        model(x, torch.tensor([3, 800]))


def _two_outputs(model: DiT, y_a: torch.Tensor, y_b: torch.Tensor) -> tuple[torch.Tensor, ...]:
    g = _randomise(model)
    x = torch.randn(1, 7, 4, 16, 16, generator=g)
    t = torch.tensor([500])
    with torch.no_grad():
        return model(x, t, y_a), model(x, t, y_b), model(x, t, y_a.clone())


@pytest.mark.slow
def test_state_conditioning_changes_the_output_deterministically():
    a, b = _state(2.0, 1.5), _state(2.0, 3.5)  # only the speed differs
    ya, yb = (torch.from_numpy(cond.state_features(s, 1))[None] for s in (a, b))
    out_a, out_b, again = _two_outputs(_conditioned("state", state_dim=cond.state_dim(1)), ya, yb)
    assert (out_a - out_b).abs().max() > 1e-3
    assert torch.equal(out_a, again)
    out_a2, out_b2, _ = _two_outputs(_conditioned("state", state_dim=cond.state_dim(1)), ya, yb)
    assert torch.equal(out_a, out_a2) and torch.equal(out_b, out_b2)  # a rebuilt model with the seed: same bytes


def test_text_conditioning_changes_the_output_deterministically():
    texts = ["A red ball of radius 0.8 at (2, 5) moves right at 1.5 units per second.",
             "A red ball of radius 0.8 at (2, 5) moves right at 3.5 units per second."]
    vocab = cond.build_vocab(texts[:1])  # "3" never occurs in training, yet it is a known digit
    ids = cond.encode_texts(texts, vocab, cond.text_length(texts))
    assert (ids != 1).all()  # no unknown token: numbers are spelled digit by digit
    assert cond.tokenize("at 12.5 units")[:5] == ["at", "1", "2", ".", "5"]
    model = _conditioned("text", vocab_size=len(vocab), text_len=ids.shape[1])
    out_a, out_b, again = _two_outputs(model, ids[:1], ids[1:])
    assert (out_a - out_b).abs().max() > 1e-3
    assert torch.equal(out_a, again)
    model = _conditioned("text", vocab_size=len(vocab), text_len=ids.shape[1])
    assert torch.equal(_two_outputs(model, ids[:1], ids[1:])[0], out_a)
    empty = cond.encode_texts([""], vocab, ids.shape[1])
    with torch.no_grad():
        assert torch.isfinite(model.y_embedder(empty)).all()  # an empty prompt attends to its pad slot, no NaN


def test_state_features_are_scaled_and_padded():
    v = cond.state_features(_state(2.0, 1.5), 2)
    assert v.shape == (cond.state_dim(2),) and v.dtype.name == "float32"
    assert v[:4].tolist() == pytest.approx([0.2, 0.5, 0.15, 0.0])  # position and velocity / world size
    assert not v[cond.BODY_FEATURES:2 * cond.BODY_FEATURES].any()  # the missing second body
    with pytest.raises(ValueError, match="at most 0"):
        cond.state_features(_state(2.0, 1.5), 0)


# ------------------------------------------------------------------ end to end
ARGS = ["study", "modality", "--task", "uniform", "--train-size", "8", "--steps", "2", "--eval-samples", "2",
        "--sample-steps", "2", "--batch-size", "4", "--quiet"]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("modality") / "study"
    assert main(ARGS + ["--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_the_study_records_each_track_and_the_board_shows_it(study, tmp_path, capsys):
    files = sorted(p for p in (study / "results").glob("*.json") if not p.name.endswith(".samples.json"))
    names = [p.name for p in files]
    assert names == sorted(f"uniform-{s}-eval-dit-XS-frames{c}.json" for s in ("id", "ood") for c in ("", "-state", "-text"))
    tracks = {p.name: json.loads(p.read_text())["model"]["conditioning"]["inputs"] for p in files}
    assert tracks["uniform-id-eval-dit-XS-frames.json"] == "frames"
    assert tracks["uniform-ood-eval-dit-XS-frames-state.json"] == "frames+state"
    assert tracks["uniform-ood-eval-dit-XS-frames-text.json"] == "frames+text"
    config = json.loads((study / "runs" / "dit-XS-frames-text" / "config.json").read_text())
    assert config["condition"] == "text" and config["text_len"] > 10 and "moves" in config["text_vocab"]
    assert "condition" not in json.loads((study / "runs" / "dit-XS-frames" / "config.json").read_text())
    same = [json.loads((study / "runs" / r / "config.json").read_text()) for r in ("dit-XS-frames", "dit-XS-frames-state")]
    assert {k: v for k, v in same[1].items() if k not in ("condition", "state_bodies", "text_vocab", "text_len")} == same[0]
    site = tmp_path / "site"
    assert main(["leaderboard", "build", str(study / "results"), "--out", str(site)]) == 0
    html = (site / "index.html").read_text()
    assert "frames+state, video-to-video" in html and "frames+text, video-to-video" in html


@pytest.mark.slow
def test_phybench_run_hands_a_conditioned_dit_its_states_and_prompts(study, tmp_path, monkeypatch):
    import phybench_baselines.dit.runner as runner

    seen: list[tuple] = []
    real = runner.condition_inputs

    def spy(cfg, states=None, texts=None):
        seen.append((cfg.condition, states, texts))
        return real(cfg, states, texts)

    monkeypatch.setattr(runner, "condition_inputs", spy)
    data = study / "data" / "uniform-id-eval"
    for condition, kind in (("state", "states"), ("text", "prompts")):
        seen.clear()
        out = tmp_path / condition
        assert main(["run", "--model", "phybench_baselines.dit.runner:DiT", "--model-args",
                     f"checkpoint={study / 'runs' / f'dit-XS-frames-{condition}'},steps=2", "--data", str(data),
                     "--out", str(out), "--metrics", "velocity_error", "--name", condition, "--quiet"]) == 0
        assert seen and all(c == condition for c, _, _ in seen)
        given = [s if kind == "states" else t for _, s, t in seen]
        assert sum(len(g) for g in given) == 2  # both samples, with their own condition
        if kind == "states":
            assert given[0][0]["bodies"][0]["position"] != given[-1][-1]["bodies"][0]["position"]
        else:
            assert all(isinstance(t, str) and "ball" in t for g in given for t in g)
        sub = json.loads((out / "uniform-id-eval" / "submission" / "submission.json").read_text())
        assert sub["conditioning"] == {"inputs": f"frames+{condition}", "condition_frames_used": 3}


def test_unknown_condition_is_explained(tmp_path, capsys):
    assert main(["study", "modality", "--task", "uniform", "--conditions", "frames,audio",
                 "--out", str(tmp_path / "s"), "--quiet"]) == 2
    assert "unknown condition(s) audio" in capsys.readouterr().err


@pytest.mark.slow
def test_sample_seeds_give_seeded_names_and_different_videos(tmp_path):
    """`--sample-seeds 0,1`: one trained model sampled twice, seed 1's results under `.seed1` with other
    videos; the default (no --sample-seeds) writes the names (and seed-0 videos) the study always wrote."""
    import shutil

    from phybench.submission.identity import videos_hash

    tiny = ARGS + ["--conditions", "frames"]
    plain = tmp_path / "default"
    assert main(tiny + ["--out", str(plain)]) == 0
    base = {f"uniform-{s}-eval-dit-XS-frames.json" for s in ("id", "ood")}
    assert {p.name for p in (plain / "results").glob("*.json") if not p.name.endswith(".samples.json")} == base
    assert json.loads((plain / "results" / "uniform-id-eval-dit-XS-frames.json").read_text())["model"]["seeds"] == [0]
    seeded = tmp_path / "seeds"
    for part in ("data", "runs"):  # the same trained model: only sampling differs
        shutil.copytree(plain / part, seeded / part)
    metrics = "velocity_error,velocity_error_paper,velocity_error_paper_y"
    assert main(tiny + ["--out", str(seeded), "--sample-seeds", "0,1", "--metrics", metrics]) == 0
    names = {p.name for p in (seeded / "results").glob("*.json") if not p.name.endswith(".samples.json")}
    assert names == base | {f"uniform-{s}-eval-dit-XS-frames.seed1.json" for s in ("id", "ood")}
    docs = {n: json.loads((seeded / "results" / n).read_text()) for n in names}
    assert docs["uniform-id-eval-dit-XS-frames.seed1.json"]["model"]["seeds"] == [1]
    assert docs["uniform-id-eval-dit-XS-frames.json"]["model"]["seeds"] == [0]
    assert all({"velocity_error_paper", "velocity_error_paper_y"} <= set(d["metrics"]) for d in docs.values())

    def videos(out, folder):
        return videos_hash(out / "sampled" / folder / "uniform-id-eval" / "submission")

    assert videos(seeded, "dit-XS-frames") == videos(plain, "dit-XS-frames")  # seed 0: the default's videos
    assert videos(seeded, "dit-XS-frames.seed1") != videos(seeded, "dit-XS-frames")
    sub_hash = {n: d["provenance"]["submission_hash"] for n, d in docs.items()}
    assert sub_hash["uniform-id-eval-dit-XS-frames.seed1.json"] != sub_hash["uniform-id-eval-dit-XS-frames.json"]
    assert main(tiny + ["--out", str(seeded), "--sample-seeds", "1,x"]) == 2
