"""Ground meshes: top area, outward curb walls, ramps, convex prisms for MuJoCo."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
import trimesh

from urbanverse.scene.ground import ground_mesh, top_triangle_prisms, top_triangles
from urbanverse.scene.record import GroundRegion, Material

MAT = Material(name="m", base_color=(0.5, 0.5, 0.5))
# An L-shaped (non-convex) sidewalk, given clockwise to check re-orientation.
L_SHAPE = ((0, 0), (0, 2), (1, 2), (1, 1), (2, 1), (2, 0))


def test_top_surface_covers_the_polygon_at_its_elevation():
    region = GroundRegion(id="s", type="sidewalk", polygon=L_SHAPE, elevation=0.15, material=MAT)
    vertices, tris = top_triangles(region)
    area = trimesh.triangles.area(vertices[tris]).sum()
    assert area == pytest.approx(shapely.Polygon(L_SHAPE).area)
    normals = trimesh.triangles.normals(vertices[tris])[0]
    assert np.all(normals[:, 2] > 0.99)  # facing up
    assert np.allclose(vertices[:, 2], 0.15)


def test_curb_walls_face_outwards_and_reach_the_road():
    region = GroundRegion(id="s", type="sidewalk", polygon=L_SHAPE, elevation=0.15, material=MAT)
    mesh = ground_mesh(region)
    walls = np.abs(mesh.face_normals[:, 2]) < 1e-6
    assert walls.sum() == 2 * len(L_SHAPE)
    centroid = shapely.Polygon(L_SHAPE)
    for center, normal in zip(mesh.triangles_center[walls], mesh.face_normals[walls], strict=True):
        outside = shapely.Point(center[:2] + 0.01 * normal[:2])
        assert not centroid.contains(outside)
    assert mesh.vertices[:, 2].min() == pytest.approx(0.0)


def test_flat_road_has_no_walls_and_no_prisms():
    road = GroundRegion(id="r", type="road", polygon=((0, 0), (4, 0), (4, 3), (0, 3)), material=MAT)
    assert len(ground_mesh(road).faces) == 2
    assert top_triangle_prisms(road) == []


def test_ramp_slopes_per_vertex_and_prisms_are_convex():
    ramp = GroundRegion(
        id="ramp",
        type="ramp",
        polygon=((0, 0), (2, 0), (2, 1), (0, 1)),
        vertex_elevation=(0.0, 0.0, 0.15, 0.15),
        material=MAT,
    )
    vertices, _ = top_triangles(ramp)
    assert sorted(vertices[:, 2]) == pytest.approx([0, 0, 0.15, 0.15])
    prisms = top_triangle_prisms(ramp)
    assert len(prisms) == 2
    for prism in prisms:
        hull = trimesh.convex.convex_hull(np.unique(prism, axis=0))
        assert hull.volume > 0
