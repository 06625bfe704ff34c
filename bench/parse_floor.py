"""A parse process's CPU on bench_index_slice.py's slice, split into the C floor and the rest, in one process.

Works the same for pure-Python and compiled (mypyc) modules, unlike bench/profile_parse_stages.py, whose timers
replace module functions (calls inside a compiled module do not see them). Min of 3 repetitions each:
`_parse_chunk` over the whole slice (what bench_index_slice.py's parse measures: reading, hashing, blanking,
parse, captures to facts, rows) and, over its parsed sources alone, annotation blanking, tree-sitter's parse, the
query walk (`matches`, its Python objects made in C, nothing done with them) and identifier words (the run table
emptied first). "rest" = the whole less those four: the Python over the captures (definitions, calls, sites,
comments), rows, reading and hashing.

    PYTHONPATH=<checkout> nice -n 10 python3 bench/parse_floor.py /tmp/i39k/kernel/linux-source-6.1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(1, str(HERE))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--every", type=int, default=40)
    ap.add_argument("--offset", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()

    from bench_index_slice import slice_paths
    from tree_sitter import Parser, QueryCursor

    from recall_agent.architecture import extract, indexer, words
    from recall_agent.architecture.lang.cfamily import blank_annotations
    from recall_agent.architecture.languages import BY_NAME, grammar

    tree = args.tree.resolve()
    jobs = []
    for rel in slice_paths(tree, args.every, args.offset):
        st = (tree / rel).stat()
        jobs.append((rel, st.st_mtime_ns, st.st_size, None))
    parsed = indexer._parse_chunk(str(tree), jobs)
    files = []  # (spec, the source as parsed, the source as read)
    for p in parsed:
        if p.lang:
            raw = (tree / p.path).read_bytes()
            files.append((BY_NAME[p.lang], blank_annotations(raw) if p.lang in ("c", "cpp") else raw, raw))
    trees = [(spec, Parser(grammar(spec.name)).parse(source)) for spec, source, _ in files]

    def whole() -> None:
        words._RUN_WORDS.clear()
        for i in range(0, len(jobs), 40):
            indexer._parse_chunk(str(tree), jobs[i : i + 40])

    def walk() -> None:
        for spec, parsed_tree in trees:
            for _ in QueryCursor(extract._file_query(spec.name)[0]).matches(parsed_tree.root_node):
                pass

    def identifier_words() -> None:
        words._RUN_WORDS.clear()
        for _, source, _ in files:
            words.identifier_words(source)

    steps = {
        "parse_chunk_all": whole,
        "blank": lambda: [blank_annotations(raw) for spec, _, raw in files if spec.name in ("c", "cpp")],
        "ts_parse": lambda: [Parser(grammar(spec.name)).parse(source) for spec, source, _ in files],
        "matches_walk": walk,
        "identifier_words": identifier_words,
    }
    spent: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(args.reps):
        for name, step in steps.items():
            start = time.process_time()
            step()
            spent[name].append(time.process_time() - start)
    result: dict = {k: round(min(v), 3) for k, v in spent.items()}
    floor = ("blank", "ts_parse", "matches_walk", "identifier_words")
    result["rest"] = round(result["parse_chunk_all"] - sum(result[k] for k in floor), 3)
    result["files"], result["parsed"] = len(jobs), len(files)
    result["compiled"] = sorted(
        name
        for name, module in sys.modules.items()
        if name.startswith("recall_agent") and (getattr(module, "__file__", None) or "").endswith(".so")
    )
    result["load"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
