"""UltraMemV2 layer: fast product-key retrieval vs brute force, gradients, param groups, config."""

import pytest
import torch

from urbanverse.nn.layers.ultramem import (
    UltraMemCfg,
    UltraMemLayer,
    ultramem_param_groups,
    value_lr_multiplier,
)

D, T = 24, 40
CFG = UltraMemCfg(knum=16, key_expand=2, kdim=8, vdim=12, pre_vdim=8, knn=6, tucker_rank=2, tucker_cores=3)


def _layer(cfg: UltraMemCfg = CFG, rank1: bool = False, seed: int = 0) -> UltraMemLayer:
    torch.manual_seed(seed)
    layer = UltraMemLayer(D, cfg).double()
    with torch.no_grad():
        layer.values.normal_()  # larger values than the 0.02 init so outputs are well away from 0
        layer.pre_values.normal_()
        if rank1:  # sum_h C_h = (sum_h c_h) a b^T with signed a, b: scores of either sign
            a, b = torch.randn(2, cfg.tucker_rank, dtype=torch.float64)
            c = torch.rand(cfg.tucker_cores, dtype=torch.float64) + 0.5
            layer.cores.copy_(c[:, None, None] * torch.outer(a, b))
    return layer


def test_fast_retrieval_equals_bruteforce_for_rank1_core() -> None:
    layer = _layer(rank1=True)
    x = torch.randn(T, D, dtype=torch.float64)
    fast, ref = layer.retrieve(x), layer.retrieve_bruteforce(x)
    assert 2 * CFG.knn < CFG.keys_per_side  # the pre-selection path is used, not the full grid
    assert torch.equal(fast.slots, ref.slots)
    torch.testing.assert_close(fast.core_scores, ref.core_scores)
    # The case needs the bottom rows too: some winning slots are (negative row) x (negative column).
    sr, sc = layer.key_scores(x)
    u, _, vh = torch.linalg.svd(layer.cores.detach().sum(0))
    f, g = sr @ u[:, 0], sc @ vh[0]
    a, b = ref.slots // CFG.keys_per_side, ref.slots % CFG.keys_per_side
    fa, gb = f.gather(1, a), g.gather(1, b)
    assert ((fa < 0) & (gb < 0)).any() and ((fa > 0) & (gb > 0)).any()


def test_fast_output_and_gradients_equal_bruteforce() -> None:
    layer = _layer(rank1=True)
    x = torch.randn(T, D, dtype=torch.float64, requires_grad=True)
    w = torch.randn(T, D, dtype=torch.float64)
    grads = []
    for brute in (False, True):
        layer.zero_grad()
        x.grad = None
        y = layer(x, bruteforce=brute)
        (y * w).sum().backward()
        grads.append((y.detach(), x.grad.clone(), {n: p.grad.clone() for n, p in layer.named_parameters()}))
    (y0, gx0, gp0), (y1, gx1, gp1) = grads
    assert y0.abs().max() > 1e-3
    torch.testing.assert_close(y0, y1)
    torch.testing.assert_close(gx0, gx1)
    for name in gp0:
        torch.testing.assert_close(gp0[name], gp1[name], msg=name)
    assert gp0["cores"].abs().max() > 0 and gp0["keys"].abs().max() > 0 and gp0["values"].abs().max() > 0


@pytest.mark.parametrize("seed", [0, 1])
def test_fast_retrieval_general_cores_is_consistent(seed: int) -> None:
    """Rank-2 cores: the fast path is an approximation; check it is a valid, never-better top-m."""
    layer = _layer(seed=seed)
    with torch.no_grad():
        layer.cores.normal_()
    x = torch.randn(T, D, dtype=torch.float64)
    fast, ref = layer.retrieve(x), layer.retrieve_bruteforce(x)
    full = layer.full_scores(x).flatten(1)
    fast_scores = full.gather(1, fast.slots)
    torch.testing.assert_close(fast.core_scores.sum(-1), fast_scores)
    assert (fast_scores[:, :-1] >= fast_scores[:, 1:]).all()  # best first
    assert all(len(set(row.tolist())) == CFG.knn for row in fast.slots)  # distinct slots
    assert (fast_scores <= full.gather(1, ref.slots) + 1e-12).all()  # brute force is the optimum
    torch.testing.assert_close(full.gather(1, ref.slots), full.topk(CFG.knn, dim=1).values)


def test_small_key_set_uses_full_grid() -> None:
    cfg = UltraMemCfg(knum=4, key_expand=2, kdim=8, vdim=8, pre_vdim=8, knn=5)  # 2 knn >= Kn = 8
    layer = _layer(cfg)
    with torch.no_grad():
        layer.cores.normal_()
    x = torch.randn(T, D, dtype=torch.float64)
    assert torch.equal(layer.retrieve(x).slots, layer.retrieve_bruteforce(x).slots)


def test_shapes_and_value_rows() -> None:
    layer = _layer()
    x = torch.randn(2, 5, D, dtype=torch.float64)
    assert layer(x).shape == (2, 5, D)
    assert layer.values.shape == (CFG.num_values, CFG.vdim) and layer.perm.shape == (CFG.keys_per_side**2,)
    # Output is linear in the value table: zero values give zero output.
    with torch.no_grad():
        layer.values.zero_()
    assert layer(x).abs().max() == 0


def test_init_rules() -> None:
    torch.manual_seed(0)
    cfg = UltraMemCfg(knum=64, kdim=64, vdim=64, pre_vdim=64, knn=8)
    layer = UltraMemLayer(256, cfg)
    assert torch.allclose(layer.q_norm.weight, torch.full((64,), 64**-0.4))
    assert abs(layer.values.std().item() - 0.02) < 1e-3
    assert abs(layer.keys.std().item() - 64**-0.5) < 5e-3
    assert 0 <= layer.cores.min() and layer.cores.max() <= 1
    assert abs(layer.pre_proj.weight.std().item() - 256**-0.5) < 5e-3


def test_param_groups_and_value_lr_multiplier() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(D, D), UltraMemLayer(D, CFG))
    groups = ultramem_param_groups(model, lr=1e-3)
    assert [g["name"] for g in groups] == ["default", "1.values"]
    assert groups[1]["lr"] == pytest.approx(4e-3) and groups[1]["lr_mult"] == 4.0
    assert {id(p) for p in groups[1]["params"]} == {id(model[1].values), id(model[1].pre_values)}
    n_total = sum(len(g["params"]) for g in groups)
    assert n_total == len(list(model.parameters()))
    torch.optim.Adam(groups)  # accepted by an optimizer
    assert value_lr_multiplier(0, 100, 4.0) == 4.0
    assert value_lr_multiplier(50, 100, 4.0) == pytest.approx(2.5)
    assert value_lr_multiplier(25, 100, 3.0, decay_fraction=0.5) == pytest.approx(2.0)
    assert value_lr_multiplier(80, 100, 4.0, decay_fraction=0.5) == 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"knn": 100}, "exceeds the keys per side"),
        ({"vdim": 10, "tucker_cores": 3}, "divisible by tucker_cores"),
        ({"kdim": 0}, "kdim must be >= 1"),
        ({"value_act": "relu"}, "value_act"),
        ({"value_lr_decay_fraction": 0.0}, "value_lr_decay_fraction"),
    ],
)
def test_config_validation(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        UltraMemCfg(**kwargs)
