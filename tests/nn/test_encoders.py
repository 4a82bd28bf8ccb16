"""Image encoders: output shapes at the camera sizes in use, small-image handling, and the registry."""

import pytest
import torch

from urbanverse.nn.encoders import ENCODER_NAMES, encoder_config, make_encoder

OUT_DIM = {"cnn": 128, "nature": 512, "impala": 256}
#: Spatial size of the trunk's output (before the flatten) for each encoder and image size.
TRUNK_HW = {
    ("cnn", 64, 64): (8, 8),
    ("cnn", 135, 240): (16, 30),
    ("nature", 64, 64): (4, 4),
    ("nature", 135, 240): (13, 26),
    ("impala", 64, 64): (8, 8),
    ("impala", 135, 240): (17, 30),
}


@pytest.mark.parametrize("name", ENCODER_NAMES)
@pytest.mark.parametrize(("height", "width"), [(64, 64), (135, 240)])
def test_output_shapes_at_the_camera_sizes(name, height, width):
    torch.manual_seed(0)
    enc = make_encoder(name, 4, height, width)
    y = enc(torch.rand(2, 4, height, width) - 0.5)
    assert y.shape == (2, OUT_DIM[name]) == (2, enc.out_dim)
    assert torch.isfinite(y).all()
    h, w = TRUNK_HW[(name, height, width)]
    channels = 32 if name == "impala" else 64
    assert enc.flat_dim == channels * h * w
    y.sum().backward()
    assert all(p.grad is not None for p in enc.parameters())


@pytest.mark.parametrize(("name", "height", "width"), [("cnn", 32, 32), ("cnn", 12, 16), ("impala", 32, 32)])
def test_small_images_work_where_the_encoder_allows(name, height, width):
    enc = make_encoder(name, 1, height, width, out_dim=16)
    assert enc(torch.rand(3, 1, height, width)).shape == (3, 16)


@pytest.mark.parametrize(
    ("name", "overrides", "size", "smallest"),
    [("nature", {}, 32, 36), ("cnn", {"padding": "valid"}, 32, 36), ("cnn", {}, 4, 8)],
)
def test_too_small_images_raise_naming_the_smallest_size(name, overrides, size, smallest):
    with pytest.raises(
        ValueError, match=f"{size}x{size} pixels are too small.*at least {smallest}x{smallest}"
    ):
        make_encoder(name, 3, size, size, **overrides)
    make_encoder(name, 3, smallest, smallest, **overrides)  # the size it names works


def test_registry_errors_name_the_valid_choices():
    with pytest.raises(ValueError, match="valid choices: cnn, nature, impala"):
        make_encoder("resnet50", 3, 64, 64)
    with pytest.raises(ValueError, match="valid fields"):
        make_encoder("cnn", 3, 64, 64, depth=3)
    with pytest.raises(ValueError, match="same length"):
        encoder_config("cnn", channels=(8, 16))


def test_overrides_take_lists_as_read_back_from_json():
    cfg = encoder_config("impala", channels=[8, 16], out_dim=32)
    assert cfg.channels == (8, 16)
    enc = make_encoder("impala", 3, 32, 32, channels=[8, 16], out_dim=32)
    assert enc.flat_dim == 16 * 8 * 8 and enc(torch.rand(1, 3, 32, 32)).shape == (1, 32)


def test_building_draws_only_the_parameter_init():
    """The dummy forward that sizes the projection draws no random numbers: same seed, same weights."""
    torch.manual_seed(3)
    a = make_encoder("cnn", 3, 32, 32)
    torch.manual_seed(3)
    b = make_encoder("cnn", 3, 64, 64)  # other flatten size, same conv draws
    assert torch.equal(a.trunk[0].weight, b.trunk[0].weight)
