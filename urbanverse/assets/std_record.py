"""UrbanVerse-100K annotation files (``std_<uid>.json`` beside ``std_<uid>.glb``): read and check.

Ingest copies the fields below over the values it measures or derives (``urbanverse.assets.ingest``).
A field that is absent, ``null``, NaN or of another JSON type counts as not annotated (the value is
derived instead, as before); a number outside its physical range (``urbanverse.assets.limits``), a
uid that is not a safe folder name, or a file that is not a JSON object refuses the pair, with a
reason that names the file, the field and the value.
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


def load_annotation(path: Path) -> dict:
    """The well-typed, in-range fields of the annotation at ``path`` (``std_<uid>.json``).

    Returns a dict with a subset of ``NUMBER_FIELDS`` (floats), ``BOOL_FIELDS``, ``TEXT_FIELDS`` and
    ``materials`` (a list of strings); raises ``InputError`` naming ``path`` on a bad file or value.
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
    except InputError as exc:
        raise InputError(f"{_shown(path.name)}: {exc}") from None
    except OSError as exc:
        raise InputError(f"{_shown(path.name)}: cannot be read ({exc.strerror})") from None
    return out
