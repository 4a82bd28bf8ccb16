"""Drop assets on flat ground in MuJoCo and flag those that tip over, bounce away, or whose centre of
mass lies outside their support polygon (a check the language-model labels of UrbanVerse-100K never had)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import mujoco
import numpy as np

from urbanverse.assets.annotate import com_inside_support, measure_parts, part_masses, support_polygon
from urbanverse.assets.mujoco_body import add_free_body, new_spec, tilt_deg
from urbanverse.assets.record import Asset


@dataclass(frozen=True, kw_only=True)
class VerifyCfg:
    """Drop test settings: simulated seconds, release height (m) and failure thresholds (deg, m)."""

    duration_s: float = 2.0
    """Simulated time after release (s): long enough for a tipping asset to fall."""
    timestep_s: float = 0.002
    """MuJoCo time step (s)."""
    drop_height_m: float = 0.005
    """Height of the asset's base above the ground at release (m): just clear, so it lands without
    starting in contact."""
    tilt_tol_deg: float = 20.0
    """A final tilt above this (degrees from upright) means the asset fell over."""
    slide_tol_m: float = 0.10
    """Horizontal travel above this (m) means it slid or rolled away."""
    bounce_tol_m: float = 0.05
    """A rise above its release height beyond this (m) means it bounced or was thrown off."""


@dataclass
class DropResult:
    """What one asset did: final tilt (deg), horizontal travel and highest rise above its release (m)."""

    uid: str
    category: str
    tilt_deg: float
    travel_m: float
    rise_m: float
    com_inside_support: bool
    problems: list[str] = field(default_factory=list)


def drop_test(asset: Asset, parts: Sequence, cfg: VerifyCfg | None = None) -> DropResult:
    """Simulate ``parts`` (the asset's convex parts, asset frame) released just above flat ground."""
    cfg = cfg or VerifyCfg()
    geometry = measure_parts(parts)
    masses = part_masses(parts, geometry)
    spec = new_spec(cfg.timestep_s, ground_friction=0.7)
    add_free_body(
        spec,
        "asset",
        [p.mesh.vertices for p in parts],
        masses,
        asset.friction_coefficient,
        (0.0, 0.0, cfg.drop_height_m),
    )
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    start = data.xpos[1].copy()
    rise = 0.0
    for _ in range(round(cfg.duration_s / cfg.timestep_s)):
        mujoco.mj_step(model, data)
        rise = max(rise, float(data.xpos[1, 2] - start[2]))
    com = (geometry.centroids * masses[:, None]).sum(0) / masses.sum()
    result = DropResult(
        uid=asset.uid,
        category=asset.category,
        tilt_deg=tilt_deg(data.xquat[1]),
        travel_m=float(np.linalg.norm(data.xpos[1, :2] - start[:2])),
        rise_m=rise,
        com_inside_support=com_inside_support(com[:2], support_polygon(parts)),
    )
    if result.tilt_deg > cfg.tilt_tol_deg:
        result.problems.append(f"tips over ({result.tilt_deg:.0f} deg)")
    if result.travel_m > cfg.slide_tol_m or result.rise_m > cfg.bounce_tol_m:
        result.problems.append(f"bounces away ({result.travel_m:.2f} m, rises {result.rise_m:.2f} m)")
    if not result.com_inside_support:
        result.problems.append("centre of mass outside its support")
    return result
