"""Ingest: formats, normalisation, UrbanVerse-100K pairs, and one-by-one rejection of bad files."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
import trimesh
from PIL import Image
from pxr import Usd, UsdGeom, Vt
from scipy.spatial import ConvexHull
from shapely.geometry import Polygon

from urbanverse.assets.convex_parts import convex_parts
from urbanverse.assets.ingest import IngestCfg, ingest
from urbanverse.assets.record import load_asset, load_collision_parts, load_visual_parts
from urbanverse.assets.std_record import front_yaw_deg, load_annotation
from urbanverse.assets.store import AssetStore
from urbanverse.errors import InputError, MissingDependencyError
from urbanverse.render.thumbnail import library_thumbnail


def _y_up(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """Turn a Z-up mesh into the Y-up convention of glTF."""
    return mesh.copy().apply_transform(trimesh.transformations.rotation_matrix(-math.pi / 2, (1, 0, 0)))


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    post = trimesh.creation.box((0.3, 0.3, 1.2))  # 1.2 m tall, centred at the origin (base at -0.6)
    _y_up(post).export(d / "post.glb")
    trimesh.creation.icosphere(radius=0.5).export(d / "ball.obj")
    trimesh.creation.box((10.0, 10.0, 2000.0)).export(d / "tower.stl")  # 2 km: absurd
    trimesh.PointCloud(np.random.default_rng(0).random((50, 3))).export(d / "cloud.ply")
    (d / "corrupt.glb").write_bytes(b"glTF\x02\x00\x00\x00garbage" * 10)
    (d / "empty.obj").write_text("")
    (d / "notes.txt").write_text("not a mesh")
    # An UrbanVerse-100K style pair: the mesh in centimetres, the annotation in metres.
    bench = trimesh.util.concatenate(
        [
            trimesh.creation.box((45, 160, 6), trimesh.transformations.translation_matrix((0, 0, 42))),
            trimesh.creation.box((45, 6, 42), trimesh.transformations.translation_matrix((0, 75, 21))),
            trimesh.creation.box((45, 6, 42), trimesh.transformations.translation_matrix((0, -75, 21))),
        ]
    )
    _y_up(bench).export(d / "std_abc123.glb")
    (d / "std_abc123.json").write_text(
        json.dumps(
            {
                "uid": "abc123",
                "category": "bench",
                "height": 0.45,
                "mass": 38.0,
                "friction_coefficient": 0.55,
                "movable": False,
                "materials": ["wood", "metal"],
                "description": "a plain wooden bench",
            }
        )
    )
    stage = Usd.Stage.CreateNew(str(d / "slab.usda"))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    mesh = UsdGeom.Mesh.Define(stage, "/Slab")
    box = trimesh.creation.box((2.0, 1.0, 0.2))
    mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(box.vertices.astype(np.float32)))
    mesh.CreateFaceVertexCountsAttr([3] * len(box.faces))
    mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(box.faces.astype(np.int32).ravel()))
    stage.Save()
    return d


def test_batch_keeps_good_files_and_rejects_bad_ones(files, tmp_path):
    with AssetStore(tmp_path / "lib") as store:
        accepted, rejected = ingest(
            [files], store, IngestCfg(category="bollard"), thumbnail=library_thumbnail
        )
        assert len(store) == len(accepted) == 4
    reasons = {r.path.name: r.reason for r in rejected}
    assert set(reasons) == {"tower.stl", "cloud.ply", "corrupt.glb", "empty.obj"}
    assert "absurd scale" in reasons["tower.stl"]
    assert "no triangles" in reasons["cloud.ply"] or "no geometry" in reasons["cloud.ply"]
    assert "damaged GLB" in reasons["corrupt.glb"]


def test_normalised_z_up_base_at_zero(files, tmp_path):
    with AssetStore(tmp_path / "lib") as store:
        accepted, _ = ingest([files / "post.glb"], store, thumbnail=library_thumbnail)
        (post,) = accepted
        assert post.height == pytest.approx(1.2) and post.length == pytest.approx(0.3)
        folder = store.root / "ingested" / post.uid
        parts = load_collision_parts(folder, load_asset(folder))
        low = min(p.bounds[0, 2] for p in parts)
        assert low == pytest.approx(0.0, abs=1e-6)
        assert post.source.kind == "ingested" and len(post.source.sha256) == 64


def test_urbanverse_pair_keeps_annotations(files, tmp_path):
    with AssetStore(tmp_path / "lib") as store:
        (bench,), _ = ingest([files / "std_abc123.glb"], store, thumbnail=library_thumbnail)
        assert store.get("abc123") == bench
    assert bench.uid == "abc123" and bench.category == "bench"
    assert bench.height == pytest.approx(0.45)  # scaled from centimetres by the annotated height
    assert bench.width == pytest.approx(1.6)
    assert bench.mass == 38.0 and bench.value_origin["mass"] == "annotated"
    assert bench.friction_coefficient == 0.55 and bench.value_origin["friction_coefficient"] == "annotated"
    assert bench.value_origin["volume"] == "measured"
    assert bench.description == "a plain wooden bench"
    assert bench.materials[0] == "wood"


def test_usd_input(files, tmp_path):
    with AssetStore(tmp_path / "lib") as store:
        (slab,), _ = ingest([files / "slab.usda"], store, thumbnail=library_thumbnail)
    assert (slab.length, slab.width, slab.height) == pytest.approx((2.0, 1.0, 0.2))


def test_usd_polygons_fan_triangulated_in_order():
    """Triangles (first, i, i + 1) of each polygon, polygon by polygon, as a plain loop gives them."""
    from urbanverse.assets.ingest import _fan_triangles

    counts = np.array([3, 4, 5, 3])
    indices = np.arange(counts.sum())[::-1] % 9
    expected, start = [], 0
    for n in counts:
        expected += [[indices[start], indices[start + i], indices[start + i + 1]] for i in range(1, n - 1)]
        start += n
    assert _fan_triangles(counts, indices, 9).tolist() == expected


# --- convex decomposition and the annotated front ------------------------------------------------

#: Side profile (x: depth, z: height, m) of a block chair: a seat 0.45 m high, front at x = 0.5, and a
#: backrest 0.1 m thick at the back (x = 0..0.1) up to 0.9 m. One closed, L-shaped solid.
CHAIR_PROFILE = [(0.0, 0.0), (0.5, 0.0), (0.5, 0.45), (0.1, 0.45), (0.1, 0.9), (0.0, 0.9)]
CHAIR_WIDTH = 0.6


def _chair() -> trimesh.Trimesh:
    """The block chair in our frame (Z-up, front +X), 0.6 m wide along y."""
    chair = trimesh.creation.extrude_polygon(Polygon(CHAIR_PROFILE), CHAIR_WIDTH)  # profile in x-y, along z
    chair.apply_transform(trimesh.transformations.rotation_matrix(math.pi / 2, (1, 0, 0)))  # y -> z
    chair.apply_translation((0.0, CHAIR_WIDTH, 0.0))  # from y = -0.6..0 to 0..0.6
    assert chair.is_volume and chair.volume / chair.convex_hull.volume < 0.8
    return chair


def _chair_gltf_front() -> trimesh.Trimesh:
    """The chair as a glTF file carries it: Y-up, front along glTF +Z (our -Y once turned Z-up)."""
    turned = _chair().apply_transform(trimesh.transformations.rotation_matrix(-math.pi / 2, (0, 0, 1)))
    return _y_up(turned)


def _inside(parts: list[trimesh.Trimesh], point) -> bool:
    """Whether ``point`` lies in any of the convex ``parts``."""
    for part in parts:
        eq = ConvexHull(part.vertices).equations
        if np.all(eq[:, :3] @ np.asarray(point) + eq[:, 3] <= 1e-9):
            return True
    return False


def test_non_convex_component_cut_into_pieces_that_leave_the_notch_empty():
    chair = _chair()
    parts = convex_parts(chair)
    assert len(parts) > 1
    notch = (0.2, CHAIR_WIDTH / 2, 0.6)  # above the seat, in front of the backrest, inside the hull
    assert _inside([chair.convex_hull], notch) and not _inside(parts, notch)
    for inside_chair in [(0.3, 0.3, 0.2), (0.05, 0.3, 0.8)]:  # the seat block, the backrest
        assert _inside(parts, inside_chair)
    again = convex_parts(chair)  # coacd runs with a fixed seed: the same pieces every time
    assert all(np.array_equal(a.vertices, b.vertices) for a, b in zip(parts, again, strict=True))
    assert len(convex_parts(trimesh.creation.box((1.0, 0.5, 0.3)))) == 1


def test_texture_seams_do_not_cut_a_solid_into_flat_pieces(tmp_path):
    """A textured GLB repeats a vertex for each UV it has: the box is still one solid part."""
    box = trimesh.creation.box((0.4, 0.4, 0.4))
    box.unmerge_vertices()
    uv = np.random.default_rng(0).random((len(box.vertices), 2))
    box.visual = trimesh.visual.TextureVisuals(uv=uv, image=Image.new("RGB", (4, 4), (200, 20, 20)))
    box.export(tmp_path / "textured.glb")
    with AssetStore(tmp_path / "lib") as store:
        (asset,), rejected = ingest([tmp_path / "textured.glb"], store, thumbnail=library_thumbnail)
        folder = store.root / "ingested" / asset.uid
        assert not rejected and len(load_collision_parts(folder, asset)) == 1


def _pair(folder, uid: str, annotation: dict) -> None:
    _chair_gltf_front().export(folder / f"std_{uid}.glb")
    (folder / f"std_{uid}.json").write_text(json.dumps({"category": "chair", "height": 0.9, **annotation}))


def test_front_view_turns_the_front_to_plus_x(tmp_path):
    _pair(tmp_path, "front0", {"frontView": 0})
    _pair(tmp_path, "front1", {"frontView": 1})
    with AssetStore(tmp_path / "lib") as store:
        accepted, rejected = ingest([tmp_path], store, thumbnail=library_thumbnail)
        assert not rejected
        assets = {a.uid: a for a in accepted}
        visual = {
            uid: load_visual_parts(store.root / "ingested" / uid, a)[0].mesh.vertices
            for uid, a in assets.items()
        }
        parts = load_collision_parts(store.root / "ingested" / "front0", assets["front0"])
    front0, front1 = assets["front0"], assets["front1"]
    # Render 0 shows the glTF front: turned by 90 degrees, depth along x, width along y (coacd pieces
    # lie within 0.1 mm of the surface).
    assert (front0.length, front0.width) == pytest.approx((0.5, CHAIR_WIDTH), abs=1e-3)
    assert (front1.length, front1.width) == pytest.approx((CHAIR_WIDTH, 0.5), abs=1e-3)
    assert front0.source.parameters == {"front_yaw_deg": 90.0, "front_from": "frontView"}
    assert front1.source.parameters == {"front_yaw_deg": 0.0, "front_from": "frontView"}
    quarter_turn = trimesh.transformations.rotation_matrix(math.pi / 2, (0, 0, 1))[:3, :3]
    np.testing.assert_allclose(visual["front0"], visual["front1"] @ quarter_turn.T, atol=1e-6)
    backrest = max(parts, key=lambda p: p.bounds[1, 2])
    assert backrest.bounds[1, 0] < 0  # the backrest at the back (-X), the seat's front towards +X
    assert not _inside(parts, (-0.05, 0.0, 0.6))  # the notch in front of the backrest is empty


def test_front_yaw_convention():
    for view in range(4):
        assert front_yaw_deg({"frontView": view}) == ((90 - 90 * view) % 360, "frontView")
        pose = -math.radians(90 * view)  # as objathor's pipeline writes it from frontView
        yaw, field = front_yaw_deg({"frontView": 3 - view, "pose_z_rot_angle": pose})
        assert yaw == pytest.approx((90 - 90 * view) % 360) and field == "pose_z_rot_angle"
    assert front_yaw_deg({}) is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"frontView": 7}, "std_bad.json: frontView: 7 is outside [0, 3]"),
        (
            {"frontView": "abc"},
            "std_bad.json: frontView: expected an integer 0-3 (the render showing the front), got 'abc'",
        ),
        ({"frontView": 1.5}, "std_bad.json: frontView: expected an integer 0-3"),
        ({"frontView": True}, "std_bad.json: frontView: expected an integer 0-3"),
        ({"pose_z_rot_angle": 90}, "std_bad.json: pose_z_rot_angle: 90 is outside ±6.28319 rad"),
        (
            {"pose_z_rot_angle": "north"},
            "std_bad.json: pose_z_rot_angle: expected a number of radians, got 'north'",
        ),
    ],
)
def test_bad_orientation_refused_in_one_line(tmp_path, fields, message):
    (tmp_path / "std_bad.json").write_text(json.dumps({"category": "chair", **fields}))
    with pytest.raises(InputError) as error:
        load_annotation(tmp_path / "std_bad.json")
    assert str(error.value).startswith(message) and "\n" not in str(error.value)
    _chair_gltf_front().export(tmp_path / "std_bad.glb")
    with AssetStore(tmp_path / "lib") as store:
        accepted, (rejected,) = ingest([tmp_path / "std_bad.glb"], store, thumbnail=library_thumbnail)
    assert not accepted and rejected.reason == f"annotation {error.value}"


def test_absent_or_null_orientation_keeps_the_files_frame(tmp_path):
    _pair(tmp_path, "plain", {"frontView": None, "pose_z_rot_angle": None})
    assert not {"frontView", "pose_z_rot_angle"} & set(load_annotation(tmp_path / "std_plain.json"))
    with AssetStore(tmp_path / "lib") as store:
        (plain,), _ = ingest([tmp_path], store, thumbnail=library_thumbnail)
    assert plain.source.parameters is None  # not turned: the glTF front stays along -Y
    assert (plain.length, plain.width) == pytest.approx((CHAIR_WIDTH, 0.5), abs=1e-3)


def test_without_coacd_ingest_stops_with_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "coacd", None)  # import coacd raises ImportError
    with (
        AssetStore(tmp_path / "lib") as store,
        pytest.raises(MissingDependencyError, match="pip install 'coacd"),
    ):
        ingest([tmp_path], store, thumbnail=library_thumbnail)
