"""The lexical signal: BM25 term weights over each entry's name, keywords and description, scaled to 0–1.

The score of an entry is the share of the query's (IDF-weighted) terms it contains, with BM25's term
frequency saturation and length normalisation, so 1.0 means "every query term, prominently" and the value
means the same thing whatever the query length. Identifiers keep their dotted form as well as their parts
(`requests.get` → `requests.get`, `requests`, `get`), which is what makes code-ish queries work.
"""

from __future__ import annotations

import math
import re
from collections import Counter

_TOKEN = re.compile(r"[a-z0-9_]+(?:[.:][a-z0-9_]+)*")
_STOP_WORDS = """a an the and or of to in on at for from by with without into is are was be been it its this that these
    those my our your their i we you they he she them do does did how what why when where which who should can
    could would will not no yes use using used get code there here about some any all than then so if else
    just only also very too more most much many such via per vs versus me us like want need make"""
_STOP = frozenset(_STOP_WORDS.split())
_K1, _B = 1.2, 0.75


def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for tok in _TOKEN.findall(text.lower()):
        parts = re.split(r"[.:]", tok)
        if len(parts) > 1:
            out.append(tok)
        out.extend(_stem(p) for p in parts if p and p not in _STOP and len(p) > 1)
    return out


class LexicalIndex:
    def __init__(self, docs: list[str]) -> None:
        self.docs = [Counter(tokenize(d)) for d in docs]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg_len = (sum(self.lengths) / len(self.lengths)) if self.docs else 1.0
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.max_idf = math.log(1 + (n + 0.5) / 0.5) if n else 1.0

    def scores(self, query: str) -> list[float]:
        terms = set(tokenize(query))
        if not terms or not self.docs:
            return [0.0] * len(self.docs)
        # unknown terms count with the highest idf: a query full of words no entry uses is a weak match
        total = sum(self.idf.get(t, self.max_idf) for t in terms) * (_K1 + 1)
        out = []
        for doc, length in zip(self.docs, self.lengths, strict=True):
            norm = _K1 * (1 - _B + _B * length / self.avg_len)
            s = sum(self.idf[t] * doc[t] * (_K1 + 1) / (doc[t] + norm) for t in terms if t in doc)
            out.append(min(1.0, s / total))
        return out
