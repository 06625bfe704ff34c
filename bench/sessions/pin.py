"""Pin the Claude Code sessions a repository archives into sources.json (run once per source; fetch.py then
brings exactly the pinned files back).

    python3 bench/sessions/pin.py NAME --repo OWNER/NAME --project P --language L --kind K --licence TEXT
        --what TEXT [--entire | --history PATH] [--mirrors DIR] [--min-tools 5]

Two kinds of archive are read from a bare mirror (`DIR/<owner>+<name>/repo`, see fetch.py):

- `--entire`: the checkpoints the Entire CLI pushes beside the code, on the branch `entire/checkpoints/v1`
  (`<id[:2]>/<id[2:]>/<n>/full.jsonl` with a `metadata.json` naming the agent and the session) and on the
  per-checkpoint refs `refs/entire/checkpoints/*` (`<n>/full.jsonl`). A session is checkpointed many times and
  each checkpoint holds the whole transcript so far: the largest readable `full.jsonl` of each Claude Code
  session is pinned, by its own commit.
- `--history PATH`: a file a hook overwrites with the current session's transcript (`logs/chat.json`, a JSON
  array of transcript records); every committed version is read and, per session id, the version with the
  most tool calls is pinned.

Sessions with fewer than `--min-tools` tool calls are left out, and so is a file whose tool calls all appear
in another pinned file of the source (a `--continue` continuation repeats the earlier session's records):
see `continuations()` in fetch.py.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fetch import SOURCES_PATH, continuations, records, tool_ids  # noqa: E402

AGENT = "Claude Code"


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True).stdout


def _sizes(git_dir: Path, commit: str) -> dict[str, int]:
    """Path -> size of every readable blob of the tree (a mirror may lack the largest blobs)."""
    out: dict[str, int] = {}
    for row in _git(git_dir, "ls-tree", "-r", "-l", commit).decode().splitlines():
        meta, path = row.split("\t", 1)
        size = meta.split()[3]
        if size.isdigit():
            out[path] = int(size)
    return out


def entire_candidates(git_dir: Path) -> dict[str, tuple[str, str, int]]:
    """session id -> (commit, path, size) of its largest readable Claude Code `full.jsonl`."""
    refs = [
        r
        for r in _git(git_dir, "for-each-ref", "--format=%(refname)").decode().split()
        if r.startswith(("refs/heads/entire/checkpoints/", "refs/entire/checkpoints/"))
    ]
    best: dict[str, tuple[str, str, int]] = {}
    for ref in refs:
        commit = _git(git_dir, "rev-parse", ref).decode().strip()
        sizes = _sizes(git_dir, commit)
        for path in sizes:
            if not path.endswith("metadata.json"):
                continue
            full = path[: -len("metadata.json")] + "full.jsonl"
            if full not in sizes:
                continue
            try:
                meta = json.loads(_git(git_dir, "show", f"{commit}:{path}"))
            except ValueError:
                continue
            if meta.get("agent") != AGENT or not meta.get("session_id"):
                continue
            sid = str(meta["session_id"])
            if sid not in best or sizes[full] > best[sid][2]:
                best[sid] = (commit, full, sizes[full])
    return best


def history_candidates(git_dir: Path, path: str) -> dict[str, tuple[str, str, int]]:
    """session id -> (commit, path, tool calls) of the committed version holding most of its calls."""
    best: dict[str, tuple[str, str, int]] = {}
    for commit in _git(git_dir, "log", "--all", "--format=%H", "--", path).decode().split():
        recs = records(_git(git_dir, "show", f"{commit}:{path}"))
        by_session: dict[str, list[dict]] = {}
        for r in recs:
            by_session.setdefault(str(r.get("sessionId")), []).append(r)
        for sid, rs in by_session.items():
            n = len(tool_ids(rs))
            if sid != "None" and (sid not in best or n > best[sid][2]):
                best[sid] = (commit, path, n)
    return best


def pin(args: argparse.Namespace) -> dict:
    git_dir = args.mirrors / args.repo.replace("/", "+") / "repo"
    found = history_candidates(git_dir, args.history) if args.history else entire_candidates(git_dir)
    blobs: dict[str, list[dict]] = {}
    for sid, (commit, path, _) in found.items():
        recs = records(_git(git_dir, "show", f"{commit}:{path}"))
        if args.history:
            recs = [r for r in recs if str(r.get("sessionId")) == sid]
        if len(tool_ids(recs)) >= args.min_tools:
            blobs[sid] = recs
    keep = continuations({sid: tool_ids(rs) for sid, rs in blobs.items()})
    files = {}
    for sid in sorted(keep, key=lambda s: (_first_time(blobs[s]), s)):
        commit, path, _ = found[sid]
        entry: dict[str, str] = {"commit": commit, "path": path}
        if args.history:
            entry |= {"format": "json-array", "session": sid}
        files[sid] = entry
    return {
        "repo": args.repo,
        "project": args.project,
        "language": args.language,
        "kind": args.kind,
        "licence": args.licence,
        "archive": f"history of {args.history}" if args.history else "Entire checkpoints",
        "what": args.what,
        "files": files,
    }


def _first_time(recs: list[dict]) -> str:
    return next((str(r["timestamp"]) for r in recs if r.get("timestamp")), "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", help="the corpus name (folder under bench/.cache/sessions/ and labels/)")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--history", default=None, help="a file path whose committed versions are transcripts")
    ap.add_argument("--entire", action="store_true", help="read the Entire checkpoint refs")
    ap.add_argument("--min-tools", type=int, default=5)
    for field in ("project", "language", "kind", "licence", "what"):
        ap.add_argument(f"--{field}", required=True)
    args = ap.parse_args(argv)
    if bool(args.history) == bool(args.entire):
        ap.error("give exactly one of --entire and --history PATH")
    sources = json.loads(SOURCES_PATH.read_text())
    sources[args.name] = pin(args)
    SOURCES_PATH.write_text(json.dumps(sources, indent=1) + "\n")
    print(f"{args.name}: {len(sources[args.name]['files'])} sessions pinned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
