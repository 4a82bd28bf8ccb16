"""The batched column camera against the MuJoCo renderer from the same poses.

``render_pairs`` draws robot poses on walkable ground and renders each with both renderers
(``RgbCameraCfg.renderer`` "columns" and "mujoco"); ``class_colours`` compares their mean colour
per semantic class (the classes of ``urbanverse.render.scene_model``), and ``strip`` lays the pairs
side by side for a picture. Used by ``tools/check_rgb_camera.py`` and the camera tests.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from urbanverse.render.scene_model import semantic_classes
from urbanverse.sim.sensors.rgb_camera import RgbCamera, camera_poses
from urbanverse.sim.sensors.rgb_camera_cfg import RgbCameraCfg
from urbanverse.sim.world_batch import WorldBatch


@dataclasses.dataclass(frozen=True)
class RenderPairs:
    """Both renderers' images of the same poses: colour (K, H, W, 3) uint8, semantic ids (K, H, W)."""

    columns_rgb: np.ndarray
    columns_class: np.ndarray
    mujoco_rgb: np.ndarray
    mujoco_class: np.ndarray

    @property
    def class_agreement(self) -> float:
        """Share of pixels on which both renderers see the same semantic class."""
        return float((self.columns_class == self.mujoco_class).mean())


def render_pairs(
    world: WorldBatch, scene_dirs: Sequence[Path | str], count: int, cfg: RgbCameraCfg, seed: int = 5
) -> RenderPairs:
    """``count`` poses (spawn points of random goals, random headings, scenes in turn) rendered by
    the column renderer and by MuJoCo with ``cfg``'s camera."""
    columns = RgbCamera(dataclasses.replace(cfg, renderer="columns"), world, scene_dirs, count, "cpu")
    mujoco = RgbCamera(
        dataclasses.replace(cfg, renderer="mujoco", observe_depth=False), world, scene_dirs, 1, "cpu"
    )
    try:
        g = torch.Generator().manual_seed(seed)
        scene = torch.arange(count) % len(scene_dirs)
        _, _, spawn = world.sample_goal_and_spawn(scene, g)
        yaw = torch.rand(count, generator=g) * 2 * math.pi
        ground = world.lookup(world.ground_height, scene, spawn)
        rgb, _, sem = columns.compute(scene, spawn, yaw, ground)
        poses = camera_poses(cfg, spawn.double().numpy(), yaw.double().numpy(), ground.double().numpy())
        views = [
            mujoco.rasterizers[int(m)].render(mujoco.camera, p, ids=True)
            for m, p in zip(scene, poses, strict=True)
        ]
    finally:
        mujoco.close()
    return RenderPairs(
        columns_rgb=rgb.numpy(),
        columns_class=sem.numpy().astype(np.int32),
        mujoco_rgb=np.stack([v.rgb for v in views]),
        mujoco_class=np.stack([v.semantic for v in views]).astype(np.int32),
    )


def class_colours(pairs: RenderPairs, min_pixels: int = 200) -> list[dict]:
    """Per semantic class seen by both renderers on at least ``min_pixels`` pixels: its name, pixel
    counts, both mean colours (8-bit RGB) and the largest channel difference, most pixels first."""
    names = semantic_classes()
    rows = []
    for c in np.unique(pairs.mujoco_class):
        ours, theirs = pairs.columns_class == c, pairs.mujoco_class == c
        if ours.sum() < min_pixels or theirs.sum() < min_pixels:
            continue
        mean_ours = pairs.columns_rgb[ours].mean(0)
        mean_ref = pairs.mujoco_rgb[theirs].mean(0)
        rows.append(
            {
                "class": names.get(int(c), str(c)),
                "pixels_columns": int(ours.sum()),
                "pixels_mujoco": int(theirs.sum()),
                "columns": [round(float(v), 1) for v in mean_ours],
                "mujoco": [round(float(v), 1) for v in mean_ref],
                "max_diff": float(np.abs(mean_ours - mean_ref).max()),
            }
        )
    return sorted(rows, key=lambda r: -r["pixels_mujoco"])


def strip(pairs: RenderPairs, count: int, scale: int = 2) -> np.ndarray:
    """The first ``count`` pairs as rows of [columns | MuJoCo], each pixel ``scale`` x ``scale``."""
    rows = [np.concatenate([pairs.columns_rgb[k], pairs.mujoco_rgb[k]], axis=1) for k in range(count)]
    image = np.concatenate(rows, axis=0)
    return image.repeat(scale, axis=0).repeat(scale, axis=1)
