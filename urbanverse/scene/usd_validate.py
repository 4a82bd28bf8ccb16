"""Run USD's validation framework (``pxr.UsdValidation``) over a stage, UsdPhysics checks included."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from urbanverse.errors import InputError


@dataclass(frozen=True)
class UsdIssue:
    """One finding of a validator: ``severity`` is ``error``, ``warning`` or ``info``."""

    severity: str
    validator: str
    message: str
    sites: tuple[str, ...]


def validate_usd(path: Path) -> tuple[list[UsdIssue], int]:
    """Validate the stage at ``path`` with every registered validator.

    Returns the issues found and the number of validators that ran.
    """
    from pxr import Tf, Usd, UsdValidation

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: USD file not found (write it with `urbanverse usd`)")
    try:
        stage = Usd.Stage.Open(str(path))
    except Tf.ErrorException as exc:
        raise InputError(f"{path}: cannot open USD ({exc})") from None
    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    errors = UsdValidation.ValidationContext(validators).Validate(stage)
    issues = []
    for err in errors:
        severity = {
            UsdValidation.ValidationErrorType.Error: "error",
            UsdValidation.ValidationErrorType.Warn: "warning",
        }.get(err.GetType(), "info")
        sites = tuple(
            str(site.GetPrim().GetPath()) if site.IsPrim() else str(site.GetLayer().identifier)
            for site in err.GetSites()
        )
        validator = err.GetValidator().GetMetadata().name if err.GetValidator() else err.GetName()
        issues.append(UsdIssue(severity, validator, err.GetMessage(), sites))
    return issues, len(validators)
