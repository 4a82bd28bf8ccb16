"""Fuzzing the mesh files handed to ``urbanverse assets ingest`` (GLB/GLTF/OBJ/PLY/STL/USD).

The property, for every file: ingest either adds it (its asset folder whole, in the store) or
rejects it with a one-line reason, while the good files of the same batch go in; never another
exception, a hang or a crash, and no half-written asset folder. A fixed corpus keeps every case
found so far; the seeded Hypothesis run is in the default suite and a long one runs with
``-m slow``. ``--hypothesis-show-statistics`` prints the counts per format.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
import trimesh
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pxr import Usd, UsdGeom, Vt
from typer.testing import CliRunner

from tests.cli.conftest import _restore_logging  # noqa: F401  (the CLI runs below set up logging)
from tests.fuzz.media import corrupt
from urbanverse.assets.ingest import IngestCfg, ingest
from urbanverse.assets.store import AssetStore
from urbanverse.render.thumbnail import library_thumbnail

SETTINGS = {"derandomize": True, "deadline": None, "suppress_health_check": list(HealthCheck)}
FORMATS = ("glb", "gltf", "obj", "ply", "stl", "usda", "usdc")


def write_usd(path: Path, points, counts, indices, meters_per_unit: float = 1.0) -> Path:
    """A USD stage with one mesh from raw ``points`` / ``faceVertexCounts`` / ``faceVertexIndices``."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, meters_per_unit)
    mesh = UsdGeom.Mesh.Define(stage, "/Thing")
    with np.errstate(over="ignore"):  # 1e300 becomes infinity in single precision, as intended
        points = np.asarray(points, np.float32).reshape(-1, 3)
    mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(points))
    mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.asarray(counts, np.int32)))
    mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(np.asarray(indices, np.int32).ravel()))
    stage.Save()
    return path


def write_mesh(path: Path, vertices: np.ndarray, faces: np.ndarray) -> Path:
    """Write the raw (unprocessed) triangles in the format of ``path``'s suffix."""
    if path.suffix in (".usda", ".usdc", ".usd"):
        return write_usd(path, vertices, [3] * len(faces), faces)
    trimesh.Trimesh(vertices, faces, process=False).export(path)
    return path


def check_batch(files: list[Path], lib: Path, with_good: bool = True) -> dict[str, str]:
    """Ingest ``files`` (plus one good box unless ``with_good`` is false); ``{name: "ok" or reason}``
    after checking the property."""
    good = files[0].parent / "good_box.obj"
    if with_good:
        trimesh.creation.box((0.4, 0.4, 0.9)).export(good)
    with AssetStore(lib) as store:
        batch = [*files, good] if with_good else files
        accepted, rejected = ingest(batch, store, IngestCfg(), thumbnail=library_thumbnail)
        assert len(store) == len(accepted)
        uids = {a.uid for a in accepted}
        assert {store.get(u).uid for u in uids} == uids
    out: dict[str, str] = {}
    for r in rejected:
        assert "\n" not in r.reason and r.reason and "internal error" not in r.reason, r.reason
        out[r.path.name] = r.reason
    assert good.name not in out, out.get(good.name)  # the good file goes in whatever came with it
    for a in accepted:
        out[a.source.file] = "ok"
        folder = lib / "ingested" / a.uid
        assert (folder / "asset.json").is_file() and (folder / "thumbnail.png").is_file()
    assert not list((lib / "ingested").glob(".*.partial")) if (lib / "ingested").exists() else True
    return out


# --- the fixed corpus: (builder, expected: "ok" or a piece of the reason) --------------------

BOX = trimesh.creation.box((0.5, 0.5, 1.0))


def _nan_box(t: Path, suffix: str, value: float = np.nan) -> Path:
    v = BOX.vertices.copy()
    v[0, 0] = value
    return write_mesh(t / f"nan_box.{suffix}", v, BOX.faces)


def _collinear(t: Path, suffix: str) -> Path:
    v = np.column_stack([np.linspace(0, 1, 10), np.zeros(10), np.linspace(0, 1, 10)])
    return write_mesh(t / f"collinear.{suffix}", v, np.array([[i, i + 1, i + 2] for i in range(8)]))


def _gltf_pointing_at(t: Path, uri: str) -> Path:
    path = t / "outside.gltf"
    BOX.export(path)
    tree = json.loads(path.read_text())
    tree["buffers"][0]["uri"] = uri
    path.write_text(json.dumps(tree))
    return path


def _gltf_declaring(t: Path, count: int) -> Path:
    path = t / "declares.gltf"
    BOX.export(path)
    tree = json.loads(path.read_text())
    for accessor in tree["accessors"]:
        accessor["count"] = count
    path.write_text(json.dumps(tree))
    return path


def _huge_ply(t: Path) -> Path:
    header = (
        b"ply\nformat binary_little_endian 1.0\nelement vertex 2000000000\nproperty float x\n"
        b"property float y\nproperty float z\nelement face 2000000000\n"
        b"property list uchar int vertex_indices\nend_header\n"
    )
    path = t / "huge_counts.ply"
    path.write_bytes(header + bytes(1000))
    return path


def _huge_stl(t: Path) -> Path:
    path = t / "huge_count.stl"
    BOX.export(path)
    data = bytearray(path.read_bytes())
    data[80:84] = struct.pack("<I", 0xFFFFFFFF)
    path.write_bytes(bytes(data))
    return path


def _export(mesh: trimesh.Trimesh, path: Path) -> Path:
    mesh.export(path)
    return path


def _noise(path: Path, seed: int) -> Path:
    path.write_bytes(np.random.default_rng(seed).bytes(3000))
    return path


def _truncated(t: Path, suffix: str, frac: float) -> Path:
    return corrupt(write_mesh(t / f"cut_{frac}.{suffix}", BOX.vertices, BOX.faces), "truncate", frac, [])


#: Inputs kept as files: found by the generated cases below, not easily rebuilt.
DATA = Path(__file__).parent / "data"

CORPUS = {
    "glb_box": (lambda t: write_mesh(t / "box.glb", BOX.vertices, BOX.faces), "ok"),
    "usda_box": (lambda t: write_mesh(t / "box.usda", BOX.vertices, BOX.faces), "ok"),
    "zero_area_faces": (
        lambda t: write_mesh(
            t / "zero_area.obj", BOX.vertices, np.vstack([BOX.faces, [[0, 0, 1], [2, 2, 2]]])
        ),
        "ok",
    ),
    "nan_vertex_glb": (lambda t: _nan_box(t, "glb"), "degenerate geometry"),
    "nan_vertex_usda": (lambda t: _nan_box(t, "usda"), "degenerate geometry"),
    "inf_vertex_usda": (lambda t: _nan_box(t, "usda", np.inf), "degenerate geometry"),
    "collinear_obj": (lambda t: _collinear(t, "obj"), "flat geometry"),
    "collinear_usda": (lambda t: _collinear(t, "usda"), "flat geometry"),
    "non_manifold_fin": (
        lambda t: write_mesh(
            t / "fin.ply",
            np.array([[0, 0, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0], [-1, 0, 0.0]]),
            np.array([[0, 1, 2], [0, 1, 3], [0, 1, 4]]),
        ),
        "flat geometry",
    ),
    "bench_500m": (
        lambda t: _export(trimesh.creation.box((500, 100, 50)), t / "bench.stl"),
        "absurd scale",
    ),
    "car_1mm": (
        lambda t: _export(trimesh.creation.box((0.001, 0.0005, 0.0004)), t / "car.obj"),
        "absurd scale",
    ),
    "empty_glb": (
        lambda t: corrupt(write_mesh(t / "e.glb", BOX.vertices, BOX.faces), "truncate", 0.0, []),
        "empty file",
    ),
    "random_bytes_usdc": (
        lambda t: _noise(t / "noise.usdc", 0),
        "not a USD file",
    ),
    "random_bytes_gltf": (
        lambda t: _noise(t / "noise.gltf", 1),
        "not valid glTF",
    ),
    "truncated_glb": (lambda t: _truncated(t, "glb", 0.3), "damaged GLB"),
    "truncated_ply": (lambda t: _truncated(t, "ply", 0.5), "cannot read mesh"),
    "ply_declares_2e9_vertices": (_huge_ply, "cannot read mesh"),
    "stl_declares_4e9_faces": (_huge_stl, "no geometry"),
    "gltf_buffer_is_a_device": (lambda t: _gltf_pointing_at(t, "/dev/zero"), "outside the file's folder"),
    "gltf_buffer_escapes": (lambda t: _gltf_pointing_at(t, "../../secret.bin"), "outside the file's folder"),
    "gltf_accessor_count_2e9": (lambda t: _gltf_declaring(t, 2_000_000_000), "cannot read mesh"),
    "gltf_buffer_missing": (lambda t: _gltf_pointing_at(t, "gone.bin"), "no such file"),
    "usd_counts_disagree": (
        lambda t: write_usd(t / "bad_counts.usda", BOX.vertices, [3, 1_000_000_000], [0, 1, 2]),
        "do not match",
    ),
    "usd_index_out_of_range": (
        lambda t: write_usd(t / "bad_index.usda", BOX.vertices, [3, 3], [0, 1, 2, 0, 1, 99]),
        "outside the 8 points",
    ),
    # A hypothesis-made two-box .usdc with three bytes flipped: usd-core's reader asked for 24 GiB.
    "usdc_declares_huge_arrays": (
        lambda t: shutil.copy(DATA / "usdc_declares_huge_arrays.usdc", t / "huge.usdc"),
        "within 4.0 GiB of memory",
    ),
    "usd_bad_units": (
        lambda t: write_usd(t / "units.usda", BOX.vertices, [3] * 12, BOX.faces, -1.0),
        "metersPerUnit",
    ),
}


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_corpus(case: str, tmp_path: Path) -> None:
    build, expected = CORPUS[case]
    (tmp_path / "in").mkdir()
    path = Path(build(tmp_path / "in"))
    got = check_batch([path], tmp_path / "lib")[path.name]
    assert got == "ok" if expected == "ok" else expected in got, got


# --- generated inputs -------------------------------------------------------------------------


@st.composite
def meshes(draw, fmt: str):
    shape = draw(
        st.sampled_from(["box", "sphere", "two_boxes", "collinear", "flat", "fin", "empty", "noise"])
    )
    scale = 10 ** draw(st.floats(-4.0, 3.5))
    n_bad = draw(st.integers(0, 3))  # vertices set to NaN or infinity
    bad_value = draw(st.sampled_from([np.nan, np.inf, -np.inf, 1e300]))
    extra_degenerate = draw(st.integers(0, 5))  # zero-area faces appended
    kind = draw(st.sampled_from(["none", "none", "truncate", "flip", "zero"]))
    where = draw(st.floats(0.0, 1.0))
    flips = draw(st.lists(st.tuples(st.floats(0.0, 1.0), st.integers(0, 255)), max_size=30))
    return (
        fmt,
        shape,
        scale,
        n_bad,
        bad_value,
        extra_degenerate,
        kind,
        where,
        flips,
        draw(st.integers(0, 2**16)),
    )


def _geometry(shape: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if shape == "box":
        m = trimesh.creation.box(rng.uniform(0.2, 2.0, 3))
    elif shape == "sphere":
        m = trimesh.creation.icosphere(subdivisions=1, radius=float(rng.uniform(0.2, 1.0)))
    elif shape == "two_boxes":
        m = trimesh.util.concatenate(
            [
                trimesh.creation.box((0.3, 0.3, 1.0)),
                trimesh.creation.box((0.3, 0.3, 1.0)).apply_translation((1, 0, 0)),
            ]
        )
    elif shape == "collinear":
        v = np.outer(np.linspace(0, 1, 8), rng.normal(size=3))
        return v, np.array([[i, i + 1, i + 2] for i in range(6)])
    elif shape == "flat":
        v = np.column_stack([rng.random((6, 2)), np.zeros(6)])
        return v, np.array([[0, 1, 2], [2, 3, 4], [3, 4, 5]])
    elif shape == "fin":  # three triangles on one edge: not a manifold
        return np.array([[0, 0, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0], [-1, 0, 0.0]]), np.array(
            [[0, 1, 2], [0, 1, 3], [0, 1, 4]]
        )
    elif shape == "empty":
        return np.zeros((0, 3)), np.zeros((0, 3), int)
    else:  # a cloud of random triangles
        return rng.normal(size=(30, 3)), rng.integers(0, 30, (20, 3))
    return m.vertices.copy(), m.faces.copy()


def _fuzz_mesh(case, tmp: Path) -> None:
    fmt, shape, scale, n_bad, bad_value, extra, kind, where, flips, seed = case
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "in").mkdir(parents=True)
    rng = np.random.default_rng(seed)
    v, f = _geometry(shape, rng)
    v = v * scale
    if len(v) and n_bad:
        v[rng.integers(0, len(v), n_bad), rng.integers(0, 3, n_bad)] = bad_value
    if len(v) and extra:
        i = rng.integers(0, len(v), extra)
        f = np.vstack([f, np.column_stack([i, i, rng.integers(0, len(v), extra)])])
    path = tmp / "in" / f"thing.{fmt}"
    try:
        write_mesh(path, v, f)
    except Exception:  # an exporter that refuses this geometry: nothing to ingest
        path.write_bytes(b"")
    corrupt(path, kind, where, flips) if path.stat().st_size else None
    got = check_batch([path], tmp / "lib", with_good=False)[path.name]
    event(f"format={fmt}")
    event("outcome=ok" if got == "ok" else "outcome=rejected")
    if got != "ok":
        event(f"reason={got.split(' (')[0].split(':')[0][:40]}")


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
@settings(max_examples=4, **SETTINGS)
def test_generated_meshes(fmt, data, tmp_path_factory) -> None:
    """4 files per format in the default run."""
    _fuzz_mesh(data.draw(meshes(fmt)), tmp_path_factory.getbasetemp() / "fuzz_mesh")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
@settings(max_examples=80, **SETTINGS)
def test_generated_meshes_long(fmt, data, tmp_path_factory) -> None:
    """80 files per format."""
    _fuzz_mesh(data.draw(meshes(fmt)), tmp_path_factory.getbasetemp() / "fuzz_mesh_long")


# --- end to end: `urbanverse assets ingest` on a mixed batch ----------------------------------


def test_ingest_command_adds_the_good_and_names_each_bad_file(tmp_path: Path) -> None:
    from urbanverse.cli import app

    (tmp_path / "in").mkdir()
    bad = [
        Path(CORPUS[c][0](tmp_path / "in"))
        for c in ("bench_500m", "random_bytes_usdc", "gltf_buffer_is_a_device")
    ]
    trimesh.creation.box((0.4, 0.4, 0.9)).export(tmp_path / "in" / "post.obj")
    result = CliRunner().invoke(
        app, ["assets", "ingest", str(tmp_path / "in"), "--library", str(tmp_path / "lib"), "--json"]
    )
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    report = json.loads(result.stdout)
    assert len(report["added"]) == 1
    assert sorted(Path(r["path"]).name for r in report["rejected"]) == sorted(p.name for p in bad)
    assert all("\n" not in r["reason"] for r in report["rejected"])
