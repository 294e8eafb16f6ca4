"""Near-copies refused through the real sync (issue 51 item 1): the local Hub (tests/hubserver.py),
`phybench submit` and `phybench leaderboard sync` as in tests/test_sync.py.

An admitted row's videos with one pixel changed by one level per video (their videos hash is
new, so `videos_reused` does not fire) are refused with `videos_near_reused` naming the row; an
independent model on the same split is admitted; with the fingerprint cache gone (a fresh
checkout), the admitted row is fingerprinted again from its archive on the Hub's main and a
second near-copy (+-1 level noise) is refused too.
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_sync import CHEAP, WRITE, api, board_key, bot_comments, card, hub, phybench, world  # noqa: E402,F401


def _tweaked(src: Path, out: Path, model: str, how: str) -> Path:
    """A copy of submission `src` under `model`, every video changed by `how` (1px or noise1)."""
    shutil.copytree(src, out)
    meta = json.loads((out / "submission.json").read_bytes())
    meta["model"]["name"] = model
    (out / "submission.json").write_text(json.dumps(meta))
    rng = np.random.default_rng(0)
    for path in sorted(out.glob("videos/**/*.npz")):
        with np.load(path) as z:
            video = z["video"].copy()
        if how == "1px":
            video[-1, 3, 4, 0] = video[-1, 3, 4, 0] + 1 if video[-1, 3, 4, 0] < 255 else 254
        else:
            noisy = video.astype(np.int16) + rng.integers(-1, 2, video.shape, dtype=np.int16)
            video = np.clip(noisy, 0, 255).astype(np.uint8)
        np.savez_compressed(path, video=video)
    return out


@pytest.mark.slow
def test_a_near_copy_is_refused_and_an_independent_model_admitted(world, hub, tmp_path):  # noqa: F811
    repo, home = "tester/nearcopy", tmp_path / "hf"
    api(hub, home, "HfApi().create_repo(repo, repo_type='dataset'); result = 1", repo=repo)
    subs, results = world["subs"], tmp_path / "results"
    sync = ["leaderboard", "sync", "--repo", repo, "--splits", world["splits"], "--results", results,
            "--site", tmp_path / "site", "--metrics", CHEAP]
    copy = _tweaked(subs["copy-last"], tmp_path / "copy", "my-new-model", "1px")
    for name, sub in (("copy-last", subs["copy-last"]), ("my-new-model", copy),
                      ("linear-extrapolation", subs["linear-extrapolation"])):
        (tmp_path / f"{name}.json").write_text(json.dumps(card(name)))
        out = phybench(hub, home, "submit", "--yes", sub, "--repo", repo, "--card", tmp_path / f"{name}.json")
        assert out.returncode == 0, out.stderr
    out = phybench(hub, home, *sync, token=WRITE)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 open pull request(s): 2 admitted, 1 refused" in out.stdout, out.stdout
    assert hub.discussion(repo, 2).status == "closed"
    [text] = bot_comments(hub, repo, 2)
    assert "[videos_near_reused] these videos are nearly identical to the admitted row of 'copy-last'" in text, text
    assert "on 3 of 3 samples" in text and "[videos_reused]" not in text, text
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_bytes())
    assert {r["model"] for b in board["boards"] for r in b["rows"]} == {"copy-last", "linear-extrapolation"}
    # the cache of fingerprints holds both admitted rows and the split's own videos, nothing of the refused one
    cache = sorted(p.name for p in (results / ".sync" / "nearcopy").glob("*.npz"))
    assert len(cache) == 3 and sum(n.startswith("split-") for n in cache) == 1, cache
    assert not any("my-new-model" in n for n in cache), cache

    # a fresh checkout has no cache: the admitted rows are fingerprinted again from their archives on main
    shutil.rmtree(results / ".sync" / "nearcopy")
    noisy = _tweaked(subs["copy-last"], tmp_path / "noisy", "another-model", "noise1")
    (tmp_path / "another-model.json").write_text(json.dumps(card("another-model")))
    out = phybench(hub, home, "submit", "--yes", noisy, "--repo", repo, "--card", tmp_path / "another-model.json")
    assert out.returncode == 0, out.stderr
    out = phybench(hub, home, *sync, token=WRITE)
    assert out.returncode == 0 and "0 admitted, 1 refused" in out.stdout, out.stdout + out.stderr
    [text] = bot_comments(hub, repo, 4)
    assert "[videos_near_reused]" in text and "'copy-last'" in text, text
