"""The rasterizer against analytic geometry: depth of a box at a known distance, its projected edges,
off-centre principal points, and ids against the scene they came from."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from urbanverse.render.raster import Lighting, PinholeCamera, SceneBuilder, look_at, triplanar_uv
from urbanverse.render.scene_model import build_rasterizer, semantic_classes, semantic_id
from urbanverse.scene.record import load_scene


@pytest.fixture(scope="module")
def box_raster():
    """A 1 x 2 x 2 m box whose front face is the plane x = 5 m, on a large ground slab."""
    builder = SceneBuilder()
    builder.add_texture("grey", np.full((8, 8, 3), 200, np.uint8))
    box = trimesh.creation.box((1.0, 2.0, 2.0))
    builder.add_mesh("box", box.vertices, box.faces, triplanar_uv(box.vertices, box.faces, 0.5))
    builder.add_instance(
        "box", position=(5.5, 0, 1.0), quat_wxyz=(1, 0, 0, 0), rgba=(1, 0.3, 0.3, 1), texture="grey",
        instance_id=7, semantic_id=3, bounds=np.array([[5, -1, 0], [6, 1, 2]]),
    )  # fmt: skip
    slab = trimesh.creation.box((40, 40, 0.02))
    builder.add_mesh("slab", slab.vertices, slab.faces, None)
    builder.add_instance(
        "slab", position=(0, 0, -0.01), quat_wxyz=(1, 0, 0, 0), rgba=(0.6, 0.6, 0.6, 1), texture=None,
        instance_id=0, semantic_id=1, bounds=np.array([[-20, -20, -0.02], [20, 20, 0]]),
    )  # fmt: skip
    with builder.build(Lighting(), 320, 240) as raster:
        yield raster


def test_depth_of_a_box_face_matches_its_distance(box_raster):
    camera = PinholeCamera.from_hfov(320, 240, 90.0)
    out = box_raster.render(camera, look_at((0, 0, 1.0), (1, 0, 1.0)))
    face = out.instance == 7
    # Every pixel of the front face is at z-depth 5 m (z-depth, not ray length: the same across the face).
    assert face.sum() > 1000
    assert np.abs(out.depth[face] - 5.0).max() < 0.005
    # The ground seen below the box: z-depth of the plane z = 0 from a camera 1 m up is f / (v - cy).
    rows = np.arange(200, 240)
    expected = camera.fy * 1.0 / (rows + 0.5 - camera.cy)
    assert np.allclose(out.depth[rows, 10], expected, rtol=0.01)
    assert out.semantic[230, 10] == 1 and out.instance[230, 10] == 0
    # Sky: no depth, id 0.
    assert out.depth[0, 0] == 0 and out.instance[0, 0] == 0 and out.semantic[0, 0] == 0


@pytest.mark.parametrize(
    "camera",
    [
        PinholeCamera.from_hfov(320, 240, 90.0),
        PinholeCamera(width=320, height=240, fx=180.0, fy=150.0, cx=140.0, cy=130.0),
    ],
    ids=["centred", "off-centre"],
)
def test_box_edges_project_where_the_pinhole_model_says(box_raster, camera):
    pose = look_at((0, 0, 1.0), (1, 0, 1.0))
    out = box_raster.render(camera, pose)
    corners = np.array([[5.0, 1.0, 2.0], [5.0, -1.0, 0.0]])  # top-left and bottom-right of the front face
    (u0, v0), (u1, v1) = camera.project(corners, pose)[0]
    rows, cols = np.nonzero(out.instance == 7)
    assert abs(cols.min() - u0) <= 1 and abs(cols.max() + 1 - u1) <= 1
    assert abs(rows.min() - v0) <= 1 and abs(rows.max() + 1 - v1) <= 1


def test_rgb_depth_and_ids_are_aligned_and_typed(box_raster):
    camera = PinholeCamera.from_hfov(320, 240, 60.0)
    out = box_raster.render(camera, look_at((1, -2, 2.5), (5.5, 0, 1.0)))
    assert out.rgb.shape == (240, 320, 3) and out.rgb.dtype == np.uint8
    assert out.depth.shape == out.instance.shape == out.semantic.shape == (240, 320)
    assert out.depth.dtype == np.float32 and out.instance.dtype == np.int32
    # Box pixels are red, ground pixels grey.
    assert out.rgb[out.instance == 7].mean(axis=0)[0] > 1.5 * out.rgb[out.instance == 7].mean(axis=0)[1]
    rgb_only = box_raster.render(camera, look_at((1, -2, 2.5), (5.5, 0, 1.0)), ids=False)
    assert np.array_equal(rgb_only.rgb, out.rgb)


def test_sun_casts_a_shadow_behind_the_box(box_raster):
    # Lighting() default sun travels along (-0.4, -0.3, -0.87): the shadow falls on the -x, -y side.
    camera = PinholeCamera.from_hfov(320, 240, 70.0)
    pose = look_at((5.5, 0.0, 12.0), (5.5, 0.01, 0.0))
    out = box_raster.render(camera, pose)
    (us, vs), (ul, vl) = camera.project(np.array([[4.2, -0.9, 0.0], [8.0, 3.0, 0.0]]), pose)[0]
    shadowed = out.rgb[int(vs), int(us)].astype(int).sum()
    lit = out.rgb[int(vl), int(ul)].astype(int).sum()
    assert shadowed < 0.8 * lit


def _back_project(camera: PinholeCamera, pose: np.ndarray, depth: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """World points ``(N, 3)`` of the masked pixels (pixel centres) from their z-depths."""
    v, u = np.nonzero(mask)
    z = depth[v, u]
    cam = np.stack([(u + 0.5 - camera.cx) / camera.fx * z, (v + 0.5 - camera.cy) / camera.fy * z, z], axis=1)
    return cam @ pose[:3, :3].T + pose[:3, 3]


VIEWPOINTS = {"aerial": (-14, -9, 9), "aerial2": (14, 9, 6), "street": (0, -5.5, 1.7)}


@pytest.mark.parametrize("eye", VIEWPOINTS.values(), ids=VIEWPOINTS.keys())
def test_instance_and_semantic_ids_match_the_scene(example_dir, eye):
    """Every pixel labelled object i back-projects into object i's box (position, yaw, size) in scene.json."""
    scene = load_scene(example_dir)
    camera = PinholeCamera.from_hfov(320, 240, 80.0)
    pose = look_at(eye, (0, 0, 0.5))
    with build_rasterizer(scene, example_dir, 320, 240) as raster:
        out = raster.render(camera, pose)
    seen = [i for i in np.unique(out.instance) if i > 0]
    assert len(seen) >= 4
    for iid in seen:
        obj = scene.objects[iid - 1]
        mask = out.instance == iid
        points = _back_project(camera, pose, out.depth, mask) - np.asarray(obj.position)
        c, s = np.cos(obj.yaw), np.sin(obj.yaw)
        local = points @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])  # into the object's frame
        half = np.asarray(obj.size) / 2 + 0.1  # 10 cm: depth quantisation at grazing angles
        inside = (np.abs(local[:, 0]) <= half[0]) & (np.abs(local[:, 1]) <= half[1])
        inside &= (local[:, 2] >= -0.1) & (local[:, 2] <= obj.size[2] + 0.1)
        assert inside.mean() > 0.97, (obj.id, inside.mean())
        assert set(np.unique(out.semantic[mask])) == {semantic_id(obj.category)}
    ground = out.instance == 0
    ground_ids = {semantic_id(r.type) for r in scene.ground}
    assert set(np.unique(out.semantic[ground & (out.depth > 0)])) <= ground_ids
    names = semantic_classes()
    assert names[semantic_id("sidewalk")] == "sidewalk" and names[semantic_id("sedan")] == "sedan"


def test_thumbnails_render_from_worker_threads():
    """Each thread gets its own OpenGL context (the viewer materialises assets from worker threads)."""
    from concurrent.futures import ThreadPoolExecutor

    from urbanverse.assets.catalogue import build_parts, catalogue_entries
    from urbanverse.render.thumbnail import render_thumbnail

    parts = build_parts(catalogue_entries(4)[1])[1]
    images = [np.asarray(render_thumbnail(parts, 64))]
    for _ in range(2):
        with ThreadPoolExecutor(max_workers=1) as pool:
            images.append(np.asarray(pool.submit(render_thumbnail, parts, 64).result()))
    assert all(np.array_equal(images[0], image) for image in images[1:])
    assert images[0].std() > 5  # an asset on a ground square, not a blank image


def test_a_lone_triangle_renders():
    """A triangular ground region has three vertices; MuJoCo needs four (split at the centroid)."""
    builder = SceneBuilder()
    tri = np.array([[0.0, -2.0, 0.0], [6.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    faces = np.array([[0, 1, 2]])
    builder.add_mesh("tri", tri, faces, triplanar_uv(tri, faces, 1.0))
    builder.add_texture("grey", np.full((8, 8, 3), 180, np.uint8))
    builder.add_instance(
        "tri", position=(0, 0, 0), quat_wxyz=(1, 0, 0, 0), rgba=(1, 1, 1, 1), texture="grey",
        instance_id=0, semantic_id=1, bounds=np.array([tri.min(axis=0), tri.max(axis=0)]),
    )  # fmt: skip
    with builder.build(Lighting(), 64, 48) as raster:
        out = raster.render(PinholeCamera.from_hfov(64, 48, 60.0), look_at((2, 0, 3), (2.01, 0, 0)))
    assert (out.semantic == 1).sum() > 100
