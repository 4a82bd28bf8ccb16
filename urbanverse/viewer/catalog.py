"""Scene folders the viewer may open, and the recorded episodes inside them.

The viewer is given one folder (``SCENES_DIR``). A scene is a sub-folder holding ``scene.json``
(or ``SCENES_DIR`` itself when it holds one). Scenes are offered and opened **by name only**:
a name that is not in the listing is refused, and every file a scene refers to is resolved
with ``resolve_inside`` (no absolute paths, no ``..``, no symlink escapes), so nothing outside
``SCENES_DIR`` is ever read or sent to a browser.

Recorded episodes: ``<scene>/episodes/<name>.json`` with ``positions`` (a list of ``[x, y]`` or
``[x, y, z]`` base positions, metres, world frame), and optionally ``goal`` (``[x, y]``) and
``success`` (bool). ``urbanverse eval`` writes them; the viewer draws them as a layer.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from urbanverse.errors import InputError
from urbanverse.scene.record import SCENE_FILE, resolve_inside

EPISODES_DIR = "episodes"
log = logging.getLogger(__name__)


def list_scenes(root: Path) -> dict[str, Path]:
    """Scene name -> folder, sorted by name; ``root`` itself when it is a scene folder."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise InputError(f"{root}: not a folder")
    if (root / SCENE_FILE).is_file():
        return {root.name: root}
    found = {}
    for child in sorted(root.iterdir()):
        if child.is_dir() and (child / SCENE_FILE).is_file() and child.resolve().is_relative_to(root):
            found[child.name] = child.resolve()
    return found


def scene_folder(root: Path, name: str) -> Path:
    """The folder of the scene called ``name`` under ``root``; ``InputError`` for any other name."""
    scenes = list_scenes(root)
    if name not in scenes:
        raise InputError(f"no scene named {name!r} in {Path(root).resolve()}")
    return scenes[name]


@dataclass(frozen=True)
class Episode:
    """A recorded robot path. ``positions``: ``(T, 3)`` metres; ``goal``: ``(2,)`` metres or None."""

    name: str
    positions: np.ndarray
    goal: np.ndarray | None
    success: bool | None


def _parse_episode(path: Path) -> Episode:
    try:
        data = json.loads(path.read_text())
        pts = np.asarray(data["positions"], dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] not in (2, 3) or len(pts) < 2:
            raise ValueError("positions must be a list of at least two [x, y] or [x, y, z]")
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        goal = data.get("goal")
        goal = None if goal is None else np.asarray(goal, dtype=np.float64)[:2]
        success = data.get("success")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not an episode file ({type(exc).__name__}: {exc})") from None
    return Episode(path.stem, pts, goal, None if success is None else bool(success))


def load_episodes(scene_dir: Path) -> list[Episode]:
    """Every ``episodes/*.json`` of a scene that parses, sorted by name (files that do not parse are
    skipped: one broken recording must not hide the scene)."""
    folder = resolve_inside(scene_dir, EPISODES_DIR, "episodes", must_exist=False)
    if not folder.is_dir():
        return []
    episodes = []
    for path in sorted(folder.glob("*.json")):
        if not path.resolve().is_relative_to(Path(scene_dir).resolve()):
            continue
        try:
            episodes.append(_parse_episode(path))
        except InputError as exc:
            log.warning("skipping episode: %s", exc)
    return episodes
