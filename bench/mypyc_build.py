"""Compile the index's per-file modules with mypyc, in place in this checkout (bench/NOTES-mypyc18-issue39.md).

The same sources stay the pure-Python fallback: an import finds `words.cpython-311-*.so` before `words.py`,
so removing the `.so` files (`--clean`) makes the checkout pure again. Needs mypy (which ships mypyc), a C
compiler, Python's headers and setuptools >= 77 (this project's pyproject.toml); in a venv of its own:

    python3 -m venv --system-site-packages /tmp/venv-mypyc && /tmp/venv-mypyc/bin/pip install mypy 'setuptools>=77'
    /tmp/venv-mypyc/bin/python bench/mypyc_build.py            # compile MODULES
    /tmp/venv-mypyc/bin/python bench/mypyc_build.py --clean    # back to pure Python

(The `mypyc` command itself sets PYTHONPATH to mypy's own site-packages, which shadows a venv's setuptools.)
Imported modules that are not compiled are read for their types only (`--follow-imports=silent`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# what a parse process runs per file. Not indexer.py: it compiles and runs, but its write path gained nothing
# (SQLite's own C is the write) and 7 tests replace its functions (`monkeypatch.setattr(indexer, "walk", …)`),
# which calls inside a compiled module do not see
MODULES = [
    "recall_agent/architecture/words.py",
    "recall_agent/architecture/extract.py",
    "recall_agent/architecture/messages.py",
    "recall_agent/architecture/concepts.py",
    "recall_agent/architecture/values.py",
    "recall_agent/architecture/languages.py",
    "recall_agent/architecture/lang/cfamily.py",
]


def built() -> list[Path]:
    """The compiled files in the checkout: one per module, and mypyc's shared library at the top."""
    return sorted([*ROOT.glob("*__mypyc.*.so"), *(ROOT / "recall_agent").rglob("*.so")])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "modules", nargs="*", default=MODULES, help="paths from the checkout's top (default: MODULES)"
    )
    ap.add_argument("--clean", action="store_true", help="remove the compiled files: pure Python again")
    args = ap.parse_args()
    for path in built():
        path.unlink()
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    if args.clean:
        return 0
    from mypyc.build import mypycify
    from setuptools import setup

    os.chdir(ROOT)
    setup(
        name="recall-mypyc-probe",
        ext_modules=mypycify(["--follow-imports=silent", *args.modules], opt_level="3"),
        script_args=["build_ext", "--inplace", "--quiet"],
    )
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    print("\n".join(str(p.relative_to(ROOT)) for p in built()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
