"""The resolution floor (`studies.floor`): the truth through a model's pixels."""
import numpy as np

from phybench_baselines.studies.floor import through_pixels


def _disc_video(T=6, R=64):
    yy, xx = np.mgrid[:R, :R]
    video = np.full((T, R, R, 3), 255, np.uint8)
    for t in range(T):
        video[t][(yy - 30) ** 2 + (xx - 10 - 4 * t) ** 2 <= 36] = (220, 30, 30)
    return video


def test_floor_keeps_condition_frames_and_blurs_the_rest():
    video = _disc_video()
    out = through_pixels(video, 24, condition_frames=3)
    assert out.shape == video.shape and out.dtype == np.uint8
    assert np.array_equal(out[:3], video[:3])  # given, as the sampler keeps them
    diff = np.abs(out[3:].astype(int) - video[3:].astype(int))
    assert diff.max() > 20  # the rim moved: the floor is not zero
    # the disc is still where it was: its red-weighted centroid moves by under a pixel
    for t in range(3, 6):
        w_in = (255 - video[t, ..., 1]).astype(float)
        w_out = (255 - out[t, ..., 1]).astype(float)
        cx_in = (w_in * np.arange(64)).sum() / w_in.sum()
        cx_out = (w_out * np.arange(64)).sum() / w_out.sum()
        assert abs(cx_in - cx_out) < 1.0


def test_floor_at_full_resolution_is_the_video():
    video = _disc_video()
    assert np.array_equal(through_pixels(video, 64, condition_frames=3), video)
