"""muP: param groups, readout, and the coordinate check (flat under muP, growing under SP)."""

import importlib.util

import pytest
import torch

from urbanverse.nn.mup import (
    MUP_WIDTH_FIELDS,
    MuReadout,
    backbone_width,
    build_mup_model,
    coord_check,
    coord_spread,
    mup_param_groups,
    with_width,
)

WIDTHS = (32, 128, 512)


def _coord_spread(
    mup: bool, name: str = "mlp", width_field: str = "hidden", widths: tuple[int, ...] = WIDTHS, **kw
) -> dict[str, float]:
    torch.manual_seed(1)
    x, y = torch.randn(64, 1, 16), torch.randn(64, 1, 4)
    results = coord_check(
        lambda w: build_mup_model(name, 16, 4, w, widths[0], 1e-2, width_field=width_field, mup=mup, **kw),
        widths,
        x,
        y,
        steps=4,
    )
    return coord_spread(results)


def test_coord_check_flat_under_mup() -> None:
    spread = _coord_spread(True, num_layers=3)
    assert len(spread) == 4  # 3 hidden Linear layers + readout
    assert max(spread.values()) < 1.3, spread


def test_coord_check_grows_under_standard_parameterisation() -> None:
    spread = _coord_spread(False, num_layers=3)
    assert spread["readout"] > 2.0, spread


def test_param_groups_scale_hidden_lr_only() -> None:
    model, groups = build_mup_model("mlp", 16, 4, 256, 64, 1e-3, num_layers=2)
    lr_of = {id(p): g["lr"] for g in groups for p in g["params"]}
    net = model.backbone.net
    assert lr_of[id(net[2].weight)] == pytest.approx(1e-3 / 4)  # hidden matrix
    assert lr_of[id(net[0].weight)] == pytest.approx(1e-3)  # input weights
    assert lr_of[id(net[2].bias)] == pytest.approx(1e-3)
    assert lr_of[id(model.readout.weight)] == pytest.approx(1e-3)
    assert isinstance(model.readout, MuReadout) and model.readout.width_mult == 4
    assert model.readout.weight.abs().max() == 0  # zero-init readout
    base, _ = build_mup_model("mlp", 16, 4, 64, 64, 1e-3, num_layers=3)
    with pytest.raises(ValueError, match="different Linear layers"):
        mup_param_groups(model, base, 1e-3)


def test_readout_divides_by_width_mult() -> None:
    r = MuReadout(8, 2, width_mult=4.0, zero_init=False)
    x = torch.randn(3, 8)
    torch.testing.assert_close(r(x), torch.nn.functional.linear(x, r.weight, r.bias * 4) / 4)


@pytest.mark.skipif(importlib.util.find_spec("urbanverse.nn.backbones.sse") is None, reason="SSE not present")
def test_coord_check_sse_mup_flatter_than_sp() -> None:
    """SSE ends in an RMSNorm, so the readout stays bounded; the growth shows in the hidden layers."""
    kw = {
        "width_field": "d_model",
        "reinit": False,
        "num_layers": 1,
        "num_heads": 2,
        "head_k_dim": 8,
        "head_v_dim": 8,
    }
    mup, sp = (
        _coord_spread(True, "sse", widths=(32, 256), **kw),
        _coord_spread(False, "sse", widths=(32, 256), **kw),
    )
    assert max(sp.values()) > 4.0, sp
    assert max(mup.values()) < 2.0, mup


def test_width_fields_name_each_covered_backbone_width() -> None:
    assert backbone_width("mlp", {}) == 128
    assert backbone_width("mlp", {"hidden": 64, "num_layers": 3}) == 64
    assert with_width("mlp", {"num_layers": 3}, 32) == {"num_layers": 3, "hidden": 32}
    assert with_width("sse", {"num_heads": 2}, 48) == {"num_heads": 2, "d_model": 48}
    assert set(MUP_WIDTH_FIELDS.values()) == {"hidden", "d_model"}
    with pytest.raises(ValueError, match="muP covers the backbones"):
        backbone_width("gru", {})
