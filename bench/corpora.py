"""The learnings corpora as uniform query sets, for bench_learnings.py and fit_acceptance.py.

A set is {"name", "half", "learnings": [{"key", "text", "resolution"}], "queries": [{"text", "truth"}]}:
the learnings are recorded in a store, each query must find the learning `truth` first (or nothing when
`truth` is None: a near miss or an unrelated error).

  synthetic   bench/corpus/errors.jsonl (tuning: the cascade was tuned on it) and heldout.jsonl (held-out),
              made by really running tools (bench/corpus/generate.py); instance 0 is the learning
  realworld   bench/corpus/realworld/ (issue 14): public threads, split by split.json
  public      bench/corpus/public/ (issue 23): public threads, split by a hash rule (its split.py)
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "corpus"
THREAD_CORPORA = {"realworld": CORPUS / "realworld", "public": CORPUS / "public"}
SYNTHETIC = {"tuning": CORPUS / "errors.jsonl", "heldout": CORPUS / "heldout.jsonl"}
HALVES = ("tuning", "heldout")


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


def all_sets(half: str) -> list[dict]:
    """Every corpus' set of one half (the thread corpora present on disk)."""
    out = [synthetic_set(half)]
    for name, folder in THREAD_CORPORA.items():
        if (folder / "split.json").exists():
            out.append(thread_set(name, half))
    return out
