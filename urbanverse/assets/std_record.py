"""UrbanVerse-100K annotation files (``std_<uid>.json`` beside ``std_<uid>.glb``): read and check.

Ingest copies the fields below over the values it measures or derives (``urbanverse.assets.ingest``).
A field that is absent, ``null``, NaN or of another JSON type counts as not annotated (the value is
derived instead, as before); a number outside its physical range (``urbanverse.assets.limits``), a
uid that is not a safe folder name, or a file that is not a JSON object refuses the pair, with a
reason that names the file, the field and the value.

The two orientation fields are stricter: a value of the wrong type or out of range refuses the pair
(a silently ignored front would store the asset turned the wrong way), and only an absent or
``null`` field counts as not annotated. Their meaning follows objathor (allenai/objathor), the
annotation pipeline whose fields these are (its ``annotation/glb_to_annotation_pipeline.py`` and
``utils/blender/render_glb.py``). We cannot see the dataset's renders, so this is an assumption. In
our frame (Z-up: a glTF file's +Y turned to +Z, so glTF's +Z, the side glTF calls the front, lies
along -Y):

- the four renders look at the asset from azimuths ``90 * k - 90`` degrees, k = 0..3, measured from +X
  counter-clockwise seen from above: render 0 sees the -Y side, render 1 the +X side, render 2 the +Y
  side, render 3 the -X side;
- ``frontView`` k (an integer 0-3) says render k shows the front: the front faces azimuth
  ``90 * k - 90`` degrees, and a turn of ``90 - 90 * k`` degrees about +Z brings it to +X;
- ``pose_z_rot_angle`` (radians, as objathor writes it: ``-radians(90 * frontView)``) is the turn about
  +Z that brings the front to render 0's side (-Y), so ``degrees(pose_z_rot_angle) + 90`` brings it to
  +X. It carries the same information as ``frontView``; when present it is the one used (objathor's
  converter applies it alone), and ``frontView`` is only checked.

With neither field the asset keeps the file's own frame (no turn), as a mesh without annotation does.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from urbanverse.assets import limits
from urbanverse.errors import InputError

#: Annotated numbers that ingest uses, and their ranges. A mass of 0 means "unknown" (derived).
NUMBER_FIELDS = {
    "height": limits.SIZE,
    "mass": limits.MASS,
    "friction_coefficient": limits.FRICTION,
    "bounciness": limits.RESTITUTION,
    "youngs_modulus": limits.YOUNGS_MODULUS,
    "required_force": limits.FORCE,
    "recommended_clearance": limits.CLEARANCE,
}
BOOL_FIELDS = ("movable", "walkable", "enterable", "receptacle", "support_surface")
TEXT_FIELDS = ("category", "description", "description_long", "synset", "license_info")
#: The renders that ``frontView`` may name: 0-3.
FRONT_VIEWS = limits.Limit(0, 3)
#: Azimuth (degrees, counter-clockwise from +X seen from above) from which render 0 looks at the asset.
RENDER_0_AZIMUTH_DEG = -90.0
#: Longest text kept from an annotation (characters); longer text is cut.
MAX_TEXT = 4000
#: Largest annotation file read (bytes): the real ones are a few kB.
MAX_BYTES = 1 << 20


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _shown(name: str) -> str:
    """A file name for a one-line message: as it is, or escaped when it holds line breaks or controls."""
    return name if name.isprintable() else ascii(name)


def _orientation(data: dict) -> dict:
    """The well-typed, in-range ``frontView`` and ``pose_z_rot_angle`` of ``data`` (absent or ``null``:
    left out); ``InputError`` naming the field and the value for any other value."""
    out: dict = {}
    view = data.get("frontView")
    if view is not None:
        if isinstance(view, bool) or not isinstance(view, int):
            raise InputError(
                f"frontView: expected an integer 0-3 (the render showing the front), got {_shown_value(view)}"
            )
        limits.check(view, FRONT_VIEWS, "frontView")
        out["frontView"] = view
    angle = data.get("pose_z_rot_angle")
    if angle is not None:
        if isinstance(angle, bool) or not isinstance(angle, int | float):
            raise InputError(f"pose_z_rot_angle: expected a number of radians, got {_shown_value(angle)}")
        limits.check(angle, limits.YAW, "pose_z_rot_angle")
        out["pose_z_rot_angle"] = float(angle)
    return out


def _shown_value(value: Any) -> str:
    """A JSON value for a one-line message: its repr, cut to 40 characters."""
    text = ascii(value)
    return text if len(text) <= 40 else text[:37] + "..."


def front_yaw_deg(annotation: dict) -> tuple[float, str] | None:
    """The turn about +Z (degrees, counter-clockwise seen from above, in [0, 360)) that brings the
    annotated front of the asset to +X, and the field it comes from (``pose_z_rot_angle`` when present,
    else ``frontView``); None when ``annotation`` (from ``load_annotation``) has neither. The
    convention is the module docstring's."""
    if "pose_z_rot_angle" in annotation:
        yaw, field = math.degrees(annotation["pose_z_rot_angle"]) - RENDER_0_AZIMUTH_DEG, "pose_z_rot_angle"
    elif "frontView" in annotation:
        yaw, field = -(RENDER_0_AZIMUTH_DEG + 90.0 * annotation["frontView"]), "frontView"
    else:
        return None
    return yaw % 360.0, field


def load_annotation(path: Path) -> dict:
    """The well-typed, in-range fields of the annotation at ``path`` (``std_<uid>.json``).

    Returns a dict with a subset of ``NUMBER_FIELDS`` (floats), ``BOOL_FIELDS``, ``TEXT_FIELDS``,
    ``materials`` (a list of strings), ``frontView`` (an int 0-3) and ``pose_z_rot_angle`` (a float, rad);
    raises ``InputError`` naming ``path`` on a bad file or value.
    """
    path = Path(path)
    uid = path.stem[len("std_") :] if path.stem.startswith("std_") else path.stem
    try:
        limits.check_uid(uid, "uid (from the file name)")
        if path.stat().st_size > MAX_BYTES:
            raise InputError(f"over {MAX_BYTES} bytes; an annotation is a few kB")
        try:
            data = json.loads(path.read_bytes())
        except (ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, a 5000-digit number, deep nesting
            raise InputError(f"not valid JSON ({type(exc).__name__}: {str(exc)[:200]})") from None
        if not isinstance(data, dict):
            raise InputError(f"expected a JSON object, got {type(data).__name__}")
        out: dict = {}
        for key, limit in NUMBER_FIELDS.items():
            value = _number(data.get(key))
            if value is None or (key == "mass" and value == 0):
                continue
            limits.check(value, limit, key)
            out[key] = float(value)
        out |= {key: data[key] for key in BOOL_FIELDS if isinstance(data.get(key), bool)}
        out |= {
            key: data[key][:MAX_TEXT] for key in TEXT_FIELDS if isinstance(data.get(key), str) and data[key]
        }
        materials = data.get("materials")
        if isinstance(materials, list):
            out["materials"] = [m[:MAX_TEXT] for m in materials if isinstance(m, str)]
        out |= _orientation(data)
    except InputError as exc:
        raise InputError(f"{_shown(path.name)}: {exc}") from None
    except OSError as exc:
        raise InputError(f"{_shown(path.name)}: cannot be read ({exc.strerror})") from None
    return out
