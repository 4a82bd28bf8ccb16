"""Physical rules of the simulator: each decided by one function that every component calls.

Ground heights and signed distances are stored as float32 grids (``CompiledWorld``), so each
rule works at that one precision: the values compared are float32 (a height difference is
computed as a float32 subtraction of two float32 heights, which numpy, torch and numba round
alike) and each limit is a float32 number, made once by ``step_limit`` or
``clearance_limit``. Compared in float32 or float64, the outcome is then the same on every
path: the collision kernel (``Robot`` in torch, ``kernels.robot_step`` in numba), the sensors
(the LiDAR's step walls through ``world.step_edges``), spawn and goal sampling, and the
geodesic planner (``geodesic``).

**Climb rule** (``step_blocks``): a change of ground height between two points is a step a
robot cannot climb when its size exceeds the robot's climb limit ``max_step`` (m) by more than
``STEP_TOLERANCE``. A step of exactly the limit (a path raised 5 cm for a robot that climbs
5 cm) is climbable: the tolerance absorbs float32 rounding of the two heights, which moves
their difference by less than 0.03 mm for heights within +-500 m.

**Clearance rule** (``clearance_blocks``): a footprint circle of radius ``r`` (m) centred on a
point whose signed distance to the nearest obstacle is ``sdf`` (m) touches the obstacle when
``sdf < r``; planners that keep a margin ask for ``sdf > r`` (``has_margin``).
"""

from __future__ import annotations

import numpy as np

#: Tolerance (m) of the climb rule: a step up to ``max_step + STEP_TOLERANCE`` is climbable.
STEP_TOLERANCE = 1e-4

#: Version of these rules; caches of grids derived from them (LiDAR tables, goal fields) carry it.
RULES_VERSION = 1


def step_limit(max_step: float) -> float:
    """Largest climbable height change (m) of a robot with climb limit ``max_step`` (m).

    A Python float that is exactly a float32 number, so comparing it with a float32 height
    difference gives the same answer in float32 (numpy, torch) and in float64 (numba)."""
    return float(np.float32(max_step + STEP_TOLERANCE))


def step_blocks(height_a, height_b, limit):
    """Whether the ground step from ``height_a`` to ``height_b`` (float32 m; numpy arrays, torch
    tensors or numba scalars, broadcast together) is too high to climb, for ``limit`` from
    ``step_limit``. The one comparison behind climb limits, step edges and planner links."""
    return abs(height_a - height_b) > limit


def clearance_limit(radius: float) -> float:
    """Radius (m) of a footprint circle as a float32 number (see the module docstring)."""
    return float(np.float32(radius))


def clearance_blocks(sdf, limit):
    """Whether a circle of radius ``limit`` (from ``clearance_limit``) centred where the signed
    distance is ``sdf`` (float32 m) overlaps an obstacle: ``sdf < limit``."""
    return sdf < limit


def has_margin(sdf, limit):
    """Whether ``sdf`` (float32 m) leaves strictly more than ``limit`` (from ``clearance_limit``)
    of free space: the planners' test for cells a robot centre may pass or spawn on."""
    return sdf > limit
