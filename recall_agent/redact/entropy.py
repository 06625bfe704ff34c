"""The last resort: a long run of token characters that no structure and no known format explains, judged
by a logistic model of its character statistics. It never sees ordinary shapes (recall_agent.redact.ordinary:
paths, module names, test ids, versions, digests, UUIDs, identifiers made of words).

The model's weights and threshold are data (entropy_model.json), fitted on the tuning half of the corpus by
bench/redaction/fit_entropy.py, which also prints its curve on the held-out half.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path

from recall_agent.redact.finding import Finding
from recall_agent.redact.formats import shannon_entropy
from recall_agent.redact.ordinary import is_ordinary

MODEL = Path(__file__).with_name("entropy_model.json")
MIN_LENGTH = 20

# a run of token characters: what a bare credential is made of
CANDIDATE = re.compile(r"(?<![A-Za-z0-9_+/.~$-])[A-Za-z0-9][A-Za-z0-9_+/.~$-]{19,}={0,3}")
_CASE_RUN = re.compile(r"[a-z]{3,}|[A-Z]{3,}")
_DIGEST_LABEL = re.compile(
    r"(?i)(?:\b(?:sha1|sha224|sha256|sha384|sha512|md5|h1|integrity|checksum|digest|hash|fingerprint|"
    r"etag|commit|revision|rev)[\"']?\s*[:=]?\s*[\"']?|"
    r"\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+)\s+)$"
)
_ALPHABET_RUN = re.compile(r"abcde|bcdef|ABCDE|BCDEF|01234|12345|23456|34567|45678|56789")

FEATURES = (
    "log_length",
    "entropy",
    "entropy_ratio",
    "digit_share",
    "upper_share",
    "lower_share",
    "symbol_share",
    "case_switches",
    "word_share",
    "classes",
)


def features(token: str) -> list[float]:
    """The model's inputs for one token (names in FEATURES)."""
    n = len(token)
    digits = sum(c.isdigit() for c in token)
    upper = sum(c.isupper() for c in token)
    lower = sum(c.islower() for c in token)
    symbols = n - digits - upper - lower
    letters = max(upper + lower, 1)
    switches = sum(
        1
        for a, b in zip(token, token[1:], strict=False)
        if a.isalpha() and b.isalpha() and a.isupper() != b.isupper()
    )
    words = sum(len(r) for r in _CASE_RUN.findall(token)) / letters
    entropy = shannon_entropy(token)
    return [
        math.log2(n),
        entropy,
        entropy / math.log2(min(n, 64)),
        digits / n,
        upper / n,
        lower / n,
        symbols / n,
        switches / letters,
        words,
        float(sum(x > 0 for x in (digits, upper, lower, symbols))),
    ]


@functools.cache
def _model() -> tuple[list[float], list[float], list[float], float, float]:
    data = json.loads(MODEL.read_text(encoding="utf-8"))
    return data["weights"], data["mean"], data["scale"], data["bias"], data["threshold"]


def probability(token: str) -> float:
    """The model's probability that `token` is a credential."""
    weights, mean, scale, bias, _ = _model()
    z = bias + sum(w * (x - m) / s for w, x, m, s in zip(weights, features(token), mean, scale, strict=True))
    return 1.0 / (1.0 + math.exp(-z))


def looks_random(token: str) -> bool:
    """Whether a token with no structure around it is judged a credential (ordinary shapes never are)."""
    token = token.rstrip("=")
    if len(token) < MIN_LENGTH or is_ordinary(token) or _ALPHABET_RUN.search(token):
        return False
    return probability(token) >= _model()[4]


def find(text: str) -> Iterator[Finding]:
    for m in CANDIDATE.finditer(text):
        token = m.group().rstrip(".")
        if "<redacted:" in text[max(0, m.start() - 12) : m.start()]:
            continue
        if _DIGEST_LABEL.search(text, max(0, m.start() - 40), m.start()):
            continue
        if looks_random(token):
            yield Finding(m.start(), m.start() + len(token), "high_entropy", "entropy")
