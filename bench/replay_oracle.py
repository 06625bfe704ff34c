"""A small replay of labelled real sessions, asking the way the on-error hook asks (issue 34, part A).

It isolates finding from capturing: every labelled fix is stored as a learning (the failing call's real
output as its error, the labeller's `what` as its resolution: the capture is assumed perfect), so the
figure says how often a recurring error finds its earlier fix, not whether the capture stored it (the full
replay, helper 34B, measures both). Per project, sessions in time order (the labels' first timestamp); for
each labelled failure (not transient, not a scratch slip) the hook's request is made before the session's
own fixes are stored: `retrieve.request_for(text, repo)` with the session folder's repository (as the
importer names it) → `execute_sync` → `retrieve.select` (≤ 2 shown, 0.85). Then:

- a **recurrence** (its `cause` was fixed in an earlier session of the project): shown when a shown learning
  carries that cause;
- a **new** error (its cause was never fixed before): a false match when anything is shown.

No checkout exists for these sessions, so the self-check is not run (`unchecked`).

    PYTHONPATH=<checkout> python bench/replay_oracle.py --labels <dir holding labels.py> [--out FILE]

Run it once with this checkout and once with the release's on PYTHONPATH for the side by side; it imports
recall only from PYTHONPATH. The labels are issue 33's (`bench/sessions/labels.py`, `recurrences()`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any


def load_labels(folder: Path) -> Any:
    spec = importlib.util.spec_from_file_location("labels", folder / "labels.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["labels"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def outputs(path: Path) -> tuple[dict[str, str], Any]:
    """8-character call id suffix -> the failed call's output; and the transcript's stats."""
    from recall_agent.capture.transcript import Result, Transcript

    reader = Transcript(path)
    found = {}
    for step in reader.steps():
        if isinstance(step, Result) and step.text:
            found[step.call.id[-8:]] = step.text
    return found, reader.stats


def repo_of(sid: str, stats: Any, transcript: Path) -> str:
    from recall_agent.hooks import importer

    try:
        ctx = importer._context(sid, stats.cwd, stats.branch, "claude-code", transcript)
    except TypeError:  # the release's importer: (session, cwd, branch)
        ctx = importer._context(sid, stats.cwd, stats.branch)
    return ctx.repo


def unify(repos: list[str], cwds: list[str | None]) -> list[str]:
    """The sessions of one gone folder under one name, as `recall import-sessions` files them in the end (the
    identity its other sessions showed: reidentify.py's agreement rule); the release had no such rule."""
    try:
        from recall_agent.learnings import reidentify
    except ImportError:
        return repos
    from recall_agent import repo as repo_rule

    agreed: dict[str, set[str]] = defaultdict(set)
    for name, cwd in zip(repos, cwds, strict=True):
        if cwd and reidentify.is_identity(name):
            agreed[repo_rule.name(Path(cwd), None)].add(name)
    out = []
    for name, cwd in zip(repos, cwds, strict=True):
        found = agreed.get(name, set())
        out.append(
            next(iter(found)) if cwd and not reidentify.is_identity(name) and len(found) == 1 else name
        )
    return out


def replay(labels: list[Any], L: Any) -> dict[str, Any]:
    from recall_agent.hooks import retrieve
    from recall_agent.learnings import RetrievalRequest, execute_sync
    from recall_agent.learnings.extract import decisive
    from recall_agent.learnings.store import open_store
    from recall_agent.models import Learning
    from recall_agent.redact import redact

    cause_of: dict[str, str] = {}
    fixed_in: dict[str, set[str]] = defaultdict(set)  # cause -> sessions that stored its fix
    out = {
        "recurrences": 0,
        "shown": 0,
        "new": 0,
        "false": 0,
        "repos": set(),
        "misses": [],
        "false_matches": [],
    }
    ordered = sorted(labels, key=lambda lb: lb.started)
    read = [outputs(label.path) for label in ordered]
    repos = unify([repo_of(lb.session, stats, lb.path) for lb, (_, stats) in zip(ordered, read, strict=True)],
                  [stats.cwd for _, stats in read])  # fmt: skip
    for label, (texts, _stats), repo in zip(ordered, read, repos, strict=True):
        out["repos"].add(repo)
        entries = [*label.episodes, *label.unfixed]
        for e in entries:
            c, text = L.cause(e), texts.get(str(e.get("failed")))
            if not c or not text or L.transient(e) is True or e.get("kind") == "scratch":
                continue
            request = retrieve.request_for(redact(text), repo)
            matches = [m.to_wire() for m in execute_sync(RetrievalRequest(**request)).matches]
            shown = {cause_of.get(str(m["learning_id"])) for m in retrieve.select(matches, set())}
            earlier = fixed_in.get(c, set()) - {label.session}
            if earlier:
                out["recurrences"] += 1
                hit = c in shown
                out["shown"] += hit
                if not hit:
                    out["misses"].append(f"{label.session[:8]} {c}")
            elif not fixed_in.get(c):
                out["new"] += 1
                if shown:
                    out["false"] += 1
                    out["false_matches"].append(f"{label.session[:8]} {c} -> {sorted(map(str, shown))}")
        learnings = []
        for e in label.episodes:
            c, text = L.cause(e), texts.get(str(e.get("failed")))
            fix = e.get("fix") or {}
            if not c or not text or L.transient(e) is True or not fix.get("what"):
                continue
            learning = Learning(repo=repo, session_id=label.session[:128], resolution_summary=str(fix["what"])[:2000],
                                error_signatures=[decisive(redact(text), 4000)])  # fmt: skip
            cause_of[str(learning.id)] = c
            fixed_in[c].add(label.session)
            learnings.append(learning)
        if learnings:
            with open_store() as store:
                for learning in learnings:
                    lid, _merged = store.add(learning)
                    cause_of[str(lid)] = cause_of[str(learning.id)]
    out["repos"] = sorted(out["repos"])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labels", type=Path, required=True, help="the folder holding labels.py and labels/")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args()
    L = load_labels(args.labels)
    results: dict[str, Any] = {}
    for half in ("tune", "heldout"):
        by_project: dict[str, list[Any]] = defaultdict(list)
        for label in L.load_projects((half,)):
            by_project[label.project].append(label)
        for project, labels in sorted(by_project.items()):
            with tempfile.TemporaryDirectory() as home:
                os.environ["RECALL_HOME"] = home
                row = replay(labels, L)
            results[f"{half} {project}"] = row
            share = row["shown"] / row["recurrences"] if row["recurrences"] else float("nan")
            fmr = row["false"] / row["new"] if row["new"] else float("nan")
            print(f"{half:8} {project:20} sessions {len(labels):3d}  recurrences {row['recurrences']:3d}  "
                  f"shown {row['shown']:3d} ({share:.2f})  new {row['new']:3d}  false {row['false']:2d} ({fmr:.2f})  "
                  f"repos {len(row['repos'])}")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
