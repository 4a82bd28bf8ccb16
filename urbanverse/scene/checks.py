"""Whole-folder checks of a scene: USD validation and the MuJoCo physics check (with repair).

What ``urbanverse validate`` and ``urbanverse check`` run: load the scene folder, check it,
write what the check writes, and return a result the caller prints or serialises.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from urbanverse.records import save_json
from urbanverse.scene.physics_check import (
    PhysicsCheckCfg,
    PhysicsReport,
    fix_penetrations,
    run_physics_check,
)
from urbanverse.scene.record import Scene, load_scene, save_scene
from urbanverse.scene.usd_validate import UsdIssue, validate_usd
from urbanverse.scene.usd_writer import write_usd

#: The physics check's report, written into the scene folder.
PHYSICS_CHECK_FILE = "physics_check.json"


@dataclass(frozen=True)
class ValidationResult:
    """``scene.json`` loaded fine; ``issues`` are what the ``validators`` USD validators found."""

    scene: Scene
    usd: Path
    issues: list[UsdIssue]
    validators: int

    @property
    def errors(self) -> int:
        """Number of issues of severity ``error`` (any makes the scene invalid)."""
        return sum(i.severity == "error" for i in self.issues)

    def to_dict(self) -> dict:
        return {
            "scene": self.scene.name,
            "ground_regions": len(self.scene.ground),
            "objects": len(self.scene.objects),
            "usd": str(self.usd),
            "validators": self.validators,
            "errors": self.errors,
            "issues": [dataclasses.asdict(i) for i in self.issues],
        }


def default_usd(scene_dir: Path) -> Path:
    """The scene's USD: ``scene.usda``, else ``scene.usdc``, else (missing) ``scene.usda``."""
    return next(
        (p for p in (scene_dir / "scene.usda", scene_dir / "scene.usdc") if p.is_file()),
        scene_dir / "scene.usda",
    )


def validate_scene_folder(scene_dir: Path, usd: Path | None = None) -> ValidationResult:
    """Validate ``scene_dir/scene.json`` (``InputError`` when invalid), then its USD (default:
    ``default_usd``) with every ``pxr.UsdValidation`` validator."""
    scene = load_scene(scene_dir)
    usd = usd if usd is not None else default_usd(scene_dir)
    issues, n_validators = validate_usd(usd)
    return ValidationResult(scene=scene, usd=usd, issues=issues, validators=n_validators)


@dataclass(frozen=True)
class PhysicsCheckResult:
    """The scene as checked (after any repair), the ``report``, and one line per repaired object."""

    scene: Scene
    report: PhysicsReport
    fixed: list[str]

    def to_dict(self) -> dict:
        return {**self.report.to_dict(), "fixed": list(self.fixed)}


def check_scene_folder(scene_dir: Path, cfg: PhysicsCheckCfg, fix: bool = False) -> PhysicsCheckResult:
    """Simulate ``scene_dir``'s scene in MuJoCo and write ``physics_check.json`` beside it.

    With ``fix``, interpenetrating objects are first moved apart or up; when any moved, the
    scene (``scene.json`` and each USD file already there) is saved before the check.
    """
    scene = load_scene(scene_dir)
    notes: list[str] = []
    if fix:
        scene, notes = fix_penetrations(scene, scene_dir, cfg)
        if notes:
            save_scene(scene, scene_dir)
            for fmt in ("usda", "usdc"):
                if (scene_dir / f"scene.{fmt}").is_file():
                    write_usd(scene, scene_dir, fmt)
    report = run_physics_check(scene, scene_dir, cfg)
    save_json(report.to_dict(), scene_dir / PHYSICS_CHECK_FILE)
    return PhysicsCheckResult(scene=scene, report=report, fixed=notes)
