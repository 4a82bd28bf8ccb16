"""RGB camera: poses, both renderers on a known plaza (sky over ground, a pedestrian ahead), the
column renderer against MuJoCo from the same poses (mean colour per semantic class), its depth and
overhangs, and the environment wiring."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import urbanverse.sim as sim
from urbanverse.bench.camera_compare import class_colours, render_pairs
from urbanverse.errors import InputError
from urbanverse.render.scene_model import semantic_id
from urbanverse.scene.record import load_scene
from urbanverse.sim import NavEnvCfg, NavVecEnv, PedestrianCfg, RgbCameraCfg
from urbanverse.sim.appearance import NONE_BELOW, coarsen, compile_appearance
from urbanverse.sim.sensors import RgbAugmentCfg
from urbanverse.sim.sensors.column_camera import virtual_camera
from urbanverse.sim.sensors.rgb_camera import RgbCamera, augment, camera_poses
from urbanverse.sim.world import compile_world

from .conftest import EXAMPLE, world_batch

LEVEL = dict(height=24, width=32, pitch=0.0, mount_height=1.0, mount_forward=0.0)
GROUND_CLASSES = ("road", "sidewalk", "crosswalk", "ramp", "plaza")


@pytest.fixture(scope="module", params=["columns", "mujoco"])
def plaza_camera(plaza_dir, request):
    cfg = RgbCameraCfg(renderer=request.param, **LEVEL)
    camera = RgbCamera(cfg, world_batch(plaza_dir), [plaza_dir], 2, "cpu", max_pedestrians=1)
    yield camera
    camera.close()


@pytest.fixture(scope="module")
def example_world():
    return world_batch(EXAMPLE)


def test_camera_pose_axes_follow_yaw_and_pitch():
    cfg = RgbCameraCfg(pitch=math.radians(30), mount_height=0.5, mount_forward=0.2, renderer="mujoco")
    pose = camera_poses(cfg, np.array([[1.0, 2.0]]), np.array([math.pi / 2]), np.array([0.15]))[0]
    rot = pose[:3, :3]
    assert np.allclose(rot.T @ rot, np.eye(3)) and np.linalg.det(rot) == pytest.approx(1.0)
    assert np.allclose(rot[:, 2], [0.0, math.cos(math.radians(30)), -0.5])  # optical axis: +y, 30 deg down
    assert np.allclose(rot[:, 0], [1.0, 0.0, 0.0])  # image x (right) is world +x when facing +y
    assert np.allclose(pose[:3, 3], [1.0, 2.2, 0.65])


def test_level_view_shows_sky_above_ground_and_a_pedestrian_ahead(plaza_camera):
    scene = torch.zeros(2, dtype=torch.long)
    pos = torch.tensor([[2.0, 5.0], [2.0, 5.0]])
    yaw = torch.zeros(2)
    ground = torch.zeros(2)
    # Environment 0 has a pedestrian 3 m ahead; environment 1's stands behind the camera.
    peds = torch.tensor([[[5.0, 5.0]], [[0.5, 5.0]]])
    rgb, _, _ = plaza_camera.compute(scene, pos, yaw, ground, peds, 0.3)
    rgb = rgb.numpy().astype(int)
    assert rgb.shape == (2, 24, 32, 3)
    sky, floor = rgb[1, :6], rgb[1, -6:]
    assert (sky[..., 2] > sky[..., 0]).all()  # blue sky in the top rows
    assert np.abs(floor - floor.mean((0, 1))).max() < 40  # a uniform plaza below the horizon
    centre = (slice(8, 16), slice(14, 18))
    assert np.abs(rgb[0][centre] - rgb[1][centre]).sum(-1).mean() > 60  # the pedestrian covers the centre
    assert np.array_equal(rgb[0, :, :4], rgb[1, :, :4])  # and nothing else changes
    again = plaza_camera.compute(scene, pos, yaw, ground, peds, 0.3)[0].numpy()
    assert np.array_equal(again, rgb)


def test_column_depth_and_semantics_follow_the_geometry(plaza_dir):
    """Level camera 1 m over a flat plaza: a ground pixel on row v (y = (v + 0.5 - H/2) / f below
    the axis) sees the floor at z-depth 1 / y; rows above the horizon see sky (depth = max range)."""
    cfg = RgbCameraCfg(renderer="columns", **LEVEL)
    camera = RgbCamera(cfg, world_batch(plaza_dir), [plaza_dir], 1, "cpu")
    zero = torch.zeros(1)
    _, depth, semantic = camera.compute(
        torch.zeros(1, dtype=torch.long), torch.tensor([[2.0, 5.0]]), zero, zero
    )
    depth, semantic = depth[0].numpy(), semantic[0].numpy()
    f = 0.5 * cfg.width / math.tan(0.5 * cfg.hfov)
    y = (np.arange(cfg.height) + 0.5 - 0.5 * cfg.height) / f
    col = cfg.width // 2
    for v in range(cfg.height):
        if y[v] > 0.15:  # the floor within 6.7 m (the far edge of the plaza is 8 m away)
            assert depth[v, col] == pytest.approx(1.0 / y[v], rel=0.06)
            assert semantic[v, col] == semantic_id("plaza")
        elif y[v] < 0:
            assert semantic[v, col] == 0 and depth[v, col] == cfg.max_range


def test_pitched_camera_resamples_the_level_one_exactly_at_the_centre():
    cfg = RgbCameraCfg(height=64, width=64, pitch=math.radians(10))
    cam = virtual_camera(cfg)
    wv = len(cam["col_tan"])
    centre = cam["pixel_map"].reshape(64, 64)[32, 32]
    row, column = divmod(int(centre), wv)
    # The optical axis is tilted 10 degrees down: in the level frame its image point is (0, tan 10).
    assert cam["row_tan"][row] == pytest.approx(math.tan(math.radians(10)), abs=1.0 / cam["focal"])
    assert cam["col_tan"][column] == pytest.approx(0.0, abs=1.0 / cam["focal"])
    assert cam["depth_scale"].min() > 0


def test_appearance_grid_holds_crowns_overhead_and_mipmaps_keep_their_extremes():
    world = compile_world(EXAMPLE)
    grid = compile_appearance(EXAMPLE, world)
    tree = next(o for o in load_scene(EXAMPLE).objects if o.category == "broadleaf_tree")
    iy, ix = world.cell_of(
        np.asarray(tree.position[:2]) + np.array([1.0, 0.0])
    )  # under the crown, off the trunk
    assert grid.over_bottom[iy, ix] > tree.position[2] + 1.0  # the crown hangs over open ground
    assert grid.over_class[iy, ix] == semantic_id("broadleaf_tree")
    assert grid.base_class[iy, ix] != semantic_id("broadleaf_tree")
    coarse = coarsen(grid, 4)
    assert coarse.base_top.shape == (-(-world.shape[0] // 4), -(-world.shape[1] // 4))
    assert coarse.base_top.max() == grid.base_top.max()
    assert coarse.over_top.max() == grid.over_top.max()
    on_map = grid.base_top > NONE_BELOW
    assert np.isclose(
        coarse.base_top[iy // 4, ix // 4],
        grid.base_top[iy // 4 * 4 : iy // 4 * 4 + 4, ix // 4 * 4 : ix // 4 * 4 + 4].max(),
    )
    assert on_map.mean() > 0.5


def test_columns_match_mujoco_mean_colour_per_class(example_world):
    """Both renderers from the same 24 poses on the example street: the same class at 95 % of pixels,
    ground and sky classes within 8 levels of MuJoCo's mean colour, objects within 30."""
    pairs = render_pairs(example_world, [EXAMPLE], 24, RgbCameraCfg(height=48, width=64))
    assert pairs.class_agreement > 0.95
    rows = class_colours(pairs)
    for row in rows:
        limit = 8 if row["class"] in ("sky", *GROUND_CLASSES) else 30
        assert row["max_diff"] <= limit, (
            f"{row['class']}: mean colour {row['max_diff']:.0f} levels from MuJoCo's"
        )
    assert {"sky", "road", "sidewalk", "broadleaf_tree"} <= {row["class"] for row in rows}


def test_env_observes_rgb_and_depth_from_one_pass():
    cfg = RgbCameraCfg(height=8, width=8, observe_depth=True)
    env = NavVecEnv(
        NavEnvCfg(scene_dirs=(EXAMPLE,), num_envs=3, lidar=None, rgb=cfg, pedestrians=PedestrianCfg(count=2))
    )
    try:
        sim.check_env(env, steps=6)
        assert env.image_shapes == {"depth": (8, 8, 1), "rgb": (8, 8, 3)}
        obs = env.get_observations()
        pixels = obs[:, env.obs_layout["rgb"]]
        assert pixels.shape == (3, 8 * 8 * 3) and 0.0 <= float(pixels.min()) and float(pixels.max()) <= 1.0
        assert torch.equal(pixels, env.rgb.data.rgb.flatten(1).float() / 255.0)
        assert float(pixels.std()) > 0.02  # a real image, not a blank buffer
        depth = obs[:, env.obs_layout["depth"]]
        assert torch.equal(depth, env.rgb.data.depth.flatten(1) / cfg.max_range)
        assert 0.0 < float(depth.min()) and float(depth.max()) <= 1.0
    finally:
        env.close()


def test_depth_twice_and_unknown_renderer_are_refused():
    with pytest.raises(InputError, match="not both"):
        NavEnvCfg(
            scene_dirs=(EXAMPLE,),
            lidar=None,
            depth=sim.DepthCameraCfg(),
            rgb=RgbCameraCfg(observe_depth=True),
        )
    with pytest.raises(InputError, match="renderer"):
        RgbCameraCfg(renderer="vulkan")
    with pytest.raises(InputError, match="only the columns renderer"):
        RgbCameraCfg(renderer="mujoco", observe_depth=True)


def test_augmentations_change_images_within_their_ranges_and_repeat_with_the_seed():
    rgb = torch.full((64, 8, 8, 3), 100, dtype=torch.uint8)
    rgb[:, :, :4] = 200  # half bright, half dark: contrast has something to act on

    def draw(cfg: RgbAugmentCfg, seed: int = 0) -> torch.Tensor:
        return augment(rgb, cfg, torch.Generator().manual_seed(seed)).float()

    gain = draw(RgbAugmentCfg(brightness=0.2))
    ratio = gain[:, 0, 5, 0] / 100.0
    assert 0.795 <= float(ratio.min()) < 0.9 and 1.1 < float(ratio.max()) <= 1.205
    assert torch.equal(gain, draw(RgbAugmentCfg(brightness=0.2)))  # the generator decides
    assert not torch.equal(gain, draw(RgbAugmentCfg(brightness=0.2), seed=1))
    contrast = draw(RgbAugmentCfg(contrast=0.5))
    spread = contrast[:, 0, 0, 0] - contrast[:, 0, 5, 0]
    assert float(spread.min()) < 90 and float(spread.max()) > 110
    noisy = draw(RgbAugmentCfg(noise_std=5.0))
    assert 3.0 < float((noisy - rgb.float()).std()) < 7.0
    blurred = draw(RgbAugmentCfg(blur=1.0))
    assert float(blurred[:, 0, 3, 0].mean()) == pytest.approx((2 * 200 + 100) / 3, abs=1)
    assert torch.equal(blurred[:, :, :3], rgb[:, :, :3].float())  # flat areas stay as they are
    with pytest.raises(InputError, match="RgbAugmentCfg"):
        RgbAugmentCfg(blur=2.0)
