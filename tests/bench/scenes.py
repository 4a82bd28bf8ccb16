"""Small hand-made scenes and tours for the round-trip scoring tests."""

from __future__ import annotations

import math

import numpy as np

from urbanverse.render.tour import Intrinsics, TourFrame, TourGroundTruth, VisibleObject
from urbanverse.scene.record import AssetRef, GroundRegion, Material, Scene, SceneObject, SceneSource


def box(x0: float, y0: float, x1: float, y1: float) -> tuple[tuple[float, float], ...]:
    """A counter-clockwise rectangle (m)."""
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def region(kind: str, polygon, elevation: float = 0.0, name: str | None = None) -> GroundRegion:
    """A ground region of type ``kind`` with a plain material."""
    return GroundRegion(
        id=name or f"{kind}_{id(polygon)}",
        type=kind,
        polygon=tuple(polygon),
        elevation=elevation,
        material=Material(name="plain", base_color=(0.5, 0.5, 0.5)),
    )


def thing(category: str, position, yaw: float = 0.0, size=(1.0, 1.0, 1.0)) -> SceneObject:
    """A scene object of ``category`` at ``position`` (base centre, m) with ``yaw`` (rad) and ``size``
    (length, width, height, m)."""
    return SceneObject(
        id=f"{category}_{position[0]:.1f}_{position[1]:.1f}",
        category=category,
        asset=AssetRef(uid="none", path="assets/none"),
        position=tuple(float(v) for v in position),
        yaw=yaw,
        size=tuple(float(v) for v in size),
        body_type="kinematic",
        mass=100.0,
        friction=0.5,
        restitution=0.0,
    )


def scene(ground=(), objects=()) -> Scene:
    """A hand-made scene of ``ground`` regions and ``objects``."""
    source = SceneSource(kind="hand-made")
    return Scene(name="test", source=source, ground=tuple(ground), objects=tuple(objects))


#: The camera of :func:`walk_along_x`: 640 x 360 px, 90 degrees across.
INTRINSICS = Intrinsics(width=640, height=360, fx=320.0, fy=320.0, cx=320.0, cy=180.0)


def walk_along_x(
    x0: float, x1: float, frames: int = 21, height: float = 1.6, visible: tuple[int, ...] = ()
) -> TourGroundTruth:
    """A tour walking along +x from ``x0`` to ``x1`` (m) at y = 0, looking ahead along the walk; every
    frame sees the objects of 1-based instance ids ``visible`` (1000 px, 5 m away)."""
    # OpenCV camera axes in the world: x right = -y, y down = -z, z ahead = +x.
    rotation = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    out = []
    for i, x in enumerate(np.linspace(x0, x1, frames)):
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotation, (x, 0.0, height)
        seen = tuple(
            VisibleObject(
                object_id=f"o{k}", instance_id=k, category="bench", box_xyxy=(0, 0, 10, 10), pixels=1000,
                distance_m=5.0,
            )
            for k in visible
        )  # fmt: skip
        out.append(
            TourFrame(index=i, time_s=i * 0.1, world_from_camera=tuple(pose.ravel().tolist()), visible=seen)
        )
    return TourGroundTruth(
        scene_dir="none", scene_name="test", scene_sha256="0", video="none.mp4", fps=10.0, seed=0,
        intrinsics=INTRINSICS, semantic_classes={}, frames=tuple(out),
    )  # fmt: skip


def rotation_about_z(angle: float, shift=(0.0, 0.0)) -> np.ndarray:
    """3x3 homogeneous planar transform: rotate by ``angle`` (rad), then move by ``shift`` (m)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, shift[0]], [s, c, shift[1]], [0.0, 0.0, 1.0]])
