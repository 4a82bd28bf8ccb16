"""Fused CPU kernels (numba, multi-threaded) for the hot paths; torch code is the reference.

On the CPU, torch spends most of a 1024-environment step in per-op overhead and in
materialising (N, B, P) temporaries; these kernels do the same arithmetic per environment in
one pass. Each has a torch twin (``sensors/lidar.py``) that runs on any device and that the
tests compare against. ``available()`` is False when numba is missing or the device is not the
CPU; callers then use the torch path.
"""

from __future__ import annotations

import math

import numpy as np

from urbanverse.sim import rules

try:
    import numba
except ImportError:  # optional: the torch reference path works without it
    numba = None
else:
    # numba's own thread pool: with its OpenMP layer, numba shares (and resets) the OpenMP thread count
    # that torch uses, which slows torch down by 10x or more when the cores are oversubscribed.
    if numba.config.THREADING_LAYER == "default":
        numba.config.THREADING_LAYER = "workqueue"


def available(device: str) -> bool:
    """Whether the fused kernels can serve tensors on ``device``."""
    return numba is not None and str(device) == "cpu"


def _jit(fn):
    return numba.njit(parallel=True, cache=True)(fn) if numba is not None else fn


def _inline(fn):
    return numba.njit(cache=True)(fn) if numba is not None else fn


@_jit
def _build_lut(sdf, ox, oy, res, lut_res, hl, wl, nd, max_range, out):  # pragma: no cover - compiled
    h, w = sdf.shape
    min_step = 0.5 * res
    for cell in numba.prange(hl * wl):
        iy = cell // wl
        ix = cell - iy * wl
        cx = ox + (ix + 0.5) * lut_res
        cy = oy + (iy + 0.5) * lut_res
        for k in range(nd):
            a = 2.0 * math.pi * k / nd
            dx = math.cos(a)
            dy = math.sin(a)
            t = 0.0
            while t < max_range:
                jx = min(max(int(math.floor((cx + t * dx - ox) / res)), 0), w - 1)
                jy = min(max(int(math.floor((cy + t * dy - oy) / res)), 0), h - 1)
                s = sdf[jy, jx]
                if s <= 0.0:
                    break
                t = min(t + max(s, min_step), max_range)
            out[iy, ix, k] = np.int16(math.floor(t * 100.0 + 0.5))


def build_range_lut(
    sdf: np.ndarray, origin, res: float, lut_res: float, nd: int, max_range: float
) -> np.ndarray:
    """Range table (Hl, Wl, nd) int16 cm: sphere-traced range from each ``lut_res`` cell centre along
    ``nd`` directions (angle ``2 pi k / nd``) over ``sdf`` (H, W) m with cell size ``res``."""
    h, w = sdf.shape
    hl = math.ceil(h * res / lut_res)
    wl = math.ceil(w * res / lut_res)
    out = np.empty((hl, wl, nd), dtype=np.int16)
    _build_lut(
        np.ascontiguousarray(sdf, dtype=np.float32),
        origin[0],
        origin[1],
        res,
        lut_res,
        hl,
        wl,
        nd,
        max_range,
        out,
    )
    return out


@_jit
def _lidar_scan(
    lut, origins, lut_res, dir_cos, dir_sin, scene, pos, yaw, angles, peds, ped_r, max_range, out
):  # pragma: no cover
    _, hl, wl, nd = lut.shape
    n, b = out.shape
    p = peds.shape[1]
    scale = nd / (2.0 * math.pi)
    r2 = ped_r * ped_r
    for i in numba.prange(n):
        m = scene[i]
        rx = (pos[i, 0] - origins[m, 0]) / lut_res
        ry = (pos[i, 1] - origins[m, 1]) / lut_res
        ix = min(max(math.floor(rx), 0.0), wl - 1.0)
        iy = min(max(math.floor(ry), 0.0), hl - 1.0)
        offx = (rx - ix - 0.5) * lut_res
        offy = (ry - iy - 0.5) * lut_res
        row = lut[m, int(iy), int(ix)]
        for j in range(b):
            k = int(math.floor((yaw[i] + angles[j]) * scale + 0.5)) % nd
            out[i, j] = row[k] * 0.01 - (offx * dir_cos[k] + offy * dir_sin[k])
        cy = math.cos(yaw[i])
        sy = math.sin(yaw[i])
        for q in range(p):
            qx = peds[i, q, 0] - pos[i, 0]
            qy = peds[i, q, 1] - pos[i, 1]
            dist2 = qx * qx + qy * qy
            if dist2 > (max_range + ped_r) ** 2 or dist2 <= r2:
                continue  # out of reach, or the sensor is inside the cylinder (the torch twin reports no hit)
            for j in range(b):
                ca = cy * math.cos(angles[j]) - sy * math.sin(angles[j])
                sa = sy * math.cos(angles[j]) + cy * math.sin(angles[j])
                t_ca = qx * ca + qy * sa
                perp2 = dist2 - t_ca * t_ca
                if perp2 <= r2 and t_ca > 0.0:
                    t = t_ca - math.sqrt(r2 - perp2)
                    if t < out[i, j]:
                        out[i, j] = t
        for j in range(b):
            out[i, j] = min(max(out[i, j], 0.0), max_range)


def lidar_scan(lut, origins, lut_res, scene, pos, yaw, angles, peds, ped_r, max_range) -> np.ndarray:
    """Fused twin of ``Lidar`` with a range table: numpy in, ranges (N, B) m out (no noise)."""
    nd = lut.shape[-1]
    k = np.arange(nd) * (2 * math.pi / nd)
    out = np.empty((pos.shape[0], angles.shape[0]), dtype=np.float32)
    _lidar_scan(
        lut, origins, lut_res, np.cos(k), np.sin(k), scene, pos, yaw, angles, peds, ped_r, max_range, out
    )
    return out


_step_blocks = _inline(rules.step_blocks)
_clearance_blocks = _inline(rules.clearance_blocks)
_has_margin = _inline(rules.has_margin)


@_inline
def _cell(h, w, origins, res, m, x, y):  # pragma: no cover - compiled
    ix = min(max(int(math.floor((x - origins[m, 0]) / res)), 0), w - 1)
    iy = min(max(int(math.floor((y - origins[m, 1]) / res)), 0), h - 1)
    return m * h * w + iy * w + ix


@_inline
def _pose_blocked(
    sdf, ground, h, w, origins, res, m, x, y, yaw, probes, nc, radius, ref, step_limit, peds_i, reach2
):  # pragma: no cover
    """``radius``, ``step_limit``: float32 limits (``rules.clearance_limit``, ``rules.step_limit``)."""
    c = math.cos(yaw)
    s = math.sin(yaw)
    for q in range(probes.shape[0]):
        px = x + c * probes[q, 0] - s * probes[q, 1]
        py = y + s * probes[q, 0] + c * probes[q, 1]
        k = _cell(h, w, origins, res, m, px, py)
        if _step_blocks(ground[k], ref[q], step_limit):
            return True
        if q < nc:
            if _clearance_blocks(sdf[k], radius):
                return True
            for j in range(peds_i.shape[0]):
                dx = px - peds_i[j, 0]
                dy = py - peds_i[j, 1]
                if dx * dx + dy * dy < reach2:
                    return True
    return False


@_jit
def _robot_step(
    sdf,
    ground,
    h,
    w,
    origins,
    res,
    scene,
    pos,
    yaw,
    vel,
    cmd,
    acc,
    dt,
    probes,
    nc,
    radius,
    max_step,
    slide,
    peds,
    reach2,
    height,
    contact,
    path,
    scratch,
):  # pragma: no cover - compiled
    n = pos.shape[0]
    for i in numba.prange(n):
        m = scene[i]
        for d in range(3):
            dv = min(max(cmd[i, d] - vel[i, d], -acc[d] * dt), acc[d] * dt)
            vel[i, d] = vel[i, d] + dv
        x0, y0, a0 = pos[i, 0], pos[i, 1], yaw[i]
        a1 = (a0 + vel[i, 2] * dt + math.pi) % (2.0 * math.pi) - math.pi
        mid = a0 + 0.5 * vel[i, 2] * dt
        dx = (math.cos(mid) * vel[i, 0] - math.sin(mid) * vel[i, 1]) * dt
        dy = (math.sin(mid) * vel[i, 0] + math.cos(mid) * vel[i, 1]) * dt
        ref = scratch[i]
        c, s = math.cos(a0), math.sin(a0)
        for q in range(probes.shape[0]):
            ref[q] = ground[
                _cell(
                    h,
                    w,
                    origins,
                    res,
                    m,
                    x0 + c * probes[q, 0] - s * probes[q, 1],
                    y0 + s * probes[q, 0] + c * probes[q, 1],
                )
            ]
        pi = peds[i]
        x, y, a, keep_lin, keep_ang = x0 + dx, y0 + dy, a1, True, True
        hit = _pose_blocked(
            sdf, ground, h, w, origins, res, m, x, y, a1, probes, nc, radius, ref, max_step, pi, reach2
        )
        if hit:
            keep_lin = False
            moved = False
            if slide:
                e = res
                gx = (
                    sdf[_cell(h, w, origins, res, m, x0 + e, y0)]
                    - sdf[_cell(h, w, origins, res, m, x0 - e, y0)]
                )
                gy = (
                    sdf[_cell(h, w, origins, res, m, x0, y0 + e)]
                    - sdf[_cell(h, w, origins, res, m, x0, y0 - e)]
                )
                norm = max(math.sqrt(gx * gx + gy * gy), 1e-6)
                gx, gy = gx / norm, gy / norm
                into = min(dx * gx + dy * gy, 0.0)
                x, y = x0 + dx - into * gx, y0 + dy - into * gy
                if not _pose_blocked(
                    sdf,
                    ground,
                    h,
                    w,
                    origins,
                    res,
                    m,
                    x,
                    y,
                    a1,
                    probes,
                    nc,
                    radius,
                    ref,
                    max_step,
                    pi,
                    reach2,
                ):
                    moved = True
                    keep_lin = True
            if not moved:
                x, y = x0, y0
                if _pose_blocked(
                    sdf,
                    ground,
                    h,
                    w,
                    origins,
                    res,
                    m,
                    x0,
                    y0,
                    a1,
                    probes,
                    nc,
                    radius,
                    ref,
                    max_step,
                    pi,
                    reach2,
                ):
                    a = a0
                    keep_ang = False
        contact[i] = hit
        path[i] += math.sqrt((x - x0) ** 2 + (y - y0) ** 2)
        pos[i, 0], pos[i, 1], yaw[i] = x, y, a
        if not keep_lin:
            vel[i, 0] = 0.0
            vel[i, 1] = 0.0
        if not keep_ang:
            vel[i, 2] = 0.0
        height[i] = ground[_cell(h, w, origins, res, m, x, y)]


def robot_step(
    world_np: dict, scene, pos, yaw, vel, cmd, acc, dt, probes, nc, radius, max_step, slide, peds, reach
):
    """Fused twin of ``Robot.step`` after the command mapping; updates the numpy state arrays in place.

    ``radius`` and ``max_step``: the float32 limits of ``rules.clearance_limit`` and ``rules.step_limit``.

    Returns (ground height (N,), contact (N,) bool, path increment (N,)).
    """
    n = pos.shape[0]
    height = np.empty(n, dtype=np.float32)
    contact = np.empty(n, dtype=np.bool_)
    path = np.zeros(n, dtype=np.float32)
    scratch = np.empty((n, probes.shape[0]), dtype=np.float32)  # probe ground heights before the move
    _robot_step(
        world_np["sdf"],
        world_np["ground"],
        *world_np["hw"],
        world_np["origins"],
        world_np["res"],
        scene,
        pos,
        yaw,
        vel,
        cmd,
        acc,
        dt,
        probes,
        nc,
        radius,
        max_step,
        slide,
        peds,
        reach * reach,
        height,
        contact,
        path,
        scratch,
    )
    return height, contact, path


@_jit
def _ped_step(
    sdf,
    walkable,
    h,
    w,
    origins,
    res,
    scene,
    pos,
    heading,
    speed,
    noise,
    turn,
    noise_scale,
    dt,
    radius,
    circles,
    reach2,
):  # pragma: no cover - compiled
    n, p = heading.shape
    for i in numba.prange(n):
        m = scene[i]
        for j in range(p):
            hd = heading[i, j] + noise_scale * noise[i, j]
            x = pos[i, j, 0] + math.cos(hd) * speed[i, j] * dt
            y = pos[i, j, 1] + math.sin(hd) * speed[i, j] * dt
            k = _cell(h, w, origins, res, m, x, y)
            ok = walkable[k] and _has_margin(sdf[k], radius)
            for c in range(circles.shape[1]):
                dx = x - circles[i, c, 0]
                dy = y - circles[i, c, 1]
                if dx * dx + dy * dy <= reach2:
                    ok = False
            if ok:
                pos[i, j, 0], pos[i, j, 1] = x, y
            else:
                hd = hd + math.pi * (0.5 + turn[i, j])
            heading[i, j] = hd


def pedestrian_step(
    world_np: dict, scene, pos, heading, speed, noise, turn, noise_scale, dt, radius, circles, reach
):
    """Fused twin of ``Pedestrians.step``; updates ``pos`` (N, P, 2) and ``heading`` (N, P) in place.

    ``radius``: the pedestrians' float32 clearance limit (``rules.clearance_limit``)."""
    _ped_step(
        world_np["sdf"],
        world_np["walkable"],
        *world_np["hw"],
        world_np["origins"],
        world_np["res"],
        scene,
        pos,
        heading,
        speed,
        noise,
        turn,
        noise_scale,
        dt,
        radius,
        circles,
        reach * reach,
    )


@_jit
def _depth_render(
    surface,
    ground,
    h,
    w,
    origins,
    res,
    scene,
    cam_xy,
    cam_z,
    yaw,
    col_angle,
    col_cos,
    row_slope,
    dist,
    peds,
    ped_r,
    ped_h,
    max_range,
    out,
    scratch,
):  # pragma: no cover - compiled
    n, rows, cols = out.shape
    r2 = ped_r * ped_r
    for i in numba.prange(n):
        m = scene[i]
        horiz = scratch[i]
        for c in range(cols):
            a = yaw[i] + col_angle[c]
            dx, dy = math.cos(a), math.sin(a)
            r = rows - 1  # rows in ascending slope order: bottom row first
            best = -math.inf
            for k in range(dist.shape[0]):
                hk = surface[
                    _cell(h, w, origins, res, m, cam_xy[i, 0] + dist[k] * dx, cam_xy[i, 1] + dist[k] * dy)
                ]
                ratio = (hk - cam_z[i]) / dist[k]
                if ratio > best:
                    best = ratio
                while r >= 0 and row_slope[c, r] <= best:
                    horiz[r] = dist[k]
                    r -= 1
                if r < 0:
                    break
            while r >= 0:
                horiz[r] = math.inf
                r -= 1
            for q in range(peds.shape[1]):
                qx = peds[i, q, 0] - cam_xy[i, 0]
                qy = peds[i, q, 1] - cam_xy[i, 1]
                t_ca = qx * dx + qy * dy
                perp2 = qx * qx + qy * qy - t_ca * t_ca
                if perp2 > r2:
                    continue
                t = t_ca - math.sqrt(r2 - perp2)
                if t <= 0.0:
                    continue
                base = ground[_cell(h, w, origins, res, m, peds[i, q, 0], peds[i, q, 1])]
                for rr in range(rows):
                    z = cam_z[i] + row_slope[c, rr] * t
                    if base <= z <= base + ped_h and t < horiz[rr]:
                        horiz[rr] = t
            for rr in range(rows):
                out[i, rr, c] = min(horiz[rr] * col_cos[c], max_range)


def depth_render(
    world_np: dict,
    surface: np.ndarray,
    scene,
    cam_xy,
    cam_z,
    yaw,
    col_angle,
    col_cos,
    row_slope,
    dist,
    peds,
    ped_r,
    ped_h,
    max_range,
) -> np.ndarray:
    """Fused twin of ``DepthCamera.compute``: depth images (N, H, W) m."""
    out = np.empty((cam_xy.shape[0], row_slope.shape[1], row_slope.shape[0]), dtype=np.float32)
    scratch = np.empty(
        (cam_xy.shape[0], row_slope.shape[1]), dtype=np.float64
    )  # horizontal hit distance per row
    _depth_render(
        surface,
        world_np["ground"],
        *world_np["hw"],
        world_np["origins"],
        world_np["res"],
        scene,
        cam_xy,
        cam_z,
        yaw,
        col_angle,
        col_cos,
        row_slope,
        dist,
        peds,
        ped_r,
        ped_h,
        max_range,
        out,
        scratch,
    )
    return out
