"""The code a task prompt is about, for the start of a task (UserPromptSubmit).

1. `reads_as_task`: a prompt that is a task, not "yes", "continue", "thanks", a slash command (checked
   before anything is imported or opened).
2. `candidates`: the repository's architecture index (built by `recall index` or an earlier `/recall`; never
   built here, a prompt must not wait for a parse) proposes files from several cues of the prompt
   (`cues`): the concept search (`architecture.concepts`: BM25 over paths, definitions, docs, identifiers)
   on a short query made of the prompt's title, identifiers and most repeated words, the concept search on
   the title alone, the files and traceback frames it names, the dotted modules it names, and the
   definitions of the identifiers it names (the symbol index, weighted by how few files define the name).
3. `rank`: a logistic model over each candidate's `CANDIDATE_FEATURES` orders them (P(the file is in the
   change)); weights as data in `task_weights.json` (`rank`), fitted by `bench/fit_push.py` on SWE-bench
   tasks of the fit projects (SWE-ContextBench's Python Lite / Verified case files: issue text, base commit,
   gold patch's files).
4. `confidence`: a second logistic over the ranking (`FEATURES`: the top file's and the runner-up's
   probabilities) says whether one of the named files is in the change; below its threshold nothing is
   said: a wrong code area costs the agent more than none.

Standard library only; the index is opened read-only.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from recall_agent.push.prompt import reads_as_task  # noqa: F401  (the API: task.reads_as_task)

WEIGHTS_FILE = Path(__file__).with_name("task_weights.json")
CANDIDATE_FEATURES = (
    "concept_rr",  # 1 / rank in the concept search on the prompt's short query (0: not found)
    "concept_rel",  # its score over the top file's
    "title_rr",  # 1 / rank in the concept search on the prompt's title alone (its words carried by half)
    "typed_rr",  # title_rr when the prompt is its title alone (prompt-sized: the title search is the ranking)
    "path",  # the prompt names this file's path (or a traceback frame is in it)
    "last_frame",  # the deepest traceback frame the prompt shows in this repository's files
    "module",  # the prompt names this file's dotted module (or an attribute of it)
    "defines",  # the identifiers the prompt names that this file defines, each weighted 1 / files defining it
    "is_test",  # a test file
)
FEATURES = (
    "top",  # log-odds of the top file's P(in the change)
    "lead",  # log-odds of the top file minus the runner-up's
)
MAX_FILES = 3
MAX_TOKENS = 300
CANDIDATES = 20  # per concept search
HEADER = "recall: the code this task is likely about (from the code index; check before relying on it):"


@dataclass
class Area:
    files: list[tuple[str, list[str]]] = field(default_factory=list)  # (path, symbols), best first
    confidence: float = 0.0
    features: list[float] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)  # tests importing the top file (the index's import edges)


@dataclass
class Candidate:
    path: str
    symbols: list[str]
    x: list[float]  # CANDIDATE_FEATURES, in order
    score: float = 0.0  # the ranking model's log-odds


@cache
def weights() -> dict:
    return json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))


def _logit(model: dict, values: dict[str, float]) -> float:
    return model["bias"] + sum(
        w * values[f] for w, f in zip(model["weights"], model["features"], strict=True)
    )


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def probability(row: list[float], model: dict | None = None) -> float:
    """P(one of the named files is in the change) for a ranking's FEATURES row."""
    model = model or weights()
    return _sigmoid(_logit(model, dict(zip(FEATURES, row, strict=True))))


def open_index(root: Path) -> sqlite3.Connection | None:
    """The repository's architecture index, read-only; None when it was never built."""
    from recall_agent.architecture import graph

    path = graph.store_path(root)
    if not path.exists():
        return None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.5)
    conn.row_factory = sqlite3.Row
    return conn


def candidates(conn: sqlite3.Connection, prompt: str) -> list[Candidate]:
    """Every file a cue of the prompt points at, with its CANDIDATE_FEATURES (module docstring)."""
    from recall_agent.architecture import concepts
    from recall_agent.push import cues

    found: dict[str, Candidate] = {}

    def at(path: str) -> Candidate:
        if path not in found:
            found[path] = Candidate(path, [], [0.0] * len(CANDIDATE_FEATURES))
        return found[path]

    col = {f: i for i, f in enumerate(CANDIDATE_FEATURES)}
    common = _common_cap(conn)
    short = " ".join(_specific(conn, cues.query(prompt, concepts.terms).split(), common))
    hits = concepts.search(conn, short, limit=CANDIDATES, min_share=0.0) if short else []
    for i, h in enumerate(hits):
        c = at(h.path)
        c.x[col["concept_rr"]] = 1.0 / (i + 1)
        c.x[col["concept_rel"]] = h.score / hits[0].score if hits[0].score > 0 else 0.0
        c.symbols = list(h.symbols)
    # the title as typed: every word kept, a file must carry half of them (the concept search's own rule,
    # right for a prompt-sized text)
    typed = cues.title(prompt) == prompt.strip()
    for i, h in enumerate(concepts.search(conn, cues.title(prompt), limit=CANDIDATES)):
        c = at(h.path)
        c.x[col["title_rr"]] = 1.0 / (i + 1)
        c.x[col["typed_rr"]] = c.x[col["title_rr"]] if typed else 0.0
        c.symbols = c.symbols or list(h.symbols)
    _paths(conn, cues.paths(prompt), cues.frames(prompt), at, col)
    _modules(conn, cues.modules(prompt), at, col)
    _defines(conn, cues.identifiers(prompt), at, col)
    if found:
        marks = ",".join("?" * len(found))
        for path, is_test in conn.execute(
            f"SELECT path, is_test FROM files WHERE path IN ({marks})", list(found)
        ):
            found[path].x[col["is_test"]] = float(is_test)
    return list(found.values())


COMMON_SHARE = 0.25  # a word in more than this share of the files says little and costs most of a BM25 query


def _common_cap(conn: sqlite3.Connection) -> int:
    return max(20, int(COMMON_SHARE * conn.execute("SELECT count(*) FROM files").fetchone()[0]))


def _specific(conn: sqlite3.Connection, words: list[str], cap: int) -> list[str]:
    """The words found in fewer than `cap` files (each count stops at `cap`: bounded work per word)."""
    out = []
    for w in words:
        n = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM file_text WHERE file_text MATCH ? LIMIT ?)", (f'"{w}"', cap)
        ).fetchone()[0]
        if 0 < n < cap:
            out.append(w)
    return out


def _suffix_of(conn: sqlite3.Connection, named_path: str) -> list[str]:
    """Index paths the named path ends with (a traceback's site-packages/pkg/mod.py -> pkg/mod.py), or that
    end with it (a named pkg/mod.py)."""
    parts = [p for p in named_path.split("/") if p and p not in (".", "..")]
    for k in range(min(len(parts), 6), 0, -1):
        tail = "/".join(parts[-k:])
        rows = [r[0] for r in conn.execute("SELECT path FROM files WHERE path = ? OR path LIKE ? LIMIT 4",
                                           (tail, "%/" + tail))]  # fmt: skip
        if rows and (k >= 2 or len(rows) == 1):
            return rows
        if rows:
            return []  # a bare file name that several folders have says nothing
    return []


def _paths(conn: sqlite3.Connection, named_paths: list[str], frames: list[str], at, col) -> None:  # noqa: ANN001
    for p in named_paths:
        for path in _suffix_of(conn, p):
            at(path).x[col["path"]] = 1.0
    for p in reversed(frames):  # the deepest frame in this repository's files
        hit = _suffix_of(conn, p)
        if hit:
            at(hit[0]).x[col["last_frame"]] = 1.0
            break


def _modules(conn: sqlite3.Connection, names: list[str], at, col) -> None:  # noqa: ANN001
    for name in names:
        parts = name.split(".")
        for k in range(len(parts), 1, -1):  # the longest prefix that is a module: pkg.mod.Class -> pkg.mod
            rows = [r[0] for r in conn.execute("SELECT path FROM files WHERE module = ? LIMIT 2",
                                               (".".join(parts[:k]),))]  # fmt: skip
            if rows:
                for path in rows:
                    at(path).x[col["module"]] = 1.0
                break


def _defines(conn: sqlite3.Connection, names: list[str], at, col) -> None:  # noqa: ANN001
    for name in names[:40]:
        leaf = name.rsplit(".", 1)[-1]
        rows = conn.execute(
            "SELECT f.path, s.qualname FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ?"
            " LIMIT 21",
            (leaf,),
        ).fetchall()
        files = {r[0] for r in rows}
        if not files or len(rows) > 20:
            continue  # a name defined everywhere (`__init__`, `get`) points nowhere
        for path, qualname in rows:
            c = at(path)
            c.x[col["defines"]] += 1.0 / len(files)
            if qualname not in c.symbols:
                c.symbols.insert(0, qualname)


def rank(
    conn: sqlite3.Connection, prompt: str, limit: int = 10
) -> tuple[list[tuple[str, list[str], float]], list[float]]:
    """Files for the prompt, best first ((path, symbols, log-odds)), and the FEATURES row of the ranking."""
    model = weights()["rank"]
    found = candidates(conn, prompt)
    for c in found:
        c.score = _logit(model, dict(zip(CANDIDATE_FEATURES, c.x, strict=True)))
    found.sort(key=lambda c: (-c.score, c.path))
    ranked = [(c.path, c.symbols[:3], c.score) for c in found[:limit]]
    top = ranked[0][2] if ranked else -30.0
    second = ranked[1][2] if len(ranked) > 1 else -30.0
    return ranked, [top, top - second]


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
