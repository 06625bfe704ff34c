"""The previous release, for benchmarks that measure it side by side with this checkout in one run: its
package unpacked from git (`git archive`), run by putting the returned folder first on PYTHONPATH
(ahead of the editable install). The package was `recall` before the rename to `recall_agent`: `package_in`
says which name a tree holds, and scripts that run the release import or `-m` that name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# main before the lean-core work (issue 13): the release the cold-start and server benchmarks compare with
LEAN_CORE_BASE = "57950d8"


PACKAGE = "recall_agent"  # this checkout's import package
OLD_PACKAGE = "recall"  # its name before the rename


def package_in(tree: Path | None) -> str:
    """The import package of a source tree (None: this checkout)."""
    return OLD_PACKAGE if tree is not None and (tree / OLD_PACKAGE / "__init__.py").is_file() else PACKAGE


def release_tree(tmp: Path, commit: str) -> Path:
    """The package as of `commit`, unpacked under `tmp` and byte-compiled (as after `make install`)."""
    dest = tmp / f"release-{commit}"
    dest.mkdir()
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", commit], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    package = PACKAGE if PACKAGE in listed else OLD_PACKAGE
    archive = subprocess.run(["git", "archive", commit, package], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest / package)], check=True)
    return dest
