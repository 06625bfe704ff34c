"""recall_agent.embeddings: offline wordllama model from the wheel, optional OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from recall_agent import embeddings


def test_rows_are_unit_float32_and_deterministic() -> None:
    texts = ["ModuleNotFoundError: No module named 'requests'", "git push rejected", ""]
    a = embeddings.embed(texts)
    b = embeddings.embed(texts)
    assert a.dtype == np.float32
    assert a.shape == (3, embeddings.DIM)
    assert np.allclose(np.linalg.norm(a[:2], axis=1), 1.0, atol=1e-5)
    assert not np.any(a[2]), "an empty text embeds to a zero row, never NaN"
    assert np.array_equal(a, b)


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    v = embeddings.embed(
        [
            "ModuleNotFoundError: No module named 'requests'",
            "ImportError: no module named requests found",
            "fatal: refusing to merge unrelated histories",
        ]
    )
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.1


def test_matches_wordllamas_own_inference_object() -> None:
    """Our import-free loader computes what WordLlamaInference.embed(norm=True) computes."""
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama import WordLlamaInference

    base = embeddings.wordllama_data_dir()
    with safe_open(str(base / embeddings.WEIGHTS_FILE), framework="np") as f:
        matrix = f.get_tensor("embedding.weight")
    ref = WordLlamaInference(matrix, Tokenizer.from_file(str(base / embeddings.TOKENIZER_FILE)))
    texts = ["short", "TypeError: unsupported operand type(s) for +: 'int' and 'str'", "a b c d e f g"]
    expected = ref.embed(texts, norm=True)
    assert np.allclose(embeddings.embed(texts), expected, atol=1e-5)


def test_import_is_light_and_model_loads_lazily() -> None:
    code = (
        "import sys, recall_agent.embeddings as e; "
        "print(json.dumps(['numpy' in sys.modules, 'wordllama' in sys.modules, e.is_loaded()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == [False, False, False]


def test_string_instead_of_list_is_rejected() -> None:
    with pytest.raises(TypeError):
        embeddings.embed("not a list")  # type: ignore[arg-type]


def test_remote_endpoint_is_used_when_configured(httpx_mock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALL_EMBEDDINGS_URL", "http://embed.example.test/v1")
    monkeypatch.setenv("RECALL_EMBEDDINGS_MODEL", "team-model")
    monkeypatch.setenv("RECALL_EMBEDDINGS_KEY", "sekret")
    httpx_mock.add_response(
        url="http://embed.example.test/v1/embeddings",
        json={"data": [{"index": 1, "embedding": [0.0, 2.0]}, {"index": 0, "embedding": [3.0, 4.0]}]},
    )
    v = embeddings.embed(["first", "second"])
    assert np.allclose(v, [[0.6, 0.8], [0.0, 1.0]])
    req = httpx_mock.get_request()
    assert req.headers["authorization"] == "Bearer sekret"
    assert json.loads(req.content) == {"model": "team-model", "input": ["first", "second"]}
    assert embeddings.model_id() == "remote:team-model@http://embed.example.test/v1"


def test_remote_failure_is_a_clear_error(httpx_mock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALL_EMBEDDINGS_URL", "http://embed.example.test/v1/embeddings")
    httpx_mock.add_response(url="http://embed.example.test/v1/embeddings", status_code=503)
    with pytest.raises(embeddings.EmbeddingError, match="embed.example.test"):
        embeddings.embed(["x"])
