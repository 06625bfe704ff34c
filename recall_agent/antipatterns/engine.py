"""The antipattern engine: static detections first, then catalog entries the question is about.

`query(text, repo_path)`:
1. loads the merged catalog (shipped + user + repository; invalid entries are skipped and reported),
2. scans the files the question names and the working tree's changes with every detector,
3. scores the rest of the question (file paths removed) against the catalog: Qdrant cosine similarity
   of the offline embeddings blended with a BM25 lexical score,
4. returns FederationResults (role `qdrant`, engine `recall-antipatterns`) carrying the origin's
   AntipatternMatch fields as extras. Detections rank above purely semantic matches; a detection of an
   entry the question is also about comes first of all.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from recall_agent.antipatterns.catalog import Antipattern, Catalog, load_catalog
from recall_agent.antipatterns.lexical import LexicalIndex, tokenize
from recall_agent.antipatterns.scan import Detection, ScanReport, git_toplevel, scan, scan_snippet
from recall_agent.antipatterns.snippet import code_in
from recall_agent.models import AntipatternMatch, BackendRole, FederationResult, content_hash

ENGINE = "recall-antipatterns"
SEMANTIC_WEIGHT = 0.5  # the benchmark's baselines: blended = w * cosine + (1 - w) * lexical
# the engine's score: sigmoid(a * cosine + b * lexical + c), fitted on labelled questions by
# bench/fit_antipattern_match.py (weights in match_weights.json); an entry is about the question when the
# fitted probability reaches MIN_SCORE
WEIGHTS_FILE = Path(__file__).with_name("match_weights.json")
MIN_SCORE = 0.5
MAX_LIMIT = 50  # catalog matches
MAX_DETECTIONS = 500  # detections are not cut by `limit`: every finding reaches the answer up to this


@dataclass
class SemanticMatch:
    entry: Antipattern
    similarity: float  # cosine, 0..1
    lexical: float
    blended: float


def query(text: str, repo_path: str | None, *, limit: int = 5) -> list[FederationResult]:
    """Antipatterns for a question; see the module docstring. Never raises for a bad catalog file."""
    limit = max(1, min(int(limit), MAX_LIMIT))
    repo = _repo(repo_path)
    catalog = load_catalog(repo)
    report = scan(catalog, text, repo)
    question = _strip_paths(text, report.query_paths)
    snippet = code_in(text)  # the question as typed: code keeps its line breaks
    semantic, index = match_text(catalog, question)
    if snippet is not None:
        report.detections[:0] = scan_snippet(catalog, snippet, report.notes)
        semantic = [m for m in semantic if in_language(m.entry, snippet.kinds)]
    return build_results(catalog, report, semantic, index, limit)


_FAMILIES = {"javascript": "typescript", "typescript": "javascript"}


def in_language(entry: Antipattern, kinds: tuple[str, ...]) -> bool:
    """An entry about the language the question's code is written in (or about no language in particular):
    a float compared with `==` in Python is not JavaScript's loose equality."""
    wanted = {"general", *kinds, *(_FAMILIES[k] for k in kinds if k in _FAMILIES)}
    return bool(wanted & set(entry.languages))


def _repo(repo_path: str | None) -> Path | None:
    if repo_path:
        path = Path(repo_path)
        try:
            return (git_toplevel(path) or path).resolve() if path.is_dir() else None
        except (OSError, RuntimeError):  # a symlink loop
            return None
    return git_toplevel(Path.cwd())


def _strip_paths(text: str, paths: list[str]) -> str:
    for p in paths:
        text = text.replace(p, " ")
    return re.sub(r"\s+", " ", text).strip()


def match_text(catalog: Catalog, text: str) -> tuple[list[SemanticMatch], str]:
    """Catalog entries the text is about, best first, above MIN_SCORE; and which index answered."""
    ranked, index = rank_entries(catalog, text)
    return [m for m in ranked if m.blended >= MIN_SCORE], index


_lexical_indexes: dict[str, LexicalIndex] = {}


def _lexical_index(catalog: Catalog) -> LexicalIndex:
    """BM25 statistics of the catalog, built once per catalog version in a process."""
    index = _lexical_indexes.get(catalog.digest)
    if index is None:
        index = LexicalIndex([catalog.entries[i].lexical_text() for i in sorted(catalog.entries)])
        if len(_lexical_indexes) >= 16:  # a server answering for many repositories: forget the oldest
            _lexical_indexes.pop(next(iter(_lexical_indexes)))
        _lexical_indexes[catalog.digest] = index
    return index


def rank_entries(catalog: Catalog, text: str, mode: str = "blended") -> tuple[list[SemanticMatch], str]:
    """Every entry scored against the text, best first. `mode`: blended (the engine), lexical or semantic
    (the benchmark's baselines)."""
    if not catalog.entries or not tokenize(text):
        return [], "none"
    ids = sorted(catalog.entries)
    lexical = dict(zip(ids, _lexical_index(catalog).scores(text), strict=True))
    cosine: dict[str, float] = {}
    index = "lexical-only"
    if mode != "lexical":
        from recall_agent.antipatterns.semantic import score

        sem = score(catalog, text)
        cosine, index = sem.scores, sem.index
    matches = []
    weights = match_weights()
    for i in ids:
        sim = cosine.get(i, 0.0)
        blended = {
            "blended": _fitted(weights, sim, lexical[i]),
            "lexical": lexical[i],
            "semantic": sim,
        }[mode]
        matches.append(SemanticMatch(catalog.entries[i], sim, lexical[i], blended))
    matches.sort(key=lambda m: (-m.blended, m.entry.id))
    return matches, index


_weights: dict[str, float] = {}


def match_weights() -> dict[str, float]:
    """The fitted weights (read once); a missing or broken file falls back to the fit as published."""
    if not _weights:
        try:
            loaded = json.loads(WEIGHTS_FILE.read_text())
            _weights.update({k: float(loaded[k]) for k in ("cosine", "lexical", "bias")})
        except (OSError, ValueError, KeyError, TypeError):
            _weights.update({"cosine": 6.1938, "lexical": 4.8088, "bias": -3.3276})
    return _weights


def _fitted(w: dict[str, float], cosine: float, lexical: float) -> float:
    z = w["cosine"] * cosine + w["lexical"] * lexical + w["bias"]
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))


def build_results(
    catalog: Catalog, report: ScanReport, semantic: list[SemanticMatch], index: str, limit: int
) -> list[FederationResult]:
    """Every detection (worst first), then catalog matches up to `limit` results in all — the best match for
    the question keeps a place however many detections there are."""
    about = {m.entry.id: m for m in semantic}
    detections = sorted(
        report.detections,
        key=lambda d: (
            not d.from_question,  # the code the question is about comes first of all
            not d.named,
            d.entry.id not in about,
            not d.in_change,  # what the working tree just changed before what was already there
            d.in_test,  # findings in tests (fixtures full of fake secrets) come after real code
            d.severity_rank,
            d.path,
            d.hits[0].line,
        ),
    )
    if len(detections) > MAX_DETECTIONS:
        report.notes.append(f"showing the first {MAX_DETECTIONS} of {len(detections)} detections")
        detections = detections[:MAX_DETECTIONS]
    detected_ids = {d.entry.id for d in detections}
    rest = [m for m in semantic if m.entry.id not in detected_ids]
    chosen: list[Detection | SemanticMatch] = [*detections, *rest[: max(1, limit - len(detections))]]
    results = []
    total = len(detections)
    for rank, item in enumerate(chosen):
        if isinstance(item, Detection):
            results.append(_detection_result(catalog, item, about.get(item.entry.id), rank, index, total))
        else:
            results.append(_semantic_result(catalog, item, rank, index))
    if report.notes or catalog.errors:
        results.append(_note_result(catalog, report, len(results)))
    return results


def _extras(
    catalog: Catalog, entry: Antipattern, similarity: float, adjusted: float, explanation: str
) -> dict:
    match = AntipatternMatch(
        antipattern_name=entry.name,
        similarity_score=round(similarity, 4),
        adjusted_score=round(adjusted, 4),
        severity=entry.severity,
        enforcement=entry.enforcement,
        category=entry.category,
        description=entry.description,
        rationale=entry.rationale,
        explanation=explanation,
        source_ticket=entry.source_ticket,
        registry_version=catalog.version,
    )
    return {
        **match.model_dump(),
        "antipattern_id": entry.id,
        "languages": list(entry.languages),
        "remedy": entry.remedy,
        "catalog_origin": entry.origin,
    }


def _result(content: str, rank: int, extras: dict) -> FederationResult:
    return FederationResult(
        content=content,
        source=BackendRole.QDRANT,
        rank=rank,
        content_hash=content_hash(content),
        engine=ENGINE,
        **extras,
    )


def _detection_result(
    catalog: Catalog, d: Detection, also: SemanticMatch | None, rank: int, index: str, total: int
) -> FederationResult:
    first = d.hits[0]
    more = [str(n) for n in sorted(h.line for h in d.hits[1:])]
    span = f"{first.line}-{first.end_line}" if first.end_line > first.line else str(first.line)
    where = f"{d.path}:{span}" + (
        f" (also line{'s' if len(more) > 1 else ''} {', '.join(more[:30])}{', …' if len(more) > 30 else ''})"
        if more
        else ""
    )
    if d.from_question:
        where = f"{d.path} (line {span})"
    cwes = sorted({h.cwe for h in d.hits if h.cwe})
    grade = ", ".join([d.severity, *(f"CWE-{c}" for c in cwes)]) + (", test file" if d.in_test else "")
    detail = f" ({first.detail})" if first.detail else ""
    content = f"Detected pattern: {d.entry.name} [{grade}] in {where} — `{first.snippet}`{detail}."
    if d.entry.remedy:
        content += f" Fix: {d.entry.remedy}"
    explanation = f"{d.entry.id} detector matched {d.path}:{first.line}" + (
        f"; the question is also about it (score {also.blended:.2f})" if also else ""
    )
    extras = _extras(catalog, d.entry, 1.0, 1.0, explanation)
    extras |= {
        "match_kind": "detection",
        "severity": d.severity,
        "file": d.path,
        "line": first.line,
        "line_range": [first.line, max(first.line, first.end_line)],
        "lines": [h.line for h in d.hits],
        "in_change": d.in_change,
        "in_test": d.in_test,
        "from_question": d.from_question,
        "checks": sorted({h.check for h in d.hits if h.check}),
        "cwe": [f"CWE-{c}" for c in cwes],
        "snippet": first.snippet,
        "detections_total": total,
        "index": index,
    }
    return _result(content, rank, extras)


def _semantic_result(catalog: Catalog, m: SemanticMatch, rank: int, index: str) -> FederationResult:
    e = m.entry
    content = f"Antipattern: {e.name} ({e.severity}, {e.category}) — {e.description}"
    if e.remedy:
        content += f" Fix: {e.remedy}"
    explanation = (
        f"matches the question: semantic {m.similarity:.2f}, lexical {m.lexical:.2f}, blended {m.blended:.2f}"
    )
    extras = _extras(catalog, e, m.similarity, m.blended, explanation)
    extras |= {"match_kind": "semantic", "lexical_score": round(m.lexical, 4), "index": index}
    return _result(content, rank, extras)


def _note_result(catalog: Catalog, report: ScanReport, rank: int) -> FederationResult:
    """What was skipped (files, catalog errors). It carries the AntipatternMatch fields too, with zero
    scores, so every qdrant result has the same shape; `match_kind: note` tells it apart."""
    parts = [*report.notes, *(f"catalog error: {e}" for e in catalog.errors)]
    shown = parts[:6] + ([f"… and {len(parts) - 6} more"] if len(parts) > 6 else [])
    content = "Note (antipatterns): " + "; ".join(shown)
    match = AntipatternMatch(
        antipattern_name="scan note",
        similarity_score=0.0,
        adjusted_score=0.0,
        severity="low",
        enforcement="advisory",
        category="notice",
        description="Files or catalog entries the antipattern engine could not use for this answer.",
        rationale="Skipped input is named so that a missing finding is not mistaken for a clean bill.",
        explanation="; ".join(parts),
        registry_version=catalog.version,
    )
    extras = {
        **match.model_dump(),
        "match_kind": "note",
        "notes": report.notes,
        "catalog_errors": catalog.errors,
    }
    return _result(content, rank, extras)
