import pytest

from urbanverse.rl.batch_schedule import BatchScheduleCfg


def test_switches_once_at_switch_point() -> None:
    cfg = BatchScheduleCfg(small=256, large_mult=8, switch_at=0.7)
    sizes = [cfg.batch_size_at(i / 100) for i in range(101)]
    assert sizes[:70] == [256] * 70
    assert sizes[70:] == [2048] * 31
    assert cfg.large == 2048


@pytest.mark.parametrize("switch_at", [0.0, 1.0])
def test_switch_at_edges(switch_at: float) -> None:
    cfg = BatchScheduleCfg(small=64, large_mult=4, switch_at=switch_at)
    assert cfg.batch_size_at(0.0) == (256 if switch_at == 0.0 else 64)
    assert cfg.batch_size_at(1.0) == 256


def test_num_minibatches() -> None:
    cfg = BatchScheduleCfg(small=1024, large_mult=4, switch_at=0.8)
    assert cfg.num_minibatches_at(0.1, 16384) == 16
    assert cfg.num_minibatches_at(0.9, 16384) == 4
    with pytest.raises(ValueError, match="does not divide"):
        cfg.num_minibatches_at(0.1, 1000)


@pytest.mark.parametrize("kwargs", [{"small": 0}, {"large_mult": 0}, {"switch_at": 1.5}, {"switch_at": -0.1}])
def test_validation(kwargs: dict) -> None:
    with pytest.raises(ValueError, match="BatchScheduleCfg"):
        BatchScheduleCfg(**kwargs)


def test_progress_out_of_range() -> None:
    with pytest.raises(ValueError, match="progress"):
        BatchScheduleCfg().batch_size_at(1.2)
