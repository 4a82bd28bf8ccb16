"""Natural ground objects: boulders and tree stumps. Lengths in metres."""

from __future__ import annotations

import numpy as np

from urbanverse.assets.generators.base import Builder, Generator, pick, seed, uni
from urbanverse.assets.generators.shapes import hull


class Boulder(Generator):
    """Boulder: a jittered, flat-bottomed convex rock."""

    name, l3 = "boulder_rock", "boulder"

    def sample_params(self, rng):
        return {
            "size": uni(rng, 0.4, 3.0),
            "flatness": uni(rng, 0.45, 0.8),
            "elongation": uni(rng, 1.0, 1.5),
            "stone": pick(rng, ("stone", "granite")),
            "seed": seed(rng),
        }

    def build(self, p):
        b = Builder()
        s = p["size"]
        rng = np.random.default_rng(p["seed"])
        pts = rng.normal(size=(24, 3))
        pts /= np.linalg.norm(pts, axis=1, keepdims=True)
        pts *= rng.uniform(0.8, 1.0, (24, 1)) * [
            s / 2 * p["elongation"] ** 0.5,
            s / 2 / p["elongation"] ** 0.5,
            s / 2 * p["flatness"],
        ]
        base_z = -s / 2 * p["flatness"] * 0.45
        pts[:, 2] = np.maximum(pts[:, 2], base_z)  # flat base
        # A ring of base points at 70 % of the horizontal radii keeps the footprint wide and centred,
        # so the rock rests on its base instead of rocking on a few clamped points.
        ring = np.linspace(0, 2 * np.pi, 8, endpoint=False)
        radii = 0.7 * s / 2 * np.array([p["elongation"] ** 0.5, 1 / p["elongation"] ** 0.5])
        base = np.column_stack([radii[0] * np.cos(ring), radii[1] * np.sin(ring), np.full(8, base_z)])
        pts = np.vstack([pts, base])
        b.hull("rock", pts, p["stone"], "grey" if p["stone"] == "granite" else "stone_beige")
        return b.finish()

    def describe(self, p):
        return f"{p['size']:.1f} m {p['stone']} boulder"


class TreeStump(Generator):
    """Tree stump: a flared cut trunk with root buttresses around it."""

    name, l3 = "tree_stump", "tree_stump"

    def sample_params(self, rng):
        return {"radius": uni(rng, 0.15, 0.55), "height": uni(rng, 0.2, 0.9), "roots": pick(rng, (4, 5, 6))}

    def build(self, p):
        b = Builder()
        r, h = p["radius"], p["height"]
        b.cyl("stump", r * 1.2, h, (0, 0, 0), "bark", "bark_brown", r_top=r, sections=12)
        b.cyl("cut_face", r * 0.9, 0.01, (0, 0, h), "wood", "tan", sections=12)
        for k in range(p["roots"]):
            a = 2 * np.pi * k / p["roots"]
            d = np.array([np.cos(a), np.sin(a)])
            pts = [
                (*(d * r * 0.8), 0.0),
                (*(d * r * 1.9), 0.0),
                (*(d * r * 0.8), h * 0.5),
                (*(d * r * 0.8 + d[::-1] * [-1, 1] * r * 0.2), 0.0),
                (*(d * r * 0.8 - d[::-1] * [-1, 1] * r * 0.2), 0.0),
            ]
            b.add(f"root_{k}", hull(pts), "bark", "bark_brown")
        return b.finish()

    def describe(self, p):
        return f"tree stump, {2 * p['radius']:.1f} m across"


GENERATORS: list[Generator] = [Boulder(), TreeStump()]
