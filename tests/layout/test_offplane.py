"""Off-ground pixels (plane + parallax) and ground hidden behind obstacles, on the synthetic street."""

from __future__ import annotations

import numpy as np
import pytest

from tests.video.synth import Street, StreetRenderer, camera_path, street_reconstruction
from urbanverse.layout.offplane import ground_homography, hidden_by_obstacles, parallax_residual
from urbanverse.recon.geometry import pixel_to_ground, project

STREET = Street(width=480, height_px=270)


@pytest.fixture(scope="module")
def walk():
    poses = camera_path(STREET, np.array([1.0, 1.5, 2.0]))
    renderer = StreetRenderer(STREET)
    images = [renderer.render(m) for m in poses]
    return street_reconstruction(STREET, poses), images, renderer.surfaces(poses[1])


def test_the_ground_homography_maps_ground_points_between_views(walk) -> None:
    recon, _, _ = walk
    rng = np.random.default_rng(0)
    ground = np.c_[rng.uniform(4, 12, 50), rng.uniform(-3, 3, 50), np.zeros(50)]
    uv_a, _ = project(recon, 1, ground)
    uv_b, _ = project(recon, 2, ground)
    mapped = ground_homography(recon, 1, 2) @ np.c_[uv_a, np.ones(50)].T
    assert (mapped[:2] / mapped[2]).T == pytest.approx(uv_b, abs=1e-6)


def test_facade_pixels_move_off_the_plane_and_ground_pixels_do_not(walk) -> None:
    recon, images, (surfaces, heights) = walk
    h, w = surfaces.shape
    v, u = np.mgrid[0:h:2, 0:w:2]
    # The pixels the ground stage casts: below the horizon, ground point within 12 m (farther, the
    # parallax of a facade over half a second of walking is too small to tell).
    below = np.isfinite(pixel_to_ground(recon, 1, np.c_[u.ravel(), v.ravel()] + 0.5, 12.0)[:, 0])
    u, v = u.ravel()[below], v.ravel()[below]
    uv = np.c_[u, v] + 0.5
    seen, height = surfaces[v, u], heights[v, u]
    residual = np.fmin.reduce([parallax_residual(recon, 1, j, images[1], images[j], uv) for j in (0, 2)])
    off = residual > 3.0  # NaN (no partner sees the ground point): no evidence, kept
    ground, wall = seen == 0, (seen > 0) & (height > 0.5)
    assert ground.sum() > 2000 and wall.sum() > 80
    # Ground stays on the plane; facade pixels 0.5 m or more above it move off it (nearer its foot
    # the parallax is too small to tell).
    assert off[ground].mean() < 0.05
    assert off[wall].mean() > 0.8


def test_no_pixels_give_no_residuals(walk) -> None:
    recon, images, _ = walk
    assert parallax_residual(recon, 1, 2, images[1], images[2], np.zeros((0, 2))).shape == (0,)


def test_ground_behind_a_facade_is_hidden_and_in_front_is_not() -> None:
    camera = np.array([0.0, 0.0])
    facade = np.c_[np.arange(-10.0, 10.01, 0.5), np.full(41, 5.0)]  # sparse points along y = 5 m
    ground = np.array([[0.0, 3.0], [0.0, 8.0], [3.0, 9.0]])
    # In front of the facade: visible; behind it, also between its points: hidden.
    assert hidden_by_obstacles(facade, camera, ground).tolist() == [False, True, True]
    assert hidden_by_obstacles(np.zeros((0, 2)), camera, ground).tolist() == [False] * 3


def test_a_near_tree_and_a_far_facade_are_not_joined() -> None:
    camera = np.array([0.0, 0.0])
    tree = [2.0, 2.0]  # bearing 45 deg, 2.8 m
    far = [10 * np.cos(np.radians(40)), 10 * np.sin(np.radians(40))]  # bearing 40 deg, 10 m
    between = [5 * np.cos(np.radians(42.5)), 5 * np.sin(np.radians(42.5))]  # 5 m, between the two
    hidden = hidden_by_obstacles(np.array([tree, far]), camera, np.array([between, [4.0, 4.0]]))
    assert hidden.tolist() == [False, True]
