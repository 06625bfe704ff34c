"""Offline text embeddings: `embed(texts) -> float32 array, rows L2-normalised`.

Default model: WordLlama's `l2_supercat` 256-d static token embeddings, shipped *inside* the wordllama
wheel (`weights/l2_supercat_256.safetensors` + `tokenizers/l2_supercat_tokenizer_config.json`). We do not
call `WordLlama.load()`: it looks for the tokenizer under `tokenizer/` (singular), then downloads from the
Hugging Face hub. We also avoid importing the `wordllama` package at all: its `__init__` imports `requests`
(~0.25 s) and calls `logging.basicConfig(INFO)` on the root logger. Instead we locate the package's data
files without importing it and compute exactly what `WordLlamaInference.embed(texts, norm=True)` computes
(mean of the token vectors, no special tokens, then L2 norm); a test checks the two agree.

Optional remote model for teams: set `RECALL_EMBEDDINGS_URL` to an OpenAI-compatible endpoint (base URL such
as `http://host:8000/v1`, or the full `.../embeddings` URL), with `RECALL_EMBEDDINGS_MODEL` and
`RECALL_EMBEDDINGS_KEY`. Vectors from different models are not comparable: `model_id()` names the active
model so stores can keep them apart.

Nothing heavy is imported at module import time; the model loads on the first `embed()` call.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

ENV_URL = "RECALL_EMBEDDINGS_URL"
ENV_MODEL = "RECALL_EMBEDDINGS_MODEL"
ENV_KEY = "RECALL_EMBEDDINGS_KEY"

LOCAL_MODEL_ID = "wordllama/l2_supercat_256"
WEIGHTS_FILE = "weights/l2_supercat_256.safetensors"
TOKENIZER_FILE = "tokenizers/l2_supercat_tokenizer_config.json"
DIM = 256
MAX_CHARS = 8000  # longer inputs are cut: a static-embedding mean gains nothing from more text
REMOTE_TIMEOUT_S = 10.0
REMOTE_BATCH = 128


class EmbeddingError(RuntimeError):
    """The embedding model could not be loaded or the remote endpoint failed."""


_lock = threading.Lock()
_local_model: _LocalModel | None = None


def model_id() -> str:
    """A stable name for the active embedding model (vectors are only comparable within one model)."""
    url = os.environ.get(ENV_URL)
    if url:
        return f"remote:{os.environ.get(ENV_MODEL, 'default')}@{url.rstrip('/')}"
    return LOCAL_MODEL_ID


def embed(texts: list[str]) -> np.ndarray:
    """Embed texts into a (len(texts), dim) float32 array whose non-empty rows have unit L2 norm.

    Empty or token-less texts give an all-zero row (cosine 0 with everything) rather than NaN.
    """
    import numpy as np

    if isinstance(texts, str):
        raise TypeError("embed() takes a list of strings, not a string")
    texts = [t[:MAX_CHARS] for t in texts]
    url = os.environ.get(ENV_URL)
    if not texts:
        return np.zeros((0, 0 if url else DIM), dtype=np.float32)
    vectors = _embed_remote(texts, url) if url else _get_local_model().embed(texts)
    return _l2_normalise(vectors)


def _l2_normalise(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    np.divide(vectors, norms, out=vectors, where=norms > 0)
    return vectors


# --------------------------------------------------------------------------- local (wordllama) model


def wordllama_data_dir() -> Path:
    """The installed wordllama package directory, found without importing the package."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError("the 'wordllama' package is not installed (pip install wordllama)")
    return Path(next(iter(spec.submodule_search_locations)))


class _LocalModel:
    def __init__(self, embedding: np.ndarray, tokenizer: Any) -> None:
        self.embedding = embedding
        self.tokenizer = tokenizer

    @classmethod
    def load(cls) -> _LocalModel:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        base = wordllama_data_dir()
        weights, tok = base / WEIGHTS_FILE, base / TOKENIZER_FILE
        for path in (weights, tok):
            if not path.is_file():
                raise EmbeddingError(f"wordllama model file missing: {path}")
        try:
            with safe_open(str(weights), framework="np", device="cpu") as f:
                matrix = np.ascontiguousarray(f.get_tensor("embedding.weight").astype(np.float32))
            tokenizer = Tokenizer.from_file(str(tok))
        except Exception as exc:  # corrupt file, incompatible library: say which model failed
            raise EmbeddingError(f"could not load the wordllama model from {base}: {exc}") from exc
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return cls(matrix, tokenizer)

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        encodings = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        out = np.zeros((len(texts), self.embedding.shape[1]), dtype=np.float32)
        last = self.embedding.shape[0] - 1
        for row, enc in enumerate(encodings):
            if enc.ids:
                ids = np.clip(np.asarray(enc.ids, dtype=np.int64), 0, last)
                out[row] = self.embedding[ids].mean(axis=0)
        return out


def _get_local_model() -> _LocalModel:
    global _local_model
    if _local_model is None:
        with _lock:
            if _local_model is None:
                _local_model = _LocalModel.load()
    return _local_model


def is_loaded() -> bool:
    """Whether the local model has been loaded in this process (used to verify the cold path)."""
    return _local_model is not None


# --------------------------------------------------------------------------- remote (OpenAI-compatible)


def _endpoint(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/embeddings") else url + "/embeddings"


def _embed_remote(texts: list[str], url: str) -> np.ndarray:
    import httpx
    import numpy as np

    headers = {"Content-Type": "application/json"}
    key = os.environ.get(ENV_KEY)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    model = os.environ.get(ENV_MODEL, "text-embedding-3-small")
    endpoint = _endpoint(url)
    rows: list[list[float]] = []
    try:
        with httpx.Client(timeout=REMOTE_TIMEOUT_S) as client:
            for start in range(0, len(texts), REMOTE_BATCH):
                batch = texts[start : start + REMOTE_BATCH]
                resp = client.post(endpoint, json={"model": model, "input": batch}, headers=headers)
                resp.raise_for_status()
                data = sorted(resp.json()["data"], key=lambda d: d.get("index", 0))
                if len(data) != len(batch):
                    raise EmbeddingError(f"{endpoint} returned {len(data)} vectors for {len(batch)} inputs")
                rows.extend(d["embedding"] for d in data)
    except EmbeddingError:
        raise
    except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
        raise EmbeddingError(f"embeddings endpoint {endpoint} failed: {exc}") from exc
    return np.asarray(rows, dtype=np.float32)
