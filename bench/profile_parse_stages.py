"""CPU of each stage of a parse worker's work on a fixed slice of a large tree, without a profiler's overhead.

What a parse process does per file (`indexer._parse_chunk`), with `time.process_time` taken around each stage:
tree-sitter's parse and query walk, identifier words, calls and definitions in Python, message sites, annotation
blanking, the rows for the parent. The slice is bench_index_slice.py's (every Nth block of 300 files in `git
ls-files` order). cProfile's per-call overhead inflates the Python stages 2-3x against the C ones; this reads the
clock around stages run once per file only (a read of `process_time` costs ~0.8 us here), so the match loop
(calls and other captures read in Python) is in "the rest".

    nice -n 19 python3 bench/profile_parse_stages.py /tmp/i39k/kernel/linux-source-6.1 --every 40 --offset 3
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--every", type=int, default=40)
    ap.add_argument("--offset", type=int, default=3)
    args = ap.parse_args()

    import tree_sitter
    from bench_index_slice import slice_paths

    from recall_agent.architecture import extract, indexer, messages, words
    from recall_agent.architecture.lang import cfamily

    spent: collections.Counter[str] = collections.Counter()
    clock = time.process_time

    def timed(module: object, name: str, label: str) -> None:
        inner = getattr(module, name)

        @functools.wraps(inner)
        def wrapper(*a, **k):
            start = clock()
            try:
                return inner(*a, **k)
            finally:
                spent[label] += clock() - start

        setattr(module, name, wrapper)

    parser_type, cursor_type = tree_sitter.Parser, tree_sitter.QueryCursor

    class Parser:  # tree-sitter's parse, timed
        def __init__(self, language):
            self.parser = parser_type(language)

        def parse(self, source):
            start = clock()
            tree = self.parser.parse(source)
            spent["tree-sitter parse"] += clock() - start
            return tree

    class QueryCursor:  # the query walk, timed (its Python objects are made in C too)
        def __init__(self, query):
            self.cursor = cursor_type(query)

        def matches(self, node):
            start = clock()
            found = self.cursor.matches(node)
            spent["tree-sitter query walk (matches)"] += clock() - start
            return found

    tree_sitter.Parser, tree_sitter.QueryCursor = Parser, QueryCursor
    for module, name, label in (
        (extract, "_build_symbols", "definitions nested, calls placed (_build_symbols)"),
        (extract, "_unread_lines", "unread lines (_unread_lines)"),
        (extract, "_module_doc", "module doc"),
        (messages, "sites", "message sites"),
        (words, "comments", "comments text"),
        (words, "identifier_words", "identifier words"),
        (cfamily, "blank_annotations", "annotation blanking"),
        (cfamily, "looks_cpp", "C++ header test"),
        (indexer, "_rows", "rows for the parent (_rows)"),
    ):
        timed(module, name, label)

    tree = args.tree.resolve()
    jobs = []
    for rel in slice_paths(tree, args.every, args.offset):
        st = (tree / rel).stat()
        jobs.append((rel, st.st_mtime_ns, st.st_size, None))
    indexer._parse_chunk(str(tree), [j for j in jobs if j[0].endswith(".c")][:1])  # grammar and query loaded
    spent.clear()
    start = clock()
    parsed = [p for i in range(0, len(jobs), 40) for p in indexer._parse_chunk(str(tree), jobs[i : i + 40])]
    total = clock() - start
    result = {
        "files": len(jobs),
        "parsed": sum(1 for p in parsed if p.lang),
        "cpu_s": round(total, 3),
        "stages": {k: [round(v, 3), round(100 * v / total, 1)] for k, v in spent.most_common()},
    }
    result["stages"]["the rest (reading, hashing, the match loop over the captures, freeing the tree)"] = [
        round(total - sum(spent.values()), 3),
        round(100 * (total - sum(spent.values())) / total, 1),
    ]
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
