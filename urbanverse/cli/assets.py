"""``urbanverse assets ...``: build, search, inspect, export, verify and ingest the asset library."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from urbanverse.cli.common import JsonFlag, cli_command, print_json
from urbanverse.errors import InputError

assets_app = typer.Typer(
    help="The asset library: 100,000+ annotated urban assets (procedural and ingested), searchable.",
    no_args_is_help=True,
)

Library = Annotated[
    Path | None,
    typer.Option(help="Library folder (default: $URBANVERSE_LIBRARY, else the cache's library/ folder)."),
]


def _open_store(library: Path | None, must_exist: bool = True):
    from urbanverse.assets.jobs import open_library

    return open_library(library, must_exist)


def _progress():
    """A progress bar on stderr, so that stdout holds only results."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )


@assets_app.command("build")
@cli_command
def build_command(
    size: Annotated[int, typer.Option(help="Number of procedural assets in the catalogue.")] = 100_000,
    workers: Annotated[int, typer.Option(help="Worker processes measuring assets.")] = 2,
    as_json: JsonFlag = False,
    library: Library = None,
) -> None:
    """Build the procedural catalogue: assets measured, annotated, embedded and indexed (meshes lazily)."""
    import time

    from urbanverse.assets.jobs import build_library, library_writer

    if size < 1 or workers < 1:
        raise InputError("--size and --workers must be at least 1")
    start = time.perf_counter()
    with library_writer(library) as store, _progress() as bar:
        task = bar.add_task("measuring + annotating", total=size)
        total = build_library(
            store,
            size,
            workers,
            progress=lambda n: bar.advance(task, n),
            indexing=lambda: bar.update(task, description="indexing"),
        )
    seconds = time.perf_counter() - start
    if as_json:
        print_json({"library": str(store.root), "assets": total, "seconds": seconds})
        return
    typer.echo(f"library {store.root}: {total} assets ({seconds:.0f} s)")


@assets_app.command("search")
@cli_command
def search_command(
    query: Annotated[str, typer.Argument(help='What to look for, in words: "red metal bench".')],
    category: Annotated[
        str | None, typer.Option(help="Taxonomy class at any level (L1, L2 or L3 name).")
    ] = None,
    max_height: Annotated[float | None, typer.Option(help="Tallest allowed height (m).")] = None,
    min_height: Annotated[float | None, typer.Option(help="Shortest allowed height (m).")] = None,
    k: Annotated[int, typer.Option("-k", help="Number of results.")] = 10,
    as_json: JsonFlag = False,
    library: Library = None,
) -> None:
    """Search the library by meaning (MiniLM text embeddings) with optional category and size filters."""
    from urbanverse.assets.store import SearchFilter
    from urbanverse.records import record_to_dict

    where = SearchFilter(category=category, max_height=max_height, min_height=min_height)
    with _open_store(library) as store:
        hits = store.search(query, k=k, where=where)
    if as_json:
        print_json([{"score": h.score, **record_to_dict(h.asset)} for h in hits])
        return
    # One plain line per hit (grep-friendly): score, uid, class, size (m), mass (kg), description.
    for h in hits:
        a = h.asset
        size = f"{a.length:.2f}x{a.width:.2f}x{a.height:.2f}"
        typer.echo(
            f"{h.score:.3f}  {a.uid:<26} {a.category:<22} {size:>17} {a.mass:7.1f} kg  {a.description}"
        )


@assets_app.command("show")
@cli_command
def show_command(uid: Annotated[str, typer.Argument(help="Asset uid.")], library: Library = None) -> None:
    """Print one asset's full record as JSON."""
    from urbanverse.records import record_to_dict

    with _open_store(library) as store:
        print_json(record_to_dict(store.get(uid)))


@assets_app.command("stats")
@cli_command
def stats_command(as_json: JsonFlag = False, library: Library = None) -> None:
    """Counts per taxonomy level and per source, and how many assets carry each attribute."""
    from rich.console import Console
    from rich.table import Table

    from urbanverse.assets.stats import library_stats

    with _open_store(library) as store:
        stats = library_stats(store)
    if as_json:
        print_json(stats)
        return
    console = Console()
    console.print(
        f"{stats['assets']} assets: {stats['l1_classes']} L1, {stats['l2_classes']} L2, "
        f"{stats['l3_classes']} L3 classes; by source: {stats['by_source']}"
    )
    table = Table("L1 class", "assets", title="per L1 class")
    for name, count in stats["by_l1"].items():
        table.add_row(name, str(count))
    console.print(table)
    table = Table(
        "attribute", "coverage", "origin", title=f"attribute coverage (sample of {stats['sampled']})"
    )
    for name, row in stats["coverage"].items():
        table.add_row(
            name, f"{100 * row['coverage']:.1f}%", ", ".join(f"{k} {v}" for k, v in row["origin"].items())
        )
    console.print(table)


@assets_app.command("export")
@cli_command
def export_command(
    uid: Annotated[str, typer.Argument(help="Asset uid.")],
    fmt: Annotated[str, typer.Option("--format", help="glb, usd or obj.")] = "glb",
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Output file (default: <uid>.<ext>).")
    ] = None,
    library: Library = None,
) -> None:
    """Write one asset's mesh (generated on first use) as GLB, USD (with physics) or OBJ."""
    import shutil

    from urbanverse.assets.catalogue import asset_folder
    from urbanverse.assets.record import load_visual_parts
    from urbanverse.records import atomic_path
    from urbanverse.render.thumbnail import library_thumbnail
    from urbanverse.scene.usd_writer import write_asset_usd

    if fmt not in ("glb", "usd", "obj"):
        raise InputError(f"--format: expected glb, usd or obj, got {fmt!r}")
    with _open_store(library) as store:
        asset = store.get(uid)
        folder = asset_folder(asset, store.root, thumbnail=library_thumbnail)
    out = out or Path(f"{uid}.{'usda' if fmt == 'usd' else fmt}")
    with atomic_path(out) as tmp:
        if fmt == "glb":
            shutil.copyfile(folder / asset.visual_mesh, tmp)
        elif fmt == "usd":
            shutil.copyfile(write_asset_usd(folder, asset), tmp)
        else:
            import trimesh

            parts = load_visual_parts(folder, asset)
            trimesh.Scene([p.mesh for p in parts]).export(tmp, file_type="obj")
    typer.echo(f"wrote {out}")


@assets_app.command("verify")
@cli_command
def verify_command(
    sample: Annotated[int, typer.Option(help="Number of assets to drop (uniform sample).")] = 500,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    max_flagged: Annotated[float, typer.Option(help="Fail (exit 1) above this flagged fraction.")] = 0.01,
    as_json: JsonFlag = False,
    library: Library = None,
) -> None:
    """Drop sampled assets on flat ground in MuJoCo; flag tipping, bouncing, mass outside the support."""
    from rich.console import Console
    from rich.table import Table

    from urbanverse.assets.jobs import verify_library

    with _open_store(library) as store, _progress() as bar:
        task = bar.add_task("dropping", total=None)
        summary = verify_library(
            store, sample, seed, progress=lambda done, total: bar.update(task, completed=done, total=total)
        )
    flagged, fraction = summary.flagged, summary.flagged_fraction
    if as_json:
        print_json(summary.to_dict())
    else:
        table = Table("uid", "category", "tilt °", "travel m", "problems", title="flagged assets")
        for r in flagged:
            table.add_row(r.uid, r.category, f"{r.tilt_deg:.0f}", f"{r.travel_m:.2f}", "; ".join(r.problems))
        console = Console()
        if flagged:
            console.print(table)
        console.print(f"verify: {len(flagged)}/{len(summary.results)} flagged ({100 * fraction:.2f}%)")
    if fraction > max_flagged:
        raise typer.Exit(1)


@assets_app.command("ingest")
@cli_command
def ingest_command(
    paths: Annotated[
        list[Path], typer.Argument(help="Mesh files or folders (GLB/GLTF/OBJ/PLY/STL/USD, std_<uid> pairs).")
    ],
    category: Annotated[str | None, typer.Option(help="L3 class for files without an annotation.")] = None,
    up: Annotated[str, typer.Option(help="Up axis of OBJ/PLY/STL files: z or y (glTF is always y).")] = "z",
    scale: Annotated[
        float, typer.Option(help="Metres per file unit when no annotation gives the height.")
    ] = 1.0,
    material: Annotated[
        str, typer.Option(help="Material-table key assumed for unannotated files.")
    ] = "plastic",
    as_json: JsonFlag = False,
    library: Library = None,
) -> None:
    """Add mesh files to the library; bad files are rejected one by one, the rest go in (one transaction)."""
    from rich.console import Console

    from urbanverse.assets.ingest import IngestCfg, ingest
    from urbanverse.assets.jobs import library_writer
    from urbanverse.assets.material_table import MATERIALS
    from urbanverse.render.thumbnail import library_thumbnail

    if up not in ("y", "z"):
        raise InputError(f"--up: expected y or z, got {up!r}")
    if material not in MATERIALS:
        raise InputError(f"--material: unknown {material!r}; known: {', '.join(sorted(MATERIALS))}")
    if scale <= 0:
        raise InputError(f"--scale: must be positive, got {scale}")
    cfg = IngestCfg(up=up, scale=scale, category=category, material=material)
    console = Console(highlight=False)
    with library_writer(library) as store, _progress() as bar:
        task = bar.add_task("ingesting", total=None)
        accepted, rejected = ingest(
            paths, store, cfg, progress=lambda n: bar.advance(task, n), thumbnail=library_thumbnail
        )
    if as_json:
        print_json(
            {
                "added": [
                    {"uid": a.uid, "category": a.category, "height": a.height, "mass": a.mass}
                    for a in accepted
                ],
                "rejected": [{"path": str(r.path), "reason": r.reason} for r in rejected],
            }
        )
        if rejected:
            raise typer.Exit(2)
        return
    for asset in accepted:
        console.print(
            f"[green]added[/green] {asset.uid}: {asset.category}, {asset.height:.2f} m tall, "
            f"{asset.mass:.1f} kg ({asset.value_origin.get('mass')})"
        )
    for r in rejected:
        console.print(f"[red]rejected[/red] {r.path}: {r.reason}")
    console.print(f"ingest: {len(accepted)} added, {len(rejected)} rejected")
    if rejected:
        raise typer.Exit(2)
