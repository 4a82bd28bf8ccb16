"""Procedural, tileable PBR ground materials and matching them to a video's ground pixels.

``GROUND_MATERIALS`` lists every material as a cheap recipe (generator name, parameters,
seed). ``ground_material(name)`` builds its maps on first use into
``cache_dir("materials")`` and returns a ``GroundMaterial`` with mean colour, roughness,
friction, texture scale and the descriptors used by ``match_ground``:

* ``base_color.png``: sRGB albedo, ``size x size`` px (default 256), one tile covering
  ``texture_scale_m`` metres on each side;
* ``roughness.png``: grey, 0 (mirror) .. 255 (fully rough);
* ``normal.png``: tangent-space normals from the height field (OpenGL convention, +Y up).

All maps wrap seamlessly. Generation is deterministic: the same recipe, seed and size give
the same bytes. Descriptors: a CIE Lab colour histogram (8 x 8 x 8 soft bins; L 0..100,
a and b -48..48) of the base colour, and an LBP + gradient texture histogram
(``textures.texture_descriptor``), both L1-normalised and compared with the Hellinger distance.
"""

from __future__ import annotations

import functools
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from urbanverse.assets.ground_recipes import DEFAULT_SIZE, RECIPES
from urbanverse.assets.textures import (
    height_to_normal,
    hellinger,
    linear_to_srgb,
    rgb8_to_lab,
    save_png,
    soft_histogram,
    srgb_to_linear,
    texture_descriptor,
    to_uint8,
)
from urbanverse.errors import InputError
from urbanverse.paths import cache_dir
from urbanverse.records import atomic_path

#: Bump when a recipe changes its output, so cached maps are rebuilt.
RECIPE_VERSION = 2
#: Default map size (px per side).
#: Ground types a material may be tagged with (``GroundRegion.type`` in the scene record, minus ramp).
GROUND_TAGS = ("road", "sidewalk", "terrain", "crosswalk", "plaza")
#: Lab colour histogram bins (L, a, b).
COLOR_BINS = (8, 8, 8)

# Dry friction coefficients (rubber tyre / shoe sole on the surface), typical values.
# Asphalt, concrete, earth, gravel: Wong, "Theory of Ground Vehicles", 4th ed., Table 1.3
# (peak/sliding: asphalt & concrete dry 0.8-0.9 / 0.75; earth road dry 0.68 / 0.65;
# gravel 0.6 / 0.55). Paint, stone, brick, grass, sand, wood: Engineering ToolBox
# "Friction and friction coefficients" and pedestrian slip-resistance ranges (BS 7976
# pendulum PTV 36+ = low slip risk, polished stone and thermoplastic paint lower).
FRICTION = {
    "asphalt": 0.75,
    "concrete": 0.75,
    "paint": 0.55,  # thermoplastic road paint with glass beads, dry
    "paver": 0.70,  # textured concrete block pavers
    "brick": 0.65,
    "stone": 0.60,  # rough cobbles and setts
    "polished": 0.50,  # honed/polished granite, terrazzo
    "grass": 0.45,
    "gravel": 0.55,
    "earth": 0.65,
    "mulch": 0.50,
    "sand": 0.40,
    "rubber": 0.85,  # EPDM playground surfacing
    "wood": 0.55,
}


@dataclass(frozen=True)
class GroundMaterialSpec:
    """A material recipe: no images. ``params``: generator keyword arguments as (key, value) pairs;
    ``texture_scale_m``: metres covered by one tile; ``friction``: dry coefficient (see ``FRICTION``)."""

    name: str
    tags: tuple[str, ...]
    recipe: str
    params: tuple[tuple[str, object], ...]
    friction: float
    texture_scale_m: float
    seed: int


@dataclass(frozen=True)
class GroundMaterial:
    """A built material. ``base_color``: mean linear RGB of the albedo map; ``roughness``: mean in [0, 1];
    ``color_hist``: ``(512,)`` Lab histogram; ``texture_hist``: ``(TEXTURE_BINS,)``; map paths are PNGs."""

    name: str
    tags: tuple[str, ...]
    base_color: tuple[float, float, float]
    roughness: float
    friction: float
    texture_scale_m: float
    base_color_map: Path
    roughness_map: Path
    normal_map: Path
    color_hist: np.ndarray = field(compare=False, repr=False)
    texture_hist: np.ndarray = field(compare=False, repr=False)


def _spec(name, tags, recipe, friction, scale, **params) -> GroundMaterialSpec:
    return GroundMaterialSpec(
        name=name,
        tags=tuple(tags.split()),
        recipe=recipe,
        params=tuple(sorted(params.items())),
        friction=FRICTION[friction],
        texture_scale_m=scale,
        seed=zlib.crc32(name.encode()),
    )


_R, _S, _T, _C, _P = "road", "sidewalk", "terrain", "crosswalk", "plaza"
_WHITE, _YELLOW = "#e6e6df", "#e3b21c"
# fmt: off
_SPECS = [
    # --- asphalt (1 m tiles)
    _spec("asphalt_fresh", _R, "asphalt", "asphalt", 1.0, color="#2b2b2c", exposed=0.08, stain=0.05),
    _spec("asphalt_worn", _R, "asphalt", "asphalt", 1.0, color="#4a4948", exposed=0.35, stain=0.12),
    _spec("asphalt_faded", _R, "asphalt", "asphalt", 1.0, color="#6b6864", exposed=0.5, stain=0.15),
    _spec("asphalt_patched", _R, "asphalt", "asphalt", 2.0, color="#4d4c4a", exposed=0.3, patches=3),
    _spec("asphalt_cracked", _R, "asphalt", "asphalt", 1.5, color="#555350", exposed=0.4, cracks=5),
    _spec("asphalt_alligator", _R, "asphalt", "asphalt", 1.0, color="#5d5a56", exposed=0.45, cracks=11),
    _spec("asphalt_oil_stained", _R, "asphalt", "asphalt", 2.0, color="#45433f", exposed=0.3, oil=0.6),
    _spec("asphalt_chip_seal", _R, "asphalt", "asphalt", 0.5, color="#3c3a37", exposed=0.8, stone="#857b6d"),
    _spec("asphalt_red_bus_lane", _R, "asphalt", "asphalt", 1.0, color="#7a3a30", exposed=0.1, stain=0.1),
    _spec("asphalt_green_bike_lane", _R, "asphalt", "asphalt", 1.0, color="#3f7a4a", exposed=0.1, stain=0.1),
    _spec("asphalt_blue_tint", _R, "asphalt", "asphalt", 1.0, color="#3a3f47", exposed=0.2, stain=0.08),
    _spec("concrete_road_panels", _R, "units", "concrete", 8.0, pattern="grid", nx=2, ny=2, joint=1,
          colors=("#a29f98",), joint_color="#3a3835", surface="concrete", tone=0.03),
    # --- road markings (paint over asphalt)
    _spec("marking_white_solid", _R, "marking", "paint", 1.0, kind="solid", paint=_WHITE, width=0.15),
    _spec("marking_white_dashed", _R, "marking", "paint", 4.0, kind="dashed", paint=_WHITE, width=0.15),
    _spec("marking_yellow_solid", _R, "marking", "paint", 1.0, kind="solid", paint=_YELLOW, width=0.15),
    _spec("marking_double_yellow", _R, "marking", "paint", 1.0, kind="double", paint=_YELLOW, width=0.1),
    _spec("marking_white_edge_worn", _R, "marking", "paint", 1.0, kind="solid", paint=_WHITE, width=0.3,
          wear=0.5),
    _spec("marking_zebra_white", _C, "marking", "paint", 1.0, kind="zebra", paint=_WHITE, width=0.5),
    _spec("marking_zebra_worn", _C, "marking", "paint", 1.0, kind="zebra", paint="#cfcfc8", width=0.5,
          wear=0.55),
    _spec("marking_zebra_yellow", _C, "marking", "paint", 1.0, kind="zebra", paint=_YELLOW, width=0.5),
    _spec("marking_ladder_white", _C, "marking", "paint", 1.2, kind="ladder", paint=_WHITE, width=0.3),
    # --- concrete sidewalks (tile = 2 x 2 slabs, so joint spacing = scale / 2)
    _spec("concrete_slab_0p75m", f"{_S} {_P}", "units", "concrete", 1.5, pattern="grid", nx=2, ny=2,
          joint=2, colors=("#b4b0a8",), joint_color="#55524d", surface="concrete", tone=0.03),
    _spec("concrete_slab_1m", _S, "units", "concrete", 2.0, pattern="grid", nx=2, ny=2, joint=2,
          colors=("#9d9a94",), joint_color="#4a4845", surface="concrete", tone=0.04),
    _spec("concrete_slab_1p5m", _S, "units", "concrete", 3.0, pattern="grid", nx=2, ny=2, joint=2,
          colors=("#c2bdb2",), joint_color="#5c5850", surface="concrete", tone=0.03),
    _spec("concrete_slab_2m", _S, "units", "concrete", 4.0, pattern="grid", nx=2, ny=2, joint=1,
          colors=("#8c8a87",), joint_color="#3d3c3a", surface="concrete", tone=0.05),
    _spec("concrete_broom", _S, "concrete", "concrete", 1.0, color="#aaa59b", finish="broom"),
    _spec("concrete_exposed_aggregate", f"{_S} {_P}", "concrete", "concrete", 0.5, color="#948a7c",
          finish="aggregate"),
    _spec("concrete_stained_old", _S, "concrete", "concrete", 2.0, color="#7f7d78", finish="stained"),
    _spec("concrete_new_white", f"{_S} {_P}", "concrete", "concrete", 1.0, color="#d3d0c8"),
    # --- concrete pavers and stone slabs
    _spec("pavers_square_grey", f"{_S} {_P}", "units", "paver", 0.8, pattern="grid", nx=4, ny=4, joint=3,
          colors=("#8f8e8b", "#999894"), joint_color="#6e6a62", surface="concrete", tone=0.05),
    _spec("pavers_square_charcoal", f"{_S} {_P}", "units", "paver", 0.8, pattern="grid", nx=4, ny=4,
          joint=3, colors=("#3f3f40", "#48484a"), joint_color="#6e6a62", surface="concrete", tone=0.06),
    _spec("pavers_running_sand", _S, "units", "paver", 0.8, pattern="running", nx=4, ny=8, joint=3,
          colors=("#c9b99a", "#bfae8c", "#d2c4a8"), joint_color="#8a7f6c", surface="concrete", tone=0.04),
    _spec("pavers_herringbone_red", f"{_S} {_P}", "units", "paver", 1.6, pattern="herringbone", unit=16,
          joint=2, colors=("#8c4a3a", "#7d4033", "#96553f"), joint_color="#6b655b", surface="concrete",
          tone=0.06),
    _spec("pavers_herringbone_grey", f"{_S} {_P}", "units", "paver", 1.6, pattern="herringbone", unit=16,
          joint=2, colors=("#7e7c78", "#8a8782", "#6f6d69"), joint_color="#57544e", surface="concrete",
          tone=0.05),
    _spec("pavers_hex_grey", _S, "units", "paver", 1.4, pattern="hex", nx=7, ny=8, joint=3,
          colors=("#8d8b86",), joint_color="#55524c", surface="concrete", tone=0.06),
    _spec("pavers_hex_red", f"{_S} {_P}", "units", "paver", 1.4, pattern="hex", nx=7, ny=8, joint=3,
          colors=("#9a5444", "#8a4a3c"), joint_color="#6a6157", surface="concrete", tone=0.06),
    _spec("pavers_basketweave_terracotta", _P, "units", "paver", 1.6, pattern="basket", unit=16, joint=2,
          colors=("#b0623f", "#a55a3a", "#ba6d48"), joint_color="#7b7165", surface="concrete", tone=0.05),
    _spec("pavers_mixed_grey", f"{_S} {_P}", "units", "paver", 1.2, pattern="setts", nx=4, ny=6, joint=3,
          colors=("#6f6e6b", "#8e8c88", "#a9a7a1", "#5d5c5a"), joint_color="#4d4a45", surface="concrete",
          tone=0.03),
    _spec("granite_slabs_polished", _P, "units", "polished", 2.4, pattern="running", nx=2, ny=4, joint=1,
          colors=("#9c9894", "#a39e98"), joint_color="#5f5c58", surface="granite", tone=0.03),
    _spec("terrazzo_plaza", _P, "concrete", "polished", 0.5, color="#c8c2b8", finish="terrazzo"),
    # --- clay brick pavers (200 x 100 mm)
    _spec("brick_running_red", f"{_S} {_P}", "units", "brick", 0.8, pattern="running", nx=4, ny=8, joint=3,
          colors=("#93432f", "#a04b34", "#843b2b"), joint_color="#a49a8a", surface="brick", tone=0.08),
    _spec("brick_stack_red", f"{_S} {_P}", "units", "brick", 0.8, pattern="grid", nx=4, ny=8, joint=3,
          colors=("#a85a40", "#b4634a"), joint_color="#8e8779", surface="brick", tone=0.07),
    _spec("brick_herringbone_brown", f"{_S} {_P} {_C}", "units", "brick", 1.6, pattern="herringbone",
          unit=16, joint=3, colors=("#6e4432", "#7a4b37", "#5f3a2b"), joint_color="#8f8676",
          surface="brick", tone=0.08),
    _spec("brick_basketweave_red", _P, "units", "brick", 1.6, pattern="basket", unit=16, joint=3,
          colors=("#9b3f2e", "#8b382a"), joint_color="#9c9282", surface="brick", tone=0.08),
    _spec("brick_running_yellow", f"{_S} {_P}", "units", "brick", 0.8, pattern="running", nx=4, ny=8,
          joint=3, colors=("#c9a66b", "#bf9a5e", "#d1b07a"), joint_color="#8d877b", surface="brick",
          tone=0.07),
    _spec("brick_running_dark", f"{_S} {_C}", "units", "brick", 0.8, pattern="running", nx=4, ny=8,
          joint=3, colors=("#3d3432", "#4a3d39", "#2f2a29"), joint_color="#77726a", surface="brick",
          tone=0.08),
    # --- natural stone
    _spec("cobblestone_grey", f"{_R} {_P}", "stones", "stone", 1.0, cells=9, jitter=0.7, joint=4,
          colors=("#7d7a75", "#8d8982", "#6a6864", "#95918a"), joint_color="#3b3630", dome=0.012),
    _spec("cobblestone_brown", f"{_R} {_P}", "stones", "stone", 1.0, cells=9, jitter=0.7, joint=4,
          colors=("#7a6653", "#8a7560", "#6b5a4a"), joint_color="#3a3027", dome=0.012),
    _spec("granite_setts_grey", f"{_R} {_P}", "units", "stone", 1.2, pattern="setts", nx=8, ny=12,
          joint=3, colors=("#6c6b6a", "#7b7976", "#5f5e5d", "#858380"), joint_color="#35332f",
          surface="stone", tone=0.05),
    _spec("granite_setts_pink", f"{_R} {_P}", "units", "stone", 1.2, pattern="setts", nx=8, ny=12,
          joint=3, colors=("#8d7670", "#9a827a", "#7f6a64"), joint_color="#3f3631", surface="stone",
          tone=0.05),
    _spec("basalt_setts_dark", f"{_R} {_P}", "units", "stone", 1.2, pattern="setts", nx=8, ny=12,
          joint=3, colors=("#3a3a3b", "#434345", "#333334"), joint_color="#5b5750", surface="stone",
          tone=0.05),
    # --- tactile paving (one 300 mm slab per tile)
    _spec("tactile_dots_yellow", f"{_S} {_C}", "tactile", "paver", 0.3, kind="dots", color="#d9aa22"),
    _spec("tactile_bars_yellow", f"{_S} {_C}", "tactile", "paver", 0.3, kind="bars", color="#d4a31f"),
    _spec("tactile_dots_grey", f"{_S} {_C}", "tactile", "paver", 0.3, kind="dots", color="#8b8985"),
    _spec("tactile_dots_red", f"{_S} {_C}", "tactile", "paver", 0.3, kind="dots", color="#9b4236"),
    # --- terrain
    _spec("grass_lush", _T, "grass", "grass", 1.0, color="#4f7a2c", tip="#7fa043", dry=0.0, bare=0.0),
    _spec("grass_dry", _T, "grass", "grass", 1.0, color="#8a8446", tip="#b5a867", dry=0.8, bare=0.05),
    _spec("grass_patchy", _T, "grass", "grass", 2.0, color="#5a7a33", tip="#8a9a4c", dry=0.3, bare=0.35),
    _spec("grass_mown_park", f"{_T} {_P}", "grass", "grass", 1.0, color="#3f6b27", tip="#5e8c35",
          dry=0.1, bare=0.0, stripes=1),
    _spec("gravel_grey", f"{_T} {_P}", "stones", "gravel", 0.5, cells=28, jitter=0.9, joint=1.5,
          colors=("#8a8884", "#a19e98", "#6f6d6a", "#b3afa7"), joint_color="#3d3a36", dome=0.006),
    _spec("gravel_tan", f"{_T} {_P}", "stones", "gravel", 0.5, cells=26, jitter=0.9, joint=1.5,
          colors=("#b09a7a", "#c4b091", "#9a8567", "#d0c0a3"), joint_color="#5a4c3b", dome=0.006),
    _spec("gravel_pea", _T, "stones", "gravel", 0.3, cells=22, jitter=0.8, joint=2,
          colors=("#a58f73", "#8f8478", "#c4b5a0", "#7a6e62", "#b89c7c"), joint_color="#3c342c",
          dome=0.004),
    _spec("dirt_brown", _T, "soil", "earth", 1.0, color="#6e5440", pebbles=0.3),
    _spec("dirt_dry_cracked", _T, "soil", "earth", 1.0, color="#a08462", pebbles=0.1, cracks=6),
    _spec("dirt_dark_wet", _T, "soil", "earth", 1.0, color="#43352a", pebbles=0.2),
    _spec("mulch_bark", f"{_T} {_P}", "mulch", "mulch", 0.5, color="#5c3b24"),
    _spec("mulch_red", f"{_T} {_P}", "mulch", "mulch", 0.5, color="#7a2e1e"),
    _spec("sand_beige", _T, "sand", "sand", 1.0, color="#d2bf96"),
    _spec("sand_grey", _T, "sand", "sand", 1.0, color="#a9a395"),
    _spec("rubber_playground_red", f"{_T} {_P}", "stones", "rubber", 0.3, cells=48, jitter=1.0,
          joint=0.8, colors=("#a33a2a", "#8f3225", "#b24532", "#2c2a28"), joint_color="#2a2624",
          dome=0.0015),
    _spec("wood_deck", _P, "wood", "wood", 1.2, color="#8a6a4a"),
]
# fmt: on
GROUND_MATERIALS: dict[str, GroundMaterialSpec] = {s.name: s for s in _SPECS}


def materials_for(tag: str) -> list[str]:
    """Names of the materials tagged ``tag`` (one of ``GROUND_TAGS``), in library order."""
    if tag not in GROUND_TAGS:
        raise InputError(f"unknown ground tag {tag!r}; expected one of {', '.join(GROUND_TAGS)}")
    return [name for name, spec in GROUND_MATERIALS.items() if tag in spec.tags]


def _get_spec(name: str) -> GroundMaterialSpec:
    try:
        return GROUND_MATERIALS[name]
    except KeyError:
        raise InputError(f"unknown ground material {name!r}; see GROUND_MATERIALS") from None


def _folder(spec: GroundMaterialSpec, size: int) -> Path:
    key = json.dumps([RECIPE_VERSION, size, spec.recipe, spec.params, spec.seed, spec.texture_scale_m])
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    return cache_dir("materials") / f"{spec.name}-{size}-{digest}"


def render_maps(spec: GroundMaterialSpec, size: int = DEFAULT_SIZE) -> dict[str, np.ndarray]:
    """Run a recipe: ``{"base_color": (size, size, 3) uint8 sRGB, "roughness": (size, size) uint8,
    "normal": (size, size, 3) uint8}``. Pure function of the spec and size; nothing is written."""
    rng = np.random.default_rng(spec.seed)
    surface = RECIPES[spec.recipe](size, rng, spec.texture_scale_m, **dict(spec.params))
    shift = (round(0.3 * size) + 1,) * 2  # keep regular joints off the tile edge (wrapping is unaffected)
    return {
        "base_color": to_uint8(linear_to_srgb(np.roll(surface.albedo, shift, (0, 1)))),
        "roughness": to_uint8(np.roll(surface.roughness, shift, (0, 1))),
        "normal": height_to_normal(np.roll(surface.height, shift, (0, 1)), spec.texture_scale_m / size),
    }


def color_histogram(pixels_rgb: np.ndarray) -> np.ndarray:
    """Lab soft histogram ``(512,)`` (L1 = 1) of uint8 sRGB pixels ``(..., 3)``."""
    lab = rgb8_to_lab(np.asarray(pixels_rgb).reshape(-1, 3))
    coords = np.stack([lab[:, 0] / 100.0, (lab[:, 1] + 48) / 96.0, (lab[:, 2] + 48) / 96.0], -1)
    return soft_histogram(coords, COLOR_BINS, (False, False, False))


def _gray(image_rgb: np.ndarray) -> np.ndarray:
    return (np.asarray(image_rgb, dtype=np.float64) @ np.array([0.2126, 0.7152, 0.0722])) / 255.0


def ground_material(name: str, size: int = DEFAULT_SIZE) -> GroundMaterial:
    """Build (or load from the cache) material ``name`` at ``size`` px per side (a multiple of 64)."""
    spec = _get_spec(name)
    if size < 64 or size % 64:
        raise InputError(f"ground material size must be a positive multiple of 64 px, got {size}")
    folder = _folder(spec, size)
    desc_path = folder / "descriptor.npz"
    if not desc_path.exists():
        maps = render_maps(spec, size)
        folder.mkdir(parents=True, exist_ok=True)
        for key, image in maps.items():
            save_png(folder / f"{key}.png", image)
        albedo = srgb_to_linear(maps["base_color"] / 255.0)
        with atomic_path(desc_path) as tmp:
            np.savez(
                tmp,
                color_hist=color_histogram(maps["base_color"][::2, ::2]),
                texture_hist=texture_descriptor(_gray(maps["base_color"])),
                base_color=albedo.reshape(-1, 3).mean(0),
                roughness=np.float64(maps["roughness"].mean() / 255.0),
            )
    with np.load(desc_path) as d:
        return GroundMaterial(
            name=spec.name,
            tags=spec.tags,
            base_color=tuple(float(v) for v in d["base_color"]),
            roughness=float(d["roughness"]),
            friction=spec.friction,
            texture_scale_m=spec.texture_scale_m,
            base_color_map=folder / "base_color.png",
            roughness_map=folder / "roughness.png",
            normal_map=folder / "normal.png",
            color_hist=d["color_hist"],
            texture_hist=d["texture_hist"],
        )


def material_maps(name: str, size: int = DEFAULT_SIZE) -> dict[str, Path]:
    """``{"base_color": png, "roughness": png, "normal": png}`` for material ``name`` (built if needed)."""
    mat = ground_material(name, size)
    return {"base_color": mat.base_color_map, "roughness": mat.roughness_map, "normal": mat.normal_map}


def load_base_color(name: str, size: int = DEFAULT_SIZE) -> np.ndarray:
    """The base colour map of ``name`` as uint8 sRGB ``(size, size, 3)``."""
    with Image.open(ground_material(name, size).base_color_map) as im:
        return np.asarray(im.convert("RGB"))


@functools.lru_cache(maxsize=16)
def _descriptor_matrices(names: tuple[str, ...], size: int, cache_root: str) -> tuple[np.ndarray, np.ndarray]:
    """Stacked colour and texture histograms of ``names`` (built if needed); memoised per cache folder."""
    mats = [ground_material(n, size) for n in names]
    return np.stack([m.color_hist for m in mats]), np.stack([m.texture_hist for m in mats])


def match_ground(
    pixels_rgb: np.ndarray, tag: str | None = None, k: int = 3, size: int = DEFAULT_SIZE
) -> list[tuple[str, float]]:
    """Rank materials by how well they explain a sample of ground pixels.

    ``pixels_rgb``: uint8 sRGB, either ``(N, 3)`` (any sample of ground pixels: colour only) or
    an image patch ``(H, W, 3)`` with H, W >= 8 (colour and texture; best when the patch's
    metres per pixel is near the material's ``texture_scale_m / size``). ``tag`` restricts to
    one ground type. Returns the ``k`` best ``(name, distance)``, ascending; distance =
    Hellinger distance of the Lab histograms (in [0, 1]), or 0.75 of it plus 0.25 of the
    texture histograms' Hellinger distance for patches. Pixels should show albedo under
    roughly neutral, mid-grey exposure; no illumination correction is attempted.
    """
    pixels = np.asarray(pixels_rgb)
    if pixels.dtype != np.uint8 or pixels.shape[-1] != 3 or pixels.ndim not in (2, 3) or pixels.size == 0:
        raise InputError(
            f"match_ground expects uint8 (N, 3) or (H, W, 3) pixels, got {pixels.dtype} {pixels.shape}"
        )
    names = tuple(materials_for(tag) if tag is not None else GROUND_MATERIALS)
    color_hists, texture_hists = _descriptor_matrices(names, size, str(cache_dir("materials")))
    dist = hellinger(color_histogram(pixels), color_hists)
    if pixels.ndim == 3 and min(pixels.shape[:2]) >= 8:
        tex = hellinger(texture_descriptor(_gray(pixels)), texture_hists)
        dist = 0.75 * dist + 0.25 * tex
    order = np.argsort(dist, kind="stable")[:k]
    return [(names[i], float(dist[i])) for i in order]
