"""`validate`: a submission checked against one split, every problem reported at once."""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

from ..data.split import SplitReader, read_manifest
from ..problems import Problem
from ..problems import error as _error
from .archive import Limits, SubmissionError
from .format import META, VIDEO_DIR, Submission, hash_lines
from ..data.documents import Manifest


@dataclass
class ValidationReport:
    """Everything wrong with a submission, checked against one split."""

    submission: str
    split_dir: str
    task: str
    split: str
    expected_ids: int = 0
    found_ids: int = 0
    checked_videos: int = 0
    problems: list[Problem] = field(default_factory=list)
    submission_hash: str | None = None  # set when the submission is valid
    # filled while the videos are read (check_header / record_video / finish)
    digests: dict[str, str] = field(default_factory=dict, repr=False)
    pending: list[str] = field(default_factory=list, repr=False)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> dict[str, int]:
        """Problems per code."""
        return dict(Counter(p.code for p in self.problems))

    def to_dict(self) -> dict[str, Any]:
        return {
            "submission": self.submission, "split_dir": self.split_dir, "task": self.task, "split": self.split,
            "ok": self.ok, "errors": len(self.errors), "warnings": len(self.warnings),
            "expected_ids": self.expected_ids, "found_ids": self.found_ids, "checked_videos": self.checked_videos,
            "counts": self.counts(), "submission_hash": self.submission_hash,
            "problems": [p.to_dict() for p in self.problems],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def to_text(self, max_per_code: int = 10) -> str:
        """For people: errors first, at most `max_per_code` lines per code, then a count."""
        lines = [f"{self.submission}: {self.task}/{self.split} submission, checked against {self.split_dir}",
                 f"  {self.found_ids} of {self.expected_ids} sample ids present, {self.checked_videos} videos read"]
        for severity in ("error", "warning"):
            shown: Counter[str] = Counter()
            group = [p for p in self.problems if p.severity == severity]
            totals = Counter(p.code for p in group)
            for p in group:
                shown[p.code] += 1
                if shown[p.code] <= max_per_code:
                    lines.append(f"  {severity:<7} {p.code:<22} {p.message}")
                elif shown[p.code] == totals[p.code]:
                    lines.append(f"  {severity:<7} {p.code:<22} ... and {totals[p.code] - max_per_code} more")
        if self.ok:
            lines.append(f"OK ({len(self.warnings)} warning(s))  submission hash {self.submission_hash}")
        else:
            lines.append(f"FAILED: {len(self.errors)} error(s), {len(self.warnings)} warning(s)")
        return "\n".join(lines)


# the manifest keys submission.json repeats (a Literal: mypy checks each against `Manifest`)
_Compared = Literal["task", "split", "split_hash", "frames", "resolution", "condition_frames"]


def _check_meta(meta: Any, manifest: Manifest, split_dir: str) -> list[Problem]:
    """submission.json against the split's manifest: one problem per field that differs."""
    if not isinstance(meta, dict):
        return []
    problems = []
    command = manifest.get("command") or f"phybench generate {manifest['task']} --split {manifest['split']}"

    def differs(key: _Compared, kind: type) -> bool:
        value = meta.get(key)
        return isinstance(value, kind) and not isinstance(value, bool) and value != manifest[key]

    for key in ("task", "split"):
        if differs(key, str):
            problems.append(_error(f"{key}_mismatch", f"{META}: {key} {meta[key]!r}, but {split_dir} holds "
                                   f"{key} {manifest[key]!r}; validate against the right split, or fix the field",
                                   entry=META))
    if differs("split_hash", str):
        problems.append(_error(
            "split_hash_mismatch",
            f"{META}: split_hash {meta['split_hash']}, but the split in {split_dir} has {manifest['split_hash']} "
            f"(its manifest.json): the videos answer another version or subset of the split. Get the split again "
            f"(`{command}`, or re-download it), run the model on it, and copy split_hash from its manifest.json",
            entry=META))
    if differs("frames", int):
        problems.append(_error("frames_mismatch", f"{META}: frames {meta['frames']}, the split has "
                               f"{manifest['frames']} per video, the {manifest['condition_frames']} condition frames "
                               "included", entry=META))
    if differs("resolution", int):
        problems.append(_error("resolution_mismatch", f"{META}: resolution {meta['resolution']}, the split is "
                               f"{manifest['resolution']} px", entry=META))
    if differs("condition_frames", int):
        problems.append(_error("condition_frames_mismatch", f"{META}: condition_frames {meta['condition_frames']}, "
                               f"the split conditions on the first {manifest['condition_frames']} frames; "
                               "condition the model on exactly those", entry=META))
    fps = meta.get("fps")
    want = 1.0 / float(manifest["frame_interval"])
    if isinstance(fps, (int, float)) and not isinstance(fps, bool) and abs(fps - want) > 1e-6 * want:
        problems.append(_error("fps_mismatch", f"{META}: fps {fps:g}, but the split's frames are "
                               f"{manifest['frame_interval']:g} s apart ({want:g} fps); the videos must keep "
                               "that time step", entry=META))
    return problems


def _near_ids(extra: list[str], expected: Iterable[str]) -> dict[str, str]:
    """extra id -> the expected id it was probably meant to be (separators mangled)."""
    plain = {re.sub(r"[^0-9a-z]", "", e.lower()): e for e in expected}
    return {x: plain[k] for x in extra if (k := re.sub(r"[^0-9a-z]", "", x.lower())) in plain}


def check_header(sub: Submission, manifest: Manifest, split_dir: str | os.PathLike[str],
                 expected_ids: list[str]) -> ValidationReport:
    """Everything but the videos' contents: the problems found opening `sub`, submission.json, missing and
    extra ids.  The videos are checked where they are decoded anyway (`record_video`, then
    `finish`): `validate` reads them here, `score` while it scores them, so each is decoded once.
    `report.pending` lists the ids whose videos are still to be checked, in storage order."""
    report = ValidationReport(str(sub.path), str(split_dir), manifest["task"], manifest["split"],
                              expected_ids=len(expected_ids))
    report.problems.extend(sub.problems)
    report.problems.extend(_check_meta(sub._meta, manifest, str(split_dir)))
    expected, found = set(expected_ids), set(sub.ids)
    report.found_ids = len(expected & found)
    missing = [i for i in expected_ids if i not in found]
    for n, sample_id in enumerate(missing):
        where = f" (expected at {VIDEO_DIR}/{sample_id}.npy, .npz, .mp4, or a folder of PNG frames)" if n == 0 else ""
        report.problems.append(_error("missing_id", f"{sample_id}: no video{where}", sample_id))
    extra = sorted(found - expected)
    near = _near_ids(extra, expected_ids)
    for sample_id in extra:
        hint = (f"did you mean {near[sample_id]!r}? Ids contain '/', so that video belongs at "
                f"{VIDEO_DIR}/{near[sample_id]}.npy" if sample_id in near else "remove it")
        report.problems.append(_error(
            "extra_id", f"{sample_id}: not a sample of {manifest['task']}/{manifest['split']} "
            f"({sub._videos[sample_id][0].where}); {hint}", sample_id, sub._videos[sample_id][0].where))
    report.digests = {META: sub._meta_digest} if sub._meta_digest else {}
    report.pending = sub.storage_order([i for i in sub.ids if i in expected and len(sub._videos[i]) == 1])
    return report


def record_video(report: ValidationReport, problems: list[Problem], files: dict[str, str]) -> bool:
    """Add one decoded video's problems and file digests (`Submission.inspect`); True if it has no error."""
    report.problems.extend(problems)
    report.digests.update(files)
    report.checked_videos += 1
    return not any(p.severity == "error" for p in problems)


def finish(report: ValidationReport) -> ValidationReport:
    """Set the submission hash once every video is recorded and nothing is wrong."""
    if report.ok and report.checked_videos == len(report.pending):
        report.submission_hash = hash_lines(report.digests)
    return report


def validate(submission_path: str | os.PathLike[str], split_dir: str | os.PathLike[str], *,
             limits: Limits | None = None, board: bool = False) -> ValidationReport:
    """Check a submission against a split and report every problem at once.

    Reads the submission (folder or archive) without writing anything anywhere.
    A split folder that cannot be read raises SplitError: that is the caller's mistake,
    not the submission's.  `board`: also for the leaderboard (`validate --board`, the sync):
    every video's condition frames must be the split's own, within the codec tolerance
    (`condition_frames_differ`, an error there; `score` only warns, for local use)."""
    manifest = read_manifest(split_dir)
    expected_ids = [row["sample_id"] for row in SplitReader(split_dir).rows(columns=["sample_id"])]
    truth = _ConditionFrames(split_dir, manifest) if board else None
    try:
        sub = Submission(submission_path, manifest=manifest, limits=limits)
    except SubmissionError as exc:
        return unopenable(submission_path, split_dir, manifest, expected_ids, exc)
    with sub:
        report = check_header(sub, manifest, split_dir, expected_ids)
        for sample_id in report.pending:
            video, problems, files = sub.inspect(sample_id)
            if truth is not None and video is not None and not any(p.severity == "error" for p in problems):
                problems = [*problems, *truth.check(sample_id, video)]
            record_video(report, problems, files)
    return finish(report)


def unopenable(submission_path: str | os.PathLike[str], split_dir: str | os.PathLike[str], manifest: Manifest,
               expected_ids: list[str], exc: SubmissionError) -> ValidationReport:
    """The report of a submission that cannot be opened at all."""
    report = ValidationReport(str(submission_path), str(split_dir), manifest["task"], manifest["split"],
                              expected_ids=len(expected_ids))
    report.problems.extend(exc.problems)
    return report


class _ConditionFrames:
    """The split's condition frames, to hold a submission's against (`validate(board=True)`).

    The abnormality judge reads the generated frames after the condition frames; a video whose
    condition frames are black, mirrored or another sample's games it (issue 36), so the board
    takes only videos that start with the split's own frames (mean absolute difference at most
    `CONDITION_TOLERANCE` grey levels: lossy mp4 of the split's frames measures about 0.2)."""

    def __init__(self, split_dir: str | os.PathLike[str], manifest: Manifest) -> None:
        self.reader = SplitReader(split_dir)
        self.rows = {row["sample_id"]: row for row in self.reader.rows()}
        self.cf = int(manifest["condition_frames"])

    def check(self, sample_id: str, video: Any) -> list[Problem]:
        import numpy as np

        from .format import CONDITION_TOLERANCE

        gt = self.reader.video(self.rows[sample_id])[: self.cf]
        own = video[: self.cf]
        if own.shape != gt.shape:
            return []  # the shape problems are reported by `inspect`
        diff = float(np.abs(own.astype(np.int16) - gt.astype(np.int16)).mean())
        if diff <= CONDITION_TOLERANCE:
            return []
        return [_error("condition_frames_differ",
                       f"{sample_id}: its first {self.cf} frames differ from the split's condition frames (mean "
                       f"absolute difference {diff:.1f} grey levels, at most {CONDITION_TOLERANCE} for the board): "
                       "every video must start with the split's own condition frames (blank, mirrored, shifted or "
                       "another sample's frames are refused for the board)", sample_id)]
