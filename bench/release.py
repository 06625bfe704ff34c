"""The previous release, for benchmarks that measure it side by side with this checkout in one run: its
`recall` package unpacked from git (`git archive`), run by putting the returned folder first on PYTHONPATH
(ahead of the editable install)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# main before the lean-core work (issue 13): the release the cold-start and server benchmarks compare with
LEAN_CORE_BASE = "57950d8"


def release_tree(tmp: Path, commit: str) -> Path:
    """`recall/` as of `commit`, unpacked under `tmp` and byte-compiled (as after `make install`)."""
    dest = tmp / f"release-{commit}"
    dest.mkdir()
    archive = subprocess.run(["git", "archive", commit, "recall"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest / "recall")], check=True)
    return dest
