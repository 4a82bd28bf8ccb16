"""Placing lifted objects: a building front's asset is stretched to the measured length, within
bounds, and nothing else is."""

from __future__ import annotations

import math

import pytest

from urbanverse.assets.catalogue import entry_of, record_of
from urbanverse.assets.store import AssetStore
from urbanverse.gen.assemble import FRONT_STRETCH, place_objects
from urbanverse.layout.lift import LiftedObject, LiftedObjects
from urbanverse.retrieval.cousins import Cousins, CousinSet

SLAB = "facade_slab-00011"  # 6.2 m wide: 7 m stretches it by 1.13


def _lifted(track_id: int, length_m: float, front_only: bool) -> LiftedObject:
    return LiftedObject(
        track_id=track_id, category="building_facade", label="dense points: facade", score=0.3,
        position=(10.0 * track_id, -8.0, 0.0), yaw=math.pi / 2, yaw_source="faces_street",
        size=(1.0, length_m, 5.0), observations=8, spread_m=0.0, front_only=front_only,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("length_m", "front_only", "stretch"),
    [(7.0, True, None), (20.0, True, FRONT_STRETCH[1]), (3.0, True, FRONT_STRETCH[0]), (7.0, False, 1.0)],
)
def test_a_front_s_asset_is_stretched_to_its_measured_length(tmp_path, length_m, front_only, stretch):
    slab = record_of(entry_of(SLAB))
    width = slab.width
    stretch = stretch or length_m / width
    lifted = LiftedObjects(objects=(_lifted(1, length_m, front_only),), dropped={})
    cousins = CousinSet(objects=(Cousins(track_id=1, uids=(SLAB,), scores=(0.0,), matched_level="l3"),))
    with AssetStore(tmp_path / "library") as store:
        store.add([slab], embed=False)
        (obj,), warnings = place_objects(lifted, cousins, [], tmp_path / "scene", store)
    assert warnings == []
    assert obj.scale == pytest.approx((1.0, stretch, 1.0))
    assert obj.size[1] == pytest.approx(width * stretch)  # the size after scaling, as SceneObject has it
