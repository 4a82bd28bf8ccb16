"""Fuzzing UrbanVerse-100K annotations (``std_<uid>.json`` beside ``std_<uid>.glb``) through ingest.

The property, for every mutated annotation and every uid in the file name: ``ingest`` returns (never
raises); the pair is either accepted, with a record that passes ``validate_asset`` and keeps each
in-range annotated value, or rejected with a one-line reason naming the annotation file; a rejected
pair leaves no asset folder, and nothing is written outside the library's ``ingested/`` folder.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest
import trimesh
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.formats_common import json_mutation
from urbanverse.assets import limits
from urbanverse.assets.ingest import ingest
from urbanverse.assets.record import validate_asset
from urbanverse.assets.std_record import load_annotation
from urbanverse.assets.store import AssetStore
from urbanverse.errors import InputError
from urbanverse.render.thumbnail import library_thumbnail

#: A valid annotation, as in the UrbanVerse-100K release (our field names are theirs).
BASE = {
    "uid": "abc123",
    "category": "bench",
    "height": 0.45,
    "mass": 38.0,
    "friction_coefficient": 0.55,
    "bounciness": 0.2,
    "movable": False,
    "materials": ["wood", "metal"],
    "description": "a plain wooden bench",
}
FOCUS = [(k,) for k in ("height", "mass", "friction_coefficient", "bounciness", "materials", "category")]

#: File-name uids: a valid one, and text a file system takes (no '/' and no NUL, 1-60 characters).
UIDS = st.one_of(
    st.just("abc123"),
    st.sampled_from(["", ".", "..", "...", "-x", " ", "a" * 200, "ü", "a b", ".hidden"]),
    st.text(
        st.characters(blacklist_characters="/\x00", blacklist_categories=["Cs"]), min_size=1, max_size=60
    ),
)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """One library for the whole module (opening one loads the text embedder, which takes a while)."""
    root = tmp_path_factory.mktemp("std_json_library")
    with AssetStore(root / "lib") as store:
        yield store


def _bench_glb(path: Path) -> None:
    """A bench-sized box in centimetres, Y-up, as glTF files are."""
    box = trimesh.creation.box((160.0, 45.0, 45.0))
    box.apply_translation((0, 0, 22.5))
    box.apply_transform(trimesh.transformations.rotation_matrix(-math.pi / 2, (1, 0, 0)))
    box.export(path)


def _folders(store: AssetStore) -> set[str]:
    ingested = store.root / "ingested"
    return {p.name for p in ingested.iterdir()} if ingested.is_dir() else set()


def check_ingest(store: AssetStore, uid: str, annotation: bytes) -> str:
    """Ingest ``std_<uid>.glb`` + ``std_<uid>.json`` (holding ``annotation``) and check the property;
    returns ``"accepted"``, ``"rejected"`` or ``"skipped"`` (a name this file system refuses)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp)
        mesh, sidecar = src / f"std_{uid}.glb", src / f"std_{uid}.json"
        try:
            _bench_glb(mesh)
            sidecar.write_bytes(annotation)
        except OSError:  # a name too long for the file system: not a file anyone can hand us
            return "skipped"
        top_before, folders_before = {p.name for p in store.root.iterdir()}, _folders(store)
        accepted, rejected = ingest([mesh], store, thumbnail=library_thumbnail)
        assert len(accepted) + len(rejected) == 1
        assert {p.name for p in store.root.iterdir()} <= top_before | {"ingested"}, "wrote outside ingested/"
        if rejected:
            reason = rejected[0].reason
            assert len(reason.splitlines()) == 1 and "Traceback" not in reason, reason
            if reason.startswith("annotation"):
                assert "std_" in reason, reason
                assert _folders(store) == folders_before, "a rejected pair left an asset folder"
            return "rejected"
        asset = accepted[0]
        validate_asset(asset)
        assert (store.root / "ingested" / asset.uid).resolve().parent == (store.root / "ingested").resolve()
        try:
            clean = load_annotation(sidecar)
        except InputError as exc:
            raise AssertionError(f"accepted, yet the annotation is refused: {exc}") from None
        for key in ("mass", "friction_coefficient", "bounciness", "youngs_modulus", "recommended_clearance"):
            if key in clean:
                assert getattr(asset, key) == clean[key], key
        return "accepted"


@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(uid=UIDS, mutation=json_mutation(BASE, FOCUS))
def test_mutated_std_json_is_ingested_or_rejected_with_one_line(library, uid, mutation):
    check_ingest(library, uid, mutation[1])


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(uid=UIDS, mutation=json_mutation(BASE, FOCUS))
def test_mutated_std_json_long_run(library, uid, mutation):
    check_ingest(library, uid, mutation[1])


#: (name, file-name uid, annotation bytes, "accepted" or the text the reason holds).
CORPUS = [
    ("valid", "abc123", json.dumps(BASE).encode(), "accepted"),
    ("NaN mass means not annotated", "abc123", json.dumps({**BASE, "mass": math.nan}).encode(), "accepted"),
    # Crashes and escapes found:
    ("materials a number (TypeError)", "abc123", json.dumps({**BASE, "materials": 5}).encode(), "accepted"),
    ("uid '..' wrote into the library root", "..", json.dumps(BASE).encode(), "is not an asset uid"),
    ("uid '' wrote into ingested/", "", json.dumps(BASE).encode(), "is not an asset uid"),
    (
        "mass 1e308 (required force inf)",
        "abc123",
        json.dumps({**BASE, "mass": 1e308}).encode(),
        "mass: 1e+308",
    ),
    ("mass 1e300 was accepted", "abc123", json.dumps({**BASE, "mass": 1e300}).encode(), "mass: 1e+300"),
    ("5000-digit mass", "abc123", b'{"mass": ' + b"9" * 5000 + b"}", "not valid JSON"),
    ("nesting 100000 deep", "abc123", b"[" * 100000 + b"]" * 100000, "not valid JSON"),
    # Bounds:
    ("negative friction", "abc123", json.dumps({**BASE, "friction_coefficient": -1}).encode(), "friction"),
    (
        "bounciness 3",
        "abc123",
        json.dumps({**BASE, "bounciness": 3}).encode(),
        "bounciness: 3 is outside [0, 1]",
    ),
    ("height 1e9", "abc123", json.dumps({**BASE, "height": 1e9}).encode(), "height: 1e+09 is outside"),
    ("infinite mass", "abc123", json.dumps({**BASE, "mass": math.inf}).encode(), "mass: inf is outside"),
    # Orientation: a wrong front would turn the asset, so a bad one refuses the pair.
    (
        "frontView 7",
        "abc123",
        json.dumps({**BASE, "frontView": 7}).encode(),
        "frontView: 7 is outside [0, 3]",
    ),
    ("frontView text", "abc123", json.dumps({**BASE, "frontView": "abc"}).encode(), "got 'abc'"),
    ("frontView null", "abc123", json.dumps({**BASE, "frontView": None}).encode(), "accepted"),
    (
        "pose_z_rot_angle in degrees",
        "abc123",
        json.dumps({**BASE, "pose_z_rot_angle": 270.0}).encode(),
        "pose_z_rot_angle: 270 is outside ±6.28319 rad",
    ),
    # Bad files:
    ("a list", "abc123", b"[1, 2]", "expected a JSON object, got list"),
    ("truncated", "abc123", json.dumps(BASE).encode()[:30], "not valid JSON"),
    ("not UTF-8", "abc123", b'{"category": "\xff\xfe"}', "not valid JSON"),
]


@pytest.mark.parametrize(("name", "uid", "annotation", "expected"), CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus(library, name, uid, annotation, expected):
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp)
        _bench_glb(src / f"std_{uid}.glb")
        (src / f"std_{uid}.json").write_bytes(annotation)
        accepted, rejected = ingest([src / f"std_{uid}.glb"], library, thumbnail=library_thumbnail)
    if expected == "accepted":
        assert accepted and not rejected, rejected
        validate_asset(accepted[0])
        return
    assert not accepted and len(rejected) == 1
    reason = rejected[0].reason
    assert expected in reason and f"std_{uid}.json" in reason and len(reason.splitlines()) == 1, reason
    assert not any(p.name == "asset.json" for p in library.root.iterdir())


def test_limits_message_names_path_value_and_range():
    with pytest.raises(InputError, match=r"^objects\[3\]\.position: 1e\+300 is outside ±100000 m$"):
        limits.check(1e300, limits.POSITION, "objects[3].position")
    with pytest.raises(InputError, match=r"is outside \[0, 9.22337e\+18\]"):
        limits.check(10**5000, limits.INDEX, "source.seed")  # str() of this int would raise
