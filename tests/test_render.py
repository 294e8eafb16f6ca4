"""Tests for `phybench.world.render`: exact coverage, pixel mapping, colours, determinism."""
from __future__ import annotations

import ast
import hashlib
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phybench.world import render as render_module
from phybench.world.render import (
    convex_parts,
    disc_coverage,
    polygon_coverage,
    render,
    shape_coverage,
    signed_edges,
)
from phybench.world.scene import (
    BLACK,
    BLUE,
    PHYRE_BLACK,
    PHYRE_GREY,
    PHYRE_RED,
    RED,
    WORLD_SIZE,
    Body,
    Disc,
    Jar,
    Polygon,
    Rect,
    Ring,
    Scene,
)

L = WORLD_SIZE
FAST = settings(max_examples=40, deadline=None)


# ------------------------------------------------------------------ helpers


def one_body(shape, colour=RED, x=5.0, y=5.0, angle=0.0, frames=1) -> Scene:
    poses = np.tile(np.array([[[x, y, angle]]]), (frames, 1, 1))  # (T, 1, 3)
    return Scene((Body(shape, colour),), poses)


def coverage_from_red(video: np.ndarray) -> np.ndarray:
    """Per-pixel coverage of a red body on white, read from the green channel."""
    return (255.0 - video[..., 1].astype(np.float64)) / 255.0


def coverage_from_black(video: np.ndarray) -> np.ndarray:
    return (255.0 - video[..., 0].astype(np.float64)) / 255.0


def rounding_tolerance(coverage: np.ndarray) -> float:
    """Bound on the summed uint8 rounding error: half a level per pixel whose exact
    coverage is strictly between 0 and 1 (whether or not it rounds to 0 or 255)."""
    partial = np.count_nonzero((coverage > 1e-12) & (coverage < 1 - 1e-12))
    return partial * 0.5 / 255.0 + 1e-9


def centroid(coverage: np.ndarray) -> tuple[float, float]:
    """Coverage-weighted (column, row) centroid, in 0-based pixel-centre indices."""
    rows, cols = np.indices(coverage.shape)
    total = coverage.sum()
    return float((coverage * cols).sum() / total), float((coverage * rows).sum() / total)


def brute_force_disc(cu, cv, radius, row, col, n=256) -> float:
    """Fraction of n x n midpoint samples of pixel (row, col) inside the disc
    (a sample exactly on the circle counts one half)."""
    s = (np.arange(n) + 0.5) / n
    u = col + s[None, :] - cu
    v = row + s[:, None] - cv
    d = u * u + v * v - radius * radius
    return float(np.mean((d < 0) + 0.5 * (d == 0)))


def brute_force_polygon(vertices, row, col, n=256) -> float:
    """Fraction of n x n jittered samples of a pixel inside a convex polygon (any
    orientation).  Jittered, not a midpoint lattice: an edge parallel to a lattice
    direction (axis or diagonal) would bias a lattice by up to ~1 / (2 n)."""
    jitter = np.random.default_rng(0).random((2, n, n))
    u = col + (np.arange(n)[None, :] + jitter[0]) / n
    v = row + (np.arange(n)[:, None] + jitter[1]) / n
    signs = []
    k = len(vertices)
    for i in range(k):
        (ax, ay), (bx, by) = vertices[i], vertices[(i + 1) % k]
        signs.append((bx - ax) * (v - ay) - (by - ay) * (u - ax))
    signs = np.array(signs)
    inside = np.all(signs >= 0, axis=0) | np.all(signs <= 0, axis=0)
    return float(np.mean(inside))


def float_coverage(shape, x, y, angle, resolution) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    drawn = shape_coverage(shape, np.array([[x, y, angle]]), resolution, L)
    assert drawn is not None
    return drawn


# ---------------------------------------------------------------- basics


@pytest.mark.parametrize("resolution", [32, 64, 128, 256])
def test_shape_dtype_and_white_background(resolution):
    scene = one_body(Disc(1.0), frames=3)
    video = render(scene, resolution)
    assert video.shape == (3, resolution, resolution, 3)
    assert video.dtype == np.uint8
    assert np.all(video[:, 0, 0] == 255) and np.all(video[:, -1, -1] == 255)
    empty = Scene((), np.zeros((2, 0, 3)))
    blank = render(empty, resolution)
    assert blank.shape == (2, resolution, resolution, 3) and np.all(blank == 255)


def test_zero_frames():
    assert render(Scene((Body(Disc(1.0), RED),), np.zeros((0, 1, 3))), 32).shape == (0, 32, 32, 3)


@pytest.mark.parametrize("shape", [Rect(2.0, 1.0), Disc(1.0), Jar(2.0, 1.5, 0.2)])
def test_far_away_frames_draw_nothing(shape):
    """A body far outside in some frames (same rows, huge column offsets) leaves those
    frames white and does not disturb the frame where it is visible."""
    poses = np.array([[[5.0, 5.0, 0.3]], [[1e9, 5.0, 0.3]], [[-1e9, 5.0, 0.3]]])
    video = render(Scene((Body(shape, BLACK),), poses), 64)
    assert np.all(video[1:] == 255)
    np.testing.assert_array_equal(video[0], render(Scene((Body(shape, BLACK),), poses[:1]), 64)[0])


def test_body_outside_image_is_skipped():
    scene = one_body(Disc(0.5), x=-3.0, y=20.0, frames=2)
    assert np.all(render(scene, 64) == 255)


# ------------------------------------------------------------- disc exactness


@FAST
@given(
    x=st.floats(2.0, 8.0),
    y=st.floats(2.0, 8.0),
    radius=st.floats(0.3, 1.8),
    resolution=st.sampled_from([32, 64, 128, 256]),
)
def test_disc_total_coverage_is_its_area(x, y, radius, resolution):
    s = L / resolution
    exact = math.pi * (radius / s) ** 2
    coverage, _, _ = float_coverage(Disc(radius), x, y, 0.0, resolution)
    assert coverage.sum() == pytest.approx(exact, abs=1e-9 * max(exact, 1.0))
    video = render(one_body(Disc(radius), RED, x, y), resolution)
    assert abs(coverage_from_red(video).sum() - exact) <= rounding_tolerance(coverage)


@FAST
@given(x=st.floats(2.0, 8.0), y=st.floats(2.0, 8.0), radius=st.floats(0.7, 1.5))
def test_disc_centroid_is_its_centre(x, y, radius):
    """The mapping: a disc at world (x, y) sits at column x/s - 0.5, row (L-y)/s - 0.5."""
    resolution = 128
    s = L / resolution
    coverage = coverage_from_red(render(one_body(Disc(radius), RED, x, y), resolution)[0])
    col, row = centroid(coverage)
    assert abs(col - (x / s - 0.5)) < 0.01
    assert abs(row - ((L - y) / s - 0.5)) < 0.01


@pytest.mark.parametrize("resolution", [32, 64, 128, 256])
def test_pixel_mapping_is_exact(resolution):
    """A disc centred on pixel (i, j)'s centre or corner has a symmetric coverage, so
    its centroid is exactly there: pixel (i, j) is x in [j s, (j+1) s],
    y in [L - (i+1) s, L - i s]."""
    s = L / resolution
    i, j = resolution // 3, resolution // 4
    for du, dv in [(0.5, 0.5), (0.0, 0.0), (0.5, 0.0)]:
        x, y = (j + du) * s, L - (i + dv) * s
        coverage, row0, col0 = float_coverage(Disc(1.3), x, y, 0.0, resolution)
        col, row = centroid(coverage[0])
        assert col0[0] + col == pytest.approx(j + du - 0.5, abs=1e-9)
        assert row0[0] + row == pytest.approx(i + dv - 0.5, abs=1e-9)


@pytest.mark.parametrize("resolution", [32, 64, 128, 256])
def test_float_centroid_bias_is_small(resolution):
    """At arbitrary sub-pixel offsets the pixel-centre centroid of exact coverage is
    biased only by the in-pixel moments of boundary pixels: < 0.01 px for r >= 3 px."""
    s = L / resolution
    x, y = 3.2071, 6.6180
    coverage, row0, col0 = float_coverage(Disc(1.0), x, y, 0.0, resolution)
    col, row = centroid(coverage[0])
    assert abs(col0[0] + col - (x / s - 0.5)) < 0.01
    assert abs(row0[0] + row - ((L - y) / s - 0.5)) < 0.01


@settings(max_examples=25, deadline=None)
@given(
    cu=st.floats(10.0, 11.0),
    cv=st.floats(10.0, 11.0),
    radius=st.floats(0.3, 9.0),
    angle=st.floats(0.0, 2 * math.pi),
)
def test_single_pixel_matches_brute_force(cu, cv, radius, angle):
    """Pick the pixel the circle crosses at `angle`: a partially covered one."""
    col = int(math.floor(cu + radius * math.cos(angle)))
    row = int(math.floor(cv + radius * math.sin(angle)))
    exact = disc_coverage(
        np.array([cu]), np.array([cv]), radius, np.array([row]), np.array([col]), 1, 1
    )[0, 0, 0]
    assert exact == pytest.approx(brute_force_disc(cu, cv, radius, row, col), abs=1e-3)


def test_tiny_disc_inside_one_pixel():
    cov = disc_coverage(np.array([3.5]), np.array([2.5]), 0.2, np.array([2]), np.array([3]), 1, 1)
    assert cov[0, 0, 0] == pytest.approx(math.pi * 0.04, abs=1e-12)


@pytest.mark.parametrize("x", [0.0, 0.31, -0.4, 9.8, 10.5])
def test_disc_partly_outside(x):
    """Visible area = disc minus the circular segment beyond the image edge."""
    resolution, radius, y = 64, 1.0, 5.0
    s = L / resolution
    d = x if x < 5 else L - x  # signed distance from the centre to the nearest edge
    segment = radius**2 * math.acos(d / radius) - d * math.sqrt(radius**2 - d**2)
    visible = (math.pi * radius**2 - segment) / s**2
    coverage, _, _ = float_coverage(Disc(radius), x, y, 0.0, resolution)
    assert coverage.sum() == pytest.approx(visible, abs=1e-9)
    video = render(one_body(Disc(radius), RED, x, y), resolution)
    assert abs(coverage_from_red(video).sum() - visible) <= rounding_tolerance(coverage)


def test_disc_larger_than_image():
    video = render(one_body(Disc(8.0), BLUE, 5.0, 5.0), 32)
    assert np.all(video == np.array(BLUE, dtype=np.uint8))
    video = render(one_body(Disc(6.0), RED, 5.0, 5.0), 32)  # corners stay partly white
    assert np.all(video[0, 16, :] == np.array(RED, dtype=np.uint8))
    assert np.all(video[0, 0, 0] == 255)


def test_ring_area_and_hole():
    resolution, outer, inner = 128, 1.5, 0.9
    s = L / resolution
    exact = math.pi * (outer**2 - inner**2) / s**2
    coverage, _, _ = float_coverage(Ring(outer, inner), 4.93, 5.07, 0.0, resolution)
    assert coverage.sum() == pytest.approx(exact, abs=1e-9)
    video = render(one_body(Ring(outer, inner), RED, 4.93, 5.07), resolution)
    assert abs(coverage_from_red(video).sum() - exact) <= rounding_tolerance(coverage)
    centre = video[0, int((L - 5.07) / s), int(4.93 / s)]
    assert tuple(centre) == (255, 255, 255)
    solid, _, _ = float_coverage(Ring(outer, 0.0), 4.93, 5.07, 0.0, resolution)
    disc, _, _ = float_coverage(Disc(outer), 4.93, 5.07, 0.0, resolution)
    np.testing.assert_array_equal(solid, disc)


# ------------------------------------------------------------ polygons


@FAST
@given(
    width=st.floats(0.2, 4.0),
    height=st.floats(0.2, 3.0),
    angle=st.floats(-math.pi, math.pi),
    x=st.floats(3.0, 7.0),
    y=st.floats(3.0, 7.0),
)
def test_rotated_rect_area(width, height, angle, x, y):
    resolution = 64
    s = L / resolution
    exact = width * height / s**2
    coverage, _, _ = float_coverage(Rect(width, height), x, y, angle, resolution)
    assert coverage.sum() == pytest.approx(exact, abs=1e-6)
    assert coverage.min() >= 0.0 and coverage.max() <= 1.0
    video = render(one_body(Rect(width, height), BLACK, x, y, angle), resolution)
    assert abs(coverage_from_black(video).sum() - exact) <= rounding_tolerance(coverage)


def test_axis_aligned_rect_pixels():
    """A 2 x 1 rect with edges on pixel boundaries: every pixel 0 or 1, no bleeding."""
    resolution = 10  # 1 world unit per pixel
    video = render(one_body(Rect(2.0, 1.0), BLACK, 5.0, 5.5), resolution)
    dark = video[0, ..., 0] == 0
    assert dark.sum() == 2
    assert np.all(video[0][~dark] == 255)
    assert dark[4, 4] and dark[4, 5]


def test_half_pixel_edge():
    """An edge through pixel centres covers exactly half: rint(127.5) = 128 (half-even)."""
    video = render(one_body(Rect(2.0, 1.0), BLACK, 5.0, 5.0), 10)
    assert video[0, 4, 4, 0] == 128 and video[0, 5, 4, 0] == 128


@FAST
@given(
    points=st.lists(
        st.tuples(st.floats(-1.5, 1.5), st.floats(-1.5, 1.5)), min_size=3, max_size=8
    ),
    angle=st.floats(-math.pi, math.pi),
)
def test_polygon_area(points, angle):
    hull = convex_hull(points)
    area = abs(shoelace(hull))
    if len(hull) < 3 or area < 1e-3:
        return
    resolution = 64
    s = L / resolution
    coverage, _, _ = float_coverage(Polygon(tuple(hull)), 5.1, 4.9, angle, resolution)
    assert coverage.sum() == pytest.approx(area / s**2, abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    points=st.lists(st.tuples(st.floats(0.0, 4.0), st.floats(0.0, 4.0)), min_size=3, max_size=6),
    pick=st.integers(0, 10_000),
)
def test_polygon_pixel_matches_brute_force(points, pick):
    hull = convex_hull(points)
    if len(hull) < 3 or abs(shoelace(hull)) < 0.5:
        return
    vertices = np.array(hull)[None] + 10.0  # (1, n, 2), pixel (column, row)
    coverage = polygon_coverage(vertices, np.array([10]), np.array([10]), 4, 4)[0]
    row, col = divmod(pick % 16, 4)
    expected = brute_force_polygon([tuple(p) for p in vertices[0]], 10 + row, 10 + col)
    assert coverage[row, col] == pytest.approx(expected, abs=1e-3)


def test_jar_union_counted_once():
    jar = Jar(width=2.0, height=1.5, thickness=0.25)
    union = 2.0 * 0.25 + 2 * 0.25 * (1.5 - 0.25)
    resolution = 64
    s = L / resolution
    for angle in (0.0, 0.4, 2.0):
        coverage, _, _ = float_coverage(jar, 5.03, 4.97, angle, resolution)
        assert coverage.sum() == pytest.approx(union / s**2, abs=1e-6)
        assert coverage.max() <= 1.0
    signs = [sign for sign, _ in convex_parts(jar)]
    assert sorted(signs) == [-1, -1, 1, 1, 1]  # 3 rects minus 2 corner overlaps
    starts, ends, weights = signed_edges(jar)
    assert len(weights) == 12  # edges shared by a corner and its rects cancel


def test_jar_corner_not_darker_than_wall():
    """Grey jar: a pixel half covered by the floor-wall overlap looks like any half pixel.

    1 world unit per pixel; the jar spans x in [3, 7], y in [3.5, 6.5] with walls and
    floor 1 thick, so pixel (6, 3) (x in [3, 4], y in [3, 4]) is half covered by both
    the left wall and the floor.  Summing the parts would paint it fully grey.
    """
    jar = Jar(width=4.0, height=3.0, thickness=1.0)
    video = render(one_body(jar, PHYRE_GREY, 5.0, 5.0), 10)[0]
    grey = np.array(PHYRE_GREY, dtype=np.float64)
    half = np.rint(255.0 + (grey - 255.0) * 0.5).astype(np.uint8)
    corner, floor, wall_top = video[6, 3], video[6, 5], video[3, 3]
    assert np.array_equal(floor, half) and np.array_equal(wall_top, half)
    assert np.array_equal(corner, half)
    assert np.array_equal(video[5, 3], grey.astype(np.uint8))  # full wall pixel
    assert np.all(video[4, 4] == 255)  # inside the open top


def test_non_convex_polygon_coverage():
    """The scanline formula holds for any simple polygon: an L shape, both orientations."""
    ell = np.array([[0, 0], [3, 0], [3, 1], [1, 1], [1, 3], [0, 3]], dtype=float) + 0.37
    for vertices in (ell, ell[::-1]):
        coverage = polygon_coverage(vertices[None], np.array([0]), np.array([0]), 4, 4)[0]
        assert coverage.sum() == pytest.approx(5.0, abs=1e-12)
        assert coverage[1, 1] == pytest.approx(2 * 0.37 - 0.37**2, abs=1e-12)  # inner corner
        assert coverage[2, 2] == pytest.approx(0.0, abs=1e-12)


def test_degenerate_shapes_draw_nothing():
    for shape in (Rect(0.0, 1.0), Polygon(((0.0, 0.0), (1.0, 1.0))), Disc(0.0)):
        assert np.all(render(one_body(shape, BLACK), 32) == 255)


def test_invalid_input():
    with pytest.raises(ValueError):
        render(one_body(Disc(1.0)), 0)
    with pytest.raises(ValueError):
        render(one_body(Disc(1.0), x=float("nan")), 32)


# ---------------------------------------------------------- colours, order


@pytest.mark.parametrize("colour", [RED, BLUE, BLACK, PHYRE_GREY, PHYRE_BLACK, PHYRE_RED])
@pytest.mark.parametrize("shape", [Disc(1.0), Rect(2.0, 1.3), Ring(1.5, 0.3)])
def test_interior_colour_is_exact(colour, shape):
    x, y, angle = 5.01, 4.98, 0.3
    video = render(one_body(shape, colour, x, y, angle), 64)
    # the pixel holding body-frame point (0.7, 0): every point of it lies 0.48 to 0.92
    # units from the centre, inside all three shapes
    s = L / 64
    px, py = x + 0.7 * math.cos(angle), y + 0.7 * math.sin(angle)
    pixel = video[0, int((L - py) / s), int(px / s)]
    assert tuple(int(c) for c in pixel) == colour


def test_later_body_on_top():
    poses = np.array([[[5.0, 5.0, 0.0], [5.2, 5.0, 0.0]]])
    video = render(Scene((Body(Disc(1.0), RED), Body(Disc(1.0), BLUE)), poses), 64)
    assert tuple(video[0, 32, 33]) == BLUE
    video = render(Scene((Body(Disc(1.0), BLUE), Body(Disc(1.0), RED)), poses), 64)
    assert tuple(video[0, 32, 33]) == RED


def test_blend_on_top_of_another_colour():
    """A half-covered edge pixel mixes the two colours: rint(p + (c - p) * coverage)."""
    poses = np.array([[[5.0, 5.0, 0.0], [5.0, 5.0, 0.0]]])
    bodies = (Body(Rect(4.0, 4.0), BLUE), Body(Rect(2.0, 1.0), RED))
    video = render(Scene(bodies, poses), 10)
    assert tuple(video[0, 4, 4]) == (128, 0, 128)  # rint(127.5) = 128 (half to even)


@pytest.mark.parametrize("colour", [RED, PHYRE_GREY, PHYRE_RED])
def test_uniform_and_per_pixel_blends_agree(colour):
    """A disc over a non-uniform patch gives the same bytes where the patch was white."""
    disc = Body(Disc(1.0), colour)
    speck = Body(Rect(0.1, 0.1), PHYRE_GREY)  # inside the disc's box, outside the disc
    poses = np.array([[[5.0, 5.0, 0.0], [4.15, 5.85, 0.0]]])
    alone = render(Scene((disc,), poses[:, :1]), 64)
    mixed = render(Scene((speck, disc), poses[:, ::-1]), 64)
    speck_pixels = render(Scene((speck,), poses[:, 1:]), 64)[..., 0] < 255
    assert speck_pixels.any()
    np.testing.assert_array_equal(alone[~speck_pixels], mixed[~speck_pixels])


def test_static_body_matches_per_frame_render():
    """Static bodies are rasterised once: same bytes as rendering each frame alone."""
    frames = 4
    poses = np.zeros((frames, 2, 3))
    poses[:, 0] = (5.0, 1.0, 0.1)  # static
    poses[:, 1, 0] = np.linspace(3.0, 7.0, frames)  # moving disc
    poses[:, 1, 1] = 2.2
    bodies = (Body(Rect(8.0, 1.0), PHYRE_BLACK), Body(Disc(0.8), PHYRE_RED))
    video = render(Scene(bodies, poses), 64)
    for t in range(frames):
        single = render(Scene(bodies, poses[t : t + 1]), 64)
        np.testing.assert_array_equal(video[t], single[0])


# -------------------------------------------------------------- determinism


def golden_scene() -> Scene:
    rng = np.random.default_rng(1234)
    frames = 6
    shapes = [
        (Rect(9.0, 0.5), PHYRE_BLACK),
        (Jar(2.0, 1.6, 0.2), PHYRE_GREY),
        (Polygon(((0.0, 0.0), (1.0, 0.1), (0.4, 0.9))), BLACK),
        (Ring(1.0, 0.6), BLUE),
        (Disc(1.1), RED),
        (Disc(0.7), PHYRE_RED),
    ]
    poses = rng.uniform(1.0, 9.0, size=(frames, len(shapes), 3))
    poses[..., 2] = rng.uniform(-3.0, 3.0, size=(frames, len(shapes)))
    poses[:, 0] = (5.0, 0.25, 0.0)
    return Scene(tuple(Body(s, c) for s, c in shapes), poses)


def test_deterministic_bytes():
    a = render(golden_scene(), 128)
    b = render(golden_scene(), 128)
    assert a.tobytes() == b.tobytes()


# Digest of the golden scene's video.  The renderer promises the same bytes on every
# machine, so this must hold everywhere; change it only for an intended change of
# the rendering rule.
GOLDEN_SHA256 = "4384a935250b9614992fefe23af70331f78a24f8aabc0b93cfded62ffa839bee"


def test_golden_digest():
    digest = hashlib.sha256(render(golden_scene(), 128).tobytes()).hexdigest()
    assert digest == GOLDEN_SHA256


# ------------------------------------------------------------------ no Box2D


def test_render_source_does_not_import_box2d():
    tree = ast.parse(Path(render_module.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            imported.add(module.split(".")[0] if node.level == 0 else "." + module)
    assert not any("box2d" in name.lower() for name in imported)
    assert imported <= {"__future__", "functools", "numpy", ".scene"}


def test_render_runs_with_box2d_unavailable():
    code = (
        "import sys; sys.modules['Box2D'] = None\n"  # any import of Box2D now fails
        "import numpy as np\n"
        "from phybench.world.scene import Body, Disc, Scene, RED\n"
        "from phybench.world.render import render\n"
        "v = render(Scene((Body(Disc(1.0), RED),), np.full((2, 1, 3), 5.0)), 32)\n"
        "assert v.shape == (2, 32, 32, 3)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# ------------------------------------------------------------ small geometry


def shoelace(points) -> float:
    n = len(points)
    return 0.5 * sum(
        points[i][0] * points[(i + 1) % n][1] - points[(i + 1) % n][0] * points[i][1]
        for i in range(n)
    )


def convex_hull(points) -> list[tuple[float, float]]:
    """Andrew's monotone chain, counter-clockwise, collinear points dropped."""
    pts = sorted(set(points))
    if len(pts) < 3:
        return pts

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]
