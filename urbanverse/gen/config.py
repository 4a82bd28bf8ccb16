"""The configuration of ``urbanverse gen``: one part per stage (``--set part.field=value``)."""

from __future__ import annotations

import dataclasses

from urbanverse.layout.crowns import CrownCfg
from urbanverse.layout.ground_cfg import GroundCfg
from urbanverse.layout.lift import LiftCfg
from urbanverse.layout.people import PeopleCfg
from urbanverse.layout.proposals import ProposalCfg
from urbanverse.layout.street_fit import StreetFitCfg
from urbanverse.perception.detect import DetectionCfg
from urbanverse.perception.track import TrackingCfg
from urbanverse.recon.depth import DenseCfg
from urbanverse.recon.stage import ReconCfg
from urbanverse.retrieval.cousins import RetrievalCfg
from urbanverse.video.stage import VideoCfg


@dataclasses.dataclass(frozen=True, kw_only=True)
class GenCfg:
    """Configuration of every stage (``--set stage.field=value`` on the command line)."""

    video: VideoCfg = dataclasses.field(default_factory=VideoCfg)
    detection: DetectionCfg = dataclasses.field(default_factory=DetectionCfg)
    tracking: TrackingCfg = dataclasses.field(default_factory=TrackingCfg)
    recon: ReconCfg = dataclasses.field(default_factory=ReconCfg)
    ground: GroundCfg = dataclasses.field(default_factory=GroundCfg)
    lift: LiftCfg = dataclasses.field(default_factory=LiftCfg)
    dense: DenseCfg = dataclasses.field(default_factory=DenseCfg)
    """Dense points of the registered keyframes (``recon.depth``): the ground's free-space check and
    the object proposals."""
    proposals: ProposalCfg = dataclasses.field(default_factory=ProposalCfg)
    crowns: CrownCfg = dataclasses.field(default_factory=CrownCfg)
    """Trees of detector tracks placed by their crowns' dense points (``urbanverse.layout.crowns``)."""
    street: StreetFitCfg = dataclasses.field(default_factory=StreetFitCfg)
    """The street (or plaza, or path) model fitted to the ground seen, which becomes the scene's ground,
    and the objects set on it (``urbanverse.layout.street_fit``, ``urbanverse.layout.settle``)."""
    people: PeopleCfg = dataclasses.field(default_factory=PeopleCfg)
    """The people seen, lifted to ground trajectories and a flow field (``urbanverse.layout.people``)."""
    retrieval: RetrievalCfg = dataclasses.field(default_factory=RetrievalCfg)
    """Cousins of each object from the asset library: class, box size, look (``urbanverse.retrieval``)."""
    physics_fix: bool = True
    """Run the physics check and move interpenetrating objects apart."""
    compare_frames: int = 3
    """Video frames shown beside a render of the generated scene from the same camera."""
