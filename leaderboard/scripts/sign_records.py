"""Sign (or re-sign) verification records with the maintainers' key; nothing is re-scored.

    python leaderboard/scripts/sign_records.py --key /path/to/board-signing-key leaderboard/results
    python leaderboard/scripts/sign_records.py --check leaderboard/results      # only check every signature

Every ``*.verified.json`` under the folders (or named) must still match its results file (its
bytes, sidecar, submission, split, version, metric list: `verification.read_record`), or the
script stops before writing anything.  Each record is then written again with every field as
it was plus its ``signature`` (`phybench.leaderboard.verify.signing`), in the same layout (sorted keys,
two-space indent).  The key must be an active key of the board's keyring (``leaderboard/keys/``
or ``$PHYBENCH_BOARD_KEYS``).  Used when the board's records were first signed (issue 36), after a
key rotation, and after a revocation (re-sign with the new active key).  Run twice, the same
bytes: Ed25519 signatures are deterministic.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from phybench.io import atomic_write_bytes
from phybench.leaderboard.common.files import scan
from phybench.leaderboard.verify.signing import SigningError, check_signer, default_signer, load_keyring
from phybench.leaderboard.verify.records import VerificationError, load_record_json, parse_record, read_record
from phybench.scoring.run.layout import is_record, results_of


def records(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += [f for f in scan(p)[0] if is_record(f)] if p.is_dir() else [p]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="records, or folders searched recursively")
    parser.add_argument("--key", help="the private key's PEM file (default: $PHYBENCH_SIGNING_KEY)")
    parser.add_argument("--check", action="store_true", help="check every signature; write nothing")
    args = parser.parse_args(argv)
    keyring = load_keyring()
    found = records(args.paths)
    problems = []
    for rec in found:
        results = results_of(rec)
        try:
            read_record(results, keyring if args.check else None)
        except VerificationError as exc:
            problems.append(f"{rec}: [{exc.code}] {exc}")
    if problems or args.check:
        print("\n".join(problems) or f"{len(found)} record(s): every signature verifies")
        return 1 if problems else 0
    try:
        signer = default_signer(args.key)
        if signer is None:
            print("give --key or set $PHYBENCH_SIGNING_KEY", file=sys.stderr)
            return 2
        check_signer(signer, keyring)
    except SigningError as exc:
        print(f"[{exc.code}] {exc}", file=sys.stderr)
        return 2
    for rec in found:
        doc = load_record_json(rec.read_bytes())
        parse_record(doc)  # checked above, against its results file
        signed = signer.sign(doc)
        keyring.check(signed)
        atomic_write_bytes(rec, (json.dumps(signed, indent=2, sort_keys=True, ensure_ascii=True) + "\n").encode("ascii"))
    print(f"{len(found)} record(s) signed with key {signer.key_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
