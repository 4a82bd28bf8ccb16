"""``ReconCfg`` nests the SfM settings: ``--set recon.sfm.<field>=value`` reaches them."""

from __future__ import annotations

import pytest

from urbanverse.config import apply_overrides, from_dict, to_dict
from urbanverse.errors import InputError
from urbanverse.recon.sfm_cfg import SfmCfg
from urbanverse.recon.stage import ReconCfg


def test_nested_sfm_overrides_apply() -> None:
    cfg = apply_overrides(ReconCfg(), ["sfm.features=opencv", "sfm.piece_overlaps=[8, 3]", "seed=2"])
    assert cfg.sfm == SfmCfg(features="opencv", piece_overlaps=(8, 3))
    assert cfg.seed == 2 and cfg.sfm.seed == 0


def test_nested_sfm_round_trips_and_validates() -> None:
    cfg = ReconCfg(sfm=SfmCfg(mapper="incremental", attempts=3))
    assert from_dict(ReconCfg, to_dict(cfg)) == cfg
    with pytest.raises(InputError, match="max_image_size"):
        apply_overrides(ReconCfg(), ["sfm.max_image_size=10"])
    with pytest.raises(InputError, match="no field"):
        apply_overrides(ReconCfg(), ["sfm_features=opencv"])
