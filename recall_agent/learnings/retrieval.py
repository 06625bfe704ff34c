"""Ranking: turn a retrieval request into scored matches over any `CandidateStore`.

Error matches: candidates are the stored signatures with the query's fingerprint and the full-text hits
on its rarest terms (core.py). Each candidate's signatures are compared with the query (features.py) and
a fitted model decides how likely each is the same cause (acceptance.py, weights in acceptance.json);
the best signature gives the candidate's similarity, in 0–1:
  * identical fingerprint (the same cause lines after folding) -> 1.0;
  * otherwise acceptance.similarity(P(same cause)): the model's probability on the wire's scale, where
    the operating point chosen on the tuning half is 0.85, the request's default threshold.
Optionally dense evidence (cosine of the embeddings of the normalized signatures) is blended in for
similarities in DENSE_BAND; it is off (DENSE_WEIGHT 0), so the query path never loads a model.
Context evidence: overlap of file paths (exact path, then basename, then directory) and task type.

freshness = exp(-0.015 * age_days); combined = similarity * freshness * (0.5 + 0.5 * confidence).

Repo scoping (a policy, not the same-cause decision): learnings of the requested repo are matched at the
request's thresholds; learnings of other repos only at CROSS_REPO_MIN or more and not for a generic
message raised from the query's own code, and then with combined * CROSS_REPO_FACTOR so an equally good
same-repo learning ranks first. Context matches are same-repo only.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from uuid import UUID

from recall_agent.learnings import acceptance, keys, lifecycle
from recall_agent.learnings import features as feats
from recall_agent.learnings.features import Query
from recall_agent.learnings.types import Candidate, CandidateStore, SignatureRow
from recall_agent.learnings.wire import Match, Reason, RetrievalRequest
from recall_agent.protocol import MatchType

__all__ = ["DenseScorer", "Query", "RetrievalResult", "retrieve", "score_error", "error_candidates"]

FRESHNESS_RATE = 0.015
CROSS_REPO_FACTOR = 0.9
FINGERPRINT_CANDIDATES = 20
LEXICAL_CANDIDATES = 20
KEY_CANDIDATES = 20
CONTEXT_CANDIDATES = 50
# dense evidence is consulted only for similarities in this band (below: hopeless, above: decided)
DENSE_BAND = (0.55, 0.97)
DENSE_WEIGHT = 0.0  # 0 = dense off; set by the benchmark's finding, see docs/learnings.md
# a learning of another repo is offered when it is this similar: another team's fix to the same error is
# worth seeing; below it, only the requested repo's learnings are
CROSS_REPO_MIN = 0.85


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

        from recall_agent import embeddings

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
    why: Reason | None = None


def error_candidates(
    store: CandidateStore, q: Query, query_keys: list[keys.Key] | None = None
) -> list[Candidate]:
    """The candidates of an error query: same fingerprint, then (a store with candidate keys: pg_store.py)
    the learnings sharing a line, a decisive value or the message template, then the full-text hits on its
    terms. `query_keys`: keys.keys_of(q.normalized) when the caller has them."""
    by_fp = [] if q.noise else store.candidates_by_fingerprint([q.fingerprint], FINGERPRINT_CANDIDATES)
    by_keys = getattr(store, "candidates_by_keys", None)
    if by_keys is not None and query_keys is None:
        query_keys = keys.keys_of(q.normalized)
    keyed = by_keys(query_keys, KEY_CANDIDATES) if by_keys is not None else []
    return _dedupe(by_fp + keyed + store.candidates_by_terms(q.terms(), LEXICAL_CANDIDATES))


def _prefetch(
    store: CandidateStore, q: Query | None, request: RetrievalRequest, wants_context: bool
) -> list[keys.Key] | None:
    """Tell a store that reads several candidate reads in one round trip (pg_store.PgStore.prefetch) what this
    request's will be: the same arguments error_candidates and candidates_by_context pass. Returns the
    query's candidate keys (computed once for both)."""
    prefetch = getattr(store, "prefetch", None)
    if prefetch is None or (q is None and not wants_context):  # no candidate read: nothing to read ahead
        return None
    query_keys = keys.keys_of(q.normalized) if q is not None else []
    prefetch(
        fingerprints=[] if q is None or q.noise else [q.fingerprint],
        fingerprint_limit=FINGERPRINT_CANDIDATES,
        keys=query_keys,
        terms=q.terms() if q is not None else (),
        repo=request.repo,
        file_paths=request.file_paths if wants_context else (),
        task_type=request.task_type if wants_context else None,
        context_limit=CONTEXT_CANDIDATES,
    )
    return query_keys


def score_error(
    store: CandidateStore,
    q: Query,
    candidates: list[Candidate],
    *,
    dense_weight: float,
    dense: DenseScorer | None,
) -> list[Scored]:
    """Each candidate's similarity (its best signature's) with the features that decided it."""
    stored = [[Query.from_normalized(row.normalized) for row in c.signatures] for c in candidates]
    line_df = Counter(core for sigs in stored for core in set().union(*map(feats.line_cores, sigs)))
    out = []
    undecided: list[tuple[Scored, SignatureRow]] = []
    for cand, others in zip(candidates, stored, strict=True):
        scored = _score_candidate(q, cand, others, line_df)
        out.append(scored)
        row = cand.signatures[int(scored.evidence.get("row", 0))] if cand.signatures else None
        in_band = DENSE_BAND[0] <= scored.similarity < DENSE_BAND[1]
        if dense_weight > 0 and row is not None and not scored.exact and in_band:
            undecided.append((scored, row))
    if undecided and dense is not None:
        cosines = dense.cosine(store, q, [row for _, row in undecided])
        for (scored, _), cos in zip(undecided, cosines, strict=True):
            scored.evidence["dense"] = cos
            scored.similarity = (1 - dense_weight) * scored.similarity + dense_weight * cos
    return out


def _score_candidate(q: Query, cand: Candidate, others: list[Query], line_df: Counter[str]) -> Scored:
    best: tuple[float, int, feats.Evidence | None] = (-1.0, 0, None)
    for k, (row, other) in enumerate(zip(cand.signatures, others, strict=True)):
        if row.fingerprint == q.fingerprint and not q.noise:
            return Scored(cand, 1.0, MatchType.ERROR_SIGNATURE, True, {"p": 1.0, "row": k}, _reason(q, other))
        ev = feats.evidence(q, other, line_df)
        p = acceptance.probability(ev.values)
        if p > best[0]:
            best = (p, k, ev)
    p, k, ev = best
    if ev is None:
        return Scored(cand, 0.0, MatchType.ERROR_SIGNATURE)
    sim = acceptance.similarity(p)
    evidence = ev.values | {"p": p, "row": k}
    return Scored(cand, sim, MatchType.ERROR_SIGNATURE, False, evidence, _reason(q, others[k], ev))


def _reason(q: Query, other: Query, ev: feats.Evidence | None = None) -> Reason:
    """What the two errors share: kind (exception type or tool code), the matched line as a template, the
    shared subjects and innermost frame; and the decisive value that differs, when one does."""
    qi, oi = (ev.query_line, ev.other_line) if ev else (-1, -1)
    q_line = q.causes[qi] if 0 <= qi < len(q.causes) else ""
    o_line = other.causes[oi] if 0 <= oi < len(other.causes) else (other.causes[0] if other.causes else "")
    template = (q_line or o_line).removeprefix("~ ")
    if ev is not None and ev.shared_line and ev.values.get("shared", 0) > ev.values.get("best_line", 0):
        template = ev.shared_line
    shared = [s for s in q.subjects if s in set(other.subjects)][:8]
    frame = q.frame if q.frame and q.frame == other.frame else ""
    differs = ""
    if ev is not None and ev.differs is not None:
        mine, theirs = ev.differs
        differs = f"same message, other {feats.value_noun(q_line or o_line)}: {mine} vs {theirs}"
    return Reason(
        kind=feats.kind_of(template)[:200],
        template=template[:400],
        subjects=[s[:200] for s in shared],
        frame=(frame or "")[:200],
        exact=ev is None,
        differs=differs[:200],
    )


TASK_ONLY_WEIGHT = 0.5  # context similarity of a shared task type alone, when the query names no paths
TASK_WITH_PATHS_WEIGHT = 0.15  # the task type's share when it does (the paths carry the rest)
SAME_BASENAME, SAME_DIRECTORY = 0.7, 0.4  # a query path's score against a learning's (same path: 1.0)
# Not a safe shortcut: skipping the task-type candidates when a task-type-only match cannot reach the
# threshold. The store returns at most CONTEXT_CANDIDATES path matches, so the task-type query also brings
# path matches past that cut (tests/test_learnings_retrieval.py, "task-type candidates").


def context_similarity(query_paths: Sequence[str], task_type: str | None, cand: Candidate) -> float:
    learning = cand.learning
    task_match = 1.0 if task_type and learning.task_type == task_type else 0.0
    if not query_paths:
        return TASK_ONLY_WEIGHT * task_match
    theirs = [_norm_path(p) for p in learning.file_paths_touched]
    if not theirs:
        return TASK_WITH_PATHS_WEIGHT * task_match
    per_path = []
    for qp in (_norm_path(p) for p in query_paths):
        best = 0.0
        for tp in theirs:
            if qp == tp or qp.endswith("/" + tp) or tp.endswith("/" + qp):
                best = 1.0
                break
            if qp.rsplit("/", 1)[-1] == tp.rsplit("/", 1)[-1]:
                best = max(best, SAME_BASENAME)
            elif "/" in qp and "/" in tp and qp.rsplit("/", 1)[0] == tp.rsplit("/", 1)[0]:
                best = max(best, SAME_DIRECTORY)
        per_path.append(best)
    return (1 - TASK_WITH_PATHS_WEIGHT) * (
        sum(per_path) / len(per_path)
    ) + TASK_WITH_PATHS_WEIGHT * task_match


@functools.lru_cache(maxsize=1 << 16)  # a request compares each query path with every candidate's paths
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
    matches: list[Match]
    error_matches_count: int
    context_matches_count: int
    dense_used: bool = False


def retrieve(
    store: CandidateStore,
    request: RetrievalRequest,
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
    wants_error = mt in (MatchType.ERROR_SIGNATURE, MatchType.AUTO) and bool(
        request.error_text and request.error_text.strip()
    )
    wants_context = mt in (MatchType.TASK_CONTEXT, MatchType.AUTO) and bool(
        request.file_paths or request.task_type
    )
    q = Query.from_text(request.error_text or "") if wants_error else None
    error_cands: list[Candidate] = []
    context_cands: list[Candidate] = []
    # every candidate read in one store session (one connection, one cache check); scoring after it
    session = getattr(store, "session", None)
    with session() if session is not None else contextlib.nullcontext():
        query_keys = _prefetch(store, q, request, wants_context)
        if q is not None:
            error_cands = error_candidates(store, q, query_keys)
        if wants_context:
            context_cands = store.candidates_by_context(
                request.repo, request.file_paths, request.task_type, CONTEXT_CANDIDATES
            )

    if q is not None:
        for s in score_error(store, q, error_cands, dense_weight=weight, dense=dense):
            same_repo = s.candidate.learning.repo == request.repo
            # another repo's learning: as similar as the threshold asks (and CROSS_REPO_MIN), and not a generic
            # exception that only its own code raised (IndexError from another repo's module is no evidence)
            if not same_repo and (
                (q.generic and q.frame) or s.similarity < max(CROSS_REPO_MIN, request.min_similarity_error)
            ):
                continue
            if s.similarity >= request.min_similarity_error and s.similarity > 0:
                error_hits.append(s)

    for cand in context_cands:
        sim = context_similarity(request.file_paths, request.task_type, cand)
        if sim >= request.min_similarity_context and sim > 0:
            context_hits.append(Scored(cand, sim, MatchType.TASK_CONTEXT))

    merged: dict[UUID, Match] = {}
    for s in error_hits + context_hits:
        match = _to_match(s, request.repo, now)
        key = match.learning_id
        if key not in merged or match.combined_score > merged[key].combined_score:
            merged[key] = match
    ranked = sorted(
        merged.values(), key=lambda m: (-m.combined_score, -m.similarity, -(m.confidence or 0), m.age_days)
    )[: request.max_results]
    if record_access and ranked:
        store.record_access([m.learning_id for m in ranked])
    return RetrievalResult(ranked, len(error_hits), len(context_hits), bool(dense and dense.calls))


def _to_match(s: Scored, repo: str, now: datetime) -> Match:
    learning = s.candidate.learning
    # a cause met again is as fresh as its last occurrence (one learning per cause: consolidate.py)
    fresh, _ = freshness(learning.last_seen_at or learning.created_at, now)
    _, age = freshness(learning.created_at, now)
    combined = s.similarity * fresh * confidence_factor(learning.confidence)
    if learning.repo != repo:
        combined *= CROSS_REPO_FACTOR
    similarity = min(1.0, max(0.0, s.similarity))
    # every value is in range by construction: clamped scores, a learning validated when it was stored
    return Match(
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
        why=s.why,
        fix=learning.fix,
        shown_count=learning.shown_count,
        helped_count=learning.helped_count,
        hurt_count=learning.hurt_count,
        last_useful_at=learning.last_useful_at,
        state=lifecycle.state(
            learning.created_at, learning.last_useful_at, learning.helped_count, learning.hurt_count, now
        ),
        seen_count=learning.seen_count,
        session_count=learning.session_count,
        provenance=learning.provenance,
        author=learning.author,
        review=learning.review,
        quarantine=learning.quarantine,
    )


def _dedupe(cands: list[Candidate]) -> list[Candidate]:
    seen: dict[UUID, Candidate] = {}
    for c in cands:
        seen.setdefault(c.learning.id, c)
    return list(seen.values())
