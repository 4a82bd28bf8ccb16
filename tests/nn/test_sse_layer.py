"""SSE layer: step form vs sequence form, untouched partitions, load-balancing loss."""

from __future__ import annotations

import pytest
import torch

from urbanverse.nn.backbones.base import reset_rows
from urbanverse.nn.layers.sse import SSECfg, SSELayer, load_balance_loss

F64 = torch.float64


def _layer(variant: str, n: int = 4, top_k: int = 2, seed: int = 0) -> SSELayer:
    torch.manual_seed(seed)
    cfg = SSECfg(
        d_model=12, num_heads=2, head_k_dim=4, head_v_dim=3, num_partitions=n, top_k=top_k,
        variant=variant, chunk_size=4, backend="torch",
    )  # fmt: skip
    return SSELayer(cfg).double()


def _random_state(layer: SSELayer, b: int, seed: int) -> tuple:
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s.shape, generator=gen, dtype=F64) for s in layer.initial_state(b, "cpu", F64))


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).norm() / b.norm()).item()


@pytest.mark.parametrize("variant", ["gla", "gdn"])
@pytest.mark.parametrize(("n", "top_k"), [(4, 1), (4, 2), (0, 0)])
def test_sequence_equals_steps(variant: str, n: int, top_k: int) -> None:
    layer = _layer(variant, n, top_k)
    b, length = 3, 10
    x = torch.randn(b, length, 12, dtype=F64)
    resets = torch.zeros(b, length, dtype=torch.bool)
    resets[0, 3] = resets[1, 0] = resets[2, 7] = resets[2, 8] = True
    state0 = _random_state(layer, b, 1)
    y_seq, s_seq = layer.forward_sequence(x, state0, resets)
    zero, state, ys = layer.initial_state(b, "cpu", F64), state0, []
    for t in range(length):
        state = reset_rows(state, resets[:, t], zero)
        y, state = layer.step(x[:, t], state)
        ys.append(y)
    assert _rel(y_seq, torch.stack(ys, 1)) < 1e-6
    for a, c in zip(s_seq, state, strict=True):
        assert _rel(a, c) < 1e-6


@pytest.mark.parametrize("variant", ["gla", "gdn"])
def test_unselected_partitions_bit_identical(variant: str) -> None:
    layer = _layer(variant, n=4, top_k=1)
    b = 5
    state = _random_state(layer, b, 2)
    x = torch.randn(b, 12, dtype=F64)
    top = layer._project(x)["top_idx"][:, 0]
    _, (_, sp) = layer.step(x, state)
    for row in range(b):
        for i in range(4):
            same = torch.equal(sp[row, i], state[1][row, i])
            assert same == (i != top[row].item())  # untouched iff not selected
    # Sequence: a zero router ties all partitions, so the same one is always picked; the others
    # must come out bit-identical after many tokens (no decay, no write).
    with torch.no_grad():
        layer.router.weight.zero_()
    xs = torch.randn(b, 9, 12, dtype=F64)
    sel = layer._project(xs)["selected"].any(dim=1)  # (B, N) ever selected
    assert (~sel).any()
    _, (_, sp) = layer.forward_sequence(xs, state, None)
    for row in range(b):
        for i in range(4):
            if not sel[row, i]:
                assert torch.equal(sp[row, i], state[1][row, i])
            else:
                assert not torch.equal(sp[row, i], state[1][row, i])


def test_load_balance_loss_by_hand() -> None:
    p = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]])
    top1 = torch.tensor([[True, False, False], [False, True, False]])
    # P = (0.4, 0.4, 0.2), f = (0.5, 0.5, 0): 3 * (0.2 + 0.2) = 1.2
    assert load_balance_loss(p, top1, 1).item() == pytest.approx(1.2)
    top2 = torch.tensor([[True, True, False], [False, True, True]])
    # f = (0.5, 1, 0.5): (3 / 2) * (0.2 + 0.4 + 0.1) = 1.05
    assert load_balance_loss(p, top2, 2).item() == pytest.approx(1.05)


def test_layer_aux_loss_uniform_router_is_one() -> None:
    layer = _layer("gla", n=4, top_k=2)
    with torch.no_grad():
        layer.router.weight.zero_()
    layer.forward_sequence(torch.randn(2, 6, 12, dtype=F64), layer.initial_state(2, "cpu", F64), None)
    assert layer.last_aux_loss.item() == pytest.approx(1.0)


@pytest.mark.parametrize("variant", ["gla", "gdn"])
def test_router_gets_gradient_from_main_loss(variant: str) -> None:
    """Partition q and k are scaled by p after any L2 norm, so the router learns from the task loss."""
    layer = _layer(variant, n=4, top_k=2)
    y, _ = layer.forward_sequence(torch.randn(2, 6, 12, dtype=F64), _random_state(layer, 2, 3), None)
    y.square().sum().backward()
    assert layer.router.weight.grad.abs().sum() > 0


def test_cfg_validation() -> None:
    with pytest.raises(ValueError, match="top_k"):
        SSECfg(d_model=8, num_partitions=4, top_k=5)
    with pytest.raises(ValueError, match="top_k must be 0"):
        SSECfg(d_model=8, num_partitions=0, top_k=1)
    with pytest.raises(ValueError, match="variant"):
        SSECfg(d_model=8, variant="mamba")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="d_model"):
        SSECfg(d_model=0)
