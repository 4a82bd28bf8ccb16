"""Ground classes from a bird's-eye colour grid: road against walked paving in sun and shade, a
plaza's second paving, painted crossings against curb lines and light sidewalks, the grey corners
that crossings land on, and road-coloured ground beside the walk or beyond the curbs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from urbanverse.layout.ground import _CLASS, _classify, _place_road
from urbanverse.layout.ground_cfg import GroundCfg
from urbanverse.layout.road_extent import crossing_landings, crossing_shapes, path_sides

CELL = GroundCfg().cell_m


def _road_behind_path(
    classes: np.ndarray, path: np.ndarray, origin: np.ndarray, cfg: GroundCfg
) -> np.ndarray:
    """Road cells behind the walk (:func:`path_sides` on a class grid)."""
    return path_sides(classes == _CLASS["road"], classes == _CLASS["crosswalk"], path, origin, cfg)[0]


def _crossing_landings(classes: np.ndarray, cfg: GroundCfg) -> np.ndarray:
    crossings = crossing_shapes(classes == _CLASS["crosswalk"], cfg.landing_min_elongation)
    return crossing_landings(classes == _CLASS["road"], crossings, cfg)


def _srgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)], np.float32)


def _street(rows: dict[str, tuple[float, float]], width_m: float = 30.0) -> tuple[np.ndarray, dict]:
    """A grid ``(H, W, 3)`` of bands across y (rows), each ``name: (y0, y1)`` in metres, plus the
    cell masks of each band. Colours by band name prefix."""
    colours = {
        # Lab lightness 10, 30 and 62: the residential round-trip tour's asphalt and sidewalk.
        "road": "#1c1c1c",
        "shade": "#4d453a",
        "sun": "#a89570",
        "grey": "#a09e98",
        "red": "#9a5444",
        # Lab (50, 3, 21), (28, 1, 7) and (17, 1, 6): a yellow brick paving in sun, shade and a building's
        # shadow (the intersection tour); (14, 1, -2): its patched asphalt.
        "brick": "#887453",
        "brickshade": "#484137",
        "brickshadow": "#2f2921",
        "asphalt": "#242326",
        # Lab (22, 11, 8): red pavers in a building's shade; (36, 0, 1): asphalt in the sun.
        "redshade": "#482e29",
        "sunasphalt": "#555553",
    }
    height = max(y1 for _, y1 in rows.values())
    grid = np.zeros((int(round(height / CELL)), int(round(width_m / CELL)), 3), np.float32)
    masks = {}
    for name, (y0, y1) in rows.items():
        mask = np.zeros(grid.shape[:2], bool)
        mask[int(round(y0 / CELL)) : int(round(y1 / CELL))] = True
        grid[mask] = _srgb(colours[name.split("_")[0]])
        masks[name] = mask
    return grid, masks


def _path(row_m: float, width_m: float = 30.0) -> np.ndarray:
    """Cells ``(N, 2)`` (row, col) of a camera walking along y = ``row_m``."""
    cols = np.arange(0, int(width_m / CELL), 5)
    return np.stack([np.full_like(cols, int(row_m / CELL)), cols], axis=1)


def test_sidewalk_in_sun_and_shade_stays_sidewalk_and_the_road_stays_road():
    grid, masks = _street({"road": (0, 7), "shade": (7, 13), "sun": (13, 14.5)})
    seen = np.ones(grid.shape[:2], bool)
    classes = _classify(grid, seen, _path(8.0), GroundCfg())
    assert (classes[masks["road"]] == _CLASS["road"]).mean() > 0.95
    for part in ("shade", "sun"):
        assert (classes[masks[part]] == _CLASS["sidewalk"]).mean() > 0.95
    # Two clusters of the raw colours put the sunlit paving against everything else (the failure this
    # rule fixes).
    two = _classify(grid, seen, _path(8.0), GroundCfg(colour_clusters=2, chroma_lightness=0.0))
    assert (two[masks["road"]] == _CLASS["sidewalk"]).mean() > 0.95


def test_red_paving_in_shade_is_not_asphalt():
    """The walk crosses red pavers in sun and in shade (L* 22: near the asphalt in shade, L* 14; a*, b*
    under half the sunlit ones'); the asphalt lies in shade and in sun (L* 36). Three clusters for four
    colours: with the raw colours the shaded pavers went with the shaded asphalt, the walked cluster,
    and that road became sidewalk (the intersection tour); with chroma taken relative to lightness
    the pavers stay together and the asphalt stays road."""
    rows = {"red": (0, 3), "redshade": (3, 9), "asphalt": (9, 14), "sunasphalt": (14, 20)}
    grid, masks = _street(rows)
    walk = np.concatenate([_path(1.5), _path(4.5), _path(6.0), _path(7.5)])
    seen = np.ones(grid.shape[:2], bool)
    classes = _classify(grid, seen, walk, GroundCfg())
    assert (classes[masks["redshade"]] == _CLASS["sidewalk"]).mean() > 0.95
    for part in ("asphalt", "sunasphalt"):
        assert (classes[masks[part]] == _CLASS["road"]).mean() > 0.95
    raw = _classify(grid, seen, walk, GroundCfg(chroma_lightness=0.0))
    assert (raw[masks["asphalt"]] == _CLASS["sidewalk"]).mean() > 0.95


def test_a_paving_in_deep_shadow_keeps_its_hue_and_stays_sidewalk():
    """The walk passes paving in sun and in shade; a strip in a building's deeper shadow is as dark as
    the asphalt but yellowish: with lightness counted in full, k-means put it with the road."""
    rows = {"brick": (0, 6), "brickshade": (6, 11), "brickshadow": (11, 13), "asphalt": (13, 20)}
    grid, masks = _street(rows)
    walk = np.concatenate([_path(3.0), _path(8.5)])
    classes = _classify(grid, np.ones(grid.shape[:2], bool), walk, GroundCfg())
    assert (classes[masks["brickshadow"]] == _CLASS["sidewalk"]).mean() > 0.95
    assert (classes[masks["asphalt"]] == _CLASS["road"]).mean() > 0.95


def test_plaza_paving_beside_the_walked_one_is_not_road():
    grid, masks = _street({"road": (0, 6), "grey": (6, 9), "red": (9, 16)})
    classes = _classify(grid, np.ones(grid.shape[:2], bool), _path(7.5), GroundCfg())
    assert (classes[masks["road"]] == _CLASS["road"]).mean() > 0.95
    assert (classes[masks["red"]] == _CLASS["sidewalk"]).mean() > 0.95


# Fresh white paint, and worn paint only 15 L* lighter than the asphalt (L* 10): a round-trip tour's
# worn zebra was missed at a 20 L* contrast threshold.
@pytest.mark.parametrize("paint", ["#e6e6df", "#3d3d3d"])
def test_zebra_crossing_is_found_but_curb_line_and_light_sidewalk_are_not(paint):
    grid, masks = _street({"road": (0, 8), "sun": (8, 11)})
    white = _srgb("#e6e6df")
    # Zebra bars 0.5 m wide, 0.5 m apart, across the road between x = 10 and 13 m.
    xs = np.arange(grid.shape[1]) * CELL
    bars = (xs >= 10) & (xs < 13) & (np.floor(xs / 0.5) % 2 == 0)
    grid[: int(8 / CELL), bars] = _srgb(paint)
    # A 0.2 m light curb line along the road edge.
    grid[int(7.8 / CELL) : int(8.0 / CELL)] = white
    classes = _classify(grid, np.ones(grid.shape[:2], bool), _path(9.5), GroundCfg())
    crossing = np.zeros(grid.shape[:2], bool)
    crossing[: int(7.6 / CELL), (xs >= 10) & (xs < 13)] = True
    assert (classes[crossing] == _CLASS["crosswalk"]).mean() > 0.8
    found = classes == _CLASS["crosswalk"]
    assert not found[masks["sun"]].any()
    assert found[:, (xs < 8) | (xs > 15)].sum() == 0  # the curb line away from the bars


def test_a_walk_that_crosses_the_road_on_a_zebra_leaves_the_road_road():
    """The camera walks the sidewalk (y = 9.5 m, x < 10 m), then crosses on a zebra at x = 10-14 m:
    a third of its steps fall on the road's asphalt between the bars. Before, that made the asphalt a
    walked paving and the whole road sidewalk (a round-trip tour's ground IoU 0.33)."""
    grid, masks = _street({"road": (0, 8), "grey": (8, 11)})
    xs = np.arange(grid.shape[1]) * CELL
    bars = (xs >= 10) & (xs < 14) & (np.floor(xs / 0.5) % 2 == 0)
    grid[: int(8 / CELL), bars] = _srgb("#e6e6df")
    along = _path(9.5, width_m=10.0)
    rows = np.arange(int(0.5 / CELL), int(9.5 / CELL), 5)
    across = np.stack([rows, np.full_like(rows, round(12.7 / CELL))], axis=1)  # between two bars
    classes = _classify(grid, np.ones(grid.shape[:2], bool), np.vstack([along, across]), GroundCfg())
    road_away = masks["road"] & ((xs < 8) | (xs > 16))[None]
    assert (classes[road_away] == _CLASS["road"]).mean() > 0.95
    assert (classes[masks["grey"]] == _CLASS["sidewalk"]).mean() > 0.95


def test_with_no_path_in_view_the_largest_paving_is_road():
    """A static camera high above a light asphalt street with a dark sidewalk strip (vtest.avi)."""
    grid, masks = _street({"grey": (0, 12), "shade": (12, 14)})
    seen = np.ones(grid.shape[:2], bool)
    seen[-5:] = False  # the ground under the camera is out of view
    classes = _classify(grid, seen, _path(13.9), GroundCfg())
    assert (classes[masks["grey"]] == _CLASS["road"]).mean() > 0.95
    assert (classes[masks["shade"] & seen] == _CLASS["sidewalk"]).mean() > 0.95


def test_road_behind_the_walked_sidewalk_becomes_terrain():
    """A facade cast onto its lot looks like road; the road (most road cells) lies on the other side
    of the path."""
    cfg = GroundCfg()
    classes = np.zeros((100, 150), np.int32)  # rows: y from -10 m, cols: x from 0 m (0.2 m cells)
    origin = np.array([0.0, -10.0])

    def band(y0: float, y1: float) -> tuple[slice, slice]:
        return slice(int((y0 + 10) / CELL), int((y1 + 10) / CELL)), slice(None)

    classes[band(-2, 2)] = _CLASS["sidewalk"]
    classes[band(2, 10)] = _CLASS["road"]
    classes[band(-5, -3)] = _CLASS["road"]  # facade cast onto the lot behind the sidewalk
    path = np.stack([np.linspace(1, 29, 20), np.zeros(20)], axis=1)
    behind = _road_behind_path(classes, path, origin, cfg)
    assert behind[band(-5, -3)].all()
    assert not behind[band(2, 10)].any()
    # A short walk (a few photos) or a static camera gives no road side: nothing changes.
    assert not _road_behind_path(classes, path[:3], origin, cfg).any()
    assert not _road_behind_path(classes, np.repeat(path[:1], 20, axis=0), origin, cfg).any()


def test_grey_corner_where_a_crossing_lands_is_sidewalk_but_the_road_beside_it_is_not():
    """An intersection's corner square in grey paving clusters with the asphalt; the crossing (6 m
    across the road, 3 m wide) lands on it, while the road on either side of the crossing stays road."""
    classes = np.full((60, 100), _CLASS["road"], np.int32)  # 12 m x 20 m of 0.2 m cells
    rows, cols = slice(int(4.5 / CELL), int(7.5 / CELL)), slice(int(4 / CELL), int(10 / CELL))
    classes[rows, cols] = _CLASS["crosswalk"]
    landings = _crossing_landings(classes, GroundCfg())
    corner = np.zeros(classes.shape, bool)
    corner[rows, int(10 / CELL) : int(13 / CELL)] = True  # up to 3 m beyond the crossing's end
    corner[rows, int(1 / CELL) : int(4 / CELL)] = True
    assert landings[corner].all()
    assert landings.sum() == corner.sum()  # nothing beside the crossing, nothing farther out
    # A crossing as wide as it is long has no clear direction: nothing changes.
    classes[int(3 / CELL) : int(9 / CELL), cols] = _CLASS["crosswalk"]
    assert not _crossing_landings(classes, GroundCfg()).any()


def test_path_positions_that_see_no_road_do_not_decide_the_road_side():
    """Most of the walk sees no road (a square, a turn): those positions have no road cells and no
    say. Counted as 'no road on the left', they outvoted the two positions that see a stretch of road
    on their left, whose road was then taken for a lot behind the path."""
    cfg = GroundCfg()
    classes = np.zeros((100, 200), np.int32)  # rows: y from -10 m, cols: x from 0 m (0.2 m cells)
    origin = np.array([0.0, -10.0])
    road_y, road_x = slice(int(12 / CELL), int(20 / CELL)), slice(int(20 / CELL), int(22 / CELL))
    classes[road_y, road_x] = _CLASS["road"]  # y 2..10 m, x 20..22 m: seen from two positions
    path = np.stack([np.linspace(0.5, 39.5, 40), np.zeros(40)], axis=1)  # a position every metre
    behind = _road_behind_path(classes, path, origin, cfg)
    assert not behind.any()


def test_a_lot_larger_and_nearer_than_the_road_is_terrain_when_a_crossing_marks_the_road():
    """Grey gravel lots beside the walk (y -10..-2 m) take more cells, nearer the camera, than the road
    (y 3..8 m): by the share of road cells the road side was the lots' and nothing changed. The road
    joined to a crossing is the street's, and decides the side; the lots become terrain, the street
    keeps its road."""
    cfg = GroundCfg()
    classes = np.zeros((100, 200), np.int32)  # rows: y from -10 m, cols: x from 0 m (0.2 m cells)
    origin = np.array([0.0, -10.0])

    def band(y0: float, y1: float, x0: float = 0.0, x1: float = 40.0) -> tuple[slice, slice]:
        return slice(int((y0 + 10) / CELL), int((y1 + 10) / CELL)), slice(int(x0 / CELL), int(x1 / CELL))

    classes[band(-2, 3)] = _CLASS["sidewalk"]
    classes[band(-10, -2)] = _CLASS["road"]  # the lots
    classes[band(3, 8)] = _CLASS["road"]
    path = np.stack([np.linspace(1, 39, 20), np.zeros(20)], axis=1)
    assert not _road_behind_path(classes, path, origin, cfg)[band(-10, -2.5)].any()  # no crossing seen
    classes[band(3, 8, 30, 33)] = _CLASS["crosswalk"]
    behind = _road_behind_path(classes, path, origin, cfg)
    assert behind[band(-10, -3.1)].all()
    assert not behind[band(3, 8)].any()


def test_a_sidewalk_of_light_tiles_along_the_walk_is_no_crossing():
    """Grey pavers with light tiles (bars 0.5 m apart) along a 27 m walk look like a ladder crossing;
    a crossing spans a road, 3-20 m long. The same bars over 6 m are a crossing."""
    grid, masks = _street({"road": (0, 8), "grey": (8, 12)}, width_m=30.0)
    xs = np.arange(grid.shape[1]) * CELL
    tiles = (xs >= 1) & (xs < 28) & (np.floor(xs / 0.5) % 2 == 0)
    grid[int(8.5 / CELL) : int(11.5 / CELL), tiles] = _srgb("#e6e6df")
    classes = _classify(grid, np.ones(grid.shape[:2], bool), _path(10.0), GroundCfg())
    assert not (classes == _CLASS["crosswalk"]).any()
    short = tiles & (xs < 7)
    grid[int(8.5 / CELL) : int(11.5 / CELL), tiles & ~short] = _srgb("#a09e98")
    classes = _classify(grid, np.ones(grid.shape[:2], bool), _path(10.0), GroundCfg())
    assert (classes[int(9 / CELL) : int(11 / CELL), short] == _CLASS["crosswalk"]).mean() > 0.8


def _grid(width_m: float = 60.0) -> tuple[np.ndarray, np.ndarray, callable]:
    """An empty class grid 30 m deep (y from -10 m) and ``width_m`` wide (x from 0), its origin, and a
    function giving the cells of ``y0 <= y < y1, x0 <= x < x1`` (m)."""
    classes = np.zeros((int(30 / CELL), int(width_m / CELL)), np.int32)

    def cells(y0: float, y1: float, x0: float = 0.0, x1: float = width_m) -> tuple[slice, slice]:
        return slice(int((y0 + 10) / CELL), int((y1 + 10) / CELL)), slice(int(x0 / CELL), int(x1 / CELL))

    return classes, np.array([0.0, -10.0]), cells


def test_beyond_the_far_curb_of_a_crossing_lie_the_far_sidewalk_and_the_lots():
    """The camera walks the sidewalk (y -2..2 m) along the road (y 2..10 m) and crosses it on a zebra
    at x = 30..33 m. Beyond the far curb, a sidewalk in shade (y 10..14 m) and grey lots (y 14..20 m)
    clustered with the asphalt: the crossing's length says where the road ends. Along the walk the
    road side is kept whole (a crossing's axis a few degrees off would cut the road 30 m away)."""
    cfg = GroundCfg()

    def street() -> np.ndarray:
        classes, _, _ = _grid()
        classes[cells(-2, 2)] = _CLASS["sidewalk"]
        classes[cells(2, 20)] = _CLASS["road"]
        classes[cells(2, 10, 30, 33)] = _CLASS["crosswalk"]
        return classes

    _, origin, cells = _grid()
    walk = np.stack([np.linspace(1, 31, 16), np.zeros(16)], axis=1)
    path = np.vstack([walk, np.stack([np.full(5, 31.5), np.linspace(2, 9, 5)], axis=1)])
    classes = street()
    _place_road(classes, path, origin, cfg)
    assert (classes[cells(2, 10, 0, 28)] == _CLASS["road"]).all()
    assert (classes[cells(2, 10, 35, 60)] == _CLASS["road"]).all()
    assert (classes[cells(11.2, 14, 34, 60)] == _CLASS["sidewalk"]).all()
    assert (classes[cells(15.2, 20, 34, 60)] == _CLASS["terrain"]).all()
    assert (classes[cells(11, 14, 0, 10)] == _CLASS["road"]).all()  # beside the walk
    classes = street()
    _place_road(classes, path, origin, dataclasses.replace(cfg, curb_reach_m=0.0))
    assert (classes[cells(11.2, 20, 34, 60)] == _CLASS["road"]).all()


def test_a_side_streets_crossing_leaves_the_road_of_the_street_walked_along():
    """The walk (y = 0, x 1..40 m, road y 2..10 m on its left) ends crossing a side street (road
    x 42..50 m, y < 10 m) on a zebra along the walk: that crossing's road is the side street's, and
    the main street's road beside the walk stays road."""
    cfg = GroundCfg()
    classes, origin, cells = _grid()
    classes[cells(-10, 2, 0, 42)] = _CLASS["sidewalk"]
    classes[cells(2, 10)] = _CLASS["road"]
    classes[cells(-10, 2, 42, 50)] = _CLASS["road"]
    classes[cells(-1, 2, 42, 50)] = _CLASS["crosswalk"]
    path = np.stack([np.linspace(1, 48, 24), np.zeros(24)], axis=1)
    _place_road(classes, path, origin, cfg)
    assert (classes[cells(2, 10, 0, 40)] == _CLASS["road"]).all()
    assert (classes[cells(-10, -1.5, 42, 50)] == _CLASS["road"]).all()
