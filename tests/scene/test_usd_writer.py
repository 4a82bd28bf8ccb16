"""USD export: validators pass, everything round-trips, failures leave no half-written file."""

from __future__ import annotations

import dataclasses
import math
import shutil

import numpy as np
import pytest
from pxr import Usd, UsdGeom, UsdLux, UsdPhysics, UsdShade

from urbanverse.assets.record import load_asset
from urbanverse.scene import usd_writer
from urbanverse.scene.record import load_scene
from urbanverse.scene.usd_validate import validate_usd
from urbanverse.scene.usd_writer import safe_name, write_usd


@pytest.mark.parametrize("fmt", ["usda", "usdc"])
def test_example_passes_every_validator(example_dir, fmt):
    path = write_usd(load_scene(example_dir), example_dir, fmt)
    issues, n_validators = validate_usd(path)
    assert n_validators >= 30
    assert [i for i in issues if i.severity == "error"] == []


def test_validator_catches_a_missing_asset(example_dir):
    path = write_usd(load_scene(example_dir), example_dir)
    (example_dir / "assets" / "bench_wood_a" / "asset.usda").unlink()
    issues, _ = validate_usd(path)
    assert any(i.severity == "error" and "bench_wood_a" in i.message for i in issues)


def _physics_material(prim: Usd.Prim) -> UsdPhysics.MaterialAPI:
    binding = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial("physics")[0]
    return UsdPhysics.MaterialAPI(binding.GetPrim())


def test_round_trip_prims_transforms_mass_friction(example_dir):
    scene = load_scene(example_dir)
    stage = Usd.Stage.Open(str(write_usd(scene, example_dir)))
    assert stage.GetDefaultPrim().GetPath() == "/World"
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    physics_scene = UsdPhysics.Scene(stage.GetPrimAtPath("/World/PhysicsScene"))
    assert physics_scene.GetGravityMagnitudeAttr().Get() == pytest.approx(9.81)

    for obj in scene.objects:
        prim = stage.GetPrimAtPath(f"/World/Objects/{safe_name(obj.id)}")
        assert prim.IsValid(), obj.id
        matrix = UsdGeom.Xformable(prim).GetLocalTransformation()
        assert tuple(matrix.ExtractTranslation()) == pytest.approx(obj.position, abs=1e-6)
        x_axis = matrix.TransformDir((1, 0, 0))
        assert math.atan2(x_axis[1], x_axis[0]) == pytest.approx(
            math.atan2(math.sin(obj.yaw), math.cos(obj.yaw))
        )
        assert UsdPhysics.MassAPI(prim).GetMassAttr().Get() == pytest.approx(obj.mass)
        body = UsdPhysics.RigidBodyAPI(prim)
        assert body.GetKinematicEnabledAttr().Get() == (obj.body_type == "kinematic")
        colliders = [p for p in Usd.PrimRange(prim) if p.HasAPI(UsdPhysics.CollisionAPI)]
        assert colliders, obj.id
        for collider in colliders:
            approx = UsdPhysics.MeshCollisionAPI(collider).GetApproximationAttr().Get()
            assert approx in ("convexHull", "convexDecomposition")
            material = _physics_material(collider)
            assert material.GetStaticFrictionAttr().Get() == pytest.approx(obj.friction)
            assert material.GetRestitutionAttr().Get() == pytest.approx(obj.restitution)

    for region in scene.ground:
        prim = stage.GetPrimAtPath(f"/World/Ground/{safe_name(region.id)}")
        assert prim.HasAPI(UsdPhysics.CollisionAPI)
        assert _physics_material(prim).GetStaticFrictionAttr().Get() == pytest.approx(region.friction)
        top = max(p[2] for p in UsdGeom.Mesh(prim).GetPointsAttr().Get())
        assert top == pytest.approx(max(region.top_heights()), abs=1e-6)
    assert stage.GetPrimAtPath("/World/Lights/Sky").IsA(UsdLux.DomeLight)
    # An unrendered collider at road level under the whole ground: a robot that drives into a gap
    # between regions (ground no keyframe saw) stands on it instead of falling.
    underlay = stage.GetPrimAtPath("/World/Underlay")
    assert underlay.HasAPI(UsdPhysics.CollisionAPI)
    assert UsdGeom.Imageable(underlay).GetPurposeAttr().Get() == UsdGeom.Tokens.guide
    corners = np.array(UsdGeom.Mesh(underlay).GetPointsAttr().Get())
    ground_xy = np.array([v for region in scene.ground for v in region.polygon])
    assert (corners[:, 2] == 0).all()
    assert (corners[:, :2].min(axis=0) < ground_xy.min(axis=0)).all()
    assert (corners[:, :2].max(axis=0) > ground_xy.max(axis=0)).all()


def test_crash_mid_write_leaves_no_scene_file(example_dir, monkeypatch):
    def boom(*_):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(usd_writer, "_lights", boom)
    with pytest.raises(RuntimeError, match="simulated crash"):
        write_usd(load_scene(example_dir), example_dir)
    assert not (example_dir / "scene.usda").exists() or _unchanged_original(example_dir)
    assert not list(example_dir.glob(".scene*"))


def _unchanged_original(scene_dir) -> bool:
    # scenes/example ships a scene.usda: a failed write must leave it exactly as it was.
    from tests.conftest import EXAMPLE_SCENE

    return (scene_dir / "scene.usda").read_bytes() == (EXAMPLE_SCENE / "scene.usda").read_bytes()


def test_cousins_are_variants_that_swap_the_asset_and_its_mass(example_dir):
    scene = load_scene(example_dir)
    bench = next(o for o in scene.objects if o.asset.uid == "bench_wood_a")
    bin_ref = next(o.asset for o in scene.objects if o.asset.uid == "bin_round_a")
    scene = dataclasses.replace(
        scene,
        objects=tuple(dataclasses.replace(o, cousins=(bin_ref,)) if o is bench else o for o in scene.objects),
    )
    stage = Usd.Stage.Open(str(write_usd(scene, example_dir)))
    prim = stage.GetPrimAtPath(f"/World/Objects/{safe_name(bench.id)}")
    variants = prim.GetVariantSet(usd_writer.COUSIN_VARIANT_SET)
    assert variants.GetVariantNames() == ["bench_wood_a", "bin_round_a"]
    assert variants.GetVariantSelection() == "bench_wood_a"  # the placed asset

    def shown() -> tuple[str, float, int]:
        parts = [p for p in Usd.PrimRange(prim) if p.HasAPI(UsdPhysics.CollisionAPI)]
        return (
            prim.GetCustomDataByKey("urbanverse:uid"),
            UsdPhysics.MassAPI(prim).GetMassAttr().Get(),
            len(parts),
        )

    uid, mass, parts = shown()
    assert uid == "bench_wood_a" and mass == pytest.approx(bench.mass) and parts > 0
    variants.SetVariantSelection("bin_round_a")
    uid, mass, parts = shown()
    bin_asset = load_asset(example_dir / bin_ref.path)
    assert uid == "bin_round_a" and mass == pytest.approx(bin_asset.mass) and parts > 0
    matrix = UsdGeom.Xformable(prim).GetLocalTransformation()  # the cousin stands where the bench stood
    assert tuple(matrix.ExtractTranslation()) == pytest.approx(bench.position, abs=1e-6)
    # The written stage (each object showing its placed asset) passes the validators.
    issues, _ = validate_usd(example_dir / "scene.usda")
    assert [i for i in issues if i.severity == "error"] == []


def test_an_asset_written_before_is_copied_from_the_cache(example_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path / "cache"))
    bench = example_dir / "assets" / "bench_wood_a"
    authored = usd_writer.write_asset_usd(bench).read_bytes()

    def never(*_args):
        raise AssertionError("authored again")

    monkeypatch.setattr(usd_writer, "_author_asset", never)
    (bench / "asset.usda").unlink()
    assert usd_writer.write_asset_usd(bench).read_bytes() == authored
    # The same files elsewhere (another scene's copy) are the same asset: copied too.
    shutil.copytree(bench, tmp_path / "other_scene_bench")
    assert usd_writer.write_asset_usd(tmp_path / "other_scene_bench").read_bytes() == authored


def test_a_changed_asset_file_is_authored_again(example_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path / "cache"))
    bench = example_dir / "assets" / "bench_wood_a"
    usd_writer.write_asset_usd(bench)
    asset = load_asset(bench)
    (bench / "asset.json").write_text(
        (bench / "asset.json").read_text().replace(f'"mass": {asset.mass}', '"mass": 12.5')
    )
    assert load_asset(bench).mass == 12.5
    stage = Usd.Stage.Open(str(usd_writer.write_asset_usd(bench)))
    assert UsdPhysics.MassAPI(stage.GetDefaultPrim()).GetMassAttr().Get() == pytest.approx(12.5)
