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

from recall_agent.learnings import signatures as sigs
from recall_agent.learnings.types import Candidate, CandidateStore, SignatureRow
from recall_agent.learnings.wire import Match, Reason, RetrievalRequest
from recall_agent.protocol import MatchType

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
# line matching: Tversky overlap, the side that says less (a cut or wrapped message) pays fully for what it
# lacks, the longer side pays EXTRA_WEIGHT for what it adds (a wrapper's prefix, a newer tool's extra
# clause); below MIN_CONTAINED_MASS of the shorter side, plain Dice
EXTRA_WEIGHT = 0.4
MIN_CONTAINED_MASS = 4.0
# calibration: a raw line-level overlap of RAW_SAME_CAUSE (tuned on the tuning half of the real-world
# corpus) is where "the same cause" starts; it maps to SAME_CAUSE, so the request's default threshold keeps
# its meaning for pasted reports and tool output alike
RAW_SAME_CAUSE = 0.78
SAME_CAUSE = 0.85
# lines that are not the error itself (hints, continuation, a second message) count at this weight
SECONDARY_LINE_WEIGHT = 0.5
# a learning of another repo is offered when it is this similar (and specific): another team's fix to the
# same error is worth seeing; below it, only the requested repo's learnings are
CROSS_REPO_MIN = 0.85

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
# errno-style and SCREAMING_SNAKE codes: EADDRINUSE, ERESOLVE, ER_NOT_SUPPORTED_AUTH_MODE (not DETAIL, HINT)
_CODE_TOKEN = re.compile(r"^(?:E[A-Z]{3,}|[A-Z][A-Z0-9]*_[A-Z0-9_]+)$")
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
    lines: list[dict[str, float]] = field(default_factory=list)  # token weights per cause line
    messages: list[dict[str, float]] = field(default_factory=list)  # the same, after the "Type: " prefixes
    importance: list[float] = field(default_factory=list)  # 1 for an error line, less for the others
    line_mass: list[float] = field(default_factory=list)  # each line's weight x importance
    mass: float = 0.0  # the whole signature's token weight
    line_subjects: list[tuple[str, ...]] = field(default_factory=list)  # subjects per cause line
    noise: bool = False  # no error line at all (fallback lines): never matched lexically

    @classmethod
    def from_text(cls, text: str) -> Query:
        normalized = sigs.normalize(text)
        return cls.from_normalized(normalized)

    @classmethod
    @functools.lru_cache(maxsize=16384)  # noqa: B019 - immutable inputs, bounded; stored rows repeat
    def from_normalized(cls, normalized: str) -> Query:
        lines = normalized.split("\n")
        causes = [ln for ln in lines if ln and not ln.startswith("at ")]
        frames = [ln[3:] for ln in lines if ln.startswith("at ")]
        noise = bool(causes) and all(c.startswith(sigs.FALLBACK) for c in causes)
        query = cls(
            normalized=normalized,
            fingerprint=sigs.fingerprint_normalized(normalized),
            causes=causes,
            weights=_token_weights(causes),
            subjects=_subjects(causes),
            generic=sigs.is_generic(causes),
            frame=frames[0] if frames else None,
            lines=[_token_weights([_file_placeholders(c)]) for c in causes],
            messages=[_token_weights([_file_placeholders(_message_part(c))]) for c in causes],
            importance=[1.0 if _PRIMARY.match(c) else SECONDARY_LINE_WEIGHT for c in causes],
            line_subjects=[_subjects([c]) for c in causes],
            noise=noise,
        )
        query.line_mass = [sum(w.values()) * k for w, k in zip(query.lines, query.importance, strict=True)]
        query.mass = sum(query.weights.values())
        return query

    def terms(self) -> list[str]:
        """Search terms for the store's full-text index: heaviest first (none for a text without errors)."""
        if self.noise:
            return []
        ranked = sorted(self.weights, key=lambda t: -self.weights[t])
        return [t for t in ranked if not t.startswith("<") and t not in _STOPWORDS][:MAX_QUERY_TERMS]


@functools.lru_cache(maxsize=8192)
def _token_weight(tok: str, raw: str) -> float:
    if tok.startswith("<"):
        return 0.2
    if tok in _STOPWORDS or len(tok) == 1:
        return 0.3
    if _SPECIFIC_TOKEN.match(raw) or raw.endswith(("Error", "Exception")) or _CODE_TOKEN.match(raw):
        return 2.0
    return 1.0


def _token_weights(causes: list[str]) -> dict[str, float]:
    weights: dict[str, float] = {}
    for line in causes:
        for raw in re.findall(r"<\w+>|[A-Za-z_][A-Za-z0-9_]*|\d+", line):
            tok = raw.lower()
            weights[tok] = max(weights.get(tok, 0.0), _token_weight(tok, raw))
    return weights


# a line that is an error itself: "XError: ...", "error: ...", "fatal: ...", "npm error code", TS2304, E0382
_PRIMARY = re.compile(
    r"^(?:npm error |gyp ERR! )?(?:(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Failure)\b|(?:error|fatal|Error|ERROR|FATAL"
    r"|panic|FAILED)\b|[A-Z]{1,4}\d{3,5}\b|E[A-Z]{3,}\b|[A-Z][A-Z0-9]*_[A-Z0-9_]+\b)"
)
_TYPE_PREFIX = re.compile(r"^[^:'\"`(]{1,60}: ")


def _message_part(line: str) -> str:
    """'General error during analysis: Unsupported class...' -> 'Unsupported class...' (the message that
    wrappers and tool versions put different prefixes in front of); a prefix with a code in it stays."""
    m = _TYPE_PREFIX.match(line)
    if not m or any(_CODE_TOKEN.match(t) for t in re.findall(r"\w+", m.group(0))):
        return ""
    return line[m.end() :]


def _file_placeholders(line: str) -> str:
    """Quoted file names ('README.md', 'index.js') are where an error happened, not what it is."""
    return _QUOTED.sub(
        lambda m: "'<file>'" if _FILE_NAME.match(next(g for g in m.groups() if g)) else m.group(0), line
    )


# a quoted file name is where the error happened, not what it is about ('README.md', 'index.js')
_NAME_LIKE = re.compile(r"^[\w@/]+(?:[-.][\w]+)+$")  # analytics-client, settings.yaml, werkzeug.urls
SHORT_LINE = 6  # content tokens: a line this short with one word swapped for another says another thing
_FILE_NAME = re.compile(
    r"^[\w.@+-]+\.(?:jsx?|tsx?|mjs|cjs|json|md|py|pyc|java|class|kt|rs|go|c|h|cc|cpp|hpp|txt|ya?ml|toml|cfg|ini"
    r"|sh|rb|php|html?|css|vue|lock|gradle|xml|properties|log|csv|so|dll|exe)$"
)
# a quoted file name right after these words says where something happened ("watch 'index.js'")
_AT_PLACE = re.compile(r"\b(?:watch|at|in|from|file)\s*$")
_VALUE_SLOT = re.compile(r":\s+([A-Za-z_][\w.-]{1,60})\s*$")
_SUBJECT_NAME = re.compile(r"(?<![\w<])(?:[A-Za-z]\w*(?:[-_.][A-Za-z0-9]\w*)+)(?![\w>])")


def _subjects(causes: list[str]) -> tuple[str, ...]:
    """What the error is about, in order: quoted values, then identifier-like names in the unquoted text
    (hyphenated, snake_case or dotted: package names, config keys, attributes). Placeholders excluded."""
    out: list[str] = []
    for line in causes:
        for m in _QUOTED.finditer(line):
            value = next(g for g in m.groups() if g is not None).strip()  # case kept: 'Yaml' is not 'yaml'
            if (
                value
                and "<" not in value
                and not (_FILE_NAME.match(value) and _AT_PLACE.search(line[: m.start()]))
            ):
                out.append(value)
        bare = _QUOTED.sub(" ", line.split(": ", 1)[-1] if ": " in line else line)
        out.extend(
            n.lower()
            for n in _SUBJECT_NAME.findall(bare)
            if not n.lower().startswith(("utf-", "e.g")) and not _FILE_NAME.match(n)
        )
        slot = _VALUE_SLOT.search(line)  # "no such table: orders": the word in the message's value slot
        if slot:
            out.append(slot.group(1))
    return tuple(dict.fromkeys(out))


def _overlap(a: dict[str, float], b: dict[str, float]) -> float:
    """Weighted Dice of two token bags, or Tversky with the longer side's additions at EXTRA_WEIGHT (a
    wrapped, cut or extended message) when the shorter one says enough on its own."""
    shared = sum(min(w, b[t]) for t, w in a.items() if t in b)
    ma, mb = sum(a.values()), sum(b.values())
    if not ma + mb:
        return 0.0
    dice = 2.0 * shared / (ma + mb)
    small, big = min(ma, mb), max(ma, mb)
    if small < MIN_CONTAINED_MASS:
        return dice
    return max(dice, shared / (small + EXTRA_WEIGHT * (big - shared)))


def _line_similarity(q: Query, i: int, other: Query, j: int) -> float:
    """Two cause lines compared whole, and their messages without the "Type: " prefixes (when both
    messages say enough on their own)."""
    full = _overlap(q.lines[i], other.lines[j])
    qm, om = q.messages[i], other.messages[j]
    if sum(qm.values()) < MIN_CONTAINED_MASS or sum(om.values()) < MIN_CONTAINED_MASS:
        return full
    return max(full, _overlap(qm, om))


def _soft_line_dice(q: Query, other: Query, pair: list[list[float]]) -> tuple[float, int, int]:
    """Every cause line matched to its best counterpart on the other side, weighted by what the line says:
    an extra line on one side (a hint, a second error) costs in proportion to its weight, not a whole
    bag's worth. Returns the score and the best-matching pair of line indexes."""
    qm, om = q.line_mass, other.line_mass
    total = sum(qm) + sum(om)
    if not total:
        return 0.0, -1, -1
    got = sum(m * max(row) for m, row in zip(qm, pair, strict=True))
    got += sum(m * max(row[j] for row in pair) for j, m in enumerate(om))
    best = max((v, i, j) for i, row in enumerate(pair) for j, v in enumerate(row))
    return got / total, best[1], best[2]


def _coverage(q: Query, other: Query, pair: list[list[float]]) -> float:
    """How fully the side that says less is found in the other (a partial paste, or one with extra lines
    of its own), once that side says enough."""
    q_small = q.mass <= other.mass
    small = q if q_small else other
    if small.mass < MIN_CONTAINED_MASS:
        return 0.0
    if q_small:
        best = [max(row) for row in pair]
    else:
        best = [max(row[j] for row in pair) for j in range(len(other.lines))]
    return sum(m * v for m, v in zip(small.line_mass, best, strict=True)) / sum(small.line_mass)


def _content(a: dict[str, float]) -> set[str]:
    return {t for t, w in a.items() if w >= 1.0 and not t.startswith("<")}


def _short_and_different(a: dict[str, float], b: dict[str, float]) -> bool:
    """Short lines alike but for one word swapped ('no such table: orders' / '... users'); a rewording
    (several words differ) is left to the overlap."""
    ca, cb = _content(a), _content(b)
    return min(len(ca), len(cb)) <= SHORT_LINE and len(ca - cb) == 1 and len(cb - ca) == 1


def calibrate(raw: float) -> float:
    """Raw overlap -> similarity: RAW_SAME_CAUSE maps to SAME_CAUSE, both ends stay put (monotonic)."""
    if raw >= RAW_SAME_CAUSE:
        return SAME_CAUSE + (1.0 - SAME_CAUSE) * (raw - RAW_SAME_CAUSE) / (1.0 - RAW_SAME_CAUSE)
    return SAME_CAUSE * raw / RAW_SAME_CAUSE


def lexical_similarity(q: Query, other: Query) -> float:
    """Soft line-level Dice of the cause lines (at least the whole-bag Dice), capped when the subjects
    differ (see the constants). A text without any error line matches nothing."""
    return _lexical(q, other)[0]


def _lexical(q: Query, other: Query) -> tuple[float, int, int]:
    if q.noise or other.noise or not q.lines or not other.lines:
        return 0.0, -1, -1
    shared = sum(min(w, other.weights[t]) for t, w in q.weights.items() if t in other.weights)
    total = q.mass + other.mass
    bag = 2.0 * shared / total if total else 0.0
    if shared < 1.0:  # nothing of weight in common: no line can match either
        return calibrate(bag), 0, 0
    pair = [[_line_similarity(q, i, other, j) for j in range(len(other.lines))] for i in range(len(q.lines))]
    soft, qi, oi = _soft_line_dice(q, other, pair)
    score = calibrate(max(bag, soft, _coverage(q, other, pair)))
    # what the matched lines are about: another module, key, package or command is another problem
    qt, ot = q.line_subjects[qi], other.line_subjects[oi]
    qs, os_ = set(qt), set(ot)
    if qs and os_ and not (qs <= os_ or os_ <= qs):
        score = min(score, DISJOINT_SUBJECT_CAP if not qs & os_ else DIFFERENT_SUBJECT_CAP)
    elif qs == os_ and qt != ot:  # the same names in another order: operands swapped
        score = min(score, DIFFERENT_SUBJECT_CAP)
    elif bool(qs) != bool(os_) and any(_NAME_LIKE.match(x) for x in qs | os_):
        score = min(score, DIFFERENT_SUBJECT_CAP)  # one names a package or file, the other names none
    elif _short_and_different(q.lines[qi], other.lines[oi]):
        score = min(score, DIFFERENT_SUBJECT_CAP)
    if q.generic and other.generic and q.frame and other.frame and q.frame != other.frame:
        score *= GENERIC_OTHER_FRAME_FACTOR
    return score, qi, oi


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
        best: tuple[float, bool, SignatureRow | None, int, int] = (0.0, False, None, -1, -1)
        for row in cand.signatures:
            other = Query.from_normalized(row.normalized)
            if row.fingerprint == q.fingerprint and not q.noise:
                best = (1.0, True, row, 0, 0)
                break
            lex, qi, oi = _lexical(q, other)
            if lex > best[0]:
                best = (lex, False, row, qi, oi)
        sim, exact, row, qi, oi = best
        scored = Scored(cand, sim, MatchType.ERROR_SIGNATURE, exact, {"lexical": sim})
        if row is not None and sim > 0:
            scored.why = _reason(q, Query.from_normalized(row.normalized), qi, oi, exact)
        out.append(scored)
        if dense_weight > 0 and row is not None and not exact and DENSE_BAND[0] <= sim < DENSE_BAND[1]:
            undecided.append((scored, row))
    if undecided and dense is not None:
        cosines = dense.cosine(store, q, [row for _, row in undecided])
        for (scored, _), cos in zip(undecided, cosines, strict=True):
            scored.evidence["dense"] = cos
            scored.similarity = (1 - dense_weight) * scored.similarity + dense_weight * cos
    return out


_KIND = re.compile(
    r"^(?:npm error )?(?:(?P<code>[A-Z]{1,4}\d{3,5}|E\d{4}|[A-Z][A-Z_]{3,}\b)|(?P<type>[A-Z]\w*(?:Error|Exception)"
    r"|[a-z]+(?:\[[A-Z]?\d+\])?(?=:)))"
)
_CODE_ANYWHERE = re.compile(r"\b(?:TS|E|C)\d{4}\b|\b[A-Z][A-Z_]{5,}\b")


def _reason(q: Query, other: Query, qi: int, oi: int, exact: bool) -> Reason:
    """The components of the two errors that agree: kind (exception type or tool code), the matched line as
    a template, the shared subjects, the shared innermost frame."""
    q_line = [c for c in q.causes][qi] if 0 <= qi < len(q.causes) else (q.causes[0] if q.causes else "")
    o_line = [c for c in other.causes][oi] if 0 <= oi < len(other.causes) else ""
    template = o_line if exact or not q_line else q_line
    kind = ""
    m = _KIND.match(template)
    if m:
        kind = m.group("code") or m.group("type") or ""
    if not kind:
        code = _CODE_ANYWHERE.search(template)
        kind = code.group(0) if code else ""
    shared = [s for s in q.subjects if s in set(other.subjects)][:8]
    frame = q.frame if q.frame and q.frame == other.frame else ""
    return Reason(
        kind=kind[:200],
        template=template[:400],
        subjects=[s[:200] for s in shared],
        frame=(frame or "")[:200],
        exact=exact,
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
        if q is not None:
            error_cands = _dedupe(
                store.candidates_by_fingerprint([q.fingerprint], FINGERPRINT_CANDIDATES)
                + store.candidates_by_terms(q.terms(), LEXICAL_CANDIDATES)
            )
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

    merged: dict[str, Match] = {}
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


def _to_match(s: Scored, repo: str, now: datetime) -> Match:
    learning = s.candidate.learning
    fresh, age = freshness(learning.created_at, now)
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
    )


def _dedupe(cands: list[Candidate]) -> list[Candidate]:
    seen: dict[str, Candidate] = {}
    for c in cands:
        seen.setdefault(str(c.learning.id), c)
    return list(seen.values())
