"""Procedural sky environment maps and matching them to a video's sky pixels.

``SKIES`` lists every sky as a cheap recipe; ``sky_map(name)`` renders it on first use into
``cache_dir("skies")`` and returns a ``SkyMap`` whose ``zenith_color``, ``horizon_color``,
``hdri``, ``intensity``, ``sun_direction`` and ``sun_intensity`` fill the scene record's
``Sky`` (copy ``hdri`` into the scene folder first). Files per sky:

* ``sky.hdr``: Radiance RGBE image of the linear RGB radiance (what USD dome lights and Isaac Sim
  load), equirectangular (default 512 x 256),
  scaled so the mean luminance of the upper hemisphere (solid-angle weighted) is 1; the sun
  disc is clamped to ``SUN_CLAMP`` so the dome light does not double the sun's distant light;
* ``sky.png``: 8-bit sRGB of the same map after exposure and a filmic tone curve, as a
  camera would record it (used for viewers and for the HSV histogram).

Latlong convention (Z-up world): row ``v`` has elevation ``pi/2 - pi * (v + 0.5) / H`` (top row
= zenith); column ``u`` has azimuth ``pi - 2 pi (u + 0.5) / W`` measured from +X towards +Y, so
the image centre looks along +X and turning right moves right in the image.

Radiance model (units: kcd/m^2 before normalisation): daytime clear sky is Preetham, Shirley
& Smits (1999) "A practical analytic model for daylight" (Perez distribution with turbidity
T); the sun disc (drawn 0.8 degrees in radius so it covers pixels) and the sun's
illuminance use Kasten-Young air mass with Rayleigh + Angstrom aerosol extinction from
the same paper; overcast skies use the CIE standard overcast sky, ``L ~ (1 + 2 sin(elev)) / 3``;
twilight (sun below the horizon) is an empirical gradient whose level drops about a decade
per 2.5 degrees of solar depression; night adds a light-pollution dome (exponential in
elevation) and stars. Clouds: fractal value noise projected on a cloud plane, lit by the
sun colour with forward scattering and by the ambient sky.
"""

from __future__ import annotations

import functools
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from urbanverse.assets.textures import (
    fbm,
    hellinger,
    linear_to_srgb,
    luminance,
    rgb8_to_hsv,
    save_png,
    smoothstep,
    soft_histogram,
    srgb_to_linear,
    to_uint8,
)
from urbanverse.errors import InputError
from urbanverse.paths import cache_dir
from urbanverse.records import atomic_path

#: Bump when the model changes its output, so cached maps are rebuilt.
MODEL_VERSION = 2
DEFAULT_WIDTH = 512
#: HSV histogram bins (hue, saturation, value).
HSV_BINS = (12, 4, 8)
#: Elevation band (degrees) of the map used for the histogram: what a street-level camera sees.
HIST_ELEVATION_DEG = (0.0, 60.0)
#: Cap on normalised radiance in ``sky.hdr`` (the sun disc); the sun's light is ``sun_intensity``.
SUN_CLAMP = 50.0
#: ``intensity`` and ``sun_intensity`` are scaled so the reference clear sky (sun 60 degrees up,
#: T = 2.5) gives the scene record's defaults; ratios between skies are physical.
REFERENCE_INTENSITY, REFERENCE_SUN_INTENSITY = 1000.0, 3000.0
_SUN_RADIUS = np.radians(0.8)
_EXTRATERRESTRIAL_LUX = 128e3
_LAMBDA_UM = np.array([0.65, 0.55, 0.45])  # wavelengths for R, G, B extinction


@dataclass(frozen=True)
class SkySpec:
    """A sky recipe. Angles in degrees; azimuth from +X towards +Y; ``cloud_cover``: share of the sky
    in [0, 1]; ``cloud_scale``: relative cloud size; ``overcast``: blend towards a CIE overcast sky
    of zenith luminance ``overcast_kcd`` (kcd/m^2); ``city_glow``: light-pollution strength (night)."""

    name: str
    tags: tuple[str, ...]
    sun_elevation_deg: float
    sun_azimuth_deg: float
    turbidity: float = 3.0
    cloud_cover: float = 0.0
    cloud_scale: float = 1.0
    overcast: float = 0.0
    overcast_kcd: float = 4.0
    city_glow: float = 0.0
    seed: int = 0


@dataclass(frozen=True)
class SkyMap:
    """A rendered sky. Colours are display-referred linear RGB in [0, 1] (the PNG near the zenith and
    along the horizon); ``intensity``: dome-light intensity for ``hdri``; ``sun_direction``: unit
    vector the sunlight travels along (Z-up); ``sun_intensity``: distant-light intensity (0 when the
    sun is down or hidden); ``hist``: ``(prod(HSV_BINS),)`` L1-normalised HSV histogram."""

    name: str
    tags: tuple[str, ...]
    png: Path
    hdri: Path
    zenith_color: tuple[float, float, float]
    horizon_color: tuple[float, float, float]
    intensity: float
    sun_direction: tuple[float, float, float]
    sun_intensity: float
    hist: np.ndarray = field(compare=False, repr=False)


def _sky(name, tags, el, az, **kw) -> SkySpec:
    return SkySpec(name, tuple(tags.split()), el, az, seed=zlib.crc32(name.encode()), **kw)


# fmt: off
def _catalogue() -> list[SkySpec]:
    out = []
    # clear: each (elevation, turbidity) pair once, azimuths spread round the compass
    for k, (el, t) in enumerate([(10, 2.2), (15, 3.0), (20, 2.0), (25, 2.6), (30, 3.2), (35, 2.2),
                                 (40, 2.8), (45, 2.0), (50, 3.4), (55, 2.4), (60, 2.5), (65, 3.0),
                                 (72, 2.2), (80, 2.7)]):
        out.append(_sky(f"clear_el{el}_t{t:g}", "clear", el, (k * 97) % 360, turbidity=t))
    for k, (el, t) in enumerate([(15, 6.0), (25, 8.0), (35, 5.0), (45, 9.0), (60, 6.5), (75, 7.5)]):
        out.append(_sky(f"hazy_el{el}_t{t:g}", "hazy", el, (k * 131 + 40) % 360, turbidity=t))
    for k, (el, cov, sc) in enumerate([(20, 0.2, 1.0), (30, 0.35, 1.3), (45, 0.25, 0.7), (60, 0.4, 1.0),
                                       (25, 0.5, 1.6), (40, 0.15, 0.8), (55, 0.3, 1.2), (70, 0.45, 0.9)]):
        out.append(_sky(f"partly_cloudy_el{el}_c{round(cov * 100)}", "partly_cloudy", el, (k * 73 + 15) % 360,
                        turbidity=3.0, cloud_cover=cov, cloud_scale=sc))
    for k, (el, cov) in enumerate([(25, 0.7), (40, 0.8), (55, 0.65), (35, 0.9)]):
        out.append(_sky(f"mostly_cloudy_el{el}_c{round(cov * 100)}", "mostly_cloudy", el, k * 90 + 30,
                        turbidity=4.0, cloud_cover=cov, cloud_scale=1.4))
    for k, (kcd, name) in enumerate([(8.0, "bright"), (5.0, "light"), (3.0, "medium"), (1.6, "grey"),
                                     (0.8, "dark"), (0.35, "storm")]):
        out.append(_sky(f"overcast_{name}", "overcast", 40, k * 60, overcast=1.0, overcast_kcd=kcd))
    for k, (el, cov, kind) in enumerate([(0.5, 0.0, "sunset"), (2, 0.0, "sunrise"), (4, 0.0, "sunset"),
                                         (7, 0.0, "sunrise"), (1, 0.35, "sunset"), (3, 0.5, "sunrise"),
                                         (5, 0.25, "sunset"), (2.5, 0.7, "sunset")]):
        az = 265 if kind == "sunset" else 80
        out.append(_sky(f"{kind}_el{el:g}_c{round(cov * 100)}", f"{kind} golden_hour", el, az + 7 * k,
                        turbidity=4.0, cloud_cover=cov, cloud_scale=1.2))
    for k, (el, cov) in enumerate([(-1.5, 0.0), (-3, 0.0), (-5, 0.3), (-7, 0.0), (-10, 0.0), (-4, 0.6)]):
        out.append(_sky(f"dusk_el{-el:g}_c{round(cov * 100)}", "dusk", el, 260 + 5 * k, cloud_cover=cov))
    for k, (glow, cov) in enumerate([(0.3, 0.0), (1.0, 0.0), (2.0, 0.0), (1.0, 0.5), (1.5, 0.9)]):
        out.append(_sky(f"night_glow{round(glow * 10)}_c{round(cov * 100)}", "night", -35, 70 * k,
                        city_glow=glow, cloud_cover=cov))
    return out
# fmt: on


SKIES: dict[str, SkySpec] = {s.name: s for s in _catalogue()}


# --------------------------------------------------------------------------- model


def latlong_directions(width: int) -> np.ndarray:
    """Unit view directions ``(width // 2, width, 3)`` of an equirectangular map (Z-up, see module doc)."""
    h = width // 2
    el = np.pi / 2 - np.pi * (np.arange(h) + 0.5) / h
    az = np.pi - 2 * np.pi * (np.arange(width) + 0.5) / width
    el, az = np.meshgrid(el, az, indexing="ij")
    return np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], -1)


def _to_sun(spec: SkySpec) -> np.ndarray:
    el, az = np.radians(spec.sun_elevation_deg), np.radians(spec.sun_azimuth_deg)
    return np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])


_XYZ_TO_RGB = np.array([[3.2404542, -1.5371385, -0.4985314], [-0.9692660, 1.8760108, 0.0415560],
                        [0.0556434, -0.2040259, 1.0572252]])  # fmt: skip


def _perez(cos_t, gamma, cos_g, c):
    return (1 + c[0] * np.exp(c[1] / cos_t)) * (1 + c[2] * np.exp(c[3] * gamma) + c[4] * cos_g**2)


def preetham(dirs: np.ndarray, sun: np.ndarray, turbidity: float) -> np.ndarray:
    """Preetham clear-sky radiance, linear RGB in kcd/m^2 ``(..., 3)``; ``sun``: unit vector to the sun
    (elevation > 0). Directions below the horizon get the horizon's value."""
    t = turbidity
    coef_y = [0.1787 * t - 1.4630, -0.3554 * t + 0.4275, -0.0227 * t + 5.3251, 0.1206 * t - 2.5771,
              -0.0670 * t + 0.3703]  # fmt: skip
    coef_x = [-0.0193 * t - 0.2592, -0.0665 * t + 0.0008, -0.0004 * t + 0.2125, -0.0641 * t - 0.8989,
              -0.0033 * t + 0.0452]  # fmt: skip
    coef_yc = [-0.0167 * t - 0.2608, -0.0950 * t + 0.0092, -0.0079 * t + 0.2102, -0.0441 * t - 1.6537,
               -0.0109 * t + 0.0529]  # fmt: skip
    ts = np.arccos(np.clip(sun[2], -1, 1))
    chi = (4 / 9 - t / 120) * (np.pi - 2 * ts)
    lum_z = (4.0453 * t - 4.9710) * np.tan(chi) - 0.2155 * t + 2.4192
    th = np.array([ts**3, ts**2, ts, 1.0])
    x_z = t * t * (th @ [0.00166, -0.00375, 0.00209, 0]) + t * (th @ [-0.02903, 0.06377, -0.03202, 0.00394])
    x_z += th @ [0.11693, -0.21196, 0.06052, 0.25886]
    y_z = t * t * (th @ [0.00275, -0.00610, 0.00317, 0]) + t * (th @ [-0.04214, 0.08970, -0.04153, 0.00516])
    y_z += th @ [0.15346, -0.26756, 0.06670, 0.26688]
    cos_t = np.maximum(dirs[..., 2], 0.01)
    cos_g = np.clip(dirs @ sun, -1, 1)
    gamma = np.arccos(cos_g)
    big_y, x, y = (z * _perez(cos_t, gamma, cos_g, c) / _perez(1.0, ts, np.cos(ts), c)
                   for z, c in ((lum_z, coef_y), (x_z, coef_x), (y_z, coef_yc)))  # fmt: skip
    xyz = np.stack([x * big_y / y, big_y, (1 - x - y) * big_y / y], -1)
    return np.maximum(xyz @ _XYZ_TO_RGB.T, 0.0)


def sun_transmittance(elevation_deg: float, turbidity: float) -> np.ndarray:
    """Direct-sun transmittance per R, G, B (Kasten-Young air mass; Rayleigh + Angstrom aerosol)."""
    if elevation_deg <= -0.5:
        return np.zeros(3)
    zen = 90.0 - max(elevation_deg, 0.0)
    air_mass = 1.0 / (np.cos(np.radians(zen)) + 0.50572 * (96.07995 - zen) ** -1.6364)
    beta = 0.04608 * turbidity - 0.04586
    tau = 0.008735 * _LAMBDA_UM**-4.08 + beta * _LAMBDA_UM**-1.3
    return np.exp(-air_mass * tau)


def _twilight(dirs: np.ndarray, sun: np.ndarray, depression_deg: float) -> np.ndarray:
    """Empirical twilight sky in kcd/m^2: blue zenith, violet horizon, orange-red glow towards the sun."""
    depth = np.clip(depression_deg / 12.0, 0.0, 1.0)
    level = 0.6 * 10.0 ** (-0.4 * depression_deg)
    up = np.clip(dirs[..., 2], 0.0, 1.0)[..., None]
    zenith = np.array([0.16, 0.26, 0.55]) * (1 - 0.5 * depth)
    horizon = np.array([0.55, 0.45, 0.6]) * (1 - 0.6 * depth)
    base = horizon + (zenith - horizon) * np.sqrt(up)
    flat_sun = sun[:2] / max(np.linalg.norm(sun[:2]), 1e-6)
    toward = np.clip((dirs[..., :2] @ flat_sun + 1) / 2, 0, 1)[..., None]
    glow_col = np.array([1.0, 0.42, 0.12]) * (1 - depth) + np.array([0.5, 0.15, 0.25]) * depth
    glow = glow_col * toward**3 * np.exp(-up / (0.12 + 0.1 * depth)) * 2.5
    return level * (base + glow)


def _night(dirs: np.ndarray, glow: float, rng: np.random.Generator) -> np.ndarray:
    """Night sky in kcd/m^2: dark zenith, sodium/LED light-pollution dome, stars fading into the glow."""
    up = np.clip(dirs[..., 2], 0.0, 1.0)[..., None]
    base = np.array([0.012, 0.016, 0.035]) * 1e-3 * (1 + glow)
    dome = np.array([1.0, 0.62, 0.35]) * 1e-3 * 0.25 * glow * np.exp(-up / 0.22)
    sky = base + dome + np.zeros(dirs.shape)
    h, w = dirs.shape[:2]
    count = int(h * w * 0.02)
    row = (np.arccos(rng.random(count)) / np.pi * h).astype(int)  # uniform over the upper hemisphere
    col = rng.integers(0, w, count)
    bright = (rng.pareto(1.6, count) + 1.0) * 0.02e-3 / (1 + 3 * glow)
    np.add.at(sky, (row, col), bright[:, None] * np.array([0.95, 0.97, 1.0]))
    return sky


def _clouds(dirs: np.ndarray, spec: SkySpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Cloud opacity ``(H, W)`` in [0, 1] covering about ``cloud_cover`` of the upper hemisphere, and a
    thickness in [0, 1] (for darker cloud bases). Noise on the plane z = 1, softened near the horizon."""
    half = dirs.shape[0] // 2  # clouds only above the horizon
    d = dirs[:half]
    z = np.clip(d[..., 2], 0.0, 1.0)
    scale = 1.6 / spec.cloud_scale / (z + 0.12)
    n = fbm(d[..., 0] * scale + 31.7, d[..., 1] * scale - 11.3, rng, octaves=6, gain=0.55)
    thr = np.quantile(n[z > 0.05], 1.0 - spec.cloud_cover) if spec.cloud_cover < 1 else n.min()
    opacity, thick = np.zeros(dirs.shape[:2]), np.zeros(dirs.shape[:2])
    opacity[:half] = smoothstep(thr - 0.015, thr + 0.06, n) * smoothstep(0.0, 0.06, z)
    thick[:half] = np.clip((n - thr) / max(n.max() - thr, 1e-6), 0.0, 1.0)
    return opacity, thick


def render_radiance(spec: SkySpec, width: int = DEFAULT_WIDTH) -> tuple[np.ndarray, float]:
    """Sky radiance ``(width // 2, width, 3)`` linear RGB in kcd/m^2 (sun disc included, unclamped) and
    the direct sun illuminance on a surface facing the sun (lux; 0 when down or hidden by cloud)."""
    rng = np.random.default_rng(spec.seed)
    dirs = latlong_directions(width)
    sun = _to_sun(spec)
    el = spec.sun_elevation_deg
    trans = sun_transmittance(el, spec.turbidity)
    sun_col = trans / max(trans.max(), 1e-9)
    cos_g = np.clip(dirs @ sun, -1, 1)
    up = np.clip(dirs[..., 2], 0, 1)
    if el > 0:
        sky = preetham(dirs, sun, spec.turbidity)
        low = smoothstep(10.0, 0.0, el)  # warm the horizon round a low sun (Mie glow Preetham lacks)
        warm = 1.5 * low * np.exp(-up / 0.15)[..., None] * (cos_g[..., None] + 1) / 2 * (sun_col - 0.3)
        sky = sky * np.maximum(1 + warm, 0.0)
    elif spec.city_glow == 0:
        sky = _twilight(dirs, sun, -el)
    else:
        sky = _night(dirs, spec.city_glow, rng)
    if spec.overcast > 0:
        cie = spec.overcast_kcd * (1 + 2 * up) / 3 * (1 + 0.4 * np.exp(-(np.arccos(cos_g) ** 2) / 0.3))
        n = fbm(dirs[..., 0] / (up + 0.15) * 1.2, dirs[..., 1] / (up + 0.15) * 1.2, rng, 5, 0.6)
        texture = 1 + 1.2 * (n - 0.5) * smoothstep(0.0, 0.15, up)
        grey = np.array([0.96, 0.99, 1.05]) * (cie * texture)[..., None]
        sky = sky + (grey - sky) * spec.overcast
    sun_lux = _EXTRATERRESTRIAL_LUX * float(luminance(trans)) * (1 - spec.overcast)
    if spec.cloud_cover > 0 and spec.overcast == 0:
        opacity, thick = _clouds(dirs, spec, rng)
        ambient = float(np.mean(luminance(sky[up > 0.2])))
        if el > 0:
            phase = 0.35 + 2.5 * np.exp(-((np.arccos(cos_g) / 0.35) ** 2)) + 0.25 * (cos_g + 1)
            # low sun: cloud bases catch the reddened direct light (the golden-hour glow)
            strength = sun_lux / 1000 * 0.09 + ambient * 2.0 * smoothstep(12.0, 0.0, el)
            cloud = (strength * sun_col * phase[..., None] + ambient * 0.7) * (1 - 0.55 * thick)[..., None]
        elif spec.city_glow == 0:  # lit from below by the twilight glow
            cloud = (
                sky
                * (0.45 + 0.8 * smoothstep(0.3, 1.0, (cos_g + 1) / 2))[..., None]
                * (1 - 0.3 * thick)[..., None]
            )
        else:  # night: cloud bases reflect the city's light
            shade = (1 - 0.5 * up) * (1 - 0.7 * thick)
            cloud = np.array([0.62, 0.55, 0.5]) * 1e-3 * 0.3 * spec.city_glow * shade[..., None]
        sky = sky + (cloud - sky) * (opacity * 0.97)[..., None]
        sun_px = np.unravel_index(np.argmax(cos_g), cos_g.shape)
        sun_lux *= 1 - 0.95 * opacity[sun_px]
    if el > -0.5 and sun_lux > 0:
        disc = smoothstep(_SUN_RADIUS * 1.25, _SUN_RADIUS, np.arccos(cos_g))
        disc_lum = sun_lux / 1000 / (np.pi * _SUN_RADIUS**2)
        sky = sky + disc[..., None] * disc_lum * sun_col / max(float(luminance(sun_col)), 1e-9)
    horizon = sky[dirs.shape[0] // 2 - 1]  # last row above the horizon
    # ground: albedo 0.1 lit by the sky (E / pi = cosine-weighted mean radiance) and the sun
    cos_w = up * np.sqrt(1 - up**2)
    sky_e = float(np.sum(luminance(np.minimum(sky, _clamp_level(sky))) * cos_w) / np.sum(cos_w))
    ground_lum = 0.1 * (sky_e + sun_lux / 1000 * max(np.sin(np.radians(el)), 0) / np.pi)
    ground = np.array([1.0, 0.92, 0.8]) * ground_lum
    below = smoothstep(0.0, -0.03, dirs[..., 2])[..., None]
    sky = np.where(dirs[..., 2:3] < 0, horizon[None, :, :], sky)
    return sky + (ground - sky) * below, sun_lux


def _solid_angle_weights(height: int, lo_deg: float = 0.0, hi_deg: float = 90.0) -> np.ndarray:
    el = np.degrees(np.pi / 2 - np.pi * (np.arange(height) + 0.5) / height)
    return np.where((el >= lo_deg) & (el <= hi_deg), np.cos(np.radians(el)), 0.0)


@functools.lru_cache(maxsize=1)
def _reference() -> tuple[float, float]:
    """Upper-hemisphere mean luminance (kcd/m^2) and sun illuminance (lux) of the reference clear sky."""
    radiance, sun_lux = render_radiance(SkySpec("reference", (), 60.0, 0.0, turbidity=2.5), 128)
    return _mean_luminance(np.minimum(radiance, _clamp_level(radiance))), sun_lux


def _mean_luminance(radiance: np.ndarray) -> float:
    w = _solid_angle_weights(radiance.shape[0])[:, None] * np.ones(radiance.shape[1])
    return float(np.sum(luminance(radiance) * w) / np.sum(w))


def _clamp_level(radiance: np.ndarray) -> float:
    """A radiance cap just above the sky itself (99.5th luminance percentile of the upper half x 4)."""
    upper = luminance(radiance[: radiance.shape[0] // 2])
    return float(np.percentile(upper, 99.5) * 4)


def tone_map(radiance: np.ndarray, mean_lum: float) -> np.ndarray:
    """Camera-like display image: exposure that follows the sky's brightness only partly (night stays
    dark: display level ~ (mean / reference)^0.25), ACES-style filmic curve, sRGB encoding -> uint8."""
    ref_mean = _reference()[0]
    exposure = 0.55 / mean_lum * min(mean_lum / ref_mean, 1.0) ** 0.25
    x = radiance * exposure
    mapped = (x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14)
    return to_uint8(linear_to_srgb(mapped))


def hsv_histogram(pixels_rgb: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Joint HSV soft histogram ``(prod(HSV_BINS),)`` (L1 = 1) of uint8 sRGB pixels ``(N, 3)``. Hue is
    unreliable for greys: each pixel's hue share grows with saturation (0 below 0.05, full above
    0.2); the rest of its weight is spread evenly over all hues."""
    hsv = rgb8_to_hsv(np.asarray(pixels_rgb).reshape(-1, 3))
    w = np.ones(len(hsv)) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    chroma = smoothstep(0.05, 0.2, hsv[:, 1])
    joint = soft_histogram(hsv, HSV_BINS, (True, False, False), w * chroma) * np.sum(w * chroma)
    grey = soft_histogram(hsv[:, 1:], HSV_BINS[1:], (False, False), w * (1 - chroma)) * np.sum(
        w * (1 - chroma)
    )
    hist = joint + np.tile(grey / HSV_BINS[0], HSV_BINS[0])
    return hist / hist.sum()


def _get_spec(name: str) -> SkySpec:
    try:
        return SKIES[name]
    except KeyError:
        raise InputError(f"unknown sky {name!r}; see SKIES") from None


def load_hdr(path: Path) -> np.ndarray:
    """A Radiance ``.hdr`` file as float32 linear RGB ``(H, W, 3)``."""
    image = cv2.imread(str(path), cv2.IMREAD_ANYDEPTH | cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"{path}: not a readable HDR image")
    return np.ascontiguousarray(image[..., ::-1], dtype=np.float32)


def sky_map(name: str, width: int = DEFAULT_WIDTH) -> SkyMap:
    """Render (or load from the cache) sky ``name`` as a ``width x width / 2`` latlong map."""
    spec = _get_spec(name)
    key = json.dumps([MODEL_VERSION, width, [getattr(spec, f) for f in spec.__dataclass_fields__]])
    folder = cache_dir("skies") / f"{spec.name}-{width}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"
    meta_path = folder / "meta.npz"
    if not meta_path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        radiance, sun_lux = render_radiance(spec, width)
        mean_lum = _mean_luminance(np.minimum(radiance, _clamp_level(radiance)))
        image = tone_map(radiance, mean_lum)
        save_png(folder / "sky.png", image)
        hdr = np.minimum(radiance / mean_lum, SUN_CLAMP).astype(np.float32)
        with atomic_path(folder / "sky.hdr") as tmp:
            if not cv2.imwrite(str(tmp), np.ascontiguousarray(hdr[..., ::-1])):  # OpenCV writes BGR
                raise OSError(f"could not write {tmp}")
        h = image.shape[0]
        display = srgb_to_linear(image / 255.0)
        weights = _solid_angle_weights(h, *HIST_ELEVATION_DEG)[:, None] * np.ones(width)
        ref_mean, ref_sun = _reference()
        with atomic_path(meta_path) as tmp:
            np.savez(
                tmp,
                hist=hsv_histogram(image, weights),
                zenith=display[: max(h // 18, 1)].reshape(-1, 3).mean(0),
                horizon=display[h // 2 - max(h // 60, 1) : h // 2].reshape(-1, 3).mean(0),
                intensity=np.float64(REFERENCE_INTENSITY * mean_lum / ref_mean),
                sun_intensity=np.float64(REFERENCE_SUN_INTENSITY * sun_lux / ref_sun),
            )
    with np.load(meta_path) as m:
        return SkyMap(
            name=spec.name,
            tags=spec.tags,
            png=folder / "sky.png",
            hdri=folder / "sky.hdr",
            zenith_color=tuple(float(v) for v in m["zenith"]),
            horizon_color=tuple(float(v) for v in m["horizon"]),
            intensity=float(m["intensity"]),
            sun_direction=tuple(float(v) for v in -_to_sun(spec)),
            sun_intensity=float(m["sun_intensity"]),
            hist=m["hist"],
        )


@functools.lru_cache(maxsize=8)
def _histograms(width: int, cache_root: str) -> np.ndarray:
    """Stacked HSV histograms ``(len(SKIES), prod(HSV_BINS))``, built if needed; memoised per cache."""
    return np.stack([sky_map(n, width).hist for n in SKIES])


def match_sky(pixels_rgb: np.ndarray, k: int = 3, width: int = DEFAULT_WIDTH) -> list[tuple[str, float]]:
    """Rank skies by the Hellinger distance (in [0, 1]) between the HSV histogram of a video's sky
    pixels (uint8 sRGB, ``(N, 3)`` or ``(H, W, 3)``) and each sky's histogram; ``k`` best, ascending."""
    pixels = np.asarray(pixels_rgb)
    if pixels.dtype != np.uint8 or pixels.shape[-1] != 3 or pixels.ndim not in (2, 3) or pixels.size == 0:
        raise InputError(
            f"match_sky expects uint8 (N, 3) or (H, W, 3) pixels, got {pixels.dtype} {pixels.shape}"
        )
    names = list(SKIES)
    dist = hellinger(hsv_histogram(pixels), _histograms(width, str(cache_dir("skies"))))
    order = np.argsort(dist, kind="stable")[:k]
    return [(names[i], float(dist[i])) for i in order]
