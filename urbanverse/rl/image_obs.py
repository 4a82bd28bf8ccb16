"""Image entries of the flat observation vector: where they are, and the features a policy makes of them.

The environment writes each camera image into its flat observation ``(B, D)`` row-major and
channels-last, scaled to [0, 1], at the slice ``obs_layout[name]``, with ``image_shapes[name]
= (H, W, C)``. :class:`ObsLayout` splits that vector into image groups (images of one size
stacked along channels, e.g. rgb + depth -> 4 channels, in layout order; one group per size)
and the vector part (every other entry, in order). :class:`ImageFeatures` runs one image
encoder (``urbanverse.nn.encoders``) per group on the centred images (``pixel - 0.5``) and
concatenates their features with the (normalised) vector part.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import torch
from torch import nn

from urbanverse.nn.encoders import make_encoder

__all__ = ["ImageFeatures", "ImageGroup", "ObsLayout", "take_ranges"]

#: Subtracted from every pixel (in [0, 1]) before the encoder: images enter centred, not normalised.
PIXEL_CENTRE = 0.5


def take_ranges(x: torch.Tensor, ranges: tuple[tuple[int, int], ...]) -> torch.Tensor:
    """The entries ``[a, b)`` of ``x`` (..., D) for each range, concatenated along the last dimension."""
    if len(ranges) == 1:
        return x[..., ranges[0][0] : ranges[0][1]]
    return torch.cat([x[..., a:b] for a, b in ranges], dim=-1)


@dataclasses.dataclass(frozen=True)
class ImageGroup:
    """Images of one size that one encoder takes, stacked along channels in layout order."""

    names: tuple[str, ...]
    ranges: tuple[tuple[int, int], ...]
    """Each image's ``[start, stop)`` in the flat observation."""
    channels: tuple[int, ...]
    """Each image's channel count."""
    height: int
    width: int


def _range(value) -> tuple[int, int]:
    if isinstance(value, slice):
        return int(value.start), int(value.stop)
    a, b = value
    return int(a), int(b)


class ObsLayout:
    """The image groups and vector ranges of a flat observation of ``num_obs`` entries.

    ``obs_layout``: name -> slice (or ``[start, stop]``, as checkpoints store it); ``image_shapes``:
    name -> ``(H, W, C)`` for the image entries. Raises ``ValueError`` when an image is missing
    from the layout, its size disagrees with its shape, or there is no image at all.
    """

    def __init__(
        self, num_obs: int, obs_layout: Mapping[str, object], image_shapes: Mapping[str, tuple[int, ...]]
    ) -> None:
        layout = {k: _range(v) for k, v in obs_layout.items()}
        if not image_shapes:
            raise ValueError(
                "an image encoder needs image observations (rgb or depth); this environment has "
                f"none (layout: {', '.join(layout) or 'empty'}): use no encoder"
            )
        by_size: dict[tuple[int, int], list[tuple[str, int]]] = {}
        for name in sorted(image_shapes, key=lambda n: layout.get(n, (0, 0))):
            if name not in layout:
                raise ValueError(f"image {name!r} is not in the observation layout ({', '.join(layout)})")
            h, w, c = (int(v) for v in image_shapes[name])
            a, b = layout[name]
            if b - a != h * w * c or b > num_obs:
                raise ValueError(
                    f"image {name!r}: shape {h}x{w}x{c} needs {h * w * c} entries, the layout gives "
                    f"[{a}, {b}) of {num_obs}"
                )
            by_size.setdefault((h, w), []).append((name, c))
        self.groups = tuple(
            ImageGroup(
                names=tuple(n for n, _ in members),
                ranges=tuple(layout[n] for n, _ in members),
                channels=tuple(c for _, c in members),
                height=h,
                width=w,
            )
            for (h, w), members in by_size.items()
        )
        taken = sorted(r for g in self.groups for r in g.ranges)
        vector, pos = [], 0
        for a, b in [*taken, (num_obs, num_obs)]:
            if a > pos:
                vector.append((pos, a))
            pos = max(pos, b)
        self.vector_ranges: tuple[tuple[int, int], ...] = tuple(vector)
        """``[start, stop)`` of the non-image entries, in order."""
        self.vector_dim = sum(b - a for a, b in vector)
        self.num_obs = num_obs


class ImageFeatures(nn.Module):
    """``obs (..., D) -> (..., F)``: encoder features of each image group, then the vector part.

    Leading dimensions are folded into the batch for the encoders (``(B, L, D)`` sequences
    included). ``F = sum(encoder.out_dim) + layout.vector_dim``.
    """

    def __init__(self, layout: ObsLayout, encoder: str, overrides: Mapping) -> None:
        super().__init__()
        self.layout = layout
        self.encoders = nn.ModuleList(
            make_encoder(encoder, sum(g.channels), g.height, g.width, **overrides) for g in layout.groups
        )
        self.out_dim = sum(e.out_dim for e in self.encoders) + layout.vector_dim

    def images(self, x: torch.Tensor, group: ImageGroup) -> torch.Tensor:
        """The centred ``(N, C, H, W)`` images of ``group`` from flat observations ``x`` (N, D)."""
        parts = [
            x[:, a:b].reshape(-1, group.height, group.width, c)
            for (a, b), c in zip(group.ranges, group.channels, strict=True)
        ]
        img = parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)
        return img.permute(0, 3, 1, 2) - PIXEL_CENTRE

    def forward(self, obs: torch.Tensor, norm: nn.Module | None = None) -> torch.Tensor:
        """``obs`` (..., D) raw; ``norm`` maps it to the normalised vector part (None: the raw part)."""
        lead = obs.shape[:-1]
        x = obs.reshape(-1, obs.shape[-1])
        feats = [enc(self.images(x, g)) for g, enc in zip(self.layout.groups, self.encoders, strict=True)]
        if self.layout.vector_dim:
            feats.append(norm(x) if norm is not None else take_ranges(x, self.layout.vector_ranges))
        return torch.cat(feats, dim=-1).reshape(*lead, self.out_dim)
