"""QAT: straight-through gradients, error bounds, prepare/schedule, int8 export round trip."""

import pytest
import torch
from torch import nn

from urbanverse.nn.backbones.mlp import MLPBackbone, MLPBackboneCfg
from urbanverse.nn.qat import (
    FrozenQuantLinear,
    QATCfg,
    QATLinear,
    QATSchedule,
    act_qparams,
    export_int8,
    fake_quant_activation,
    fake_quant_weight,
    freeze_qat,
    load_int8,
    prepare_qat,
    samples_per_param_byte,
    set_qat_enabled,
    weight_scale,
)


class Policy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = MLPBackbone(6, MLPBackboneCfg(hidden=32, num_layers=2))
        self.head = nn.Linear(32, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body.step(x, ())[0])


@pytest.mark.parametrize("bits", [8, 4])
def test_weight_fake_quant_error_bound_and_grid(bits: int) -> None:
    torch.manual_seed(0)
    w = torch.randn(16, 40) * torch.rand(16, 1) * 3
    wq = fake_quant_weight(w, bits)
    s = weight_scale(w, bits)
    qmax = 2 ** (bits - 1) - 1
    assert ((wq - w).abs() <= s / 2 + 1e-6).all()
    q = wq / s
    torch.testing.assert_close(q, q.round(), atol=1e-4, rtol=0)
    assert q.abs().max() <= qmax + 1e-4
    assert (q.abs().amax(1) > qmax - 1e-3).all()  # each channel uses its full range
    if bits == 4:
        assert max(len(torch.unique(row.round())) for row in q) <= 2 * qmax + 1


def test_weight_ste_gradient_is_identity() -> None:
    w = torch.randn(8, 5, requires_grad=True)
    g = torch.randn(8, 5)
    (fake_quant_weight(w, 8) * g).sum().backward()
    torch.testing.assert_close(w.grad, g)


def test_activation_fake_quant_bounds_and_clipped_ste() -> None:
    scale, zp = act_qparams(torch.tensor(-1.0), torch.tensor(3.0))
    assert scale.item() == pytest.approx(4.0 / 255)
    x = torch.linspace(-2.0, 4.0, 601, requires_grad=True)
    y = fake_quant_activation(x, scale, zp)
    inside = (x >= -1.0 + 1e-3) & (x <= 3.0 - 1e-3)
    assert ((y - x).abs()[inside] <= scale / 2 + 1e-6).all()
    assert y.min() >= -1.0 - scale and y.max() <= 3.0 + scale  # clipped to the grid range
    assert (y == 0).any()  # zero is exactly representable
    y.sum().backward()
    assert (x.grad[inside] == 1).all()
    assert (x.grad[(x < -1.1) | (x > 3.1)] == 0).all()


def test_prepare_qat_keeps_float_modules_and_disabled_is_identity() -> None:
    torch.manual_seed(0)
    model = Policy()
    x = torch.randn(10, 6)
    y_float = model(x)
    prepare_qat(model, QATCfg(keep_float=("head",)))
    assert type(model.head) is nn.Linear
    assert all(isinstance(model.body.net[i], QATLinear) for i in (0, 2))
    torch.testing.assert_close(model(x), y_float)  # QAT starts disabled
    set_qat_enabled(model, True)
    y_q = model(x)
    assert not torch.equal(y_q, y_float)
    assert (y_q - y_float).abs().max() < 0.05
    assert not torch.isnan(model.body.net[0].act_scale)


def test_observers() -> None:
    lin = QATLinear(4, 2, cfg=QATCfg(observer="minmax"))
    lin(torch.full((3, 4), 2.0))
    lin(torch.full((3, 4), -1.0))
    assert (lin.act_lo.item(), lin.act_hi.item()) == (-1.0, 2.0)
    ema = QATLinear(4, 2, cfg=QATCfg(observer="ema", ema_momentum=0.5))
    ema(torch.full((3, 4), 2.0))
    ema(torch.full((3, 4), 4.0))
    assert ema.act_hi.item() == pytest.approx(3.0)
    ema.eval()
    ema(torch.full((3, 4), 100.0))  # eval does not observe
    assert ema.act_hi.item() == pytest.approx(3.0)


@pytest.mark.parametrize("bits", [8, 4])
def test_export_load_round_trip(bits: int) -> None:
    torch.manual_seed(0)
    model = prepare_qat(Policy(), QATCfg(weight_bits=bits, keep_float=("head",)), enabled=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        opt.zero_grad()
        model(torch.randn(16, 6)).pow(2).mean().backward()
        opt.step()
    model.eval()
    x = torch.randn(20, 6) * 2
    y_fq = model(x)
    state = export_int8(model)
    assert state["body.net.0.weight_int8"].dtype == torch.int8
    assert state["body.net.0.weight_int8"].abs().max() == 2 ** (bits - 1) - 1
    assert "body.net.0.weight" not in state and state["head.weight"].dtype == torch.float32
    torch.manual_seed(1)
    rebuilt = load_int8(Policy(), state)
    assert torch.equal(rebuilt(x), y_fq)
    with pytest.raises(ValueError, match="unexpected"):
        load_int8(Policy(), {**state, "extra.weight": torch.zeros(1)})


def test_schedule_fuses_cooldown_with_qat() -> None:
    sched = QATSchedule(total_steps=100, qat_fraction=0.25, warmup_fraction=0.1)
    assert sched.qat_start == 75
    assert not sched.qat_active(74) and sched.qat_active(75) and sched.qat_active(99)
    lrs = [sched.lr_scale(s) for s in range(100)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == 1.0
    assert all(v == 1.0 for v in lrs[10:76])  # stable phase, decay starts with QAT
    assert all(a > b for a, b in zip(lrs[75:], lrs[76:], strict=False))
    assert lrs[99] == 0.0
    cos = QATSchedule(total_steps=10, qat_fraction=0.5, decay="cosine", min_lr_ratio=0.1)
    assert cos.lr_scale(5) == 1.0 and cos.lr_scale(9) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="qat_fraction"):
        QATSchedule(total_steps=10, qat_fraction=0.0)
    with pytest.raises(ValueError, match="warmup_fraction"):
        QATSchedule(total_steps=10, qat_fraction=0.5, warmup_fraction=0.6)
    assert samples_per_param_byte(8e6, 1e6, 4) == pytest.approx(16.0)


def test_set_enabled_resets_observer_on_switch() -> None:
    model = prepare_qat(Policy(), enabled=True)
    model(torch.randn(4, 6))
    set_qat_enabled(model, False)
    set_qat_enabled(model, True)
    assert torch.isnan(model.body.net[0].act_lo)


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="weight_bits"):
        QATCfg(weight_bits=3)
    with pytest.raises(ValueError, match="keep_float"):
        QATCfg(keep_float="head")


def test_frozen_qat_model_equals_the_fake_quant_model_in_eval():
    torch.manual_seed(0)
    model = prepare_qat(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)), enabled=True)
    model.train()
    for _ in range(5):
        model(torch.randn(32, 6) * 2)  # observe activation ranges
    model.eval()
    model[2].enabled = False  # a disabled layer freezes to a plain float Linear
    frozen = freeze_qat(model)
    assert isinstance(frozen[0], FrozenQuantLinear) and type(frozen[2]) is nn.Linear
    x = torch.randn(64, 6) * 4  # also outside the observed range: clipped alike
    with torch.no_grad():
        assert torch.equal(frozen(x), model(x))
