"""Bring the public transcripts the capture benchmark reads into bench/.cache/sessions/ (never committed).

    python3 bench/sessions/fetch.py [--mirrors DIR]

Each corpus of `sources.json` is a public GitHub repository at a pinned commit: SWE-ContextBench's 300 Lite
"past experience" transcripts, and the sessions of other kinds labelled in labels/. A repository is read
from `--mirrors DIR/<owner>+<name>/repo` (a bare git directory) when there, else cloned from GitHub into a
temporary folder. Files land as bench/.cache/sessions/<corpus>/<stem>.jsonl.
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
SOURCES = json.loads((HERE / "sources.json").read_text())
# Codex CLI rollouts (issue 36): a file of their own, so that corpora added to sources.json merge cleanly
CODEX_SOURCES = json.loads((HERE / "sources-codex.json").read_text())


def _git_dir(repo: str, mirrors: Path | None, tmp: Path) -> Path:
    if mirrors is not None:
        mirror = mirrors / repo.replace("/", "+") / "repo"
        if mirror.is_dir():
            return mirror
    dest = tmp / repo.replace("/", "+")
    subprocess.run(["git", "clone", "-q", "--bare", f"https://github.com/{repo}.git", str(dest)], check=True)
    return dest


def _show(git_dir: Path, commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True, check=True
    ).stdout


def fetch(corpus: str, source: dict, mirrors: Path | None) -> int:
    dest = CACHE / corpus
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        git_dir = _git_dir(source["repo"], mirrors, Path(tmp))
        files = dict(source.get("files") or {})
        if "folder" in source:
            listed = subprocess.run(
                ["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", f"{source['commit']}:{source['folder']}"],
                capture_output=True, text=True, check=True,
            ).stdout.split("\n")  # fmt: skip
            files |= {Path(n).stem: f"{source['folder']}/{n}" for n in listed if n.endswith(".jsonl")}
        for stem, path in files.items():
            target = dest / f"{stem}.jsonl"
            if not target.exists():
                target.write_bytes(_show(git_dir, source["commit"], path))
    return len(files)


def fetch_checkpoints(corpus: str, source: dict, mirrors: Path | None) -> int:
    """Rollouts saved as `<xx>/<id>/<n>/full.jsonl` on a branch (each checkpoint rewritten as the session went
    on): the newest version of each file in the pinned commit's history whose object is there. Files land
    as <corpus>/<xx>-<id>-<n>.jsonl."""
    dest = CACHE / corpus
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        git_dir = _git_dir(source["repo"], mirrors, Path(tmp))
        git = ["git", "--git-dir", str(git_dir)]
        log = subprocess.run([*git, "log", "--format=", "--raw", "--no-abbrev", source["commit"]],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
        newest: dict[str, str] = {}
        pattern = source["checkpoints"]
        for line in log.splitlines():
            parts = line.split()
            if len(parts) < 6 or not line.startswith(":") or parts[3] == "0" * 40:
                continue
            path = parts[-1]
            if path in newest or not Path(path).match(pattern):
                continue
            if subprocess.run([*git, "cat-file", "-e", parts[3]]).returncode == 0:
                newest[path] = parts[3]
        for path, blob in newest.items():
            target = dest / (path.rsplit("/", 1)[0].replace("/", "-") + ".jsonl")
            if not target.exists():
                data = subprocess.run([*git, "cat-file", "-p", blob], capture_output=True, check=True).stdout
                target.write_bytes(data)
    return len(newest)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--mirrors", type=Path, default=None, help="a folder of bare mirrors (<owner>+<name>/repo)"
    )
    args = ap.parse_args(argv)
    for corpus, source in SOURCES.items():
        n = fetch(corpus, source, args.mirrors)
        print(f"{corpus}: {n} transcripts in {CACHE / corpus}")
    for corpus, source in CODEX_SOURCES.items():
        n = fetch_checkpoints(corpus, source, args.mirrors)
        print(f"{corpus}: {n} Codex rollouts in {CACHE / corpus}")
    if shutil.which("git") is None:
        print("git is needed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
