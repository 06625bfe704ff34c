"""Where a process's CPU samples fall, by kind of code: tree-sitter's C, the grammar's lexer, the interpreter's
bytecode loop, its allocator, dicts, regex engine and GC, mypyc-compiled code, SQLite, the kernel.

Reads `perf report` of a `perf record` (bench/NOTES-mypyc18-issue39.md); shares of all samples of the process:

    PYTHONPATH=<checkout> perf record -q -F 1999 -o side.data python3 bench/bench_index_slice.py <tree> --side --no-rows
    python3 bench/perf_categories.py side.data [other.data …]
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys

_LINE = re.compile(r"\s*([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(\S+)")
_TS_CORE = ("ts_", "stack", "array", "_array")


def kind(dso: str, sym: str) -> str:
    if dso.startswith("_binding.cpython"):  # py-tree-sitter: the library's C and the Python binding
        if sym.startswith(_TS_CORE) or "subtree" in sym or "lexer" in sym:
            return "tree-sitter C (parse, query walk)"
        return "tree-sitter binding (Python objects)"
    if dso.startswith("_binding.abi3"):
        return "grammar (generated lexer and tables)"
    if dso.startswith("libpython"):
        if "EvalFrame" in sym:
            return "python: bytecode loop"
        if sym.startswith("sre_") or "SRE" in sym:
            return "python: regex engine"
        if sym.startswith(("gc_", "visit_")) or sym in ("update_refs", "subtract_refs", "move_unreachable"):
            return "python: cyclic GC"
        if any(s in sym for s in ("Malloc", "Free", "alloc", "Realloc")):
            return "python: allocation, deallocation"
        if any(s in sym for s in ("dict", "lookup", "siphash", "unicodekeys")):
            return "python: dicts, hashing"
        if any(s in sym for s in ("bytes", "unicode", "stringlib")):
            return "python: bytes and str methods"
        return "python: other C-API"
    if "__mypyc" in dso:
        return "mypyc-compiled code"
    if dso.startswith("libsqlite"):
        return "SQLite"
    if dso.startswith("[kernel"):
        return "kernel"
    if dso.startswith("libc"):
        return "libc (malloc, memcpy)"
    return "other"


def categories(data: str) -> dict[str, float]:
    report = subprocess.run(
        ["perf", "report", "-i", data, "--sort", "dso,symbol", "--stdio", "-F", "overhead,dso,sym"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    shares: collections.Counter[str] = collections.Counter()
    for line in report.splitlines():
        if m := _LINE.match(line):
            shares[kind(m.group(2), m.group(3))] += float(m.group(1))
    return {k: round(v, 1) for k, v in shares.most_common()}


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    print(json.dumps({data: categories(data) for data in sys.argv[1:]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
