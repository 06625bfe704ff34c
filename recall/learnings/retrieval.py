"""Ranking: turn a retrieval request into scored matches over any `CandidateStore`.

Error evidence, strongest first, folded into ONE similarity in 0–1 (see docs/learnings.md):
  * exact fingerprint of the normalized cause lines -> 1.0;
  * otherwise a lexical score over the normalized cause lines: a weighted Dice overlap of their tokens
    (names, codes and exception types weigh most, placeholders and filler words least), with the
    *subjects* (quoted values and identifier-like names, in order) compared on their own: the same
    exception with a different missing module, key, attribute or package is a different problem, so
    differing subjects cap the score below the default 0.85 (0.6 disjoint, 0.8 overlapping); a generic
    message (no subject) raised from another module is scaled by 0.9;
  * optionally dense evidence (cosine of the embeddings of the normalized signatures), consulted only when
    the lexical score is in the undecided band, so most queries never load the model.
Context evidence: overlap of file paths (exact path, then basename, then directory) and task type.

freshness = exp(-0.015 * age_days); combined = similarity * freshness * (0.5 + 0.5 * confidence).

Repo scoping: learnings of the requested repo are matched at the request's thresholds; learnings of other
repos are matched only when the fingerprint is identical and the cause is specific (not a generic message),
and then with combined * 0.9 so an equally good same-repo learning ranks first. Context matches are
same-repo only.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from recall.learnings import signatures as sigs
from recall.learnings.types import Candidate, CandidateStore, SignatureRow
from recall.models import LearningMatch, LearningRetrievalRequest, MatchType

FRESHNESS_RATE = 0.015
CROSS_REPO_FACTOR = 0.9
FINGERPRINT_CANDIDATES = 20
LEXICAL_CANDIDATES = 20
CONTEXT_CANDIDATES = 50
MAX_QUERY_TERMS = 16
# subjects (quoted values, identifier-like names) disjoint: a different problem; capped here
DISJOINT_SUBJECT_CAP = 0.6
# subjects overlapping but not the same (another attribute of the same object, operands swapped)
DIFFERENT_SUBJECT_CAP = 0.8
# a generic message (no subject at all) raised from another module: probably, not surely, the same
GENERIC_OTHER_FRAME_FACTOR = 0.9
# dense evidence is consulted only for lexical scores in this band (below: hopeless, above: decided)
DENSE_BAND = (0.55, 0.97)
DENSE_WEIGHT = 0.0  # 0 = dense off; set by the benchmark's finding, see docs/learnings.md

_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "be",
        "not",
        "no",
        "it",
        "this",
        "that",
        "as",
        "into",
        "error",
        "errors",
        "failed",
        "fatal",
    ]
)
_QUOTED = re.compile(r"""'([^']{1,120})'|"([^"]{1,120})"|`([^`]{1,120})`|‘([^’]{1,120})’""")
_SPECIFIC_TOKEN = re.compile(r"^(?:[a-z]+_[\w]+|[a-z]+[A-Z]\w*|[A-Z]\w*[a-z][A-Z]\w*|[a-z]{1,4}\d{3,5})$")


@dataclass
class Query:
    """A normalized error query, computed once per request."""

    normalized: str
    fingerprint: str
    causes: list[str]
    weights: dict[str, float]
    subjects: tuple[str, ...]
    generic: bool
    frame: str | None

    @classmethod
    def from_text(cls, text: str) -> Query:
        normalized = sigs.normalize(text)
        return cls.from_normalized(normalized)

    @classmethod
    @functools.lru_cache(maxsize=4096)  # noqa: B019 - immutable inputs, bounded; stored rows repeat
    def from_normalized(cls, normalized: str) -> Query:
        lines = normalized.split("\n")
        causes = [ln for ln in lines if ln and not ln.startswith("at ")]
        frames = [ln[3:] for ln in lines if ln.startswith("at ")]
        return cls(
            normalized=normalized,
            fingerprint=sigs.fingerprint_normalized(normalized),
            causes=causes,
            weights=_token_weights(causes),
            subjects=_subjects(causes),
            generic=sigs.is_generic(causes),
            frame=frames[0] if frames else None,
        )

    def terms(self) -> list[str]:
        """Search terms for the store's full-text index: heaviest first."""
        ranked = sorted(self.weights, key=lambda t: -self.weights[t])
        return [t for t in ranked if not t.startswith("<") and t not in _STOPWORDS][:MAX_QUERY_TERMS]


@functools.lru_cache(maxsize=8192)
def _token_weight(tok: str, raw: str) -> float:
    if tok.startswith("<"):
        return 0.2
    if tok in _STOPWORDS or len(tok) == 1:
        return 0.3
    if _SPECIFIC_TOKEN.match(raw) or raw.endswith(("Error", "Exception")):
        return 2.0
    return 1.0


def _token_weights(causes: list[str]) -> dict[str, float]:
    weights: dict[str, float] = {}
    for line in causes:
        for raw in re.findall(r"<\w+>|[A-Za-z_][A-Za-z0-9_]*|\d+", line):
            tok = raw.lower()
            weights[tok] = max(weights.get(tok, 0.0), _token_weight(tok, raw))
    return weights


_SUBJECT_NAME = re.compile(r"(?<![\w<])(?:[A-Za-z]\w*(?:[-_.][A-Za-z0-9]\w*)+)(?![\w>])")


def _subjects(causes: list[str]) -> tuple[str, ...]:
    """What the error is about, in order: quoted values, then identifier-like names in the unquoted text
    (hyphenated, snake_case or dotted: package names, config keys, attributes). Placeholders excluded."""
    out: list[str] = []
    for line in causes:
        for m in _QUOTED.finditer(line):
            value = next(g for g in m.groups() if g is not None).strip().lower()
            if value and not value.startswith("<"):
                out.append(value)
        bare = _QUOTED.sub(" ", line.split(": ", 1)[-1] if ": " in line else line)
        out.extend(
            n.lower() for n in _SUBJECT_NAME.findall(bare) if not n.lower().startswith(("utf-", "e.g"))
        )
    return tuple(dict.fromkeys(out))


def lexical_similarity(q: Query, other: Query) -> float:
    """Weighted Dice overlap of cause tokens, capped when the subjects differ (see the constants)."""
    if not q.weights or not other.weights:
        return 0.0
    shared = sum(min(w, other.weights[t]) for t, w in q.weights.items() if t in other.weights)
    total = sum(q.weights.values()) + sum(other.weights.values())
    score = 2.0 * shared / total if total else 0.0
    if q.subjects and other.subjects and q.subjects != other.subjects:
        disjoint = not set(q.subjects) & set(other.subjects)
        score = min(score, DISJOINT_SUBJECT_CAP if disjoint else DIFFERENT_SUBJECT_CAP)
    elif bool(q.subjects) != bool(other.subjects):
        score = min(score, DIFFERENT_SUBJECT_CAP)
    if q.generic and other.generic and q.frame and other.frame and q.frame != other.frame:
        score *= GENERIC_OTHER_FRAME_FACTOR
    return score


# --------------------------------------------------------------------------- dense evidence (lazy)


@dataclass
class DenseScorer:
    """Embeds normalized signatures on demand; caches row embeddings back into stores that support it."""

    embed: Callable[[list[str]], object] | None = None
    model: str | None = None
    calls: int = 0
    _query_vec: object = field(default=None, repr=False)

    def cosine(self, store: CandidateStore, q: Query, rows: Sequence[SignatureRow]) -> list[float]:
        import numpy as np

        from recall import embeddings

        embed = self.embed or embeddings.embed
        model = self.model or embeddings.model_id()
        self.calls += 1
        if self._query_vec is None:
            self._query_vec = embed([q.normalized])[0]
        vectors: list[np.ndarray | None] = []
        missing = []
        for i, row in enumerate(rows):
            if row.embedding is not None and row.embedding_model == model:
                vectors.append(np.frombuffer(row.embedding, dtype=np.float32))
            else:
                vectors.append(None)
                missing.append(i)
        if missing:
            fresh = embed([rows[i].normalized for i in missing])
            cache = []
            for j, i in enumerate(missing):
                vectors[i] = fresh[j]
                if rows[i].row_id is not None:
                    cache.append((rows[i].row_id, np.asarray(fresh[j], dtype=np.float32).tobytes()))
            saver = getattr(store, "cache_embeddings", None)
            if saver and cache:
                with contextlib.suppress(Exception):  # a cache write is an optimisation, never a failure
                    saver(cache, model)
        qv = np.asarray(self._query_vec, dtype=np.float32)
        return [
            max(0.0, float(np.dot(qv, v))) if v is not None and v.shape == qv.shape else 0.0 for v in vectors
        ]


# --------------------------------------------------------------------------- scoring


@dataclass
class Scored:
    candidate: Candidate
    similarity: float
    match_type: MatchType
    exact: bool = False
    evidence: dict[str, float] = field(default_factory=dict)


def score_error(
    store: CandidateStore,
    q: Query,
    candidates: list[Candidate],
    *,
    dense_weight: float,
    dense: DenseScorer | None,
) -> list[Scored]:
    out = []
    undecided: list[tuple[Scored, SignatureRow]] = []
    for cand in candidates:
        best: tuple[float, bool, SignatureRow | None] = (0.0, False, None)
        for row in cand.signatures:
            if row.fingerprint == q.fingerprint:
                best = (1.0, True, row)
                break
            lex = lexical_similarity(q, Query.from_normalized(row.normalized))
            if lex > best[0]:
                best = (lex, False, row)
        sim, exact, row = best
        scored = Scored(cand, sim, MatchType.ERROR_SIGNATURE, exact, {"lexical": sim})
        out.append(scored)
        if dense_weight > 0 and row is not None and not exact and DENSE_BAND[0] <= sim < DENSE_BAND[1]:
            undecided.append((scored, row))
    if undecided and dense is not None:
        cosines = dense.cosine(store, q, [row for _, row in undecided])
        for (scored, _), cos in zip(undecided, cosines, strict=True):
            scored.evidence["dense"] = cos
            scored.similarity = (1 - dense_weight) * scored.similarity + dense_weight * cos
    return out


def context_similarity(query_paths: Sequence[str], task_type: str | None, cand: Candidate) -> float:
    learning = cand.learning
    task_match = 1.0 if task_type and learning.task_type == task_type else 0.0
    if not query_paths:
        return 0.5 * task_match
    theirs = [_norm_path(p) for p in learning.file_paths_touched]
    if not theirs:
        return 0.15 * task_match
    per_path = []
    for qp in (_norm_path(p) for p in query_paths):
        best = 0.0
        for tp in theirs:
            if qp == tp or qp.endswith("/" + tp) or tp.endswith("/" + qp):
                best = 1.0
                break
            if qp.rsplit("/", 1)[-1] == tp.rsplit("/", 1)[-1]:
                best = max(best, 0.7)
            elif "/" in qp and "/" in tp and qp.rsplit("/", 1)[0] == tp.rsplit("/", 1)[0]:
                best = max(best, 0.4)
        per_path.append(best)
    return 0.85 * (sum(per_path) / len(per_path)) + 0.15 * task_match


def _norm_path(path: str) -> str:
    return path.replace("\\", "/").strip().lstrip("./").lower()


def freshness(created_at: datetime, now: datetime) -> tuple[float, int]:
    if created_at.tzinfo is None:
        created_at = created_at.replace(tzinfo=UTC)
    age = max(0.0, (now - created_at).total_seconds() / 86400.0)
    return math.exp(-FRESHNESS_RATE * age), int(age)


def confidence_factor(confidence: float) -> float:
    return 0.5 + 0.5 * confidence


# --------------------------------------------------------------------------- the request


@dataclass
class RetrievalResult:
    matches: list[LearningMatch]
    error_matches_count: int
    context_matches_count: int
    dense_used: bool = False


def retrieve(
    store: CandidateStore,
    request: LearningRetrievalRequest,
    *,
    now: datetime | None = None,
    dense_weight: float | None = None,
    dense: DenseScorer | None = None,
    record_access: bool = True,
) -> RetrievalResult:
    now = now or datetime.now(UTC)
    weight = DENSE_WEIGHT if dense_weight is None else dense_weight
    dense = dense if dense is not None else (DenseScorer() if weight > 0 else None)
    mt = request.match_type
    error_hits: list[Scored] = []
    context_hits: list[Scored] = []

    if (
        mt in (MatchType.ERROR_SIGNATURE, MatchType.AUTO)
        and request.error_text
        and request.error_text.strip()
    ):
        q = Query.from_text(request.error_text)
        cands = _dedupe(
            store.candidates_by_fingerprint([q.fingerprint], FINGERPRINT_CANDIDATES)
            + store.candidates_by_terms(q.terms(), LEXICAL_CANDIDATES)
        )
        for s in score_error(store, q, cands, dense_weight=weight, dense=dense):
            same_repo = s.candidate.learning.repo == request.repo
            if not same_repo and not (s.exact and not q.generic):
                continue
            if s.similarity >= request.min_similarity_error and s.similarity > 0:
                error_hits.append(s)

    if mt in (MatchType.TASK_CONTEXT, MatchType.AUTO) and (request.file_paths or request.task_type):
        cands = store.candidates_by_context(
            request.repo, request.file_paths, request.task_type, CONTEXT_CANDIDATES
        )
        for cand in cands:
            sim = context_similarity(request.file_paths, request.task_type, cand)
            if sim >= request.min_similarity_context and sim > 0:
                context_hits.append(Scored(cand, sim, MatchType.TASK_CONTEXT))

    merged: dict[str, LearningMatch] = {}
    for s in error_hits + context_hits:
        match = _to_match(s, request.repo, now)
        key = str(match.learning_id)
        if key not in merged or match.combined_score > merged[key].combined_score:
            merged[key] = match
    ranked = sorted(
        merged.values(), key=lambda m: (-m.combined_score, -m.similarity, -(m.confidence or 0), m.age_days)
    )[: request.max_results]
    if record_access and ranked:
        store.record_access([m.learning_id for m in ranked])
    return RetrievalResult(ranked, len(error_hits), len(context_hits), bool(dense and dense.calls))


def _to_match(s: Scored, repo: str, now: datetime) -> LearningMatch:
    learning = s.candidate.learning
    fresh, age = freshness(learning.created_at, now)
    combined = s.similarity * fresh * confidence_factor(learning.confidence)
    if learning.repo != repo:
        combined *= CROSS_REPO_FACTOR
    similarity = min(1.0, max(0.0, s.similarity))
    # model_construct: every value is in range by construction (clamped scores, a learning validated when
    # it was stored), so validation would only cost time, and on the CLI's cold path a validator build
    return LearningMatch.model_construct(
        learning_id=learning.id,
        match_type=s.match_type,
        similarity=round(similarity, 4),
        freshness_score=round(fresh, 4),
        combined_score=round(min(1.0, combined), 4),
        repo=learning.repo,
        resolution_summary=learning.resolution_summary,
        error_signatures=list(learning.error_signatures),
        file_paths_touched=list(learning.file_paths_touched),
        ticket_id=learning.ticket_id,
        task_type=str(getattr(learning.task_type, "value", learning.task_type)),
        age_days=age,
        created_at=learning.created_at,
        confidence=learning.confidence,
    )


def _dedupe(cands: list[Candidate]) -> list[Candidate]:
    seen: dict[str, Candidate] = {}
    for c in cands:
        seen.setdefault(str(c.learning.id), c)
    return list(seen.values())
