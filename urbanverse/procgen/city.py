"""City profiles: distributions of street parameters, from which a city's streets are drawn.

``procgen``'s own streets (``urbanverse procgen``, the training benchmarks) come from
``PROCGEN_DEFAULT``: fixed 80 m streets, two lanes, 4 m sidewalks, 15 cm curbs, sparse furniture.
``OLD_TOWN`` is another city, the target of the real-to-sim experiment (``tools/exp_real2sim.py``):
shorter, narrower one-lane streets with narrow, cluttered sidewalks (twice the cafe seating, bins and
kiosks, rows of bollards along many curbs), curbs from 10 to 20 cm, buildings set back behind
forecourts and smaller plazas, and more commercial streets and squares. A policy trained on
``PROCGEN_DEFAULT`` streets meets in it passages it has never seen: that gap is what scenes made
from the target city's own video can close.

A street of a profile is a pure function of the profile and a seed (:meth:`CityProfile.street`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from urbanverse.errors import InputError
from urbanverse.procgen.street import STYLES, StreetCfg
from urbanverse.scene.record import DEFAULT_CURB_HEIGHT

#: Second entropy word of a city's street draws (the first is the street's seed).
CITY_STREAM = 7


@dataclasses.dataclass(frozen=True, kw_only=True)
class CityProfile:
    """Distributions of a city's street parameters. Ranges ``(lo, hi)`` are drawn uniformly; weights
    are relative frequencies."""

    name: str
    styles: dict[str, float]
    """Street style (``procgen`` styles) -> weight."""
    lanes: dict[int, float]
    """Traffic lanes -> weight."""
    length_m: tuple[float, float]
    sidewalk_m: tuple[float, float]
    curb_m: tuple[float, float]
    clutter: tuple[float, float]
    """Street furniture density (``StreetCfg.clutter``; 1: procgen's own)."""
    bollard_share: float
    """Share of the streets with bollard rows along their curbs."""
    bollard_spacing_m: tuple[float, float]
    setback_m: tuple[float, float]
    """Building fronts behind the sidewalk's back edge (m)."""
    plaza_depth_m: tuple[float, float]

    def __post_init__(self) -> None:
        unknown = set(self.styles) - set(STYLES)
        if unknown:
            raise InputError(f"city {self.name!r}: unknown styles {sorted(unknown)}")
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, tuple) and value[0] > value[1]:
                raise InputError(f"city {self.name!r}: {field.name} range {value} is reversed")

    def street(self, seed: int) -> StreetCfg:
        """The street of this city with seed ``seed`` (its layout, assets and people use the same seed)."""
        rng = np.random.default_rng([seed, CITY_STREAM])

        def pick(weights: dict) -> object:
            keys = list(weights)
            p = np.asarray([weights[k] for k in keys], dtype=float)
            return keys[int(rng.choice(len(keys), p=p / p.sum()))]

        def draw(lo_hi: tuple[float, float]) -> float:
            return float(rng.uniform(*lo_hi))

        style = pick(self.styles)
        lanes = int(pick(self.lanes))  # type: ignore[call-overload]
        length, sidewalk, curb = draw(self.length_m), draw(self.sidewalk_m), draw(self.curb_m)
        clutter, setback, plaza = draw(self.clutter), draw(self.setback_m), draw(self.plaza_depth_m)
        bollards = draw(self.bollard_spacing_m) if rng.random() < self.bollard_share else 0.0
        return StreetCfg(
            style=style,  # type: ignore[arg-type]
            seed=seed,
            length=round(length, 1),
            lanes=lanes,
            sidewalk=round(sidewalk, 2),
            curb=round(curb, 3),
            clutter=round(clutter, 2),
            curb_bollards=round(bollards, 1),
            setback=round(setback, 2),
            plaza_depth=round(plaza, 1),
        )

    def rows(self) -> list[tuple[str, str]]:
        """``(parameter, distribution)`` rows for a table side by side with another city."""

        def rng_(lo_hi: tuple[float, float], unit: str) -> str:
            lo, hi = lo_hi
            return (f"{lo:g} {unit}" if lo == hi else f"{lo:g}-{hi:g} {unit}").strip()

        def shares(weights: dict) -> str:
            total = sum(weights.values())
            return ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in weights.items())

        bollards = (
            "none along curbs"
            if self.bollard_share == 0
            else f"{100 * self.bollard_share:.0f} % of streets, every {rng_(self.bollard_spacing_m, 'm')}"
        )
        return [
            ("styles", shares(self.styles)),
            ("traffic lanes", shares(self.lanes)),
            ("street length", rng_(self.length_m, "m")),
            ("sidewalk width", rng_(self.sidewalk_m, "m")),
            ("curb height", rng_(self.curb_m, "m")),
            ("furniture density (x procgen)", rng_(self.clutter, "")),
            ("bollard rows", bollards),
            ("building setback", rng_(self.setback_m, "m")),
            ("plaza depth", rng_(self.plaza_depth_m, "m")),
        ]


PROCGEN_DEFAULT = CityProfile(
    name="procgen-default",
    styles=dict.fromkeys(STYLES, 1.0),
    lanes={2: 1.0},
    length_m=(80.0, 80.0),
    sidewalk_m=(4.0, 4.0),
    curb_m=(DEFAULT_CURB_HEIGHT, DEFAULT_CURB_HEIGHT),
    clutter=(1.0, 1.0),
    bollard_share=0.0,
    bollard_spacing_m=(0.0, 0.0),
    setback_m=(0.5, 0.5),
    plaza_depth_m=(18.0, 18.0),
)

OLD_TOWN = CityProfile(
    name="old-town",
    styles={"commercial": 0.4, "plaza": 0.25, "residential": 0.2, "intersection": 0.15},
    lanes={1: 0.6, 2: 0.4},
    length_m=(50.0, 70.0),
    sidewalk_m=(2.6, 3.6),
    curb_m=(0.10, 0.20),
    clutter=(1.5, 2.5),
    bollard_share=0.5,
    bollard_spacing_m=(3.0, 6.0),
    setback_m=(0.0, 2.5),
    plaza_depth_m=(8.0, 14.0),
)

CITIES: dict[str, CityProfile] = {c.name: c for c in (PROCGEN_DEFAULT, OLD_TOWN)}
