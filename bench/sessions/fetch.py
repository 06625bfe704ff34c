"""Bring the public transcripts the capture benchmark reads into bench/.cache/sessions/ (never committed).

    python3 bench/sessions/fetch.py [--source DIR]

SWE-ContextBench (github.com/jiayuanz3/SWEContextBench) is cloned with git (from `--source`, a local clone or
mirror, when given), and its 300 Lite "past experience" transcripts are copied to
bench/.cache/sessions/swecb/<stem>.jsonl.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "sessions"
SWECB_URL = "https://github.com/jiayuanz3/SWEContextBench.git"
SWECB_DIR = "cases/SWEContextBench Lite Past Experience"


def fetch_swecb(source: str) -> Path:
    dest = CACHE / "swecb"
    if dest.is_dir() and len(list(dest.glob("*.jsonl"))) >= 300:
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "--git-dir", source, "archive", "HEAD", SWECB_DIR]
            if Path(source).is_dir()
            else [
                "sh",
                "-c",
                f"git clone -q --depth 1 {SWECB_URL} {tmp}/r && git -C {tmp}/r archive HEAD '{SWECB_DIR}'",
            ],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        for path in (Path(tmp) / SWECB_DIR).glob("*.jsonl"):
            shutil.copy(path, dest / path.name)
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default=SWECB_URL, help="a local git dir of SWEContextBench (default: clone)")
    args = ap.parse_args(argv)
    dest = fetch_swecb(args.source)
    print(f"{len(list(dest.glob('*.jsonl')))} transcripts in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
