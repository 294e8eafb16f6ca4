"""The Hub: the intake (`submit`, the author's side; `intake`, the maintainer's `sync`: its runner,
with `admission` (the policy: what is admitted), `client` (every Hub call), `journal`, `lock` and
`viewers`), the board's dataset repository (`board`:
publish and build-from-Hub; `pull`; `base`), the Hub's result formats (`eval_results`, `eee`)
and what the sync writes there (`text`).  The top of `phybench.leaderboard`: it builds boards
and viewers, nothing below imports it.
"""
