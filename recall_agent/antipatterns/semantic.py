"""Semantic matching of a question against the catalog, with vectors kept in Qdrant.

Where the vectors live (`RECALL_ANTIPATTERNS_INDEX`, QDRANT_URL always wins):
- `QDRANT_URL` set: that Qdrant server (`QDRANT_API_KEY` optional) — the team-scale setup.
- `qdrant`: Qdrant local mode, `QdrantClient(path=$RECALL_HOME/qdrant)`, in-process, no server.
- `memory` (default without QDRANT_URL): the catalog's vectors are scored in-process with numpy.
  Measured (bench/bench_antipatterns.py): importing qdrant-client alone takes ~2 s idle and 6-7 s on a
  loaded 2-core machine, which pushed a cold `recall --scope antipatterns` past the client's 9 s budget;
  the catalog is a few hundred vectors at most, so an exact in-process cosine gives the same scores.
- One collection per merged catalog + embedding model: its name carries a hash of both
  (`recall_antipatterns_<hash>`), so the catalog is embedded and indexed only when it (or the model)
  changes. In local mode older `recall_antipatterns_*` collections are dropped; a shared server keeps them,
  because repositories with different team catalogs use different collections at the same time.
- Qdrant local mode locks its folder: a second process (a CLI call while `recall serve` runs on the same
  RECALL_HOME) cannot open it. Then, or when the server is unreachable, the same vectors are scored in
  memory (exactly the same cosine) and the result says which index answered.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall_agent.antipatterns.catalog import Catalog
from recall_agent.errors import describe

if TYPE_CHECKING:
    import numpy as np

COLLECTION_PREFIX = "recall_antipatterns_"
ENV_INDEX = "RECALL_ANTIPATTERNS_INDEX"  # "memory" (default) or "qdrant" (local mode); QDRANT_URL wins
DEFAULT_INDEX = "memory"
INDEX_CHOICES = ("memory", "qdrant")
ENV_QDRANT_API_KEY = "QDRANT_API_KEY"
SERVER_TIMEOUT_S = 5
_local_lock = threading.Lock()  # one local-mode client per process at a time (Qdrant's own rule)
_vector_cache: dict[str, np.ndarray] = {}
_phrase_cache: dict[str, tuple[list[str], np.ndarray]] = {}


@dataclass
class SemanticScores:
    scores: dict[str, float]  # entry id -> cosine similarity clipped to 0..1
    index: str  # which index answered: "qdrant-local", "qdrant-server" or "memory (<why>)"


def collection_name(catalog: Catalog) -> str:
    from recall_agent.embeddings import model_id

    key = f"{catalog.digest}|{model_id()}"
    return COLLECTION_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]


def _entry_ids(catalog: Catalog) -> list[str]:
    return sorted(catalog.entries)


def catalog_vectors(catalog: Catalog) -> np.ndarray:
    """Embeddings of every entry's search text, in `_entry_ids` order (cached per catalog in-process)."""
    from recall_agent.embeddings import embed

    name = collection_name(catalog)
    vectors = _vector_cache.get(name)
    if vectors is None:
        vectors = embed([catalog.entries[i].search_text() for i in _entry_ids(catalog)])
        _vector_cache[name] = vectors
    return vectors


def phrase_vectors(catalog: Catalog) -> tuple[list[str], np.ndarray]:
    """Embeddings of every entry's phrases (how people describe it), with the entry id of each row."""
    from recall_agent.embeddings import embed

    key = collection_name(catalog) + ":phrases"
    cached = _phrase_cache.get(key)
    if cached is None:
        owners = [i for i in _entry_ids(catalog) for _ in catalog.entries[i].phrases]
        texts = [p for i in _entry_ids(catalog) for p in catalog.entries[i].phrases]
        cached = _phrase_cache[key] = (owners, embed(texts))
    return cached


def _point_id(entry_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "recall-antipattern:" + entry_id))


def score(catalog: Catalog, text: str) -> SemanticScores:
    """Cosine similarity of `text` to every catalog entry."""
    from recall_agent.embeddings import embed

    if not catalog.entries:
        return SemanticScores({}, "none")
    query_vec = embed([text])[0]
    result = _score_entries(catalog, query_vec)
    return SemanticScores(_with_phrases(catalog, query_vec, result.scores), result.index)


def _with_phrases(catalog: Catalog, query_vec: np.ndarray, scores: dict[str, float]) -> dict[str, float]:
    """An entry scores as well as the closest of its texts: its description or one of its phrases."""
    import numpy as np

    owners, vectors = phrase_vectors(catalog)
    if not owners:
        return scores
    sims = vectors @ np.asarray(query_vec, dtype=np.float32)
    best = dict(scores)
    for owner, sim in zip(owners, sims, strict=True):
        best[owner] = max(best.get(owner, 0.0), max(0.0, min(1.0, float(sim))))
    return best


def _score_entries(catalog: Catalog, query_vec: np.ndarray) -> SemanticScores:
    url = os.environ.get("QDRANT_URL")
    if not url and index_mode() == "memory":
        return SemanticScores(_score_memory(catalog, query_vec), "memory")
    try:
        if url:
            return SemanticScores(
                _score_qdrant(_server_client(url), catalog, query_vec, local=False), "qdrant-server"
            )
        with _local_lock:
            client = _local_client()
            try:
                return SemanticScores(_score_qdrant(client, catalog, query_vec, local=True), "qdrant-local")
            finally:
                client.close()
    except _IndexUnavailable as exc:
        return SemanticScores(_score_memory(catalog, query_vec), f"memory ({exc})")


def index_mode() -> str:
    """The local index choice; an unknown value falls back to the default rather than failing a query."""
    value = os.environ.get(ENV_INDEX, DEFAULT_INDEX).strip().lower()
    return value if value in INDEX_CHOICES else DEFAULT_INDEX


class _IndexUnavailable(Exception):
    pass


def _server_client(url: str):  # -> QdrantClient
    from qdrant_client import QdrantClient

    return QdrantClient(url=url, api_key=os.environ.get(ENV_QDRANT_API_KEY), timeout=SERVER_TIMEOUT_S)


def _local_client():  # -> QdrantClient
    from qdrant_client import QdrantClient

    from recall_agent.config import ensure_home

    path = ensure_home() / "qdrant"
    try:
        return QdrantClient(path=str(path))
    except RuntimeError as exc:  # "Storage folder ... is already accessed by another instance"
        raise _IndexUnavailable(f"{path} is locked by another recall process") from exc
    except Exception as exc:  # corrupt storage, permissions: still answer from memory
        raise _IndexUnavailable(f"cannot open {path}: {describe(exc)}") from exc


def _score_qdrant(client, catalog: Catalog, query_vec: np.ndarray, *, local: bool) -> dict[str, float]:
    name = collection_name(catalog)
    try:
        if not client.collection_exists(name):
            _build_collection(client, catalog, name)
            if local:
                _drop_stale(client, keep=name)
        hits = client.query_points(
            name, query=query_vec.tolist(), limit=len(catalog.entries), with_payload=["id"]
        ).points
    except _IndexUnavailable:
        raise
    except Exception as exc:  # server down, timeouts, version mismatch
        raise _IndexUnavailable(f"qdrant failed: {describe(exc)[:120]}") from exc
    return {
        h.payload["id"]: max(0.0, min(1.0, float(h.score))) for h in hits if h.payload and "id" in h.payload
    }


def _build_collection(client, catalog: Catalog, name: str) -> None:
    from qdrant_client import models

    vectors = catalog_vectors(catalog)
    try:
        client.create_collection(
            name,
            vectors_config=models.VectorParams(size=int(vectors.shape[1]), distance=models.Distance.COSINE),
        )
    except Exception:
        if not client.collection_exists(name):  # lost a creation race: fine; anything else: real error
            raise
    ids = _entry_ids(catalog)
    points = [
        models.PointStruct(id=_point_id(i), vector=v.tolist(), payload={"id": i, "catalog": catalog.digest})
        for i, v in zip(ids, vectors, strict=True)
    ]
    client.upsert(name, points=points, wait=True)


def _drop_stale(client, keep: str) -> None:
    for c in client.get_collections().collections:
        if c.name.startswith(COLLECTION_PREFIX) and c.name != keep:
            client.delete_collection(c.name)


def _score_memory(catalog: Catalog, query_vec: np.ndarray) -> dict[str, float]:
    import numpy as np

    sims = catalog_vectors(catalog) @ np.asarray(query_vec, dtype=np.float32)
    return {i: max(0.0, min(1.0, float(s))) for i, s in zip(_entry_ids(catalog), sims, strict=True)}
