"""A top-down map of one round-trip score: which true objects a generated scene found, and where.

Drawn in the true scene's frame over its ground (the scene preview's colours, paler): the true
camera path and the generated one moved onto it (:func:`urbanverse.bench.evaluate.match_objects`),
every true object the walk passed as a marker coloured by its outcome (within ``HIT_RADIUS_M`` of its
generated pair, paired farther out, or missed), the true objects it did not pass in grey, and every
generated object as a circle joined to its pair. Objects are drawn at their anchors, those the
scores match: buildings and facades at their front's midpoint (:mod:`urbanverse.bench.fronts`). A
pair named with the wrong class is labelled "generated <- true", a missed object with its class:
where the scores come from, at a glance.
matplotlib (Agg backend) is a dependency of the ``dev``, ``sim`` and ``train`` extras.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from urbanverse.bench.evaluate import HIT_RADIUS_M, ObjectMatch, match_objects
from urbanverse.errors import require
from urbanverse.render.tour import TourGroundTruth
from urbanverse.scene.preview import GROUND_COLORS
from urbanverse.scene.record import Scene

#: Fill colours (RGB in [0, 1]) of the true ground types: the scene preview's, halfway to white so
#: that the markers stand out; other types are left white.
GROUND_FILL = {kind: tuple(0.5 + c / 510.0 for c in rgb) for kind, rgb in GROUND_COLORS.items()}
#: Marker colours of the true objects by outcome.
OUTCOME_COLOURS = {"hit": "tab:green", "paired": "tab:orange", "missed": "tab:red", "unseen": "0.6"}


def outcomes(match: ObjectMatch, true_count: int) -> list[str]:
    """Per true object: "hit" (paired within ``HIT_RADIUS_M``), "paired" (farther), "missed" (passed
    by the walk, unpaired) or "unseen" (not passed: not scored for recall)."""
    paired = {c: match.distance[r, c] for r, c in match.pairs}
    out = []
    for c in range(true_count):
        if c not in match.seen:
            out.append("unseen")
        elif c in paired:
            out.append("hit" if paired[c] <= HIT_RADIUS_M else "paired")
        else:
            out.append("missed")
    return out


def plot_match(
    generated: Scene, truth: Scene, tour: TourGroundTruth, out: Path, title: str, aligned: bool = False
) -> dict[str, int]:
    """Write the map of ``generated`` scored against ``truth`` (walked by ``tour``) to the PNG ``out``
    under ``title``; ``aligned`` as for :func:`urbanverse.bench.evaluate.compare_scenes`. Returns the
    counts it shows: true objects by outcome, ``generated``, and ``wrong_class`` pairs."""
    matplotlib = require("matplotlib", "dev")
    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot", "dev")
    match = match_objects(generated, truth, tour, aligned)
    outcome = outcomes(match, len(truth.objects))
    true_xy = match.true_xy
    counts = {k: outcome.count(k) for k in OUTCOME_COLOURS}
    wrong = [(r, c) for r, c in match.pairs if generated.objects[r].category != truth.objects[c].category]
    counts.update(generated=len(generated.objects), wrong_class=len(wrong))

    fig, ax = plt.subplots(figsize=(12, 9))
    for region in truth.ground:
        if region.type in GROUND_FILL:
            ax.fill(*np.asarray(region.polygon).T, color=GROUND_FILL[region.type], lw=0, zorder=0)
    walk = np.array([np.reshape(f.world_from_camera, (4, 4))[:2, 3] for f in tour.frames]).reshape(-1, 2)
    ax.plot(*walk.T, color="black", lw=1.2, label="true camera path", zorder=2)
    gen_walk = np.array([p.position[:2] for p in generated.camera_trajectory], float).reshape(-1, 2)
    if len(gen_walk):
        moved = gen_walk @ match.transform[:2, :2].T + match.transform[:2, 2]
        ax.plot(*moved.T, color="tab:purple", ls="--", lw=1.2, label="generated camera path", zorder=2)
    for r, c in match.pairs:
        ax.plot(*np.c_[match.generated_xy[r], true_xy[c]], color="0.3", lw=0.8, zorder=3)
    ax.scatter(*match.generated_xy.T, s=40, facecolors="none", edgecolors="tab:blue", lw=1.2, zorder=4,
               label=f"generated ({counts['generated']})")  # fmt: skip
    for kind, colour in OUTCOME_COLOURS.items():
        at = true_xy[[o == kind for o in outcome]]
        label = {"hit": f"within {HIT_RADIUS_M:g} m", "paired": "paired farther", "missed": "missed",
                 "unseen": "not passed"}[kind]  # fmt: skip
        ax.scatter(*at.reshape(-1, 2).T, s=22, color=colour, marker="x" if kind == "missed" else "o",
                   zorder=5, label=f"true, {label} ({counts[kind]})")  # fmt: skip
    for c, kind in enumerate(outcome):
        if kind == "missed":
            ax.annotate(truth.objects[c].category, true_xy[c], fontsize=6, color="tab:red", zorder=6)
    for r, c in wrong:
        text = f"{generated.objects[r].category} <- {truth.objects[c].category}"
        ax.annotate(text, match.generated_xy[r], fontsize=6, color="tab:blue", zorder=6)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(f"{title}: {counts['wrong_class']} of {len(match.pairs)} pairs named wrong")
    ax.legend(loc="upper left", fontsize=7, framealpha=0.9)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return counts
