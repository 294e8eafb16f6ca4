"""Seeds behind a verified row: a learned model's row needs 3 seeds, a reference baseline's none.

A single sampling seed can be lucky (Physics-IQ asks for several before a state-of-the-art claim),
so the board's verified mark on a learned model's row needs at least `MIN_SEEDS` runs with
distinct seeds (`seed_count`: distinct ``model.seeds`` lists among the row's runs on a split, each
run counted once, so one card that lists [0, 1, 2] is still one run).  Until then the row is shown
with its runs and the state "needs 3 seeds (has 1)" instead of the mark (`site.table`).

The reference baselines (`phybench.reference`) are deterministic, one seed says all, and they are
exempt; but a submitter must not be able to claim that by writing ``sampler: baseline:copy-last``
into a card.  The rule (`is_reference_run`): a run is a reference run only when its card names
``baseline:<name>`` AND the videos-only hash that the verifier itself computed from the submission
(the signed record's ``extra.videos_hash``, `phybench.submission.identity.videos_hash`) is one the
maintainers pinned for that very baseline: `PINNED` below, or a pin file named by
``$PHYBENCH_REFERENCE_PINS``.  A pin is made by re-making the baseline's submission for the split
with this phybench (`remake_pin`, ``python -m phybench.leaderboard.verify.seeds --remake NAME
--data SPLIT``), never read from a submitter's file, so a claim of ``baseline:copy-last`` with other
videos has an unpinned hash and needs its 3 seeds like any learned model.  Why a pinned list and
not a re-make inside every build: the build must stay cheap and need no split data, and the shipped
records (signed, not to be re-written) already carry the videos hash the pins are checked against.
"""
from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ... import jsonsafe

MIN_SEEDS = 3
PINS_ENV = "PHYBENCH_REFERENCE_PINS"  # pin files (os.pathsep-separated) added to PINNED: a board's own splits
PINS_KIND = "phybench-reference-pins"
MAX_PIN_BYTES = 1 << 20
BASELINE_PREFIX = "baseline:"

# videos-only hash -> the reference baseline whose submission has those videos (re-made by the
# maintainers from phybench.reference on the shipped lite and combinatorial splits; the comment
# names the shipped row whose signed record carries the same hash).
PINNED: dict[str, str] = {
    "3fed711a74b834493ad0100b0a3daddb4b762d1247a60285e2b9b14bb7b52bfc": "copy-last",  # combinatorial/in-template-eval-copy-last
    "f679f262911b473262a19c9189167d5a82d94a402570531fe8ab1c75442fa72f": "ground-truth",  # combinatorial/in-template-eval-ground-truth
    "5d707a01a39bddc0fa54fedb9fa8b8346ea0e51843952a319512230b7566d74a": "nearest-neighbour",  # combinatorial/in-template-eval-nearest-neighbour-60t
    "d33291076c844c70640f54dc42929abb0688fcbe46306df758b41ca3792d22c5": "nearest-neighbour",  # combinatorial/in-template-eval-nearest-neighbour-6t
    "6999ea4fc11fa92a45b265d10491c89247a5aae93c5bad2bb0d25015d0d85c95": "physics-oracle",  # combinatorial/in-template-eval-physics-oracle
    "69e593fd609ba35ae6fc55800034f17f3595b066d236be9c63a1ea1d9dc6529a": "copy-last",  # combinatorial/out-of-template-eval-copy-last
    "17064c05ff7dcd8e82fdad59bf2336a2d59d71c385e88b0527c3c75ef98cd7f4": "ground-truth",  # combinatorial/out-of-template-eval-ground-truth
    "6d284769c7e8c810558fee0736cfe529e1d2d0e59a62dece6b3dd0c010e5d13d": "nearest-neighbour",  # combinatorial/out-of-template-eval-nearest-neighbour-60t
    "89390cf86559215bb287d4c611b453c35a0dc73f6202feeab0d01f2d43ac43f6": "nearest-neighbour",  # combinatorial/out-of-template-eval-nearest-neighbour-6t
    "c6f77906d4725bc3fd457cc804f5ca1b1bd298b1e74c7cee7bd890bb2fb03c26": "physics-oracle",  # combinatorial/out-of-template-eval-physics-oracle
    "ae35844b69ae336ab85c481c02f4db94cea1de73c0220ae9dafcf20a884700ea": "copy-last",  # fundamental/lite/collision-id-eval-copy-last
    "54aa7b9cfd233f2645feafc0023444d4e39491b70ccf55a2858e764b5b3eb408": "ground-truth",  # fundamental/lite/collision-id-eval-ground-truth
    "d7f82425802ec87bc11c9581e01a7abb57f3f407a70d72624bd55cdfd2f4678f": "linear-extrapolation",  # fundamental/lite/collision-id-eval-linear-extrapolation
    "be0d5c0abde5d26c8681df99b9144cc04b5c0b36af20cbb5e616c514062d4f45": "nearest-neighbour",  # fundamental/lite/collision-id-eval-nearest-neighbour
    "62d46fb2ae65fdb831e464076ac04a16c41d5b2cae46262b2c29394384fe10eb": "physics-oracle",  # fundamental/lite/collision-id-eval-physics-oracle
    "18837f1fac0c230f99c9d2537eedbed025cc816acf773e4c12e42cc7ee0f4f9c": "copy-last",  # fundamental/lite/collision-ood-eval-copy-last
    "f0245845c96a3e87c11b4e2cc7ce1562d06f73c043512d5aa7e9758ee9b10da8": "ground-truth",  # fundamental/lite/collision-ood-eval-ground-truth
    "62a0b562acca681d60e818de1ce05d24129009ac377f1bc765f9d665a1416fb2": "linear-extrapolation",  # fundamental/lite/collision-ood-eval-linear-extrapolation
    "ff045b55b86b6035337901ad52dadaa29e544fa756311c9611983c610750e730": "nearest-neighbour",  # fundamental/lite/collision-ood-eval-nearest-neighbour
    "c7f761e5b2dda9b955c0aae6da2b9cd03db02782c27e797b4422eef639c43fc0": "physics-oracle",  # fundamental/lite/collision-ood-eval-physics-oracle
    "c4e93dfa2aae5bd767d24fa9d2ee13bed7a5bc636bb3aa470194cd59a61cc4c8": "copy-last",  # fundamental/lite/parabola-id-eval-copy-last
    "1c3d5b7afc0d99d70567da5ae7d6b804c54582fa4699e6147baeaf29bbd62182": "ground-truth",  # fundamental/lite/parabola-id-eval-ground-truth
    "9e1caed69b48f019c147e8de965e4a278151e258eac2a5f7ab71c9fa749a32a7": "linear-extrapolation",  # fundamental/lite/parabola-id-eval-linear-extrapolation
    "9b5e20819f3cf2e81672051df45051b22001663acf6f45f591fd2012c78834bb": "nearest-neighbour",  # fundamental/lite/parabola-id-eval-nearest-neighbour
    "efb8df20e0db5f3d7528d29461b1f555a0f131714c63566c57300d197066a0c2": "physics-oracle",  # fundamental/lite/parabola-id-eval-physics-oracle
    "1fe825ea2b11cb28d03a14570d2cd97dfd01d3adb674ccd148bdcb53154f75c4": "copy-last",  # fundamental/lite/parabola-ood-eval-copy-last
    "4b904160b0c8b26c78172ae1dc86274f4ed752a2a00e65724da8d2fe594a5a35": "ground-truth",  # fundamental/lite/parabola-ood-eval-ground-truth
    "daa84835704b5007e4af6544661a90c92989952fcf5889404e2c107380463125": "linear-extrapolation",  # fundamental/lite/parabola-ood-eval-linear-extrapolation
    "9be9e5a30a7b3968ae27e05dcd5dc350d01408dadb9e2945886359af39b396f0": "nearest-neighbour",  # fundamental/lite/parabola-ood-eval-nearest-neighbour
    "6d2be684e19cfbe3b8e99b1cb7a24f923f4f88508f9aaf3289312365e6cec94a": "physics-oracle",  # fundamental/lite/parabola-ood-eval-physics-oracle
    "4e28163654c9ed9766a2828a951c59e6d06f37e7543a432bc23c578c3250679a": "copy-last",  # fundamental/lite/uniform-id-eval-copy-last
    "b7c6e614f92e0c225f82cf5a3f8ca927756b24791fbc5bda99200090bac4d7d0": "ground-truth",  # fundamental/lite/uniform-id-eval-ground-truth
    "7eb9e9386d49aad6cb9a12a4519d84ff278a4af5f2d81150e2972cdabdbdd5ac": "linear-extrapolation",  # fundamental/lite/uniform-id-eval-linear-extrapolation
    "b8327a1bd0c0cdbd51eb721fd838a9c40d2131e68fd2f6f6d085730c2b0028d7": "nearest-neighbour",  # fundamental/lite/uniform-id-eval-nearest-neighbour
    "4eb87a9c067d20ec2f9eff56672b8f5e3d01d8b80af86e11d0405ce805c1818a": "physics-oracle",  # fundamental/lite/uniform-id-eval-physics-oracle
    "b9268eb5149dc302887dd36f5e3ab4707c0c7cc40537fa0b6e0479e87c52f304": "copy-last",  # fundamental/lite/uniform-ood-eval-copy-last
    "ace7ff8bc43529f57bd0041344ee4533e23011d62bf7c752f076e471818ce0f3": "ground-truth",  # fundamental/lite/uniform-ood-eval-ground-truth
    "3236e6bb78dd1e66d07859928fc0d760bc9f3a8e2e1ae4863b36389be13ac71e": "linear-extrapolation",  # fundamental/lite/uniform-ood-eval-linear-extrapolation
    "dcb8d73cb7d582b7476a58b8bf0f0cb9e7ffb688b51342208357c7e6cd45a5cb": "nearest-neighbour",  # fundamental/lite/uniform-ood-eval-nearest-neighbour
    "105f0bda4ea703868dde63a3ed79f845842e68f2cbe4ce60c088be8d48b2ce01": "physics-oracle",  # fundamental/lite/uniform-ood-eval-physics-oracle
}


def pins(extra: Iterable[str | os.PathLike[str]] | None = None) -> dict[str, str]:
    """`PINNED` and every pin file in `extra` (default: ``$PHYBENCH_REFERENCE_PINS``); a pin file is
    ``{"kind": "phybench-reference-pins", "pins": {videos_hash: baseline}}``, read bounded.  An
    unreadable pin file raises `jsonsafe.JSONError` / `ValueError`: a maintainer's mistake, loud."""
    if extra is None:
        extra = [p for p in os.environ.get(PINS_ENV, "").split(os.pathsep) if p]
    out = dict(PINNED)
    for path in extra:
        doc = jsonsafe.read(path, max_bytes=MAX_PIN_BYTES)
        table = doc.get("pins") if isinstance(doc, dict) and doc.get("kind") == PINS_KIND else None
        if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
            raise ValueError(f"{path}: not a pin file ({{'kind': {PINS_KIND!r}, 'pins': {{videos_hash: baseline}}}})")
        out.update(table)
    return out


def sampler_baseline(model: Mapping[str, Any]) -> str | None:
    """The reference baseline a results file's ``model.sampler.name`` claims (``baseline:<name>``), or None."""
    sampler = model.get("sampler") if isinstance(model, Mapping) else None
    name = sampler.get("name") if isinstance(sampler, Mapping) else None
    if isinstance(name, str) and name.startswith(BASELINE_PREFIX):
        return name[len(BASELINE_PREFIX):]
    return None


def is_reference_run(model: Mapping[str, Any], verification: Any, table: Mapping[str, str]) -> bool:
    """A verified run of a reference baseline: its card's claim AND its record's videos hash pinned
    for that baseline (`table`: `pins()`).  An unverified file is never one (no hash the board made)."""
    claimed = sampler_baseline(model)
    extra = getattr(verification, "extra", None)
    vh = extra.get("videos_hash") if isinstance(extra, Mapping) else None
    return claimed is not None and isinstance(vh, str) and table.get(vh) == claimed


def run_seeds(model: Mapping[str, Any]) -> tuple[int, ...]:
    """A run's seeds as its card lists them (sorted, unique); () when it lists none."""
    seeds = model.get("seeds") if isinstance(model, Mapping) else None
    if not isinstance(seeds, list):
        return ()
    return tuple(sorted({s for s in seeds if isinstance(s, int) and not isinstance(s, bool) and s >= 0}))


def seed_count(models: Iterable[Mapping[str, Any]]) -> int:
    """Distinct seeds among one row's runs on one split: each run counts once, and two runs with the
    same seeds count once (a card naming none counts as seed 0, `writer`'s default)."""
    return len({run_seeds(m) or (0,) for m in models})


def seeds_state(count: int, reference: bool) -> dict[str, Any]:
    """The row's seed state: {"seeds": n, "needs": MIN_SEEDS, "enough": bool, "reference": bool}."""
    return {"seeds": count, "needs": MIN_SEEDS, "enough": reference or count >= MIN_SEEDS, "reference": reference}


def seeds_words(state: Mapping[str, Any]) -> str:
    """"needs 3 seeds (has 1)": the plain state a learned row shows instead of the verified mark."""
    return f"needs {state['needs']} seeds (has {state['seeds']})"


def remake_pin(name: str, split_dir: str | os.PathLike[str], work: str | os.PathLike[str],
               train_dir: str | os.PathLike[str] | None = None) -> str:
    """The videos hash of baseline `name`'s submission for `split_dir`, re-made here from
    `phybench.reference` into `work` (a new folder): the one way a pin is made."""
    from ...data.split import SplitReader
    from ...reference import run_baseline
    from ...submission.identity import videos_hash

    sub = run_baseline(name, split_dir, Path(work) / "submission", train_dir, progress=False)
    return videos_hash(sub, manifest=SplitReader(split_dir).manifest)


def main(argv: list[str] | None = None) -> int:
    """``python -m phybench.leaderboard.verify.seeds --remake NAME --data SPLIT --work DIR``: print a pin line."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--remake", required=True, help="reference baseline name, e.g. copy-last")
    ap.add_argument("--data", required=True, help="the evaluation split folder")
    ap.add_argument("--train-data", help="a training split (nearest-neighbour)")
    ap.add_argument("--work", required=True, help="a new folder for the re-made submission")
    args = ap.parse_args(argv)
    print(f'"{remake_pin(args.remake, args.data, args.work, args.train_data)}": "{args.remake}"')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
