"""The code a task prompt is about, for the start of a task (UserPromptSubmit).

1. `reads_as_task`: a prompt that is a task, not "yes", "continue", "thanks", a slash command (checked
   before anything is imported or opened).
2. `locate`: the repository's architecture index (built by `recall index` or an earlier `/recall`; never
   built here, a prompt must not wait for a parse) answers the prompt with the concept search
   (`architecture.concepts`: BM25 over paths, definitions, docs, identifiers, plus the best symbol match),
   and identifiers the prompt names (`place_order`, `orders.py`) are looked up in the symbol index.
3. `confidence`: a logistic model over a few features of the ranking (`FEATURES`), weights as data in
   `task_weights.json`, fitted by `bench/fit_push.py` on SWE-bench tasks (SWE-ContextBench's Python Lite /
   Verified case files: issue text, base commit, gold patch's files). Below its threshold nothing is said:
   a wrong code area costs the agent more than none.

Standard library only; the index is opened read-only.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from recall_agent.push.prompt import reads_as_task  # noqa: F401  (the API: task.reads_as_task)

WEIGHTS_FILE = Path(__file__).with_name("task_weights.json")
FEATURES = (
    "log_top",  # log(1 + the top file's score)
    "lead",  # log(top score / second score)
    "matched",  # share of the prompt's content words the top file carries
    "named",  # the prompt names a symbol or file of the top file (an identifier, a path)
    "log_terms",  # log(1 + the prompt's content words)
)
MAX_FILES = 3
MAX_TOKENS = 300
HEADER = "recall: the code this task is likely about (from the code index; check before relying on it):"

# identifiers a prompt names: snake_case, CamelCase, dotted.names, file.ext
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass
class Area:
    files: list[tuple[str, list[str]]] = field(default_factory=list)  # (path, symbols), best first
    confidence: float = 0.0
    features: list[float] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)  # tests importing the top file (the index's import edges)


@cache
def weights() -> dict:
    return json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))


LEAD_CAP = math.log(3.0)  # "three times the next file's score" already says all a lead can say


def bounded(row: list[float]) -> dict[str, float]:
    """The features by name, the lead capped: a ranking with one file has no second score, and an unbounded
    ratio would then decide alone."""
    values = dict(zip(FEATURES, row, strict=True))
    values["lead"] = min(values["lead"], LEAD_CAP)
    return values


def probability(row: list[float], model: dict | None = None) -> float:
    """P(one of the named files is in the change) for a ranking's FEATURES row; the model uses the features
    its weights file lists (a subset of FEATURES, by name)."""
    model = model or weights()
    values = bounded(row)
    z = model["bias"] + sum(w * values[f] for w, f in zip(model["weights"], model["features"], strict=True))
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _code_like(tok: str) -> bool:
    inner_caps = any(c.isupper() for c in tok[1:])
    return "_" in tok or "." in tok or (inner_caps and any(c.islower() for c in tok))


def named(prompt: str) -> list[str]:
    """Identifiers the prompt names as code: with an underscore, a dot or inner capitals."""
    out: list[str] = []
    for raw in _IDENT.findall(prompt[:4000]):
        tok = raw.strip(".")
        if tok and _code_like(tok) and tok not in out:
            out.append(tok)
    return out[:20]


def open_index(root: Path) -> sqlite3.Connection | None:
    """The repository's architecture index, read-only; None when it was never built."""
    from recall_agent.architecture import graph

    path = graph.store_path(root)
    if not path.exists():
        return None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.5)
    conn.row_factory = sqlite3.Row
    return conn


def rank(
    conn: sqlite3.Connection, prompt: str, limit: int = 10
) -> tuple[list[tuple[str, list[str], float]], list[float]]:
    """Files for the prompt, best first ((path, symbols, score)), and the feature row of the ranking."""
    from recall_agent.architecture import concepts

    hits = concepts.search(conn, prompt, limit=limit)
    wanted = concepts.terms(prompt)
    scored: dict[str, tuple[list[str], float]] = {h.path: (list(h.symbols), h.score) for h in hits}
    matched_share = (len(hits[0].matched) / len(wanted)) if hits and wanted else 0.0
    names = named(prompt)
    hit_named: dict[str, list[str]] = {}
    for name in names:
        leaf = name.rsplit(".", 1)[-1]
        if "." in name and leaf in ("py", "js", "ts", "go", "rb", "rs", "java"):
            base = name
            for (path,) in conn.execute(
                "SELECT path FROM files WHERE path = ? OR path LIKE ? LIMIT 5", (base, "%/" + base)
            ):
                hit_named.setdefault(path, [])
            continue
        for row in conn.execute(
            "SELECT f.path, s.qualname FROM symbols s JOIN files f ON f.id = s.file_id"
            " WHERE s.name = ? OR s.qualname = ? ORDER BY f.is_test, length(f.path) LIMIT 5",
            (leaf, name),
        ):
            hit_named.setdefault(row[0], []).append(row[1])
    top_score = hits[0].score if hits else 0.0
    for path, syms in hit_named.items():  # a named definition leads: the prompt said where
        old_syms, old_score = scored.get(path, ([], 0.0))
        scored[path] = (list(dict.fromkeys(syms + old_syms)), max(old_score, top_score) * 1.5 + 1.0)
    ranked = sorted(((p, s, sc) for p, (s, sc) in scored.items()), key=lambda r: (-r[2], r[0]))
    second = ranked[1][2] if len(ranked) > 1 else 0.0
    top = ranked[0][2] if ranked else 0.0
    row = [
        math.log1p(max(0.0, top)),
        math.log((top + 1e-3) / (second + 1e-3)) if ranked else 0.0,
        1.0 if ranked and ranked[0][0] in hit_named else matched_share,
        1.0 if ranked and ranked[0][0] in hit_named else 0.0,
        math.log1p(len(wanted)),
    ]
    return ranked, row


def locate(prompt: str, root: Path) -> Area:
    """The code area of a task prompt in the checkout `root` (empty when there is no index)."""
    conn = open_index(root)
    if conn is None:
        return Area()
    try:
        ranked, row = rank(conn, prompt)
        tests = tests_of(conn, ranked[0][0]) if ranked else []
    except sqlite3.Error:
        return Area()
    finally:
        conn.close()
    if not ranked:
        return Area()
    return Area([(p, s[:3]) for p, s, _ in ranked[:MAX_FILES]], probability(row), row, tests)


def tests_of(conn: sqlite3.Connection, path: str, limit: int = 3) -> list[str]:
    """Test files that import `path` directly (the architecture index's import edges)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT t.path FROM files f JOIN edges e ON e.dst = f.id JOIN files t ON t.id = e.src"
            " WHERE f.path = ? AND t.is_test = 1 AND t.id != f.id GROUP BY t.path ORDER BY t.path LIMIT ?",
            (path, limit),
        )
    ]


def threshold() -> float:
    return float(weights()["threshold"])


def block(area: Area, prompt: str) -> str:
    """The framed lines for an area above the threshold, else "". Paths and names come from the checkout's
    own index, rendered inert all the same."""
    from recall_agent.safety import render

    if not area.files or area.confidence < threshold():
        return ""
    lines = []
    for path, syms in area.files:
        names = ", ".join(f"`{render.inline(s, 80)}`" for s in syms)
        lines.append(f"- `{render.inline(path, 200)}`" + (f": {names}" if names else ""))
    if area.tests:
        lines.append("- tests to run: " + ", ".join(f"`{render.inline(t, 200)}`" for t in area.tests))
    body = "\n".join([HEADER, *lines, f"(confidence {area.confidence:.2f})"])
    text = render.frame(body)
    while len(text) // 4 > MAX_TOKENS and len(lines) > 1:
        lines.pop()
        text = render.frame("\n".join([HEADER, *lines]))
    return text
