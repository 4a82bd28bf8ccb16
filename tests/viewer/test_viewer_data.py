"""The viewer's plain-data parts: scene listing and path safety, episodes, maps, meshes, attribute tables."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
import trimesh

from tests.conftest import EXAMPLE_SCENE
from tests.viewer.conftest import COUSIN_OBJECT, COUSIN_UID
from urbanverse.assets.record import load_asset
from urbanverse.errors import InputError
from urbanverse.scene.record import load_scene
from urbanverse.viewer import catalog, geometry, topdown


def test_list_scenes_folder_of_scenes_and_single_scene(scenes_dir: Path) -> None:
    assert list(catalog.list_scenes(scenes_dir)) == ["example", "example_b"]
    assert list(catalog.list_scenes(scenes_dir / "example")) == ["example"]


@pytest.mark.parametrize("name", ["..", "../example", "/etc", "example/../..", "nope", ""])
def test_scene_folder_refuses_names_outside_the_listing(scenes_dir: Path, name: str) -> None:
    with pytest.raises(InputError):
        catalog.scene_folder(scenes_dir, name)


def test_symlinked_scene_outside_the_root_is_not_listed(tmp_path: Path) -> None:
    root = tmp_path / "scenes"
    root.mkdir()
    (root / "outside").symlink_to(EXAMPLE_SCENE)
    assert catalog.list_scenes(root) == {}


def test_episodes_load_and_broken_files_are_skipped(scenes_dir: Path, tmp_path: Path) -> None:
    episodes = catalog.load_episodes(scenes_dir / "example")
    assert [e.name for e in episodes] == ["ep_000"]
    assert episodes[0].positions.shape == (4, 3) and episodes[0].success is True
    bad = tmp_path / "scene" / "episodes"
    bad.mkdir(parents=True)
    (bad / "a.json").write_text(json.dumps({"positions": [[0, 0]]}))
    (bad / "b.json").write_text("{not json")
    assert catalog.load_episodes(tmp_path / "scene") == []


def test_map_and_thumbnail_have_the_scene_aspect_and_colours() -> None:
    scene = load_scene(EXAMPLE_SCENE)
    image = np.asarray(topdown.render_map(scene, 400, highlight="car_1"))
    assert image.shape[1] == 400 and 60 < image.shape[0] < 400
    assert (np.abs(image.astype(int) - topdown.HIGHLIGHT).sum(axis=-1) < 30).any()
    assert np.asarray(topdown.render_thumbnail(scene, 120)).shape[1] == 120


def test_ground_mesh_is_textured_and_overlay_is_above_the_curb() -> None:
    scene = load_scene(EXAMPLE_SCENE)
    mesh = geometry.ground_display_mesh(scene.ground[0], EXAMPLE_SCENE)
    assert mesh.visual.kind == "texture" and len(mesh.faces) > 0
    assert geometry.overlay_height(scene) > max(r.elevation for r in scene.ground)
    verts, faces = geometry.flat_overlay(scene.walkable_area[0], 0.2)
    assert np.allclose(verts[:, 2], 0.2) and faces.shape[1] == 3


def _glb_json(data: bytes) -> dict:
    (length,) = struct.unpack_from("<I", data, 12)
    return json.loads(data[20 : 20 + length])


def test_object_glb_turns_part_colours_into_materials(tmp_path: Path) -> None:
    folder = tmp_path / "asset"
    folder.mkdir()
    asset = load_asset(EXAMPLE_SCENE / "assets" / "bollard_a")
    (folder / "asset.json").write_text((EXAMPLE_SCENE / "assets" / "bollard_a" / "asset.json").read_text())
    box = trimesh.creation.box((0.2, 0.2, 0.9))
    box.visual = trimesh.visual.ColorVisuals(
        box, face_colors=np.tile([51, 102, 153, 255], (12, 1)).astype(np.uint8)
    )
    box.export(folder / asset.visual_mesh)
    materials = _glb_json(geometry.object_glb(folder, asset))["materials"]
    assert np.allclose(
        materials[0]["pbrMetallicRoughness"]["baseColorFactor"][:3], [0.2, 0.4, 0.6], atol=0.01
    )


def test_object_attributes_name_every_field_the_issue_asks_for(scenes_dir: Path) -> None:
    scene = load_scene(scenes_dir / "example")
    obj = next(o for o in scene.objects if o.id == COUSIN_OBJECT)
    asset = load_asset(scenes_dir / "example" / obj.asset.path)
    table = geometry.markdown_table(geometry.object_attributes(obj, asset))
    for label in (
        "category",
        "asset uid",
        "dimensions",
        "mass",
        "friction",
        "movable",
        "source track",
        "confidence",
    ):
        assert f"**{label}" in table
    assert COUSIN_UID in table


def test_cameras_look_at_the_scene_and_the_object() -> None:
    scene = load_scene(EXAMPLE_SCENE)
    view = geometry.overview_camera(scene)
    assert view.position[2] > 5 and np.allclose(view.look_at[:2], [0.0, 0.0], atol=0.5)
    car = next(o for o in scene.objects if o.id == "car_1")
    close = geometry.object_camera(car)
    assert np.linalg.norm(np.subtract(close.position, close.look_at)) < 20
