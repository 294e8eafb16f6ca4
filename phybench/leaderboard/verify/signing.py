"""Signed verification records: only the maintainers can make a record the public board accepts.

A verification record (`verification.py`) pins a results file's bytes, its sidecar's, the
submission and split it was re-scored from, the phybench version and what was recomputed or
skipped.  Anyone can write such a file; so the board's records are signed (Ed25519, through
`cryptography`) over their canonical bytes (`canonical_bytes`: every field of the record but
the signature, sorted keys, no spaces, ASCII, after a fixed domain line), and
``leaderboard build --require-verified`` checks every signature against the board's public
keys.

The keyring is a folder of public keys, one JSON file each, ``<key_id>.json`` (the
repository's is ``leaderboard/keys/``)::

    {"kind": "phybench-board-key", "key_id": "3f2a...", "algorithm": "ed25519",
     "public_key": "<base64 of the 32 raw bytes>", "status": "active", "created": "2026-11-26"}

``key_id`` is the first 16 hex digits of the SHA-256 of the raw public key (checked).
``status``: ``active`` (signs new records), ``retired`` (rotated out: its records still
verify, it signs no new one), ``revoked`` (compromised: every record it signed is refused,
``verify-key-revoked``, until re-signed with an active key).  The private key never enters
the repository: it lives in the maintainers' environment (the workflow's secret), and
`leaderboard verify` / `sync` sign with it when ``--signing-key`` or ``$PHYBENCH_SIGNING_KEY``
names its PEM file.

Which keyring: the folders in ``$PHYBENCH_BOARD_KEYS`` (``os.pathsep``-separated) when set,
else the repository's ``leaderboard/keys/`` beside this package.
"""
from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import jsonsafe

KEY_KIND = "phybench-board-key"
ALGORITHM = "ed25519"
STATUSES = ("active", "retired", "revoked")
DOMAIN = b"phybench-verification-record\n"  # signed bytes start with it: a signature means only this
KEYS_ENV = "PHYBENCH_BOARD_KEYS"
SIGNING_KEY_ENV = "PHYBENCH_SIGNING_KEY"
# The board's public keyring: `leaderboard/keys/` of the checkout, its one copy; a wheel ships that
# folder as the package data `phybench/leaderboard/keys/` (pyproject.toml's package-dir), which a
# checkout does not have.  Before issue 51 a wheel install had no keyring and refused every record.
_WHEEL_KEYS = Path(__file__).resolve().parents[1] / "keys"
REPO_KEYS = _WHEEL_KEYS if _WHEEL_KEYS.is_dir() else Path(__file__).resolve().parents[3] / "leaderboard" / "keys"
MAX_KEY_FILE = 4096

# Codes (docs/results.md, "Verification codes").
UNSIGNED = "verify-unsigned"  # --require-verified: a record without a signature
BAD_SIGNATURE = "verify-signature"  # a signature that does not verify, or by a key not in the keyring
REVOKED = "verify-key-revoked"  # signed by a key the keyring marks revoked
KEY_ERROR = "verify-key"  # a keyring file or signing key that cannot be used


class SigningError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def key_id(raw_public: bytes) -> str:
    return hashlib.sha256(raw_public).hexdigest()[:16]


def canonical_bytes(record: Mapping[str, Any]) -> bytes:
    """The bytes a record's signature is over: every field but ``signature``, canonical JSON."""
    body = {k: v for k, v in record.items() if k != "signature"}
    return DOMAIN + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                               allow_nan=False).encode("ascii")


@dataclass(frozen=True)
class BoardKey:
    key_id: str
    public_key: Any  # cryptography Ed25519PublicKey
    status: str
    source: str  # the file it came from


class Keyring:
    """The board's public keys, by key id."""

    def __init__(self, keys: Iterable[BoardKey] = ()) -> None:
        self.keys: dict[str, BoardKey] = {}
        for k in keys:
            if k.key_id in self.keys and self.keys[k.key_id].status != k.status:
                # one key listed twice with two statuses: the stricter wins (revoked over the rest)
                if STATUSES.index(k.status) < STATUSES.index(self.keys[k.key_id].status):
                    continue
            self.keys[k.key_id] = k

    def __len__(self) -> int:
        return len(self.keys)

    def check(self, record: Mapping[str, Any]) -> str:
        """The key id that signed `record`, or `SigningError` (unsigned, unknown key, revoked, forged)."""
        from cryptography.exceptions import InvalidSignature

        sig = record.get("signature")
        if sig is None:
            raise SigningError(UNSIGNED, "the record is not signed; the public board takes only records signed by "
                                         "the maintainers' key (`leaderboard verify --signing-key`)")
        if (not isinstance(sig, dict) or set(sig) != {"algorithm", "key_id", "value"} or sig["algorithm"] != ALGORITHM
                or not isinstance(sig["key_id"], str) or not isinstance(sig["value"], str)):
            raise SigningError(BAD_SIGNATURE, "the record's signature must be {algorithm: ed25519, key_id, value}")
        key = self.keys.get(sig["key_id"])
        if key is None:
            known = ", ".join(sorted(self.keys)) or "none"
            raise SigningError(BAD_SIGNATURE, f"signed by key {sig['key_id'][:16]!r}, which is not one of the board's "
                                              f"keys ({known})")
        if key.status == "revoked":
            raise SigningError(REVOKED, f"signed by key {key.key_id}, which is revoked ({key.source}); the file must "
                                        "be verified and signed again with an active key")
        try:
            value = base64.b64decode(sig["value"], validate=True)
            key.public_key.verify(value, canonical_bytes(record))
        except (InvalidSignature, ValueError):
            raise SigningError(BAD_SIGNATURE, f"the signature by key {key.key_id} does not verify: the record was "
                                              "edited after it was signed, or forged") from None
        return key.key_id


def _load_key_file(path: Path) -> BoardKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from ..common.files import UnsafeFile, read_regular

    try:
        doc = jsonsafe.loads(read_regular(path, MAX_KEY_FILE), path.name)
        raw = base64.b64decode(doc["public_key"], validate=True)
        public = Ed25519PublicKey.from_public_bytes(raw)
    except (UnsafeFile, OSError, ValueError, KeyError, TypeError) as exc:
        raise SigningError(KEY_ERROR, f"{path}: not a board key file ({type(exc).__name__}: {exc})") from None
    if not isinstance(doc, dict) or doc.get("kind") != KEY_KIND or doc.get("algorithm") != ALGORITHM:
        raise SigningError(KEY_ERROR, f"{path}: kind must be {KEY_KIND!r} and algorithm {ALGORITHM!r}")
    if doc.get("key_id") != key_id(raw) or path.stem != key_id(raw):
        raise SigningError(KEY_ERROR, f"{path}: key_id and file name must be {key_id(raw)} (the public key's)")
    if doc.get("status") not in STATUSES:
        raise SigningError(KEY_ERROR, f"{path}: status must be one of {', '.join(STATUSES)}")
    return BoardKey(key_id(raw), public, doc["status"], str(path))


def key_dirs(dirs: Iterable[str | os.PathLike[str]] | None = None) -> list[Path]:
    if dirs is not None:
        return [Path(d) for d in dirs]
    env = os.environ.get(KEYS_ENV)
    if env:
        return [Path(d) for d in env.split(os.pathsep) if d]
    return [REPO_KEYS]


def load_keyring(dirs: Iterable[str | os.PathLike[str]] | None = None) -> Keyring:
    """Every ``*.json`` key file in the keyring folders (`key_dirs`); a bad file is a `SigningError`."""
    keys = []
    for d in key_dirs(dirs):
        if d.is_dir():
            keys += [_load_key_file(p) for p in sorted(d.glob("*.json"))]
    return Keyring(keys)


# ---------------------------------------------------------------- the private side
@dataclass(frozen=True)
class Signer:
    private_key: Any  # cryptography Ed25519PrivateKey
    key_id: str

    def sign(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """The record with its ``signature`` (over `canonical_bytes`)."""
        value = base64.b64encode(self.private_key.sign(canonical_bytes(record))).decode("ascii")
        return {**{k: v for k, v in record.items() if k != "signature"},
                "signature": {"algorithm": ALGORITHM, "key_id": self.key_id, "value": value}}


def load_signer(path: str | os.PathLike[str]) -> Signer:
    """The maintainers' private key from its PEM file (PKCS#8, unencrypted)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_private_key

    try:
        key = load_pem_private_key(Path(path).read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise SigningError(KEY_ERROR, f"signing key {path}: cannot be read ({type(exc).__name__})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(KEY_ERROR, f"signing key {path}: not an Ed25519 private key")
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return Signer(key, key_id(raw))


def default_signer(path: str | os.PathLike[str] | None = None) -> Signer | None:
    """The signer named by `path`, else by ``$PHYBENCH_SIGNING_KEY``; None when neither is set."""
    path = path or os.environ.get(SIGNING_KEY_ENV)
    return load_signer(path) if path else None


def check_signer(signer: Signer, keyring: Keyring) -> None:
    """A signer must be an active key of the keyring: a record it signs would be refused otherwise."""
    key = keyring.keys.get(signer.key_id)
    if key is None or key.status != "active":
        state = "not in the board's keyring" if key is None else f"{key.status} in the board's keyring"
        raise SigningError(KEY_ERROR, f"the signing key {signer.key_id} is {state}: the board would refuse what it "
                                      "signs (add its public key to leaderboard/keys/ as active)")


def new_key_pair(private_out: str | os.PathLike[str], keys_dir: str | os.PathLike[str], note: str = "") -> str:
    """Make a key pair: the private key (PEM, mode 0600) at `private_out`, the public key file
    ``<key_id>.json`` (active) in `keys_dir`.  Returns the key id."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (Encoding, NoEncryption, PrivateFormat,
                                                              PublicFormat)

    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    private_out = Path(private_out)
    if private_out.exists():
        raise SigningError(KEY_ERROR, f"{private_out} exists; not overwritten")
    fd = os.open(private_out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    kid = key_id(raw)
    doc = {"kind": KEY_KIND, "key_id": kid, "algorithm": ALGORITHM,
           "public_key": base64.b64encode(raw).decode("ascii"), "status": "active",
           "created": _dt.datetime.now(_dt.timezone.utc).date().isoformat(), **({"note": note} if note else {})}
    Path(keys_dir).mkdir(parents=True, exist_ok=True)
    (Path(keys_dir) / f"{kid}.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return kid


def set_status(keys_dir: str | os.PathLike[str], kid: str, status: str) -> None:
    """Rotate (``retired``) or revoke (``revoked``) a key in a keyring folder."""
    if status not in STATUSES:
        raise SigningError(KEY_ERROR, f"status must be one of {', '.join(STATUSES)}")
    path = Path(keys_dir) / f"{kid}.json"
    _load_key_file(path)
    doc = jsonsafe.read(path, max_bytes=MAX_KEY_FILE)
    doc["status"] = status
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
