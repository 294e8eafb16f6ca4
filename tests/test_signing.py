"""Signed verification records (issue 36, item 1): only the maintainers' key makes a record the
public board (`build --require-verified`) accepts.

Hostile cases from the issue: a forged copy-last file (velocity error 1e-6) with a hand-written
record quoting its own sha256s; records edited to say `recomputed: []`, to skip `lpips,fvd`,
dated "yesterday", version 99.0, another split hash, a key given twice.  Key rotation (a retired
key's records still verify, a new active key signs) and revocation (its records are refused
until re-signed) are tested on keyrings of the tests' own.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from phybench.io import file_sha256
from phybench.leaderboard import LeaderboardError, build
from phybench.leaderboard.verify.signing import (REPO_KEYS, SigningError, canonical_bytes, check_signer, load_keyring,
                                          load_signer, new_key_pair, set_status)
from phybench.leaderboard.verify.records import Verification, write_record
from phybench.scoring.run.layout import record_path

ROOT = Path(__file__).resolve().parents[1]
LITE = ROOT / "leaderboard" / "results" / "fundamental" / "lite"
NAME = "uniform-id-eval-copy-last"


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict:
    """Two key pairs: `old` and `new`, each with its own keyring folder entry."""
    root = tmp_path_factory.mktemp("signing")
    out = {"root": root}
    for name in ("old", "new", "attacker"):
        kid = new_key_pair(root / f"{name}.pem", root / f"ring-{name}", note=name)
        out[name] = load_signer(root / f"{name}.pem")
        assert out[name].key_id == kid
    return out


def ring(tmp: Path, keys: dict, **status: str) -> Path:
    """A keyring folder with the `old` and `new` public keys, statuses as given (default active)."""
    folder = tmp / "ring"
    folder.mkdir(exist_ok=True)
    for name in ("old", "new"):
        kid = keys[name].key_id
        shutil.copy(keys["root"] / f"ring-{name}" / f"{kid}.json", folder / f"{kid}.json")
        if name in status:
            set_status(folder, kid, status[name])
    return folder


def results_folder(tmp: Path, forge: bool = False) -> Path:
    folder = tmp / "results"
    folder.mkdir()
    for suffix in (".json", ".samples.json"):
        shutil.copy(LITE / f"{NAME}{suffix}", folder / f"{NAME}{suffix}")
    if forge:  # copy-last claims a perfect velocity error
        path = folder / f"{NAME}.json"
        doc = json.loads(path.read_text())
        for m in ("velocity_error", "velocity_error_penalised", "velocity_error_ranked"):
            for group in (doc["summary"]["overall"], *doc["summary"]["levels"].values()):
                group[m]["mean"] = 1e-6
                group[m]["ci95"] = [1e-6, 1e-6]
        path.write_text(json.dumps(doc, indent=2, sort_keys=True))
    return folder


def record_for(path: Path) -> Verification:
    doc = json.loads(path.read_text())
    return Verification(results_sha256=file_sha256(path), submission_hash=doc["provenance"]["submission_hash"],
                        split_hash=doc["provenance"]["split_hash"], phybench_version=doc["provenance"]["phybench_version"],
                        verified_by="phybench maintainers", date="2026-11-25", recomputed=tuple(doc["metrics"]))


def codes(results: Path, out: Path, keyring_dirs) -> dict[str, str]:
    with pytest.raises(LeaderboardError) as err:
        build(results, out, require_verified=True, keys=keyring_dirs)
    assert not out.exists()
    return {r.file: r.code for r in err.value.refused}


def test_a_forged_file_with_a_hand_written_record_is_refused(tmp_path, keys):
    """The issue's case: it built with --require-verified and showed as "verified"."""
    results = results_folder(tmp_path, forge=True)
    write_record(results / f"{NAME}.json", record_for(results / f"{NAME}.json"), signer=False)  # its own sha256s
    assert codes(results, tmp_path / "site", [ring(tmp_path, keys)]) == {f"{NAME}.json": "verify-unsigned"}
    # signed, but by a key of the forger's own: not one of the board's
    write_record(results / f"{NAME}.json", record_for(results / f"{NAME}.json"), signer=keys["attacker"])
    assert codes(results, tmp_path / "site", [ring(tmp_path, keys)]) == {f"{NAME}.json": "verify-signature"}
    # and from the command line, with the repository's own keyring: exit 2, the code named
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PHYBENCH_BOARD_KEYS", None)
    proc = subprocess.run([sys.executable, "-m", "phybench.cli", "leaderboard", "build", str(results), "--out",
                           str(tmp_path / "site"), "--require-verified"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 2 and "[verify-signature]" in proc.stderr, proc.stderr
    assert not (tmp_path / "site").exists()


def _edit(field: str):
    def change(doc: dict) -> None:
        if field == "recomputed":
            doc["recomputed"] = []
        elif field == "skipped":
            doc["skipped"] = ["fvd", "lpips"]
        elif field == "date":
            doc["date"] = "2026-11-24"  # "yesterday": a well-formed date, not the signed one
        elif field == "version":
            doc["phybench_version"] = "99.0"
        elif field == "split":
            doc["split_hash"] = "0" * 64
        elif field == "by":
            doc["verified_by"] = "someone else"
        elif field == "extra":
            doc["extra"] = {"pull_request": 1}
    return change


@pytest.mark.parametrize("field", ["recomputed", "skipped", "date", "version", "split", "by", "extra"])
def test_an_edited_signed_record_is_refused(tmp_path, keys, field):
    results = results_folder(tmp_path)
    path = results / f"{NAME}.json"
    write_record(path, record_for(path), signer=keys["new"])
    folder = ring(tmp_path, keys)
    build(results, tmp_path / "ok", require_verified=True, keys=[folder])  # the signed record builds
    rec = record_path(path)
    doc = json.loads(rec.read_text())
    _edit(field)(doc)
    rec.write_text(json.dumps(doc, indent=2, sort_keys=True))
    code = codes(results, tmp_path / "site", [folder])[f"{NAME}.json"]
    # a field the results file states too is a mismatch before the signature is looked at
    assert code == ("verify-mismatch" if field in ("recomputed", "skipped", "version", "split") else "verify-signature")


def test_a_record_with_a_key_given_twice_or_a_bad_date_is_malformed(tmp_path, keys):
    results = results_folder(tmp_path)
    path = results / f"{NAME}.json"
    write_record(path, record_for(path), signer=keys["new"])
    rec = record_path(path)
    text = rec.read_text()
    rec.write_text(text.replace('"date": "2026-11-25"', '"date": "2026-11-25", "date": "2026-11-26"'))
    assert codes(results, tmp_path / "site", [ring(tmp_path, keys)]) == {f"{NAME}.json": "verify-malformed"}
    rec.write_text(text.replace('"date": "2026-11-25"', '"date": "yesterday"'))
    assert codes(results, tmp_path / "site", [ring(tmp_path, keys)]) == {f"{NAME}.json": "verify-malformed"}


def test_the_signature_covers_every_field_but_itself(keys):
    doc = {"b": 1, "a": [1, 2], "signature": {"x": 1}}
    assert canonical_bytes(doc) == b'phybench-verification-record\n{"a":[1,2],"b":1}'
    signed = keys["new"].sign({"a": 1})
    assert set(signed["signature"]) == {"algorithm", "key_id", "value"}
    assert keys["new"].sign({"a": 1}) == signed  # Ed25519 is deterministic: re-signing is byte-stable


def test_key_rotation_old_records_still_verify_new_ones_use_the_new_key(tmp_path, keys):
    """Rotation: the old key is marked retired, the new one active.  Records signed by either
    verify; the retired key may not sign any more (check_signer)."""
    results = tmp_path / "results"
    results.mkdir()
    for n in ("uniform-id-eval-copy-last", "uniform-ood-eval-copy-last"):
        for suffix in (".json", ".samples.json"):
            shutil.copy(LITE / f"{n}{suffix}", results / f"{n}{suffix}")
    write_record(results / "uniform-id-eval-copy-last.json", record_for(results / "uniform-id-eval-copy-last.json"),
                 signer=keys["old"])
    write_record(results / "uniform-ood-eval-copy-last.json", record_for(results / "uniform-ood-eval-copy-last.json"),
                 signer=keys["new"])
    folder = ring(tmp_path, keys, old="retired")
    report = build(results, tmp_path / "site", require_verified=True, keys=[folder])
    assert report.ok and len(report.accepted) == 2
    keyring = load_keyring([folder])
    check_signer(keys["new"], keyring)
    with pytest.raises(SigningError, match="retired"):
        check_signer(keys["old"], keyring)
    with pytest.raises(SigningError, match="not in the board's keyring"):
        check_signer(keys["attacker"], keyring)


def test_a_revoked_keys_records_are_refused_until_re_signed(tmp_path, keys):
    results = results_folder(tmp_path)
    path = results / f"{NAME}.json"
    write_record(path, record_for(path), signer=keys["old"])
    folder = ring(tmp_path, keys, old="revoked")
    assert codes(results, tmp_path / "site", [folder]) == {f"{NAME}.json": "verify-key-revoked"}
    # the maintainers re-sign with the active key (leaderboard/scripts/sign_records.py does this)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PHYBENCH_BOARD_KEYS": str(folder)}
    script = ROOT / "leaderboard" / "scripts" / "sign_records.py"
    proc = subprocess.run([sys.executable, str(script), "--key", str(keys["root"] / "old.pem"), str(results)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2 and "revoked" in proc.stderr  # a revoked key signs nothing
    proc = subprocess.run([sys.executable, str(script), "--key", str(keys["root"] / "new.pem"), str(results)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert build(results, tmp_path / "site", require_verified=True, keys=[folder]).ok
    # a key listed twice, once revoked: revoked wins
    other = tmp_path / "ring2"
    shutil.copytree(folder, other)
    set_status(other, keys["new"].key_id, "revoked")
    assert load_keyring([folder, other]).keys[keys["new"].key_id].status == "revoked"


def test_the_shipped_records_are_signed_by_the_repository_key(tmp_path):
    """Every shipped record verifies by leaderboard/keys/ alone (no test key in the keyring)."""
    keyring = load_keyring([REPO_KEYS])
    assert len(keyring) >= 1 and all(k.status in ("active", "retired") for k in keyring.keys.values())
    env = {k: v for k, v in os.environ.items() if k not in ("PHYBENCH_BOARD_KEYS", "PHYBENCH_SIGNING_KEY")}
    proc = subprocess.run([sys.executable, str(ROOT / "leaderboard" / "scripts" / "sign_records.py"), "--check",
                           str(ROOT / "leaderboard" / "results")], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 0 and "every signature verifies" in proc.stdout, proc.stdout + proc.stderr
    assert not list(REPO_KEYS.glob("*.pem")) and "PRIVATE" not in "".join(p.read_text() for p in REPO_KEYS.iterdir())
