"""Procedural skies: catalogue, HDR and PNG maps, sun, determinism, cache reuse, histogram matching."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from urbanverse.assets import skies
from urbanverse.errors import InputError

WIDTH = 128  # small maps keep the full-catalogue tests fast


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every sky at WIDTH px, in a private cache: name -> (SkyMap, png uint8, hdr float32)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("URBANVERSE_CACHE", str(tmp_path_factory.mktemp("uv_cache")))
        out = {}
        for name in skies.SKIES:
            sky = skies.sky_map(name, WIDTH)
            out[name] = (sky, np.asarray(Image.open(sky.png)), skies.load_hdr(sky.hdri))
        yield out


def test_catalogue_counts_and_kinds():
    assert len(skies.SKIES) >= 50
    tags = {t for s in skies.SKIES.values() for t in s.tags}
    assert {"clear", "hazy", "partly_cloudy", "overcast", "sunset", "sunrise", "dusk", "night"} <= tags


def test_latlong_convention():
    d = skies.latlong_directions(64)
    assert d.shape == (32, 64, 3)
    assert np.allclose(np.linalg.norm(d, axis=-1), 1.0)
    assert d[0, :, 2].min() > 0.99 and d[-1, :, 2].max() < -0.99
    assert np.allclose(d[16, 32], [1, 0, 0], atol=0.1)  # image centre looks along +X


def test_maps_and_records(built):
    for name, (sky, png, hdr) in built.items():
        assert png.shape == (WIDTH // 2, WIDTH, 3) and hdr.shape == png.shape and hdr.dtype == np.float32
        assert np.isfinite(hdr).all() and hdr.min() >= 0 and hdr.max() <= skies.SUN_CLAMP
        assert sky.hist.min() >= 0 and sky.hist.sum() == pytest.approx(1.0)
        assert np.linalg.norm(sky.sun_direction) == pytest.approx(1.0)
        assert all(0 <= c <= 1 for c in sky.zenith_color + sky.horizon_color)
        assert sky.intensity > 0 and sky.sun_intensity >= 0
        if {"night", "dusk", "overcast"} & set(sky.tags):
            assert sky.sun_intensity == 0, name
        else:
            assert sky.sun_direction[2] < 0, f"{name}: daylight must travel downwards"
    by_tag = {
        t: np.median([s.intensity for s, _, _ in built.values() if t in s.tags]) for t in ("clear", "night")
    }
    assert by_tag["clear"] > 100 * by_tag["night"]
    ref = built["clear_el60_t2.5"][0]
    assert ref.intensity == pytest.approx(skies.REFERENCE_INTENSITY, rel=0.05)
    assert ref.sun_intensity == pytest.approx(skies.REFERENCE_SUN_INTENSITY, rel=0.05)


def test_sun_disc_where_the_sun_is(built):
    sky, _, hdr = built["clear_el30_t3.2"]
    lum = hdr @ np.array([0.2126, 0.7152, 0.0722])
    brightest = skies.latlong_directions(WIDTH)[np.unravel_index(np.argmax(lum), lum.shape)]
    assert brightest @ -np.array(sky.sun_direction) > np.cos(np.radians(5))


def test_match_finds_own_sky(built):
    rng = np.random.default_rng(1)
    h = WIDTH // 2
    rows = slice(h // 2 - h // 3, h // 2)  # 0..60 degrees elevation, what a camera sees
    misses, jitter_misses = [], 0
    for name, (_, png, _) in built.items():
        pixels = png[rows].reshape(-1, 3)
        if skies.match_sky(pixels, k=1, width=WIDTH)[0][0] != name:
            misses.append(name)
        # +-1.5 % on red and blue: clear skies with the sun 40..72 degrees up (or with few clouds) then
        # look alike, so ask for the right one among the best 5 for nearly all skies
        tint = 1 + 0.015 * rng.choice([-1, 1]) * np.array([1.0, 0.0, -1.0])
        jitter = pixels * tint + rng.normal(0, 1.5, pixels.shape)
        top5 = [n for n, _ in skies.match_sky(np.clip(jitter, 0, 255).astype(np.uint8), k=5, width=WIDTH)]
        jitter_misses += name not in top5
    assert jitter_misses <= len(built) // 20, f"{jitter_misses} jittered skies not in the best 5"
    assert not misses, f"own pixels matched another sky: {misses}"
    with pytest.raises(InputError):
        skies.match_sky(np.zeros((4, 3), np.float32))


def test_deterministic_bytes(tmp_path, monkeypatch):
    files = []
    for run in ("a", "b"):
        monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path / run))
        sky = skies.sky_map("partly_cloudy_el30_c35", WIDTH)
        files.append((sky.png.read_bytes(), sky.hdri.read_bytes()))
    assert files[0] == files[1]


def test_cache_is_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path))
    first = skies.sky_map("night_glow10_c50", 64)
    stamp = first.hdri.stat().st_mtime_ns

    def fail(*args, **kwargs):
        raise AssertionError("regenerated a cached sky")

    monkeypatch.setattr(skies, "render_radiance", fail)
    second = skies.sky_map("night_glow10_c50", 64)
    assert second == first and second.hdri.stat().st_mtime_ns == stamp
    with pytest.raises(InputError):
        skies.sky_map("no_such_sky")
