"""Publish and load splits through the real `huggingface_hub` and `datasets` clients over HTTP.

The Hub is `tests/hubserver.py` on 127.0.0.1.  huggingface_hub and datasets read HF_ENDPOINT,
HF_HOME and HF_HUB_OFFLINE when they are imported, so every client call runs in a fresh
Python process with its own environment (`client` below); the server runs in this one,
where tests can look inside it and switch its faults on.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from phybench.cli.data import canonical_command
from phybench.data.generate import generate
from phybench.data.card import render_card, validate_card
from phybench.data.hub import DatasetCardError
from phybench.data.split import SplitReader, make_plan, read_manifest
from phybench.tasks import get_task

sys.path.insert(0, str(Path(__file__).parent))
from hubserver import HubServer  # noqa: E402

WRITE, READ = "hf_test_write", "hf_test_read"
REPO = "phybench/tiny"
FIXTURES = Path(__file__).parent / "fixtures" / "phyworld"  # the reference authors' format
CARD_DIR = Path(__file__).resolve().parent.parent / "data_cards"


# ------------------------------------------------------------------ fixtures
def _generate(root: Path, task: str, split: str, limit: int) -> Path:
    plan = make_plan(get_task(task), split, None, limit, None)
    out = root / f"{task}-{split}-{limit}"
    generate(plan, out, progress=False, command=canonical_command(plan))
    return out


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    root = tmp_path_factory.mktemp("splits")
    out = {
        "uniform/id-eval": _generate(root, "uniform", "id-eval", 4),
        "uniform/ood-eval": _generate(root, "uniform", "ood-eval", 3),
        "uniform/train-30k": _generate(root, "uniform", "train-30k", 16),
        "uniform/id-eval-v2": _generate(root, "uniform", "id-eval", 5),
        "collision/id-eval": _generate(root, "collision", "id-eval", 3),
    }
    from phybench.data.importer import import_phyworld

    out["uniform/phyworld-eval"] = import_phyworld(FIXTURES / "uniform_128.hdf5", "uniform", root / "imported", limit=4)
    return out


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server:
        yield server


@pytest.fixture
def home(tmp_path):
    """A fresh HF_HOME (empty cache, no saved token) per test."""
    return tmp_path / "hf-home"


def client(hub, home, code: str, token: str | None = WRITE, offline: bool = False, **values) -> dict:
    """Run `code` in a fresh Python with the Hub at `hub`; it sets `result` (JSON).

    `values` are available to the code as globals (paths as strings).  An exception in the
    code is returned as {"error": type, "message": str}.
    """
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "HUGGINGFACE")) and k != "PHYBENCH_CACHE_DIR"}  # caches under `home`
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(home), HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", HF_DATASETS_DISABLE_PROGRESS_BARS="1",
               XDG_CACHE_HOME=str(home / "xdg"), HF_HUB_OFFLINE="1" if offline else "0")
    if token:
        env["HF_TOKEN"] = token
    given = json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in values.items()})
    script = (
        "import json\n"
        f"globals().update(json.loads({json.dumps(given)}))\n"
        "result = {}\n"
        "try:\n" + textwrap.indent(textwrap.dedent(code), "    ") + "\n"
        "except Exception as exc:\n"
        "    result = {'error': type(exc).__name__, 'message': str(exc)}\n"
        "print('\\n@@RESULT@@' + json.dumps(result))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=180)
    assert "@@RESULT@@" in proc.stdout, proc.stderr[-3000:]
    return json.loads(proc.stdout.rsplit("@@RESULT@@", 1)[1])


PUBLISH = """
from phybench.data.hub import publish
info = publish(task, repo, dirs, **kwargs)
result = {"revision": info.oid}
"""

LOAD = """
from phybench.data.download import load_split
result = {"path": str(load_split(task, split, source, revision=revision))}
"""


def publish(hub, home, task, dirs, repo=REPO, token=WRITE, **kwargs):
    return client(hub, home, PUBLISH, token=token, task=task, repo=repo, dirs=[str(d) for d in dirs], kwargs=kwargs)


def load(hub, home, task, split, source=REPO, revision=None, offline=False, token=None):
    return client(hub, home, LOAD, token=token, offline=offline, task=task, split=split, source=source,
                  revision=revision)


def files_of(folder: Path) -> dict[str, bytes]:
    m = read_manifest(folder)
    names = ["manifest.json", "README.md"] + [s["file"] for s in m["shards"]]
    return {n: (folder / n).read_bytes() for n in names}


# ------------------------------------------------------------------ round trip
@pytest.mark.slow
def test_round_trip_revisions_and_datasets(hub, home, splits):
    uniform = [splits[k] for k in ("uniform/id-eval", "uniform/ood-eval", "uniform/train-30k")]
    if "uniform/phyworld-eval" in splits:
        uniform.append(splits["uniform/phyworld-eval"])
    first = publish(hub, home, "uniform", uniform)
    assert "revision" in first, first
    rev1 = first["revision"]
    assert hub.revisions(REPO)[-1] == rev1

    # Load by repo id and revision: identical bytes, identical (re-verified) hashes.
    for folder in uniform:
        m = read_manifest(folder)
        got = load(hub, home, "uniform", m["split"], revision=rev1)
        assert "path" in got, got
        path = Path(got["path"])
        assert rev1 in str(path)
        assert files_of(path) == files_of(folder)
        assert read_manifest(path)["split_hash"] == m["split_hash"]

    # A second revision (another task, then a re-published split) leaves the first intact.
    rev2 = publish(hub, home, "collision", [splits["collision/id-eval"]])["revision"]
    rev3 = publish(hub, home, "uniform", [splits["uniform/id-eval-v2"]])["revision"]
    assert hub.revisions(REPO)[-3:] == [rev1, rev2, rev3]
    old = load(hub, home, "uniform", "id-eval", revision=rev1)
    new = load(hub, home, "uniform", "id-eval", revision=rev3)
    assert files_of(Path(old["path"])) == files_of(splits["uniform/id-eval"])
    assert files_of(Path(new["path"])) == files_of(splits["uniform/id-eval-v2"])
    latest = hub.files(REPO)
    shard = read_manifest(splits["uniform/id-eval"])["shards"][0]["file"]
    assert f"uniform/id-eval/{shard}" in latest  # same shard name, new bytes
    assert latest[f"uniform/id-eval/{shard}"] == (splits["uniform/id-eval-v2"] / shard).read_bytes()
    assert "collision/id-eval/manifest.json" in latest and "uniform/ood-eval/manifest.json" in latest
    card = latest["README.md"].decode()
    header = validate_card(card, files=list(latest))
    assert [c["config_name"] for c in header["configs"]] == ["uniform", "collision"]
    assert read_manifest(splits["uniform/id-eval-v2"])["split_hash"] in card
    assert read_manifest(splits["uniform/ood-eval"])["split_hash"] in card  # kept split stays in the card
    assert read_manifest(splits["uniform/id-eval"])["split_hash"] not in card

    # The same data through `datasets` directly, at a pinned revision and at main.
    got = client(hub, home, """
        import datasets, numpy as np
        out = {}
        for name, split, rev in [("uniform", "id_eval", rev1), ("uniform", "train_30k", rev1),
                                 ("collision", "id_eval", None), ("uniform", "id_eval", None)]:
            ds = datasets.load_dataset(repo, name=name, split=split, revision=rev).with_format("numpy")
            row = ds[0]
            out[f"{name}/{split}/{rev}"] = {
                "ids": list(ds["sample_id"]),
                "video": None if row["video"] is None else np.asarray(row["video"]).tolist(),
                "positions": np.asarray(row["positions"]).tolist(),
            }
        result = out
    """, repo=REPO, rev1=rev1)
    assert "error" not in got, got
    for key, folder in [(f"uniform/id_eval/{rev1}", splits["uniform/id-eval"]),
                        (f"uniform/train_30k/{rev1}", splits["uniform/train-30k"]),
                        ("collision/id_eval/None", splits["collision/id-eval"]),
                        ("uniform/id_eval/None", splits["uniform/id-eval-v2"])]:
        reader = SplitReader(folder)
        rows = list(reader.rows())
        assert got[key]["ids"] == [r["sample_id"] for r in rows], key
        assert np.array_equal(np.asarray(got[key]["positions"], dtype=np.float32), rows[0]["positions"])
        if "video" in rows[0]:
            assert np.array_equal(np.asarray(got[key]["video"], dtype=np.uint8), reader.video(rows[0])), key
        else:
            assert got[key]["video"] is None  # training splits store states only

    # Offline, from the cache filled above.
    got = load(hub, home, "uniform", "id-eval", revision=rev1, offline=True)
    assert "path" in got, got
    assert files_of(Path(got["path"])) == files_of(splits["uniform/id-eval"])
    got = load(hub, home, "uniform", "ood-eval", revision=rev3, offline=True)  # never fetched at rev3
    assert got.get("error") == "HubError" and "not in the local cache" in got["message"], got


def test_load_from_local_folders(splits, tmp_path):
    from phybench.data.download import load_split
    from phybench.data.hub import HubError

    folder = splits["uniform/id-eval"]
    assert load_split("uniform", "id-eval", folder) == folder
    layout = tmp_path / "clone" / "uniform" / "id-eval"
    shutil.copytree(folder, layout)
    assert load_split("uniform", "id-eval", tmp_path / "clone") == layout
    with pytest.raises(HubError, match="not uniform/ood-eval"):
        load_split("uniform", "ood-eval", folder)
    with pytest.raises(HubError, match="split hash expected 0{64} \\(pinned\\)"):
        load_split("uniform", "id-eval", folder, split_hash="0" * 64)
    expected = read_manifest(folder)["split_hash"]
    assert load_split("uniform", "id-eval", folder, split_hash=expected) == folder
    shard = layout / read_manifest(layout)["shards"][0]["file"]
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 1
    shard.write_bytes(bytes(data))
    with pytest.raises(HubError, match="does not verify: split hash expected"):
        load_split("uniform", "id-eval", tmp_path / "clone")


# ------------------------------------------------------------------ faults
@pytest.mark.slow
def test_unknown_repo_revision_and_split(hub, home, splits):
    got = load(hub, home, "uniform", "id-eval", source="nobody/missing")
    assert got["error"] == "HubError" and "'nobody/missing' was not found" in got["message"], got
    publish(hub, home, "collision", [splits["collision/id-eval"]], repo="phybench/faults")
    got = load(hub, home, "collision", "id-eval", source="phybench/faults", revision="f" * 40)
    assert got["error"] == "HubError", got
    got = load(hub, home, "collision", "id-eval", source="phybench/faults", revision="no-such-branch")
    assert got["error"] == "HubError" and "has no revision 'no-such-branch'" in got["message"], got
    got = load(hub, home, "collision", "ood-eval", source="phybench/faults")
    assert got["error"] == "HubError" and "has no split collision/ood-eval" in got["message"], got
    assert "it has: collision/id-eval" in got["message"]


@pytest.mark.slow
def test_publish_needs_a_write_token(hub, home, splits):
    before = dict(hub.state.repos)
    got = publish(hub, home, "collision", [splits["collision/id-eval"]], repo="phybench/notoken", token=None)
    assert got["error"] == "HubError" and "needs a Hugging Face token" in got["message"], got
    got = publish(hub, home, "collision", [splits["collision/id-eval"]], repo="phybench/readonly", token=READ)
    assert got["error"] == "HubError" and "refused the token" in got["message"], got
    assert hub.state.repos.keys() == before.keys()


@pytest.mark.slow
def test_card_missing_fields_is_refused_before_upload(hub, home, splits, tmp_path):
    requests = len(hub.state.requests)
    broken = shutil.copytree(CARD_DIR, tmp_path / "cards")
    meta = (broken / "card_meta.yaml").read_text()
    (broken / "card_meta.yaml").write_text(meta.replace("license: cc-by-4.0\n", ""))
    template = (broken / "dataset_card.md.jinja").read_text()
    (broken / "dataset_card.md.jinja").write_text(template.replace("## Limitations", "## Caveats"))
    got = publish(hub, home, "collision", [splits["collision/id-eval"]], repo="phybench/badcard",
                  card_dir=str(broken))
    assert got["error"] == "DatasetCardError", got
    assert "missing required field(s): license" in got["message"]
    assert "missing section(s): ## Limitations" in got["message"]
    # it may have created the repo and looked at it, but nothing was uploaded or committed
    assert not any("/commit/" in path or "preupload" in path or "lfs" in path
                   for _, path, _ in hub.state.requests[requests:])
    assert len(hub.revisions("phybench/badcard")) == 1  # the repo's initial commit only


@pytest.mark.slow
def test_split_that_does_not_verify_is_refused(hub, home, splits, tmp_path):
    bad = shutil.copytree(splits["collision/id-eval"], tmp_path / "bad")
    shard = bad / read_manifest(bad)["shards"][0]["file"]
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 1
    shard.write_bytes(bytes(data))
    requests = len(hub.state.requests)
    got = publish(hub, home, "collision", [bad], repo="phybench/unverified")
    assert got["error"] == "HubError" and "does not verify, refusing to publish" in got["message"], got
    assert "nothing was uploaded" in got["message"]
    assert hub.state.requests[requests:] == []  # refused before any request
    got = publish(hub, home, "uniform", [splits["collision/id-eval"]], repo="phybench/unverified")
    assert got["error"] == "HubError" and "holds task 'collision', not 'uniform'" in got["message"], got


@pytest.mark.slow
def test_download_corrupted_in_transit(hub, home, splits):
    repo = "phybench/corrupt"
    rev = publish(hub, home, "uniform", [splits["uniform/id-eval"]], repo=repo)["revision"]
    expected = read_manifest(splits["uniform/id-eval"])["split_hash"]
    hub.state.corrupt = ["uniform/id-eval/data/*"]
    try:
        got = load(hub, home, "uniform", "id-eval", source=repo, revision=rev)
    finally:
        hub.state.corrupt = []
    assert got["error"] == "HubError", got
    message = got["message"]
    assert f"at revision {rev}" in message and f"split hash expected {expected}" in message
    shard = read_manifest(splits["uniform/id-eval"])["shards"][0]
    assert f"{shard['file']}: sha256 expected {shard['sha256']}, found " in message
    found = message.split(f"{shard['file']}: sha256 expected {shard['sha256']}, found ")[1][:64]
    assert len(found) == 64 and found != shard["sha256"]
    assert "removed from the cache" in message
    # The bad copy was dropped from the cache: the next load fetches it afresh and verifies.
    got = load(hub, home, "uniform", "id-eval", source=repo, revision=rev)
    assert "path" in got, got
    assert files_of(Path(got["path"])) == files_of(splits["uniform/id-eval"])
    # A verified split is not decoded again on the next load, unless a file changed since.
    cached = (Path(got["path"]) / shard["file"]).resolve()
    data = bytearray(cached.read_bytes())
    data[-100] ^= 1
    cached.write_bytes(bytes(data))
    got = load(hub, home, "uniform", "id-eval", source=repo, revision=rev)
    assert got.get("error") == "HubError" and "does not verify" in got["message"], got


@pytest.mark.slow
def test_upload_interrupted_half_way(hub, home, splits):
    repo = "phybench/interrupted"
    rev = publish(hub, home, "uniform", [splits["uniform/id-eval"]], repo=repo)["revision"]
    hub.state.drop_commit = True
    try:
        got = publish(hub, home, "uniform", [splits["uniform/ood-eval"]], repo=repo)
    finally:
        hub.state.drop_commit = False
    assert got["error"] == "HubError", got
    assert "interrupted" in got["message"] and f"no revision was created (main is still {rev})" in got["message"]
    assert hub.revisions(repo)[-1] == rev  # main still points at the complete revision
    assert "uniform/ood-eval/manifest.json" not in hub.files(repo)
    # Running it again completes it.
    again = publish(hub, home, "uniform", [splits["uniform/ood-eval"]], repo=repo)
    assert "revision" in again and hub.revisions(repo)[-2:] == [rev, again["revision"]]


def test_verified_cache_follows_the_one_cache_rule(tmp_path, monkeypatch):
    from phybench.data import download as hub_module

    monkeypatch.setenv("PHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    assert hub_module._verified_dir() == tmp_path / "cache" / "verified"
    monkeypatch.delenv("PHYBENCH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub_module._verified_dir() == tmp_path / "xdg" / "phybench" / "verified"


# ------------------------------------------------------------------ card
def test_card_renders_every_required_part(splits):
    manifests = [read_manifest(splits[k]) for k in ("uniform/id-eval", "uniform/train-30k", "collision/id-eval")]
    card = render_card(manifests, "org/name")
    header = validate_card(card)
    assert header["license"] == "cc-by-4.0" and header["task_categories"] == ["image-to-video"]
    assert header["size_categories"] == ["n<1K"]
    uniform = header["configs"][0]
    assert uniform == {"config_name": "uniform", "data_files": [
        {"split": "id_eval", "path": "uniform/id-eval/data/*.parquet"},
        {"split": "train_30k", "path": "uniform/train-30k/data/*.parquet"}]}
    import datasets

    feats = datasets.Features._from_yaml_list(header["dataset_info"][1]["features"])
    assert list(feats) == ["sample_id", "index", "level", "radius_1", "radius_2", "velocity_1", "velocity_2",
                           "contact_time", "frames_in_view", "positions", "velocities", "radii", "colours", "video"]
    for m in manifests:
        assert m["split_hash"] in card and m["command"] in card
    assert "@article{kang2024how" in card and "y points **up**" in card
    with pytest.raises(DatasetCardError, match="no file matches 'uniform/id-eval/data/\\*.parquet'"):
        validate_card(card, files=["README.md"])
    with pytest.raises(DatasetCardError, match="no YAML header"):
        validate_card("# just prose\n")
