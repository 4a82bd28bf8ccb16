"""Fused CPU twins (numba, multi-threaded) of the crowd models in ``crowd.py``.

``Pedestrians`` calls these on the CPU (``kernels.available``): the same arithmetic as the torch
reference functions ``crowd.replay_advance`` + ``crowd.replay_positions`` and ``crowd.flow_step`` +
``crowd.stall_time``, in one pass per environment instead of dozens of tensor operations over
(N, P, P) temporaries; the tests compare the two.
"""

from __future__ import annotations

import math

import numpy as np

from urbanverse.sim.kernels import _cell, _inline, _jit, numba


@_jit
def _replay_step(
    scene, agent, clock, u, dt, n_agents, count, key_base, first, points, duration, knot_key, knot_xy, pos
):  # pragma: no cover - compiled
    n, p = agent.shape
    for i in numba.prange(n):
        m = scene[i]
        cnt = max(count[m], 1)
        for j in range(p):
            a = agent[i, j]
            g = m * n_agents + a
            c = clock[i, j] + dt
            if c >= duration[g]:
                c -= duration[g]
                a = (a + 1 + int(np.float32(u[i, j]) * np.float32(cnt - 1))) % cnt
                g = m * n_agents + a
                c = min(c, duration[g])
            agent[i, j] = a
            clock[i, j] = c
            key = key_base[g] + c
            lo = first[g]
            hi = lo + points[g] - 2  # last segment start
            while lo < hi:  # last segment start whose key is <= key (the first segment when none)
                mid = (lo + hi + 1) // 2
                if knot_key[mid] <= key:
                    lo = mid
                else:
                    hi = mid - 1
            k0 = knot_key[lo]
            frac = min(max((key - k0) / (knot_key[lo + 1] - k0), 0.0), 1.0)
            pos[i, j, 0] = knot_xy[lo, 0] + frac * (knot_xy[lo + 1, 0] - knot_xy[lo, 0])
            pos[i, j, 1] = knot_xy[lo, 1] + frac * (knot_xy[lo + 1, 1] - knot_xy[lo, 1])


def replay_step(people_np: dict, scene, agent, clock, u, dt, pos):
    """Fused twin of ``crowd.replay_advance`` followed by ``crowd.replay_positions``: updates ``agent``
    (N, P) int64 and ``clock`` (N, P) float64 s in place and writes the positions into ``pos`` (N, P, 2)
    float32; ``u`` (N, P) are the uniform draws that pick the next agents."""
    _replay_step(
        scene,
        agent,
        clock,
        u,
        dt,
        people_np["agents_per_scene"],
        people_np["agent_count"],
        people_np["agent_key"],
        people_np["agent_first"],
        people_np["agent_points"],
        people_np["agent_duration"],
        people_np["knot_key"],
        people_np["knot_xy"],
        pos,
    )


@_inline
def _min_gap2(circles, i, x, y):  # pragma: no cover - compiled
    """Squared distance (m²) from (x, y) to the nearest footprint circle centre of robot ``i``."""
    best = math.inf
    for c in range(circles.shape[1]):
        dx = x - circles[i, c, 0]
        dy = y - circles[i, c, 1]
        best = min(best, dx * dx + dy * dy)
    return best


@_inline
def _push(dx, dy, contact, strength, decay, cutoff):  # pragma: no cover - compiled
    """Exponential push along (dx, dy) at centre distance d = |(dx, dy)|, none from ``cutoff`` m on
    (``crowd._repulsion``): (fx, fy, d)."""
    d2 = dx * dx + dy * dy
    if d2 >= cutoff * cutoff:
        return 0.0, 0.0, 1.0
    d = max(math.sqrt(d2), 1e-6)
    f = strength * math.exp((contact - d) / decay)
    return f * dx / d, f * dy / d, d


@_jit
def _flow_step(
    walker,
    h,
    w,
    origins,
    res,
    scene,
    table,
    rows,
    cols,
    flow_origin,
    flow_cell,
    flow_size,
    pos,
    vel,
    direction,
    factor,
    circles,
    params,
    stalled,
    out_pos,
    out_vel,
    out_dir,
):  # pragma: no cover - compiled
    tau, rep, rep_range, robot_rep, wall_rep, wall_range, rear, one_way, max_factor = params[:9]
    radius, robot_r, reach, dt, min_speed, cutoff_decays, progress = params[9:]
    ped_cutoff = 2 * radius + cutoff_decays * rep_range
    robot_cutoff = radius + robot_r + cutoff_decays * rep_range
    wall_cutoff = radius + cutoff_decays * wall_range
    n, p = factor.shape
    # Until a pedestrian's own last pass, out_vel holds its preferred velocity and out_pos the force
    # on it (m/s²): no scratch arrays to stream through memory.
    desired, force = out_vel, out_pos
    for i in numba.prange(n):
        m = scene[i]
        inv_cell = 1.0 / flow_cell[m]
        for j in range(p):  # preferred velocity (``crowd.preferred_velocity``)
            x, y = pos[i, j, 0], pos[i, j, 1]
            cx = min(max(int(math.floor((x - flow_origin[m, 0]) * inv_cell)), 0), flow_size[m, 0] - 1)
            cy = min(max(int(math.floor((y - flow_origin[m, 1]) * inv_cell)), 0), flow_size[m, 1] - 1)
            k = (m * rows + cy) * cols + cx  # row of ``table``; channels as ``ScenePeople.FLOW_*``
            if table[k, 8] > 0:
                if table[k, 2] >= one_way:
                    dx, dy = table[k, 0], table[k, 1]
                else:
                    ax, ay = table[k, 3], table[k, 4]
                    sign = -1.0 if direction[i, j, 0] * ax + direction[i, j, 1] * ay < 0 else 1.0
                    dx, dy = sign * ax, sign * ay
            else:
                hx, hy = table[k, 6] - x, table[k, 7] - y
                norm = max(math.sqrt(hx * hx + hy * hy), 1e-6)
                dx, dy = hx / norm, hy / norm
            speed = max(table[k, 5], min_speed) * factor[i, j]
            out_dir[i, j, 0], out_dir[i, j, 1] = dx, dy
            desired[i, j, 0], desired[i, j, 1] = dx * speed, dy * speed
            force[i, j, 0] = (desired[i, j, 0] - vel[i, j, 0]) / tau
            force[i, j, 1] = (desired[i, j, 1] - vel[i, j, 1]) / tau
        for j in range(p if rep > 0 else 0):  # each pair once: equal and opposite pushes
            for q in range(j + 1, p):
                dx, dy = pos[i, j, 0] - pos[i, q, 0], pos[i, j, 1] - pos[i, q, 1]
                px, py, d = _push(dx, dy, 2 * radius, rep, rep_range, ped_cutoff)
                if px == 0.0 and py == 0.0:
                    continue
                # weights: the push on j from q ahead of it (facing 1) counts fully, from behind ``rear``
                facing_j = -(out_dir[i, j, 0] * dx + out_dir[i, j, 1] * dy) / d
                facing_q = (out_dir[i, q, 0] * dx + out_dir[i, q, 1] * dy) / d
                weight_j = rear + (1 - rear) * (1 + facing_j) / 2
                weight_q = rear + (1 - rear) * (1 + facing_q) / 2
                force[i, j, 0] += px * weight_j
                force[i, j, 1] += py * weight_j
                force[i, q, 0] -= px * weight_q
                force[i, q, 1] -= py * weight_q
        for j in range(p):
            x, y = pos[i, j, 0], pos[i, j, 1]
            fx, fy = force[i, j, 0], force[i, j, 1]
            for c in range(circles.shape[1]):
                px, py, _ = _push(
                    x - circles[i, c, 0],
                    y - circles[i, c, 1],
                    radius + robot_r,
                    robot_rep,
                    rep_range,
                    robot_cutoff,
                )
                fx += px
                fy += py
            s0 = (walker[_cell(h, w, origins, res, m, x, y)] >> 1) * 0.01  # ``world_batch.walker_sdf``
            if s0 < wall_cutoff:
                gx = (walker[_cell(h, w, origins, res, m, x + res, y)] >> 1) * 0.01 - s0
                gy = (walker[_cell(h, w, origins, res, m, x, y + res)] >> 1) * 0.01 - s0
                g = max(math.sqrt(gx * gx + gy * gy), 1e-6)
                f = wall_rep * math.exp((radius - s0) / wall_range)
                fx += f * gx / g
                fy += f * gy / g
            vx = vel[i, j, 0] + dt * fx
            vy = vel[i, j, 1] + dt * fy
            limit = max_factor * math.sqrt(desired[i, j, 0] ** 2 + desired[i, j, 1] ** 2)
            scale = min(limit / max(math.sqrt(vx * vx + vy * vy), 1e-6), 1.0)
            nx, ny = x + vx * scale * dt, y + vy * scale * dt
            # The robot rule can only refuse a step that may end within ``reach`` of a circle: skip it
            # (and its square roots) when the robot is farther than ``reach`` plus the longest step.
            gap2_now = _min_gap2(circles, i, x, y)
            near = gap2_now <= (reach + limit * dt) ** 2
            tx, ty = x, y
            for option in range(3):  # the whole step, its x part, its y part
                ox = nx if option != 2 else x
                oy = ny if option != 1 else y
                if not walker[_cell(h, w, origins, res, m, ox, oy)] & 1:  # ``world_batch.walker_free``
                    continue
                if near:  # the rule of ``crowd.flow_step`` on squared distances
                    gap2 = _min_gap2(circles, i, ox, oy)
                    if gap2 <= reach * reach and gap2 < gap2_now:
                        continue
                tx, ty = ox, oy
                break
            out_pos[i, j, 0], out_pos[i, j, 1] = tx, ty
            vx, vy = (tx - x) / dt, (ty - y) / dt
            out_vel[i, j, 0], out_vel[i, j, 1] = vx, vy
            stalled[i, j] = 0.0 if math.sqrt(vx * vx + vy * vy) >= progress else stalled[i, j] + dt


def flow_step(
    world_np: dict,
    walker,
    walker_hw,
    walker_res,
    people_np: dict,
    scene,
    pos,
    vel,
    direction,
    factor,
    circles,
    params,
    stalled,
):
    """Fused twin of ``crowd.flow_step`` and ``crowd.stall_time``: new (pos, vel, direction) as
    (N, P, 2) float32 arrays; updates the stalled times ``stalled`` (N, P) s in place. ``walker``: the
    flat ``WorldBatch.walker_grid`` of the pedestrians' radius, of ``walker_hw`` (Hw, Ww) cells of
    ``walker_res`` m.

    ``params``: float64 array of the ``SocialForceCfg`` terms (relaxation time, repulsion, its range,
    robot repulsion, wall repulsion, its range, rear weight, one-way ratio, max speed factor), then the
    pedestrians' radius, the robot circles' radius, the robot reach,
    ``dt``, the slowest preferred speed, the push cut-off in decay lengths and the slowest speed
    that is progress (``crowd.flow_kernel_params``)."""
    out_pos, out_vel, out_dir = (np.empty_like(pos) for _ in range(3))
    _flow_step(
        walker,
        *walker_hw,
        world_np["origins"],
        walker_res,
        scene,
        people_np["flow_table"],
        *people_np["flow_hw"],
        people_np["flow_origin"],
        people_np["flow_cell"],
        people_np["flow_size"],
        pos,
        vel,
        direction,
        factor,
        circles,
        params,
        stalled,
        out_pos,
        out_vel,
        out_dir,
    )
    return out_pos, out_vel, out_dir
