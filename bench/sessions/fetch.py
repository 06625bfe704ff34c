"""Bring the public transcripts the capture benchmark reads into bench/.cache/sessions/ (never committed).

    python3 bench/sessions/fetch.py [--mirrors DIR] [--only NAME ...]

Each corpus of `sources.json` is a public GitHub repository at pinned commits: SWE-ContextBench's 300 Lite
"past experience" transcripts, the small sources of labels/SOURCES-other.md, and the many-session project
archives of labels/SOURCES-projects.md (Entire checkpoint branches, a hook's `logs/chat.json` history). A
repository is read from `--mirrors DIR/<owner>+<name>/repo` (a bare git directory) when there, else cloned
from GitHub into a temporary folder. Files land as bench/.cache/sessions/<corpus>/<stem>.jsonl.

A source names its files by `folder` / `folders` (every `.jsonl` in them, at the source's `commit`) and by
`files`: stem -> a path at the source's commit, or {"commit", "path"} for a file pinned at its own commit,
with `"format": "json-array"` for a JSON array of records (written out one record a line) and `"session"` to
keep only that session's records. A file whose tool calls all appear in another file of the same corpus is a
`--continue` continuation's earlier part and is not written (`continuations()`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE.parent / ".cache" / "sessions"
SOURCES_PATH = HERE / "sources.json"


def _git_dir(repo: str, mirrors: Path | None, tmp: Path) -> Path:
    if mirrors is not None:
        mirror = mirrors / repo.replace("/", "+") / "repo"
        if mirror.is_dir():
            return mirror
    dest = tmp / repo.replace("/", "+")
    subprocess.run(["git", "clone", "-q", "--bare", f"https://github.com/{repo}.git", str(dest)], check=True)
    return dest


def _show(git_dir: Path, commit: str, path: str) -> bytes:
    have = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"])
    if have.returncode != 0:  # a per-checkpoint ref (refs/entire/...) that a plain clone does not bring
        subprocess.run(["git", "--git-dir", str(git_dir), "fetch", "-q", "origin", commit], check=True)
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True, check=True
    ).stdout


def records(blob: bytes) -> list[dict]:
    """The transcript records of a JSONL file or of a JSON array of records (a hook's `chat.json`)."""
    text = blob.decode("utf-8", errors="replace").strip()
    if text.startswith("["):
        try:
            return [r for r in json.loads(text) if isinstance(r, dict)]
        except ValueError:
            pass
    out = []
    for line in text.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict):
            out.append(r)
    return out


def tool_ids(recs: list[dict]) -> set[str]:
    """The ids of the tool calls the transcript's assistant made."""
    ids = set()
    for r in recs:
        message = r.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id"):
                ids.add(str(block["id"]))
    return ids


def continuations(calls: dict[str, set[str]]) -> list[str]:
    """The stems to keep: a file whose tool calls are all in a larger file (or in an equal file of a smaller
    stem) is the earlier part of a `--continue` chain, which the larger file repeats. Files without tool calls
    are kept."""
    keep = []
    for stem, ids in calls.items():
        covered = ids and any(
            other != stem and ids <= more and (len(more) > len(ids) or other < stem)
            for other, more in calls.items()
        )
        if not covered:
            keep.append(stem)
    return keep


def _blob(git_dir: Path, source: dict, spec: str | dict) -> bytes:
    if isinstance(spec, str):
        return _show(git_dir, source["commit"], spec)
    blob = _show(git_dir, spec["commit"], spec["path"])
    if spec.get("format") != "json-array" and "session" not in spec:
        return blob
    recs = records(blob)
    if "session" in spec:
        recs = [r for r in recs if str(r.get("sessionId")) == spec["session"]]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs).encode()


def _listed(git_dir: Path, commit: str, folder: str) -> dict[str, str]:
    names = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", f"{commit}:{folder}"],
        capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    return {Path(n).stem: f"{folder}/{n}" for n in names if n.endswith(".jsonl")}


def fetch(corpus: str, source: dict, mirrors: Path | None) -> int:
    dest = CACHE / corpus
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        git_dir = _git_dir(source["repo"], mirrors, Path(tmp))
        files: dict[str, str | dict] = {}
        for folder in [*([source["folder"]] if "folder" in source else []), *source.get("folders", [])]:
            files |= _listed(git_dir, source["commit"], folder)
        files |= source.get("files") or {}
        blobs = {}
        for stem, spec in files.items():
            target = dest / f"{stem}.jsonl"
            blobs[stem] = target.read_bytes() if target.exists() else _blob(git_dir, source, spec)
        keep = continuations({stem: tool_ids(records(b)) for stem, b in blobs.items()})
        for stem in keep:
            target = dest / f"{stem}.jsonl"
            if not target.exists():
                target.write_bytes(blobs[stem])
        for stem in sorted(set(blobs) - set(keep)):
            print(f"  {corpus}/{stem}: repeated by a later file of its --continue chain, left out")
    return len(keep)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--mirrors", type=Path, default=None, help="a folder of bare mirrors (<owner>+<name>/repo)"
    )
    ap.add_argument("--only", nargs="*", default=None, help="fetch only these corpora")
    args = ap.parse_args(argv)
    if shutil.which("git") is None:
        print("git is needed", file=sys.stderr)
        return 1
    sources = json.loads(SOURCES_PATH.read_text())
    for corpus, source in sources.items():
        if args.only and corpus not in args.only:
            continue
        n = fetch(corpus, source, args.mirrors)
        print(f"{corpus}: {n} transcripts in {CACHE / corpus}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
