"""Redaction on every path that stores a learning: leaks by path and format, false redactions.

Corpus: bench/corpus/secrets/ (make_corpus.py: fake secrets in 150+ formats, real ordinary lines), split
into a tuning and a held-out half before any rule was tuned; both are reported.

Paths, each one real and ending in a real store whose files are then searched byte for byte for every
piece of every secret (database, WAL, session state files: anything under RECALL_HOME):
  redact   recall_agent.redact.redact(text) itself (also where false redactions are counted)
  learn    `python -m recall_agent learn --from-jsonl FILE` (error signature, resolution, file path, ticket id)
  server   POST /v1/learnings to a real `recall serve` on 127.0.0.1
  hooks    the hook handlers (PostToolUseFailure with the text as error, an Edit of a file named after it,
           the successful rerun, Stop with the text in the last message), in-process

    python bench/bench_redaction.py            # all paths (~1 min)
    python bench/bench_redaction.py --paths redact
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / "bench" / "corpus" / "secrets"
RESULTS = ROOT / "bench" / "results" / "redaction.json"
PATHS = ("redact", "learn", "server", "hooks")


def load() -> tuple[list[dict], list[dict]]:
    def read(name: str) -> list[dict]:
        return [json.loads(line) for line in (CORPUS / name).read_text().splitlines() if line.strip()]

    return read("secrets.jsonl"), read("ordinary.jsonl")


def learning_of(case: dict) -> dict:
    first = case["text"].splitlines()[0][:200]
    return {
        "repo": "bench",
        "error_signatures": [case["text"]],
        "resolution_summary": f"fixed after {case['text']}",
        "file_paths_touched": [f"deploy/{first}"],
        "ticket_id": first[:64],
    }


def stored_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def leaked(case: dict, blob: bytes | str) -> bool:
    if isinstance(blob, str):
        return any(piece in blob for piece in case["secrets"])
    return any(piece.encode() in blob for piece in case["secrets"])


# --------------------------------------------------------------------------- paths


def path_redact(cases: list[dict]) -> dict[str, bool]:
    from recall_agent.redact import redact

    return {c["id"]: leaked(c, redact(c["text"])) for c in cases}


def path_learn(cases: list[dict], home: Path) -> dict[str, bool]:
    src = home.parent / "learnings.jsonl"
    src.write_text("".join(json.dumps(learning_of(c)) + "\n" for c in cases))
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "recall_agent", "learn", "--from-jsonl", str(src)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    blob = stored_bytes(home)
    return {c["id"]: leaked(c, blob) for c in cases}


def path_server(cases: list[dict], home: Path) -> dict[str, bool]:
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("RECALL_DATABASE_URL", None)
    log = (home.parent / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "recall_agent", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=home.parent,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        with httpx.Client(timeout=30) as client:
            for case in cases:
                r = client.post(url + "/v1/learnings", json=learning_of(case))
                assert r.status_code == 201, (case["id"], r.status_code, r.text)
    finally:
        proc.terminate()
        proc.wait(30)
    blob = stored_bytes(home)
    return {c["id"]: leaked(c, blob) for c in cases}


def path_hooks(cases: list[dict], home: Path) -> dict[str, bool]:
    os.environ["RECALL_HOME"] = str(home)
    os.environ["RECALL_HOOK_DEADLINE"] = "60"
    from recall_agent.hooks import handlers

    project = home.parent / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for n, case in enumerate(cases):
        session = f"bench-{n}"
        transcript = home.parent / f"t{n}.jsonl"
        transcript.write_text("")
        base = {"session_id": session, "transcript_path": str(transcript), "cwd": str(project)}
        command = "python -m pytest -q"
        first = case["text"].splitlines()[0][:120]
        handlers.handle(
            "PostToolUseFailure",
            base
            | {
                "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash",
                "tool_input": {"command": command},
                "tool_use_id": f"t{n}a",
                "error": "Exit code 1\n" + case["text"],
            },
        )
        edited = f"{project}/{first}/settings.py"  # a path naming the secret (as a folder would)
        handlers.handle(
            "PostToolUse",
            base
            | {
                "hook_event_name": "PostToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": edited, "old_string": "a", "new_string": "b"},
                "tool_use_id": f"t{n}b",
                "tool_response": {"filePath": edited, "success": True},
            },
        )
        handlers.handle(
            "PostToolUse",
            base
            | {
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": command},
                "tool_use_id": f"t{n}c",
                "tool_response": {"stdout": "1 passed", "stderr": "", "interrupted": False},
            },
        )
        handlers.handle(
            "Stop",
            base
            | {
                "hook_event_name": "Stop",
                "stop_hook_active": False,
                "last_assistant_message": f"The config held {case['text']} so I fixed the loader.",
            },
        )
    blob = stored_bytes(home)
    return {c["id"]: leaked(c, blob) for c in cases}


# --------------------------------------------------------------------------- report


def false_redactions(ordinary: list[dict]) -> list[dict]:
    from recall_agent.redact import redact

    return [row for row in ordinary if redact(row["text"]) != row["text"]]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paths", nargs="*", default=list(PATHS), choices=PATHS)
    ap.add_argument("--show", action="store_true", help="print every leaked case and false redaction")
    args = ap.parse_args()
    cases, ordinary = load()
    results: dict[str, dict[str, bool]] = {}
    with tempfile.TemporaryDirectory(prefix="recall-redaction-") as tmp:
        for path in args.paths:
            home = Path(tmp) / path / "home"
            home.mkdir(parents=True)
            t0 = time.perf_counter()
            if path == "redact":
                results[path] = path_redact(cases)
            else:
                results[path] = globals()[f"path_{path}"](cases, home)
            print(f"{path}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    wrong = false_redactions(ordinary)

    splits = ("tuning", "heldout")
    print(
        f"\n{len(cases)} secrets in {len({c['format'] for c in cases})} formats; {len(ordinary)} ordinary lines\n"
    )
    print("| path | " + " | ".join(f"leaked ({s})" for s in splits) + " |")
    print("|---|" + "---|" * len(splits))
    summary: dict = {"paths": {}, "false_redactions": {}}
    for path, by_case in results.items():
        cells = []
        for s in splits:
            ids = [c["id"] for c in cases if c["split"] == s]
            n = sum(by_case[i] for i in ids)
            cells.append(f"{n} / {len(ids)}")
            summary["paths"].setdefault(path, {})[s] = {"leaked": n, "cases": len(ids)}
        print(f"| {path} | " + " | ".join(cells) + " |")
    print("\n| ordinary lines changed | " + " | ".join(splits) + " |\n|---|---|---|")
    cells = []
    for s in splits:
        total = sum(r["split"] == s for r in ordinary)
        n = sum(r["split"] == s for r in wrong)
        cells.append(f"{n} / {total} ({100 * n / max(total, 1):.1f}%)")
        summary["false_redactions"][s] = {"changed": n, "lines": total}
    print("| redact | " + " | ".join(cells) + " |")

    formats: dict[str, Counter] = defaultdict(Counter)
    for path, by_case in results.items():
        for c in cases:
            if by_case[c["id"]]:
                formats[c["format"]][path] += 1
    if formats:
        print("\nformats that leaked (cases per path):")
        for fmt, counts in sorted(formats.items()):
            print(f"  {fmt}: " + ", ".join(f"{p} {n}" for p, n in counts.items()))
    summary["leaked_formats"] = {fmt: dict(c) for fmt, c in formats.items()}
    summary["false_redaction_ids"] = [r["id"] for r in wrong]
    if args.show:
        from recall_agent.redact import redact

        for c in cases:
            if results.get("redact", {}).get(c["id"]):
                print(f"\nLEAK {c['id']} [{c['split']}]: {redact(c['text'])[:300]!r}")
        for r in wrong:
            print(f"\nFALSE {r['id']} [{r['split']}]: {r['text'][:200]!r}\n   -> {redact(r['text'])[:200]!r}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
