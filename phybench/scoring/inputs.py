"""What a per-video metric sees: `Sample`, one row of a split with its two videos.

Its own module, below the judge and the learned-law fits (which read a `Sample`) and below the
metric registry (whose rows compute from one): the metric rows, the judge and `law` all name
this type, and none of them has to import another to do so.  The heavy readers (the parser's
attributes, the paper's velocity, SSIM / PSNR) are imported on first use of their property.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable
from ..data.documents import Manifest, SplitRow


@dataclass
class Sample:
    """What a per-video metric sees: one row of the split, the generated and the
    ground-truth video (``(T, H, W, 3)`` uint8; the ground truth is None when the split
    stores none), the manifest, and the physics errors of the parsed video (computed once,
    on first use)."""

    row: SplitRow
    video: Any
    gt_video: Any
    manifest: Manifest
    errors_fn: Callable[[], Any] = field(repr=False, default=lambda: None)
    parsed: Any = field(repr=False, default=None)  # `phybench.scoring.physics.parse.Parsed`; None when not parsed
    # `video` as the parser and the judge read it (`phybench.scoring.physics.photometry.normalise`: the
    # model's light and bad pixels undone); None: not computed yet
    normalised: Any = field(repr=False, default=None)

    @property
    def condition_frames(self) -> int:
        return int(self.manifest["condition_frames"])

    @cached_property
    def errors(self) -> Any:
        """`phybench.scoring.physics.velocity.VideoErrors` of this video."""
        return self.errors_fn()

    @cached_property
    def attributes(self) -> dict[str, float]:
        """`phybench.scoring.physics.attributes.attribute_errors` of this video (NaN when not parsed)."""
        from .physics.attributes import attribute_errors

        if self.parsed is None:
            return {"trajectory_error": float("nan"), "size_error": float("nan"), "colour_kept": float("nan")}
        from ..data.split import row_scene
        from ..world.scene import Disc

        bodies = row_scene(self.row).bodies
        return attribute_errors(self.parsed, self.row["positions"], self.row["radii"],
                                world_size=float(self.manifest["world_size"]), condition_frames=self.condition_frames,
                                discs=all(isinstance(b.shape, Disc) for b in bodies))

    @cached_property
    def paper(self) -> Any:
        """`phybench.scoring.physics.paper_velocity.PaperErrors` of this video, by its family's `paper_measure`."""
        from ..data.split import row_scene
        from ..tasks import family_of, get_task
        from .physics.paper_velocity import PaperErrors, paper_errors

        measure = family_of(get_task(self.manifest["task"])).paper_measure
        if measure is None:
            return PaperErrors()
        colours = [(int(b.colour[0]), int(b.colour[1]), int(b.colour[2])) for b in row_scene(self.row).bodies]
        return paper_errors(self.video, self.row["positions"], self.row["radii"], colours,
                            world_size=float(self.manifest["world_size"]),
                            frame_interval=float(self.manifest["frame_interval"]), measure=measure)

    @cached_property
    def frames(self) -> dict[str, float]:
        """{"ssim", "psnr"} over the generated frames (`image_metrics.score_frames`)."""
        from .perceptual.image_metrics import score_frames

        return score_frames(self.gt_video, self.video, self.condition_frames)
