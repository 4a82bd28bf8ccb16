"""Image encoders for policies: ``(B, C, H, W)`` float images -> ``(B, out_dim)`` features, and a registry.

``make_encoder(name, in_channels, height, width, **overrides)`` builds an encoder by name;
``overrides`` are fields of its config dataclass. Every encoder is a convolutional trunk, a
flatten whose size comes from a dummy forward at construction, and a Linear projection to
``out_dim`` followed by the nonlinearity. Images smaller than an encoder's receptive field
raise ``ValueError`` naming the smallest size it takes. The policy (``urbanverse.rl.policy``)
feeds these encoders images centred around 0 and puts any core backbone behind them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Literal

import torch
from torch import nn

from urbanverse.nn.backbones.mlp import make_activation

__all__ = [
    "ENCODER_NAMES",
    "CNNEncoderCfg",
    "ImageEncoder",
    "ImpalaEncoderCfg",
    "NatureEncoderCfg",
    "encoder_config",
    "make_encoder",
]

ENCODER_NAMES = ("cnn", "nature", "impala")

#: The largest image side probed when looking for an encoder's smallest input size.
_MAX_PROBE = 4096


def _conv_out(size: int, kernel: int, stride: int, padding: int = 0) -> int:
    """Output length of a convolution or pooling along one axis (0 or less: the input is too small)."""
    return (size + 2 * padding - kernel) // stride + 1


def _smallest(out: Callable[[int], int]) -> int:
    """Smallest input side ``n`` with ``out(n) >= 1``."""
    return next(n for n in range(1, _MAX_PROBE) if out(n) >= 1)


@dataclasses.dataclass(frozen=True, kw_only=True)
class CNNEncoderCfg:
    """The UrbanVerse paper's image encoder: three convolutions (16, 32, 64 channels), then a projection.

    Defaults: 16 8x8/4, 32 4x4/2, 64 3x3/1 (channels, kernel/stride: the Nature-DQN pattern at half
    its width), ReLU, ``same`` padding, so every layer divides the image by its stride (rounding
    down) and small cameras work: 32x32 -> 4x4x64, 64x64 -> 8x8x64, 135x240 -> 16x30x64 before the
    projection; the smallest image is 8x8. The paper puts a 128-wide MLP behind it: the policy's
    ``mlp`` core. ReLU rather than ELU: half the time on CPUs at the same learning behaviour."""

    channels: tuple[int, ...] = (16, 32, 64)
    """Output channels of each convolution."""
    kernels: tuple[int, ...] = (8, 4, 3)
    """Square kernel side of each convolution (pixels)."""
    strides: tuple[int, ...] = (4, 2, 1)
    """Stride of each convolution (pixels); strided convolutions instead of pooling keep it cheap on CPUs."""
    out_dim: int = 128
    """Width of the output features (the projection after the flatten)."""
    padding: Literal["same", "valid"] = "same"
    """``same``: ``(kernel - stride) // 2`` zero pixels on each side of each convolution's input, so
    its output is the input over the stride; ``valid``: none (cheaper: 64x64 -> 4x4x64, about 0.6x
    the time, but images need at least 36x36 with the default kernels)."""
    activation: Literal["elu", "relu", "silu", "tanh"] = "relu"
    """Nonlinearity after every convolution and after the projection."""

    def __post_init__(self) -> None:
        if not len(self.channels) == len(self.kernels) == len(self.strides) >= 1:
            raise ValueError("CNNEncoderCfg: channels, kernels and strides need the same length >= 1")
        if min(*self.channels, *self.kernels, *self.strides, self.out_dim) < 1:
            raise ValueError(f"CNNEncoderCfg: every size must be >= 1, got {self}")
        if self.padding not in ("same", "valid"):
            raise ValueError(f"CNNEncoderCfg.padding must be 'same' or 'valid', got {self.padding!r}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class NatureEncoderCfg:
    """Nature-DQN encoder (Mnih et al. 2015): 32 8x8/4, 64 4x4/2, 64 3x3/1, ReLU, Linear + ReLU.

    Takes images from 36x36 up (64x64 -> 4x4x64, 135x240 -> 13x26x64 before the projection)."""

    out_dim: int = 512
    """Width of the output features (the paper's fully connected layer)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ImpalaEncoderCfg:
    """IMPALA ResNet encoder (Espeholt et al. 2018).

    Each stage: conv 3x3 (padding 1), max-pool 3x3/2 (padding 1), two residual blocks
    ``x + conv(relu(conv(relu(x))))``; then ReLU, flatten, Linear + ReLU. Every stage halves the
    image (rounding up): 64x64 -> 8x8x32, 135x240 -> 17x30x32; it takes any size from 1x1 up."""

    channels: tuple[int, ...] = (16, 32, 32)
    """Output channels of each stage."""
    out_dim: int = 256
    """Width of the output features."""

    def __post_init__(self) -> None:
        if not self.channels or min(*self.channels, self.out_dim) < 1:
            raise ValueError(f"ImpalaEncoderCfg: need >= 1 stage and sizes >= 1, got {self}")


class ImageEncoder(nn.Module):
    """``images (B, in_channels, height, width) -> (B, out_dim)``: ``trunk``, flatten, ``proj``.

    Subclasses build ``self.trunk`` and call :meth:`_finish`, which sizes the projection by a
    dummy forward (no random draws) after checking that the image is large enough.
    """

    in_channels: int
    height: int
    width: int
    out_dim: int
    trunk: nn.Module

    def _finish(
        self, name: str, spatial: Callable[[int], int], out_dim: int, act: nn.Module, hint: str = ""
    ) -> None:
        out_h, out_w = spatial(self.height), spatial(self.width)
        if out_h < 1 or out_w < 1:
            n = _smallest(spatial)
            raise ValueError(
                f"encoder {name!r}: images of {self.height}x{self.width} pixels are too small; it needs "
                f"at least {n}x{n} (use a larger camera{hint})"
            )
        with torch.no_grad():
            dummy = torch.zeros(1, self.in_channels, self.height, self.width)
            self.flat_dim = int(self.trunk(dummy).flatten(1).shape[1])
        self.out_dim = out_dim
        self.proj = nn.Sequential(nn.Linear(self.flat_dim, out_dim), act)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.proj(self.trunk(images).flatten(1))


class CNNEncoder(ImageEncoder):
    """:class:`CNNEncoderCfg`'s network."""

    def __init__(self, in_channels: int, height: int, width: int, cfg: CNNEncoderCfg | None = None) -> None:
        super().__init__()
        cfg = cfg or CNNEncoderCfg()
        self.cfg, self.in_channels, self.height, self.width = cfg, in_channels, height, width
        layers: list[nn.Module] = []
        c_in = in_channels
        same = cfg.padding == "same"
        pads = [max(k - s, 0) // 2 if same else 0 for k, s in zip(cfg.kernels, cfg.strides, strict=True)]
        for c, k, s, p in zip(cfg.channels, cfg.kernels, cfg.strides, pads, strict=True):
            layers += [nn.Conv2d(c_in, c, k, s, p), make_activation(cfg.activation)]
            c_in = c

        def spatial(n: int) -> int:
            for k, s, p in zip(cfg.kernels, cfg.strides, pads, strict=True):
                n = _conv_out(n, k, s, p) if n >= 1 else 0
            return n

        self.trunk = nn.Sequential(*layers)
        hint = "" if same else ", or padding 'same'"
        self._finish("cnn", spatial, cfg.out_dim, make_activation(cfg.activation), hint)


class NatureEncoder(ImageEncoder):
    """:class:`NatureEncoderCfg`'s network."""

    KERNELS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))

    def __init__(
        self, in_channels: int, height: int, width: int, cfg: NatureEncoderCfg | None = None
    ) -> None:
        super().__init__()
        cfg = cfg or NatureEncoderCfg()
        self.cfg, self.in_channels, self.height, self.width = cfg, in_channels, height, width
        layers: list[nn.Module] = []
        c_in = in_channels
        for c, k, s in self.KERNELS:
            layers += [nn.Conv2d(c_in, c, k, s), nn.ReLU()]
            c_in = c

        def spatial(n: int) -> int:
            for _, k, s in self.KERNELS:
                n = _conv_out(n, k, s) if n >= 1 else 0
            return n

        self.trunk = nn.Sequential(*layers)
        self._finish("nature", spatial, cfg.out_dim, nn.ReLU(), ", or the 'cnn' or 'impala' encoder")


class _Residual(nn.Module):
    """``x + conv(relu(conv(relu(x))))`` with 3x3 convolutions keeping the shape."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv0 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv1(torch.relu(self.conv0(torch.relu(x))))


class ImpalaEncoder(ImageEncoder):
    """:class:`ImpalaEncoderCfg`'s network."""

    def __init__(
        self, in_channels: int, height: int, width: int, cfg: ImpalaEncoderCfg | None = None
    ) -> None:
        super().__init__()
        cfg = cfg or ImpalaEncoderCfg()
        self.cfg, self.in_channels, self.height, self.width = cfg, in_channels, height, width
        layers: list[nn.Module] = []
        c_in = in_channels
        for c in cfg.channels:
            layers += [
                nn.Conv2d(c_in, c, 3, padding=1),
                nn.MaxPool2d(3, stride=2, padding=1),
                _Residual(c),
                _Residual(c),
            ]
            c_in = c
        layers.append(nn.ReLU())

        def spatial(n: int) -> int:
            for _ in cfg.channels:
                n = _conv_out(n, 3, 2, 1)
            return n

        self.trunk = nn.Sequential(*layers)
        self._finish("impala", spatial, cfg.out_dim, nn.ReLU())


_REGISTRY: dict[str, tuple[type[ImageEncoder], type]] = {
    "cnn": (CNNEncoder, CNNEncoderCfg),
    "nature": (NatureEncoder, NatureEncoderCfg),
    "impala": (ImpalaEncoder, ImpalaEncoderCfg),
}


def encoder_config(name: str, **overrides) -> object:
    """The config dataclass instance that :func:`make_encoder` would use for ``name``.

    Lists are taken for tuple fields (a config read back from JSON has lists)."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown encoder {name!r}; valid choices: {', '.join(ENCODER_NAMES)}")
    cfg_cls = _REGISTRY[name][1]
    fields = {f.name for f in dataclasses.fields(cfg_cls) if f.init}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(
            f"unknown field(s) {unknown} for {cfg_cls.__name__}; valid fields: {', '.join(sorted(fields))}"
        )
    return cfg_cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()})


def make_encoder(name: str, in_channels: int, height: int, width: int, **overrides) -> ImageEncoder:
    """Build encoder ``name`` (one of :data:`ENCODER_NAMES`) for ``(in_channels, height, width)`` images.

    Raises ``ValueError`` for an unknown name or config field (naming the valid choices) and for
    images too small for the encoder.
    """
    cfg = encoder_config(name, **overrides)
    if min(in_channels, height, width) < 1:
        raise ValueError(
            f"encoder {name!r}: need in_channels, height, width >= 1, got {in_channels, height, width}"
        )
    return _REGISTRY[name][0](in_channels, height, width, cfg)
