"""Procedural ground materials: catalogue, tileable maps, determinism, cache reuse, matching."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from scipy.ndimage import gaussian_filter

from urbanverse.assets import ground_materials as gm
from urbanverse.assets.textures import normalize01
from urbanverse.errors import InputError

SIZE = 128  # small maps keep the full-catalogue tests fast; the default (256) is checked on a few


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A private URBANVERSE_CACHE shared by this module's tests."""
    with pytest.MonkeyPatch.context() as mp:
        path = tmp_path_factory.mktemp("uv_cache")
        mp.setenv("URBANVERSE_CACHE", str(path))
        yield path


@pytest.fixture(scope="module")
def built(cache):
    """Every material at SIZE px: name -> (GroundMaterial, {map name: uint8 array})."""
    out = {}
    for name in gm.GROUND_MATERIALS:
        mat = gm.ground_material(name, SIZE)
        out[name] = (mat, {k: np.asarray(Image.open(p)) for k, p in gm.material_maps(name, SIZE).items()})
    return out


def test_catalogue_counts_and_tags():
    assert len(gm.GROUND_MATERIALS) >= 50
    for spec in gm.GROUND_MATERIALS.values():
        assert spec.tags and set(spec.tags) <= set(gm.GROUND_TAGS), spec.name
        assert 0.2 <= spec.friction <= 1.0 and spec.texture_scale_m > 0
    for tag in gm.GROUND_TAGS:
        assert len(gm.materials_for(tag)) >= 3, tag
    with pytest.raises(InputError):
        gm.materials_for("lava")


def _seam_ratio(image: np.ndarray) -> float:
    """Wrap-around difference over interior neighbour differences, worst of the two axes.

    Per axis: the mean absolute difference between the last and the first column (row), over
    the 95th percentile of the same mean taken between each pair of neighbouring interior
    columns (rows); the percentile lets regular joints count as interior structure. A tile
    that wraps cleanly scores about 1 or less; a visible seam scores well above.
    """
    a = image.astype(np.float64)
    ratios = []
    for axis in (1, 0):
        b = np.moveaxis(a, axis, 0)
        inner = np.abs(np.diff(b, axis=0)).reshape(b.shape[0] - 1, -1).mean(1)
        ratios.append(np.abs(b[-1] - b[0]).mean() / max(np.percentile(inner, 95), 1e-6))
    return max(ratios)


def test_maps_value_ranges_and_tileable(built):
    for name, (mat, maps) in built.items():
        assert maps["base_color"].shape == (SIZE, SIZE, 3) and maps["base_color"].dtype == np.uint8
        assert maps["roughness"].shape == (SIZE, SIZE) and maps["normal"].shape == (SIZE, SIZE, 3)
        assert all(0.0 <= c <= 1.0 for c in mat.base_color) and 0.0 <= mat.roughness <= 1.0
        assert maps["normal"][..., 2].min() >= 128, f"{name}: normals must face out of the surface"
        for key, image in maps.items():
            assert _seam_ratio(image) < 1.3, f"{name} {key} shows a seam"
        assert mat.color_hist.min() >= 0 and mat.color_hist.sum() == pytest.approx(1.0)
        assert mat.texture_hist.min() >= 0 and mat.texture_hist.sum() == pytest.approx(1.0)


def test_seam_check_detects_a_seam(built):
    ramp = np.tile(np.linspace(0, 255, 64), (64, 1)).astype(np.uint8)
    assert _seam_ratio(ramp) > 10
    smooth = gaussian_filter(np.random.default_rng(0).random((64, 64)), 4, mode="reflect")
    assert _seam_ratio((normalize01(smooth) * 255).astype(np.uint8)) > 3
    cut = built["cobblestone_grey"][1]["base_color"][: SIZE * 3 // 4, : SIZE * 3 // 4]  # no longer wraps
    assert _seam_ratio(cut) > 1.5


def test_match_finds_own_material(built):
    rng = np.random.default_rng(0)
    misses = []
    for name, (_, maps) in built.items():
        pixels = maps["base_color"].reshape(-1, 3)[rng.choice(SIZE * SIZE, 6000)]
        if gm.match_ground(pixels, k=1, size=SIZE)[0][0] != name:
            misses.append(name)
        jitter = pixels * np.array([1.04, 0.97, 1.0]) + rng.normal(0, 2.0, pixels.shape)
        top3 = [n for n, _ in gm.match_ground(np.clip(jitter, 0, 255).astype(np.uint8), k=3, size=SIZE)]
        assert name in top3, f"{name}: jittered sample matched {top3}"
    assert not misses, f"own pixels matched another material: {misses}"


def test_match_patch_with_texture_and_tag(built):
    mat, maps = built["pavers_herringbone_red"]
    ranked = gm.match_ground(maps["base_color"][10:90, 20:100], tag="plaza", k=3, size=SIZE)
    assert ranked[0][0] == "pavers_herringbone_red"
    assert all("plaza" in gm.GROUND_MATERIALS[n].tags for n, _ in ranked)
    assert [d for _, d in ranked] == sorted(d for _, d in ranked)
    with pytest.raises(InputError):
        gm.match_ground(np.zeros((10, 3)), k=1)


def test_deterministic_bytes(tmp_path, monkeypatch):
    files = []
    for run in ("a", "b"):
        monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path / run))
        files.append([p.read_bytes() for p in gm.material_maps("brick_herringbone_brown").values()])
    assert files[0] == files[1]
    assert Image.open(gm.material_maps("brick_herringbone_brown")["base_color"]).size == (256, 256)


def test_cache_is_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path))
    first = gm.ground_material("asphalt_cracked", 64)
    stamp = first.base_color_map.stat().st_mtime_ns

    def fail(*args, **kwargs):
        raise AssertionError("regenerated a cached material")

    monkeypatch.setattr(gm, "render_maps", fail)
    second = gm.ground_material("asphalt_cracked", 64)
    assert second == first and second.base_color_map.stat().st_mtime_ns == stamp
    with pytest.raises(InputError):
        gm.ground_material("no_such_material")
