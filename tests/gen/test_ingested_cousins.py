"""An asset a user ingests takes part in gen: a red park bench, made by hand and ingested with an
UrbanVerse-100K annotation, stands in a street; gen on a walk past it places that bench, not a
procedural one, the scene's USD offers it among the object's cousins, and the viewer draws it and
every cousin."""

from __future__ import annotations

import io
import json
import shutil

import numpy as np
import trimesh
from typer.testing import CliRunner

from tests.conftest import EXAMPLE_SCENE
from urbanverse.assets.ingest import ingest
from urbanverse.assets.store import AssetStore
from urbanverse.cli.app import app
from urbanverse.render.thumbnail import library_thumbnail
from urbanverse.render.tour import TourCfg, run_render_tour
from urbanverse.viewer.cache import ViewerCache

RED, IRON = (200, 25, 25, 255), (60, 60, 60, 255)


def _red_bench_pair(folder) -> None:
    """``std_redbench01.glb`` + ``.json``: the example street's wooden bench made a common park bench's
    size (2.0 x 0.6 m) with a red seat and back, saved as glTF has it (Y-up, its front along +Z), and
    the annotation naming its class and its front view."""
    bench = trimesh.load(EXAMPLE_SCENE / "assets" / "bench_wood_a" / "visual.glb")
    for name, geometry in bench.geometry.items():
        geometry.visual = trimesh.visual.ColorVisuals(
            geometry, face_colors=RED if name in ("seat", "back") else IRON
        )
    bench.apply_transform(np.diag([2.0 / 1.6, 0.6 / 0.45, 1.0, 1.0]))
    bench.apply_transform(
        trimesh.transformations.rotation_matrix(-np.pi / 2, (1, 0, 0))
    )  # front -y -> glTF +Z
    bench.export(folder / "std_redbench01.glb")
    annotation = {"category": "bench", "description": "red park bench with iron legs", "frontView": 0}
    (folder / "std_redbench01.json").write_text(json.dumps(annotation))


def test_gen_places_an_ingested_asset_that_fits_better_than_any_procedural_one(tmp_path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    _red_bench_pair(files)
    (files / "crate.glb").write_bytes(trimesh.creation.box((0.8, 0.8, 0.8)).export(file_type="glb"))
    with AssetStore(tmp_path / "library") as store:
        accepted, rejected = ingest([files], store, thumbnail=library_thumbnail)
    assert not rejected and len(accepted) == 2
    red = next(a for a in accepted if a.category == "bench")
    assert np.allclose((red.length, red.width), (0.6, 2.0), atol=1e-3)  # its front turned to +x

    street = tmp_path / "street"  # the example street with the red bench in place of its wooden ones
    shutil.copytree(EXAMPLE_SCENE, street)
    shutil.copytree(tmp_path / "library" / "ingested" / red.uid, street / "assets" / red.uid)
    data = json.loads((street / "scene.json").read_text())
    for obj in data["objects"]:
        if obj["category"] == "bench":  # the wooden bench faces -y in its frame, the ingested one +x
            obj |= {"asset": {"uid": red.uid, "path": f"assets/{red.uid}"}, "yaw": obj["yaw"] - np.pi / 2}
            obj["size"] = [red.length, red.width, red.height]
    (street / "scene.json").write_text(json.dumps(data))
    video = tmp_path / "walk.mp4"
    run_render_tour(street, video, TourCfg(seconds=5.0, fps=10.0, width=480, height=270, seed=1))

    out = tmp_path / "generated"
    result = CliRunner().invoke(
        app, ["gen", str(video), "-o", str(out), "--library", str(tmp_path / "library")]
    )
    assert result.exit_code == 0, result.output
    scene = json.loads((out / "scene.json").read_text())
    benches = [o for o in scene["objects"] if o["category"] == "bench"]
    assert benches and all(o["asset"]["uid"] == red.uid for o in benches)
    assert json.loads((out / "assets" / red.uid / "asset.json").read_text())["source"]["kind"] == "ingested"
    assert f"prepend references = @./assets/{red.uid}/asset.usda@" in (out / "scene.usda").read_text()
    cache = ViewerCache()  # the viewer's "shown asset" switch draws the placed asset and every cousin
    for ref in (r for o in benches for r in (o["asset"], *o["cousins"])):
        assert trimesh.load(io.BytesIO(cache.glb(out / ref["path"])), file_type="glb").bounds is not None
