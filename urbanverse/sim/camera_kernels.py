"""Numba kernels of the batched RGB camera: the appearance z-buffer and the column renderer.

Written by hand because no library renders thousands of small views of a layered height map in one
call on a CPU: MuJoCo's rasterizer (``urbanverse.render``) draws one view per call at about 2 ms
each on llvmpipe, whatever the image size.

Column rendering (``render_columns``) works on a *level* virtual camera, whose image columns are
vertical fans of rays over one horizontal ground track each. Marching a column's track front to
back, every sample cell's layers (a base column from below the ground up to its top, and one
overhead span) cover a contiguous range of rows, found in O(1) from the pinhole geometry; rows are
painted the first time a layer covers them, so each pixel is written once and a column costs
O(samples + rows). A pitched camera is a rotation of the level one about the same centre, so its
image is the level image resampled through a fixed per-pixel map (``pixel_map``), nearest pixel.
"""

from __future__ import annotations

import math

import numpy as np

from urbanverse.sim.kernels import _inline, _jit, numba

#: Helpers inlined into the renderer's loops at numba's IR level, so that the per-pixel calls pass no
#: arrays (an ordinary call updates their reference counts).
_always_inline = numba.njit(inline="always", cache=True) if numba is not None else (lambda fn: fn)

prange = numba.prange if numba is not None else range

#: Height values (m) meaning "no surface" (see ``urbanverse.sim.appearance``).
_BELOW, _ABOVE = -1.0e8, 1.0e8


@_inline
def _band(lo, hi, lam_hi, iy, ix, z, lam):  # pragma: no cover - compiled
    if z < lo[iy, ix]:
        lo[iy, ix] = z
    if z > hi[iy, ix]:
        hi[iy, ix] = z
        lam_hi[iy, ix] = lam


@_inline
def _footprint_segment(a, b, c):  # pragma: no cover - compiled
    """The two corners of a vertical triangle farthest apart in xy: its footprint segment."""
    best, sx0, sy0, sx1, sy1 = -1.0, a[0], a[1], b[0], b[1]
    for u, v in ((a, b), (b, c), (c, a)):
        d = (u[0] - v[0]) ** 2 + (u[1] - v[1]) ** 2
        if d > best:
            best, sx0, sy0, sx1, sy1 = d, u[0], u[1], v[0], v[1]
    return sx0, sy0, sx1, sy1


@_inline
def _segment_distance(qx, qy, x0, y0, x1, y1):  # pragma: no cover - compiled
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0.0 else min(1.0, max(0.0, ((qx - x0) * dx + (qy - y0) * dy) / length2))
    return math.hypot(qx - x0 - t * dx, qy - y0 - t * dy)


@_inline
def splat_parts(
    tris,
    part_start,
    part_base,
    part_tint,
    gap,
    origin,
    res,
    to_sun,
    top,
    sun_term,
    base_part,
    over_bottom,
    over_top,
    over_part,
    side_sum,
    side_weight,
):  # pragma: no cover - compiled
    """Z-buffer world triangles ``tris`` (T, 3, 3) m, grouped by part (part ``p``: triangles
    ``part_start[p]:part_start[p + 1]``), into the appearance layers, in place.

    Per part and cell (cells whose centre lies within half a cell of a triangle's footprint) the
    part spans the heights ``[lo, hi]`` its triangles reach there (barycentric, clamped to each
    triangle; vertical triangles count along their footprint segment with their lowest and highest
    corner). Where ``lo`` is more than ``gap`` above the part's base height ``part_base[p]`` the
    span is overhead (a crown, a branch, a lamp head) and widens the overhead layer; elsewhere the
    part stands on the ground and raises ``top``, recording the part and the Lambert factor (upward
    normal against ``to_sun``) of the triangle that reached ``hi``. Its steep triangles (walls, doors,
    windows, tyres) add its tint ``part_tint[p]`` (P, 3), weighted by their area per footprint cell,
    to ``side_sum`` (2, H, W, 3) and ``side_weight`` (2, H, W) of the layer (0 base, 1 overhead)
    the part is in there: what the cell's sides look like.
    """
    h, w = top.shape
    pad = 0.5 * res
    for p in range(part_start.shape[0] - 1):
        t0, t1 = part_start[p], part_start[p + 1]
        if t0 == t1:
            continue
        px0, py0 = tris[t0:t1, :, 0].min(), tris[t0:t1, :, 1].min()
        px1, py1 = tris[t0:t1, :, 0].max(), tris[t0:t1, :, 1].max()
        bx0 = max(int(math.floor((px0 - pad - origin[0]) / res)), 0)
        by0 = max(int(math.floor((py0 - pad - origin[1]) / res)), 0)
        bx1 = min(int(math.ceil((px1 + pad - origin[0]) / res)), w)
        by1 = min(int(math.ceil((py1 + pad - origin[1]) / res)), h)
        if bx0 >= bx1 or by0 >= by1:
            continue
        lo = np.full((by1 - by0, bx1 - bx0), np.inf)
        hi = np.full((by1 - by0, bx1 - bx0), -np.inf)
        lam_hi = np.zeros((by1 - by0, bx1 - bx0))
        side = np.zeros((by1 - by0, bx1 - bx0))
        for t in range(t0, t1):
            a, b, c = tris[t, 0], tris[t, 1], tris[t, 2]
            nx = (b[1] - a[1]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[1] - a[1])
            ny = (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2])
            nz = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
            norm = math.sqrt(nx * nx + ny * ny + nz * nz)
            if norm == 0.0:
                continue
            if nz < 0.0:
                nx, ny, nz = -nx, -ny, -nz
            lam = max(0.0, (nx * to_sun[0] + ny * to_sun[1] + nz * to_sun[2]) / norm)
            det = (b[1] - c[1]) * (a[0] - c[0]) + (c[0] - b[0]) * (a[1] - c[1])
            x0 = max(int(math.floor((min(a[0], b[0], c[0]) - pad - origin[0]) / res)), bx0)
            x1 = min(int(math.ceil((max(a[0], b[0], c[0]) + pad - origin[0]) / res)), bx1)
            y0 = max(int(math.floor((min(a[1], b[1], c[1]) - pad - origin[1]) / res)), by0)
            y1 = min(int(math.ceil((max(a[1], b[1], c[1]) + pad - origin[1]) / res)), by1)
            steep = abs(nz) < 0.7 * norm
            if abs(det) < 1e-4 * res * res:  # vertical: its footprint is a segment
                sx0, sy0, sx1, sy1 = _footprint_segment(a, b, c)
                n_cells = max(1.0, math.hypot(sx1 - sx0, sy1 - sy0) / res)
                for iy in range(y0, y1):
                    qy = origin[1] + (iy + 0.5) * res
                    for ix in range(x0, x1):
                        qx = origin[0] + (ix + 0.5) * res
                        if _segment_distance(qx, qy, sx0, sy0, sx1, sy1) > pad:
                            continue
                        _band(lo, hi, lam_hi, iy - by0, ix - bx0, min(a[2], b[2], c[2]), 0.0)
                        _band(lo, hi, lam_hi, iy - by0, ix - bx0, max(a[2], b[2], c[2]), 0.0)
                        side[iy - by0, ix - bx0] += 0.5 * norm / n_cells
                continue
            e_a = math.hypot(b[0] - c[0], b[1] - c[1])
            e_b = math.hypot(c[0] - a[0], c[1] - a[1])
            e_c = math.hypot(a[0] - b[0], a[1] - b[1])
            area2 = abs(det)
            for iy in range(y0, y1):
                qy = origin[1] + (iy + 0.5) * res
                for ix in range(x0, x1):
                    qx = origin[0] + (ix + 0.5) * res
                    l1 = ((b[1] - c[1]) * (qx - c[0]) + (c[0] - b[0]) * (qy - c[1])) / det
                    l2 = ((c[1] - a[1]) * (qx - c[0]) + (a[0] - c[0]) * (qy - c[1])) / det
                    l3 = 1.0 - l1 - l2
                    # Distance outside each edge (m): barycentric coordinate times the height over it.
                    if -l1 * area2 / e_a > pad or -l2 * area2 / e_b > pad or -l3 * area2 / e_c > pad:
                        continue
                    l1, l2, l3 = max(l1, 0.0), max(l2, 0.0), max(l3, 0.0)
                    z = (l1 * a[2] + l2 * b[2] + l3 * c[2]) / (l1 + l2 + l3)
                    _band(lo, hi, lam_hi, iy - by0, ix - bx0, z, lam)
                    if steep:
                        cells = max(1.0, 0.5 * area2 / (res * res))
                        side[iy - by0, ix - bx0] += 0.5 * norm / cells
        for iy in range(by0, by1):
            for ix in range(bx0, bx1):
                z_lo, z_hi = lo[iy - by0, ix - bx0], hi[iy - by0, ix - bx0]
                if z_hi == -np.inf:
                    continue
                overhead = z_lo > part_base[p] + gap
                layer = 1 if overhead else 0
                weight = side[iy - by0, ix - bx0]
                for ch in range(3):
                    side_sum[layer, iy, ix, ch] += weight * part_tint[p, ch]
                side_weight[layer, iy, ix] += weight
                if overhead:
                    over_bottom[iy, ix] = min(over_bottom[iy, ix], z_lo)
                    if z_hi > over_top[iy, ix]:
                        over_top[iy, ix] = z_hi
                        over_part[iy, ix] = p
                elif z_hi > top[iy, ix]:
                    top[iy, ix] = z_hi
                    base_part[iy, ix] = p
                    sun_term[iy, ix] = lam_hi[iy - by0, ix - bx0]


#: Byte offsets in a cell's record (``render_columns``): lit colours (RGB) and semantic ids.
BASE_TOP, BASE_SIDE, BASE_CLASS = 12, 15, 18
OVER_TOP, OVER_SIDE, OVER_BOTTOM, OVER_CLASS = 19, 22, 25, 28
#: Bytes per cell record.
RECORD = 32

#: Cells per side of the square blocks the layers are stored in (``1 << BLOCK_SHIFT``).
BLOCK_SHIFT = 3
BLOCK = 1 << BLOCK_SHIFT
_MASK = BLOCK - 1
_BLOCK_CELLS = BLOCK * BLOCK


@_always_inline
def _shade(out, o, texel, tint, a, light, head_term, lamps):  # pragma: no cover - compiled
    """Write ``texel * min(1, tint * (ambient + sun * light + headlight * head_term))`` (channels
    ``a:a+3`` of the layers, 8-bit; ``lamps``: ambient RGB, sun RGB, headlight) to ``out[o:o+3]``:
    OpenGL's fixed-function lighting, which clamps the lit material colour before it modulates the
    texture, as MuJoCo draws."""
    for ch in range(3):
        lit = tint[a + ch] * (lamps[ch] + lamps[3 + ch] * light + lamps[6] * head_term) / 255.0
        out[o + ch] = np.uint8(texel[a + ch] * min(1.0, lit) + 0.5)


@_always_inline
def _copy3(out, o, looks, cell, at):  # pragma: no cover - compiled
    out[o] = looks[cell, at]
    out[o + 1] = looks[cell, at + 1]
    out[o + 2] = looks[cell, at + 2]


@_always_inline
def _block_exit(cx, cy, inv_ux, inv_uy, x0, y0, size):  # pragma: no cover - compiled
    """Distance along the ray (cx, cy) + t (ux, uy) (given as 1 / ux, 1 / uy, infinite for 0) at
    which it leaves the square block [x0, x0 + size] x [y0, y0 + size] that it is in."""
    tx = (x0 + (size if inv_ux > 0.0 else 0.0) - cx) * inv_ux
    ty = (y0 + (size if inv_uy > 0.0 else 0.0) - cy) * inv_uy
    return min(tx if tx == tx else np.inf, ty if ty == ty else np.inf)


@_jit
def render_columns(  # pragma: no cover - compiled
    fine, coarse, level_res, level_blocks, coarse_from, origins,
    scene, cam, yaw,
    col_tan, row_tan, focal, centre_row, pix_slope, pix_inv, sky,
    dist, inv_dist, step,
    peds, ped_base, ped_radius, ped_height, ped_albedo, ped_class,
    lamps, sun_dir,
    pixel_map, depth_scale, max_range,
    out_rgb, out_depth, out_class,
):  # fmt: skip
    """Render images ``out_rgb`` (K, H*W*3) uint8, z-depth ``out_depth`` (K, H*W) m and semantic ids
    ``out_class`` (K, H*W) for cameras at ``cam`` (K, 3) m looking along ``yaw`` (K,) rad.

    ``fine`` and ``coarse`` are the appearance layers at two resolutions ``level_res`` (2,) m, as
    tuples (heights, looks, block_max). ``heights`` (cells, 8) float32 and ``looks`` (cells, 32)
    uint8 are two views of one buffer, a 32-byte record per cell, so a sample reads one cache line:
    floats 0-2 the base top, overhead bottom and overhead top (m), then at the byte offsets
    ``BASE_TOP`` ... ``OVER_CLASS`` each layer's lit colours (``ColumnRenderer``: top faces, sides,
    undersides of overhangs) and semantic ids. Samples from index ``coarse_from`` on, whose steps are
    longer than a coarse cell, read the coarse level (a mipmap: fewer cache misses, less aliasing).
    Layers are stored block by block (``BLOCK`` x ``BLOCK`` cells contiguous; each scene ``bh`` x
    ``bw`` blocks, ``level_blocks`` (2, 2)), so a ray's march stays in few cache lines: cell
    ``(m, iy, ix)`` is ``((m * bh + iy // BLOCK) * bw + ix // BLOCK) * BLOCK**2 + (iy % BLOCK) *
    BLOCK + ix % BLOCK``. ``block_max`` (blocks,) is the highest surface in each block (m), over which
    the march jumps where every unpainted ray passes above. The virtual level camera has columns at
    image-plane x = ``col_tan`` (Wv,), rows at y = ``row_tan`` (Hv,) (y down), focal length
    ``focal`` px; per virtual pixel (Hv*Wv,) the ray's rise per metre ``pix_slope``, ``pix_inv`` =
    1 / sqrt(1 + slope^2) and each scene's sky colour ``sky`` (M, Hv*Wv*3). ``pixel_map`` (H*W,)
    picks each output pixel's virtual pixel and ``depth_scale`` (H*W,) turns its level z-depth into
    the output camera's. Pedestrians: vertical cylinders at ``peds`` (K, P, 2) m standing on
    ``ped_base`` (K, P) m, in colours ``ped_albedo`` (3C,) 0-255 in turn. Light per scene: ``lamps``
    (M, 7) ambient RGB, sun RGB and headlight strength, ``sun_dir`` (M, 3) the sunlight's direction.
    """
    n_img = scene.shape[0]
    wv, hv = col_tan.shape[0], row_tan.shape[0]
    n_samples = dist.shape[0]
    n_peds = peds.shape[1]
    n_colours = ped_albedo.shape[0] // 3
    ped_texel = np.full(ped_albedo.shape[0], 255.0)  # pedestrians: plain colours, no texture
    for k in prange(n_img):
        colour = np.empty(hv * wv * 3, np.uint8)
        zbuf = np.empty(hv * wv, np.float32)
        cls = np.zeros(hv * wv, np.uint8)
        filled = np.zeros((wv, hv), np.bool_)
        n_filled = np.zeros(wv, np.int64)
        open_row = np.full(wv, hv, np.int64)  # per column: rows >= open_row are painted by base layers
        m = scene[k]
        lamps_m, sun_d = lamps[m], sun_dir[m]
        ox, oy = origins[m, 0], origins[m, 1]
        cx, cy, cz = cam[k, 0], cam[k, 1], cam[k, 2]
        for level in range(2):
            # One level's arrays, bound once per image: rebinding arrays costs reference-count updates.
            heights, looks, block_max = fine if level == 0 else coarse
            res = level_res[level]
            bh, bw = level_blocks[level, 0], level_blocks[level, 1]
            hp, wp = bh * BLOCK, bw * BLOCK
            size = BLOCK * res
            s_begin = 0 if level == 0 else coarse_from
            s_end = coarse_from if level == 0 else n_samples
            for c in range(wv):
                if n_filled[c] == hv:
                    continue
                ang = yaw[k] - math.atan(col_tan[c])
                ux, uy = math.cos(ang), math.sin(ang)
                nc = math.sqrt(1.0 + col_tan[c] * col_tan[c])
                inv_nc = 1.0 / nc
                rows_per = focal * nc  # image rows per unit of (height - camera height) / distance
                row_off = centre_row - 0.5
                inv_ux = 1.0 / ux if abs(ux) > 1e-12 else np.inf
                inv_uy = 1.0 / uy if abs(uy) > 1e-12 else np.inf
                col_filled = filled[c]
                col_open, col_n = open_row[c], n_filled[c]
                fx, fy = (cx - ox) / res, (cy - oy) / res  # the column's track in cell units
                gx, gy = ux / res, uy / res
                block_now = -1
                s = s_begin - 1
                while s + 1 < s_end:
                    s += 1
                    d = dist[s]
                    xf, yf = fx + gx * d, fy + gy * d
                    if xf < 0.0 or yf < 0.0 or xf >= wp or yf >= hp:
                        break  # the grid is a rectangle around the camera: a ray that left it is gone
                    ix, iy = int(xf), int(yf)
                    b = (m * bh + (iy >> BLOCK_SHIFT)) * bw + (ix >> BLOCK_SHIFT)
                    if b != block_now and col_open > 0:
                        # Entering a block: jump over it when everything in it is below every unpainted ray.
                        block_now = b
                        x0 = ox + (ix >> BLOCK_SHIFT) * size
                        y0 = oy + (iy >> BLOCK_SHIFT) * size
                        d_out = _block_exit(cx, cy, inv_ux, inv_uy, x0, y0, size)
                        low = -row_tan[col_open - 1] * inv_nc
                        if block_max[b] < cz + low * (d_out if low < 0.0 else d):
                            s = np.searchsorted(dist[:s_end], d_out) - 1  # the next sample is past the block
                            continue
                    cell = b * _BLOCK_CELLS + ((iy & _MASK) << BLOCK_SHIFT) + (ix & _MASK)
                    top, lo, hi = heights[cell, 0], heights[cell, 1], heights[cell, 2]
                    rows_d = rows_per * inv_dist[s]
                    if lo <= hi:
                        first = int(math.ceil(rows_d * (cz - hi) + row_off))
                        last = int(math.floor(rows_d * (cz - lo) + row_off))
                        for r in range(max(first, 0), min(last + 1, col_open)):
                            if col_filled[r]:
                                continue
                            col_filled[r] = True
                            col_n += 1
                            p = r * wv + c
                            slope = pix_slope[p]
                            zbuf[p] = d * inv_nc
                            cls[p] = looks[cell, OVER_CLASS]
                            z_ray = cz + slope * d
                            if slope < 0.0 and z_ray >= hi + 1.5 * slope * step[s] - 0.01:
                                _copy3(colour, 3 * p, looks, cell, OVER_TOP)
                            elif slope > 0.0 and z_ray <= lo + 1.5 * slope * step[s] + 0.01:
                                _copy3(colour, 3 * p, looks, cell, OVER_BOTTOM)
                            else:
                                _copy3(colour, 3 * p, looks, cell, OVER_SIDE)
                    if top > _BELOW:
                        first = min(max(int(math.ceil(rows_d * (cz - top) + row_off)), 0), hv)
                        for r in range(first, col_open):
                            if col_filled[r]:
                                continue
                            col_filled[r] = True
                            col_n += 1
                            p = r * wv + c
                            slope = pix_slope[p]
                            zbuf[p] = d * inv_nc
                            cls[p] = looks[cell, BASE_CLASS]
                            if slope < 0.0 and cz + slope * d >= top + 1.5 * slope * step[s] - 0.01:
                                _copy3(colour, 3 * p, looks, cell, BASE_TOP)
                            else:
                                _copy3(colour, 3 * p, looks, cell, BASE_SIDE)
                        col_open = min(col_open, first)
                    if col_n == hv:
                        break
                open_row[c], n_filled[c] = col_open, col_n
        for c in range(wv):
            ang = yaw[k] - math.atan(col_tan[c])
            ux, uy = math.cos(ang), math.sin(ang)
            nc = math.sqrt(1.0 + col_tan[c] * col_tan[c])
            filled_c = filled[c]
            for r in range(hv):
                if not filled_c[r]:
                    p = r * wv + c
                    colour[3 * p : 3 * p + 3] = sky[m, 3 * p : 3 * p + 3]
                    zbuf[p] = np.inf
            side_sun = max(0.0, sun_d[0] * ux + sun_d[1] * uy)
            for q in range(n_peds):
                qx, qy = peds[k, q, 0] - cx, peds[k, q, 1] - cy
                along = qx * ux + qy * uy
                perp2 = qx * qx + qy * qy - along * along
                if perp2 > ped_radius * ped_radius:
                    continue
                t = along - math.sqrt(ped_radius * ped_radius - perp2)
                if t <= 0.05:
                    continue
                z_level = t / nc
                top_y = -nc * (ped_base[k, q] + ped_height - cz) / t
                bottom_y = -nc * (ped_base[k, q] - cz) / t
                first = max(int(math.ceil(focal * top_y + centre_row - 0.5)), 0)
                last = min(int(math.floor(focal * bottom_y + centre_row - 0.5)), hv - 1)
                for r in range(first, last + 1):
                    p = r * wv + c
                    if zbuf[p] <= z_level:
                        continue
                    zbuf[p] = z_level
                    cls[p] = ped_class
                    _shade(
                        colour,
                        3 * p,
                        ped_texel,
                        ped_albedo,
                        3 * (q % n_colours),
                        side_sun,
                        pix_inv[p],
                        lamps_m,
                    )
        for i in range(pixel_map.shape[0]):
            j = pixel_map[i]
            out_rgb[k, 3 * i] = colour[3 * j]
            out_rgb[k, 3 * i + 1] = colour[3 * j + 1]
            out_rgb[k, 3 * i + 2] = colour[3 * j + 2]
            out_depth[k, i] = min(zbuf[j] * depth_scale[i], max_range)
            out_class[k, i] = cls[j]
