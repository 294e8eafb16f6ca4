"""Verification: signed records that a results file was re-scored from its submission.

`signing` (the keyring, Ed25519), `records` (the verification record), `checks` (impossible
numbers every results file must pass), `claims` (what a verification is about), `shards`
(sharded passes of the batched metrics), `rescore` (`leaderboard verify`) and `reproduce` (`leaderboard
reproduce`).  Above `common/`; under the site, which reads these records as it loads a board.
"""
