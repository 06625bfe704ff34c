"""The learnings corpora as uniform query sets, for bench_learnings.py and fit_acceptance.py.

A set is {"name", "half", "learnings": [{"key", "text", "resolution"}], "queries": [{"text", "truth"}]}:
the learnings are recorded in a store, each query must find the learning `truth` first (or nothing when
`truth` is None: a near miss or an unrelated error).

  synthetic   bench/corpus/errors.jsonl (tuning: the cascade was tuned on it) and heldout.jsonl (held-out),
              made by really running tools (bench/corpus/generate.py); instance 0 is the learning
  realworld   bench/corpus/realworld/ (issue 14): public threads, split by split.json
  public      bench/corpus/public/ (issue 23): public threads, split by a hash rule (its split.py)
  project:X   the hand-labelled project corpus (bench/sessions/labels/, issue 34), one set per project in
              its half of bench/sessions/split.json `projects`: a cause labelled in two or more sessions
              is a learning (its first session's failing output) and a query per later session (the same
              cause on other code); a cause met in one session only is a query with no learning (another
              cause of the same project: a look-alike). Needs the transcripts (bench/sessions/fetch.py).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "corpus"
THREAD_CORPORA = {"realworld": CORPUS / "realworld", "public": CORPUS / "public"}
SYNTHETIC = {"tuning": CORPUS / "errors.jsonl", "heldout": CORPUS / "heldout.jsonl"}
HALVES = ("tuning", "heldout")
SESSIONS = ROOT / "bench" / "sessions"
PROJECT_HALF = {"tune": "tuning", "heldout": "heldout"}  # the session split's names for the halves


def _module(path: Path):  # noqa: ANN202 - a corpus' own split.py
    spec = importlib.util.spec_from_file_location(f"split_{path.parent.name}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def thread_halves(name: str) -> dict[str, tuple[list[dict], list[dict]]]:
    """half -> (causes, near misses) of a thread corpus, as its split.json assigns them (a stale split.json
    is refused: split before tuning, and the split is data)."""
    folder = THREAD_CORPORA[name]
    split_mod = _module(folder / "split.py")
    causes, near = split_mod.load()
    split = json.loads((folder / "split.json").read_text())
    if split != split_mod.compute():
        raise SystemExit(f"{folder}/split.json is stale: run {folder}/split.py")
    by_id = {c["id"]: c for c in causes} | {n["id"]: n for n in near}
    return {
        h: ([by_id[i] for i in d["causes"]], [by_id[i] for i in d["near_misses"]]) for h, d in split.items()
    }


def thread_set(name: str, half: str) -> dict:
    causes, near = thread_halves(name)[half]
    learnings = [
        {"key": f"{name}:{c['id']}", "text": c["reports"][0]["text"], "resolution": c["resolution"]}
        for c in causes
    ]
    queries = [
        {"text": r["text"], "truth": f"{name}:{c['id']}", "source": r.get("source", "")}
        for c in causes
        for r in c["reports"][1:]
    ]
    queries += [{"text": n["text"], "truth": None, "source": n.get("source", "")} for n in near]
    return {"name": name, "half": half, "learnings": learnings, "queries": queries}


def synthetic_set(half: str) -> dict:
    rows = [json.loads(line) for line in SYNTHETIC[half].read_text().splitlines() if line.strip()]
    tag = "synthetic" if half == "tuning" else "synthetic-heldout"
    learnings = [
        {"key": f"{tag}:{r['cause']}", "text": r["text"], "resolution": r["resolution"]}
        for r in rows
        if r["kind"] == "cause" and r["instance"] == 0
    ]
    queries = [
        {"text": r["text"], "truth": f"{tag}:{r['cause']}" if r["kind"] == "cause" else None}
        for r in rows
        if not (r["kind"] == "cause" and r["instance"] == 0)
    ]
    return {"name": "synthetic", "half": half, "learnings": learnings, "queries": queries}


def _labels():  # noqa: ANN202 - bench/sessions/labels.py, a script folder's module
    if str(SESSIONS) not in sys.path:
        sys.path.insert(0, str(SESSIONS))
    import labels

    return labels


def project_failures(labels: list, L) -> list[tuple[str, str, str]]:  # noqa: ANN001, N803
    """(cause, session, output) of a project's labelled failures in time order, one per cause and session:
    not transient, not a scratch slip (what labels.recurrences() counts), with the failing call's output."""
    out: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for label in sorted(labels, key=lambda lb: lb.started):
        results = None
        for e in [*label.episodes, *label.unfixed]:
            cause = L.cause(e)
            if not cause or L.transient(e) is True or e.get("kind") == "scratch":
                continue
            if (cause, label.session) in seen:
                continue
            results = L.call_results(label) if results is None else results
            text = results.get(L.suffix(str(e.get("failed"))), ("", None))[0]
            if text.strip():
                seen.add((cause, label.session))
                out.append((cause, label.session, text))
    return out


def project_sets(half: str) -> list[dict]:
    """One set per labelled project of `half` (module docstring), in time order."""
    L = _labels()  # noqa: N806
    by_project: dict[str, list] = {}
    for label in L.load_projects((next(k for k, v in PROJECT_HALF.items() if v == half),)):
        by_project.setdefault(label.project, []).append(label)
    out = []
    for project, labels in sorted(by_project.items()):
        failures = project_failures(labels, L)
        sessions: dict[str, set[str]] = {}
        for cause, session, _ in failures:
            sessions.setdefault(cause, set()).add(session)
        learnings: list[dict] = []
        queries: list[dict] = []
        for cause, session, text in failures:
            key = f"project:{project}:{cause}"
            if len(sessions[cause]) < 2:
                queries.append({"text": text, "truth": None, "source": f"{project}/{session}"})
            elif not any(lr["key"] == key for lr in learnings):
                learnings.append({"key": key, "text": text, "resolution": cause})
            else:
                queries.append({"text": text, "truth": key, "source": f"{project}/{session}"})
        if learnings:
            out.append(
                {"name": f"project:{project}", "half": half, "learnings": learnings, "queries": queries}
            )
    return out


def all_sets(half: str, projects: bool = True) -> list[dict]:
    """Every corpus' set of one half (the thread corpora present on disk; the labelled projects whose
    transcripts are in the cache)."""
    out = [synthetic_set(half)]
    for name, folder in THREAD_CORPORA.items():
        if (folder / "split.json").exists():
            out.append(thread_set(name, half))
    return out + (project_sets(half) if projects else [])
