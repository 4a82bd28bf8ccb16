"""Every procedural generator, for three seeds: determinism, convex watertight parts, asset frame,
size within its taxonomy range, and a centre of mass over the ground-contact footprint."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.spatial import ConvexHull, QhullError

from urbanverse.assets.generators import GENERATORS, generators_for, get_generator
from urbanverse.assets.taxonomy import MATERIALS, TAXONOMY

SEEDS = (0, 1, 2)
CONTACT_Z = 0.01  # m: vertices below this height touch the ground
SIZE_TOL = 0.15  # relative tolerance on the taxonomy size range
SIZE_ABS = 0.05  # m, absolute slack on the size range


def _footprint_contains(parts, point_xy: np.ndarray) -> bool:
    pts = np.concatenate([p.mesh.vertices[p.mesh.vertices[:, 2] < CONTACT_Z, :2] for p in parts])
    if len(pts) < 3:
        return False
    try:
        h = ConvexHull(pts)
    except QhullError:  # all contacts collinear: a knife edge, not a stable footprint
        return False
    # inside (with 1 mm slack) when every facet inequality a.x + b <= 0 holds
    return bool(np.all(h.equations[:, :2] @ point_xy + h.equations[:, 2] <= 1e-3))


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generator_contract(name: str) -> None:
    gen = GENERATORS[name]
    cls = TAXONOMY[gen.l3]
    lo = np.array(cls.size_min) * (1 - SIZE_TOL) - SIZE_ABS
    hi = np.array(cls.size_max) * (1 + SIZE_TOL) + SIZE_ABS
    for s in SEEDS:
        params = gen.sample_params(np.random.default_rng(s))
        assert json.loads(json.dumps(params)) == params, "parameters must round-trip through JSON"
        for v in params.values():
            assert isinstance(v, bool | int | str) or round(v, 3) == v, f"{v!r}: floats rounded to 3 decimals"
        parts = gen.build(params)
        again = gen.build(json.loads(json.dumps(params)))
        assert len(parts) == len(again)
        for a, b in zip(parts, again, strict=True):
            assert a.name == b.name and np.array_equal(a.mesh.vertices, b.mesh.vertices)
        assert len({p.name for p in parts}) == len(parts), "part names must be unique"
        verts = np.concatenate([p.mesh.vertices for p in parts])
        vmin, vmax = verts.min(axis=0), verts.max(axis=0)
        assert abs(vmin[2]) < 1e-6, f"seed {s}: lowest point at z={vmin[2]}"
        assert np.allclose((vmin[:2] + vmax[:2]) / 2, 0.0, atol=1e-6), f"seed {s}: footprint not centred"
        dims = vmax - vmin
        assert np.all(dims >= lo) and np.all(dims <= hi), f"seed {s}: dims {dims.round(3)} outside {lo}..{hi}"
        volumes, centres = [], []
        for p in parts:
            assert p.material in MATERIALS, p.material
            assert len(p.rgb) == 3 and all(0.0 <= c <= 1.0 for c in p.rgb)
            assert p.mesh.is_watertight, f"seed {s}: part {p.name} not watertight"
            assert p.mesh.is_convex, f"seed {s}: part {p.name} not convex"
            vol = p.mesh.volume
            assert vol > 0, f"seed {s}: part {p.name} has volume {vol}"
            volumes.append(vol)
            centres.append(p.mesh.center_mass)
        com = np.average(np.array(centres), axis=0, weights=volumes)
        assert _footprint_contains(parts, com[:2]), (
            f"seed {s}: centre of mass {com.round(3)} not over footprint"
        )
        assert gen.describe(params)


def test_registry() -> None:
    assert len(GENERATORS) >= 60
    covered = {g.l3 for g in GENERATORS.values()}
    assert len(covered) >= 60, sorted(covered)
    for gen in GENERATORS.values():
        assert gen.l3 in TAXONOMY, gen
        assert gen in generators_for(gen.l3)
        assert get_generator(gen.name) is gen
    with pytest.raises(ValueError, match="bench_slatted"):
        get_generator("bench_slated")
