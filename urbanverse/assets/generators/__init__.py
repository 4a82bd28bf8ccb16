"""Procedural asset generators, one module per family, and the registry of all of them.

``GENERATORS`` maps a unique generator name to its instance; ``generators_for(l3)`` lists the
generators producing a taxonomy class. See ``base`` for the asset frame and the ``Part`` record.
"""

from __future__ import annotations

import difflib

from urbanverse.assets.generators import (
    amenities,
    barriers,
    buildings,
    lighting,
    micromobility,
    rocks,
    signage,
    street_furniture,
    street_life,
    utilities,
    vegetation,
    vehicles,
)
from urbanverse.assets.generators.base import Generator, Params, Part

_MODULES = (
    street_furniture,
    amenities,
    lighting,
    signage,
    vegetation,
    rocks,
    vehicles,
    micromobility,
    street_life,
    buildings,
    barriers,
    utilities,
)


def _registry() -> dict[str, Generator]:
    out: dict[str, Generator] = {}
    for module in _MODULES:
        for gen in module.GENERATORS:
            if gen.name in out:
                raise ValueError(f"duplicate generator name {gen.name!r}")
            out[gen.name] = gen
    return out


#: Every generator, keyed by its unique name.
GENERATORS: dict[str, Generator] = _registry()


def generators_for(l3: str) -> list[Generator]:
    """Generators producing taxonomy class ``l3`` (empty when none), in registry order."""
    return [g for g in GENERATORS.values() if g.l3 == l3]


def get_generator(name: str) -> Generator:
    """The generator called ``name``; raises ``ValueError`` naming close matches when unknown."""
    try:
        return GENERATORS[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(GENERATORS), n=5, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown generator {name!r}{hint}") from None


__all__ = ["GENERATORS", "Generator", "Params", "Part", "generators_for", "get_generator"]
