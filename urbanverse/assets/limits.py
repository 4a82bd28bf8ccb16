"""Physical ranges that every record read from a user's file is checked against.

One table for the scene record (``scene.json``), our asset record (``asset.json``) and the
UrbanVerse-100K annotations (``std_<uid>.json``), so a mass or a friction means the same in all
three. The ranges are wide enough for every real urban object and narrow enough to catch unit
mistakes and garbage: a value outside them is refused with the JSON path, the value and the range
(``objects[3].position: 1e+300 is outside ±100000 m``), before it reaches MuJoCo or USD.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from urbanverse.errors import InputError


@dataclass(frozen=True)
class Limit:
    """A closed range ``[lo, hi]`` in ``unit`` (empty for pure numbers)."""

    lo: float
    hi: float
    unit: str = ""

    def describe(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.lo == -self.hi:
            return f"±{self.hi:g}{unit}"
        return f"[{self.lo:g}, {self.hi:g}]{unit}"


#: World coordinates (m): a city district, not a continent; beyond 1e5 m float32 consumers (the
#: simulator, USD's float points) lose centimetre precision, and 1e10 m is where MuJoCo gives up.
POSITION = Limit(-1e5, 1e5, "m")
#: An object's or asset's extent along one axis (m): from a 1 mm part to a 1 km building block (the
#: tallest tower is 828 m).
SIZE = Limit(1e-3, 1e3, "m")
#: Per-axis scale of a placed asset (assets are stored in metres): 0.01..100 covers a centimetre /
#: metre mix-up and stretching a library asset to fit; a larger factor is not the same object.
SCALE = Limit(0.01, 100.0)
#: Mass (kg): from 1 g to 1e10 kg (a whole building is ~1e7 kg, the Great Pyramid ~6e9 kg). MuJoCo
#: needs a positive mass, and ratios beyond ~1e13 make its contact solver diverge.
MASS = Limit(1e-3, 1e10, "kg")
#: Volume (m^3) of an asset's solid parts: a 1 mm cube to a 1 km cube.
VOLUME = Limit(1e-9, 1e9, "m^3")
#: Coulomb friction coefficient: ice is ~0.02, rubber on concrete ~1, nothing real exceeds 5.
FRICTION = Limit(0.0, 5.0)
#: Coefficient of restitution: 0 (no bounce) to 1 (perfectly elastic).
RESTITUTION = Limit(0.0, 1.0)
#: Yaw (rad): one turn either way, which holds both the [-pi, pi] and [0, 2 pi) conventions; a larger
#: value is almost always degrees written where radians belong.
YAW = Limit(-2 * math.pi, 2 * math.pi, "rad")
#: Height of a ground region's top above z = 0 (m): curbs, ramps and raised plazas.
ELEVATION = Limit(0.0, 10.0, "m")
#: A fraction or a score in [0, 1] (colours, roughness, confidence, compositions).
UNIT_INTERVAL = Limit(0.0, 1.0)
#: Texture tile size (m): 1 mm to 1 km.
TEXTURE_SCALE = Limit(1e-3, 1e3, "m")
#: Light intensity (USD units, nits): the noon sun is ~1e5; above 1e6 nothing is visible but white.
LIGHT_INTENSITY = Limit(0.0, 1e6)
#: A walking speed (m/s): people walk at 1-1.5 and sprint at up to ~10; faster is a tracking error.
WALK_SPEED = Limit(0.0, 12.0, "m/s")
#: People per square metre: a dense crowd is ~4, a crush ~9.
CROWD_DENSITY = Limit(0.0, 10.0, "1/m^2")
#: A time in a video or a stage (s): up to about 11 days.
DURATION = Limit(0.0, 1e6, "s")
#: Frame numbers, track ids and seeds: non-negative and within a signed 64-bit integer, what every JSON
#: reader (and numpy) holds exactly.
INDEX = Limit(0, 2**63 - 1)
#: Young's modulus (MPa): soft foam (~0.01) to diamond (~1.2e6).
YOUNGS_MODULUS = Limit(0.0, 1e7, "MPa")
#: Surface hardness on the Mohs scale.
HARDNESS = Limit(0.0, 10.0)
#: Force (N) to slide an asset on dry ground: friction 5 times the largest mass times g, rounded up.
FORCE = Limit(0.0, 1e12, "N")
#: Clearance (m) a robot should keep from an asset.
CLEARANCE = Limit(0.0, 100.0, "m")
#: Asset quality score.
QUALITY = Limit(0, 10)

#: An asset uid: a file-name-safe token (it names the asset's folder), not ``.`` or ``..``.
UID_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")


def check(value: float, limit: Limit, where: str) -> None:
    """``InputError`` ``"<where>: <value> is outside <range>"`` unless ``value`` is within ``limit``."""
    finite = isinstance(value, int) or math.isfinite(value)  # math.isfinite overflows on huge ints
    if not (finite and limit.lo <= value <= limit.hi):
        shown = short_number(value) if isinstance(value, int) else f"{value:g}"
        raise InputError(f"{where}: {shown} is outside {limit.describe()}")


def check_all(values, limit: Limit, where: str) -> None:
    """``check`` every number of a vector, naming the vector (``objects[3].position``) as the place."""
    for value in values:
        check(value, limit, where)


def check_uid(uid: str, where: str) -> None:
    """``InputError`` unless ``uid`` is a file-name-safe asset uid (``UID_PATTERN``)."""
    if not UID_PATTERN.fullmatch(uid):
        raise InputError(
            f"{where}: {uid[:80]!r} is not an asset uid (1-128 letters, digits, '.', '_' or '-', "
            "not starting with '.' or '-')"
        )


def short_number(value: int) -> str:
    """An integer as text, however long (``str`` refuses integers over 4300 digits)."""
    if abs(value) < 10**30:
        return str(value)
    return f"{float(value):g}" if abs(value) < 1e308 else ("-" if value < 0 else "") + "1e+308 or more"
