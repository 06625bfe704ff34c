"""Redaction on every path that stores a learning: leaks and false redactions per path, per structure and
per corpus half, this checkout and the release side by side, and time per MB.

Corpora (each record carries its split, fixed by a hash before any tuning; see bench/redaction/sources.py):
  team        bench/corpus/secrets/{secrets,ordinary}.jsonl (make_corpus.py; issue 15)
  public      bench/corpus/secrets/public_reports.jsonl: secrets as real public error reports show them
              (values replaced by fakes of the same shape) and the tools' own messages that must survive
  gitleaks    the true/false-positive samples of gitleaks v8.30.1's rules     } bench/.cache/redaction/,
  noseyparker Nosey Parker's rule examples and negative examples               } built by
  transcripts ordinary lines and file paths of 300 real Claude Code sessions   } bench/redaction/sources.py
Lines of real transcripts that hold a secret by structure (`password='secret'` in a project's tests) are
labelled in bench/corpus/secrets/transcript_labels.jsonl and count as secrets, not as ordinary lines.

Paths, each real and ending in a real store whose files are then searched byte for byte for every piece
of every secret (database, WAL, session files: anything under RECALL_HOME):
  redact   recall_agent.redact.redact(text) in a worker process (also where false redactions are counted)
  learn    `python -m recall_agent learn --from-jsonl FILE` (error signature, resolution, file path, ticket)
  server   POST /v1/learnings to a real `recall serve` on 127.0.0.1
  hooks    the hook handlers in a worker process (PostToolUseFailure with the text as error, an Edit of a
           file named after it, the successful rerun, Stop with the text in the last message)
  import   `python -m recall_agent import-sessions DIR` over Claude Code transcripts holding the cases; and
           over the 300 real sessions, where every stored file path must come out as it went in

    python bench/redaction/sources.py      # once: the outside corpora into bench/.cache/redaction/
    python bench/bench_redaction.py        # everything (~10 min on the shared machine)
    python bench/bench_redaction.py --paths redact import --release ''   # quick: no release, two paths
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from release import package_in, release_tree  # noqa: E402  (bench/: this script's folder)

CORPUS = ROOT / "bench" / "corpus" / "secrets"
CACHE = ROOT / "bench" / ".cache" / "redaction"
RESULTS = ROOT / "bench" / "results" / "redaction.json"
PATHS = ("redact", "learn", "server", "hooks", "import")
RELEASE = "87d8fdf"  # main when issue 27 started: the redaction of issue 15
SPLITS = ("tuning", "heldout")
SWECB = Path(os.environ.get("SWECB", "/work/cache/swecb/cases/SWEContextBench Lite Past Experience"))


# --------------------------------------------------------------------------- corpus


def _read(path: Path) -> list[dict]:
    return (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )


def load() -> tuple[list[dict], list[dict], list[str]]:
    """(secret cases, ordinary lines, corpora missing from the cache)."""
    secrets = [c | {"corpus": "team"} for c in _read(CORPUS / "secrets.jsonl")]
    ordinary = [r | {"corpus": "team"} for r in _read(CORPUS / "ordinary.jsonl")]
    for row in _read(CORPUS / "public_reports.jsonl"):
        (secrets if row["set"] == "secrets" else ordinary).append(row | {"corpus": "public"})
    labels = {r["id"]: r for r in _read(CORPUS / "transcript_labels.jsonl")}
    missing = []
    for name in ("gitleaks", "noseyparker", "transcripts"):
        rows = _read(CACHE / f"{name}.jsonl")
        if not rows:
            missing.append(name)
        for row in rows:
            row = row | {"corpus": name}
            if row["set"] == "ordinary" and row["id"] in labels:  # a real line that holds a secret
                label = labels[row["id"]]
                row = row | {
                    "set": "secrets",
                    "secrets": label["secrets"],
                    "format": "transcript-secret",
                    "structure": label["structure"],
                }
            if row["set"] == "ordinary" and row.get("role") == "detector-fp":
                row = row | {"corpus": f"{name}-negatives"}
            (secrets if row["set"] == "secrets" else ordinary).append(row)
    return secrets, ordinary, missing


_STRUCTURES = (
    ("private-key", re.compile(r"PRIVATE KEY|PuTTY-User-Key")),
    ("url-userinfo", re.compile(r"//[^\s/@]*:[^\s/@]+@")),
    ("xml", re.compile(r"<[A-Za-z][^<>]*>[^<]*</")),
    ("json", re.compile(r"\"[\w.-]+\"\s*:")),
    ("python-repr", re.compile(r"'[\w.-]+'\s*:")),
    ("yaml", re.compile(r"(?m)^[ \t]*[\w.-]+:[ \t]")),
    ("command", re.compile(r"(?:^|\s)-{1,2}[A-Za-z]")),
    ("key=value", re.compile(r"[\w.-]+\s*(?::=|=>|=)")),
)


def structure_of(case: dict) -> str:
    """The structure a secret comes in (given by the corpus, else read from its text)."""
    if case.get("structure"):
        return case["structure"]
    for name, pattern in _STRUCTURES:
        if pattern.search(case["text"]):
            return name
    return "bare token"


def learning_of(case: dict) -> dict:
    first = case["text"].splitlines()[0][:200] if case["text"].strip() else "x"
    return {
        "repo": "bench",
        "error_signatures": [case["text"]],
        "resolution_summary": f"fixed after {case['text']}"[
            :2000
        ],  # the field's limit; the signature is whole
        "file_paths_touched": [f"deploy/{first}"],
        "ticket_id": first[:64],
    }


def stored_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def leaked(case: dict, blob: bytes) -> bool:
    return any(piece.encode() in blob for piece in case["secrets"])


def distinct(secrets: list[dict]) -> list[dict]:
    """Cases whose secret appears in no text but those of the cases holding that same secret: a store
    holding every case can only be searched for those (`secret` or `admin` would be found whoever leaked)."""
    texts = [c["text"] for c in secrets]
    holders = Counter(p for c in secrets for p in set(c["secrets"]))
    keep = []
    for c in secrets:  # gitleaks writes one secret in 8 syntaxes: those cases share it and stay
        if all(len(p) >= 6 and sum(p in t for t in texts) == holders[p] for p in c["secrets"]):
            keep.append(c)
    return keep


def _env(tree: Path | None, home: Path | None = None) -> dict[str, str]:
    """PYTHONPATH for the tree measured. Every process runs outside this checkout (cwd), or `-m`/`-c`
    would import the package from the current folder ahead of PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": str(tree or ROOT)}
    env.pop("RECALL_DATABASE_URL", None)
    if home is not None:
        env["RECALL_HOME"] = str(home)
    return env


def _package(tree: Path | None) -> str:
    return package_in(tree)


# --------------------------------------------------------------------------- workers (run in the tree measured)


def worker_redact(cases_file: Path, out_file: Path) -> None:
    from recall_agent.redact import redact

    texts = json.loads(cases_file.read_text())
    out_file.write_text(json.dumps([redact(t) for t in texts]))


def worker_hooks(cases_file: Path, home: Path) -> None:
    os.environ["RECALL_HOME"] = str(home)
    os.environ["RECALL_HOOK_DEADLINE"] = "600"
    from recall_agent.hooks import handlers

    texts = json.loads(cases_file.read_text())
    project = home.parent / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for n, text in enumerate(texts):
        base = {
            "session_id": f"bench-{n}",
            "transcript_path": str(home.parent / f"t{n}.jsonl"),
            "cwd": str(project),
        }
        Path(base["transcript_path"]).write_text("")
        command = "python -m pytest -q"
        first = (text.splitlines() or ["x"])[0][:120]
        edited = f"{project}/{first}/settings.py"  # a path naming the secret (as a folder would)
        events = [
            {
                "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash",
                "tool_input": {"command": command},
                "tool_use_id": f"t{n}a",
                "error": "Exit code 1\n" + text,
            },
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": edited, "old_string": "a", "new_string": "b"},
                "tool_use_id": f"t{n}b",
                "tool_response": {"filePath": edited, "success": True},
            },
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": command},
                "tool_use_id": f"t{n}c",
                "tool_response": {"stdout": "1 passed", "stderr": "", "interrupted": False},
            },
            {
                "hook_event_name": "Stop",
                "stop_hook_active": False,
                "last_assistant_message": f"The config held {text} so I fixed the loader.",
            },
        ]
        for event in events:
            handlers.handle(event["hook_event_name"], base | event)


# --------------------------------------------------------------------------- paths


def _worker(kind: str, tree: Path | None, cases_file: Path, extra: list[str], env: dict) -> None:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", kind, str(cases_file), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def redacted_texts(rows: list[dict], work: Path, tree: Path | None) -> list[str]:
    work.mkdir(parents=True, exist_ok=True)
    src, out = work / "texts.json", work / "redacted.json"
    src.write_text(json.dumps([r["text"] for r in rows]))
    _worker("redact", tree, src, [str(out)], _env(tree))
    return json.loads(out.read_text())


def path_redact(cases: list[dict], work: Path, tree: Path | None) -> dict[str, bool]:
    outputs = redacted_texts(cases, work, tree)
    return {c["id"]: leaked(c, o.encode()) for c, o in zip(cases, outputs, strict=True)}


def _recall(tree: Path | None, home: Path, *args: str, cwd: Path | None = None) -> None:
    """One `recall` process of `tree` (this checkout when None) on the store under `home`; it must succeed."""
    proc = subprocess.run(
        [sys.executable, "-m", _package(tree), *args],
        env=_env(tree, home),
        cwd=cwd or home.parent,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


def path_learn(cases: list[dict], home: Path, tree: Path | None) -> dict[str, bool]:
    src = home.parent / "learnings.jsonl"
    src.write_text("".join(json.dumps(learning_of(c)) + "\n" for c in cases))
    _recall(tree, home, "learn", "--from-jsonl", str(src))
    blob = stored_bytes(home)
    return {c["id"]: leaked(c, blob) for c in cases}


def path_server(cases: list[dict], home: Path, tree: Path | None) -> dict[str, bool]:
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (home.parent / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", _package(tree), "serve", "--port", str(port)],
        env=_env(tree, home),
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=home.parent,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        with httpx.Client(timeout=60) as client:
            for case in cases:
                r = client.post(url + "/v1/learnings", json=learning_of(case))
                assert r.status_code == 201, (case["id"], r.status_code, r.text)
    finally:
        proc.terminate()
        proc.wait(60)
    blob = stored_bytes(home)
    return {c["id"]: leaked(c, blob) for c in cases}


def path_hooks(cases: list[dict], home: Path, tree: Path | None) -> dict[str, bool]:
    src = home.parent / "texts.json"
    src.write_text(json.dumps([c["text"] for c in cases]))
    _worker("hooks", tree, src, [str(home)], _env(tree, home))
    blob = stored_bytes(home)
    return {c["id"]: leaked(c, blob) for c in cases}


def path_import(cases: list[dict], home: Path, tree: Path | None) -> dict[str, bool]:
    from transcript_writer import TranscriptWriter

    folder = home.parent / "sessions"
    project = home.parent / "project"
    folder.mkdir()
    (project / ".git").mkdir(parents=True)
    for n, case in enumerate(cases):
        w = TranscriptWriter(folder / f"s{n:05d}.jsonl", f"{n:08d}-bench", str(project), seed=n)
        first = (case["text"].splitlines() or ["x"])[0][:120]
        w.prompt("the tests fail, fix them")
        w.bash("python -m pytest -q", "Exit code 1\n" + case["text"], exit_code=1)
        w.edit(f"{project}/{first}/settings.py")
        w.bash("python -m pytest -q", "1 passed")
        w.say(f"The config held {case['text']} so I fixed the loader.")
        w.save()
    _recall(tree, home, "import-sessions", "-q", str(folder))
    blob = stored_bytes(home)
    return {c["id"]: leaked(c, blob) for c in cases}


def real_import(home: Path, tree: Path | None) -> dict:
    """`recall import-sessions` over the 300 real sessions: learnings stored, and how many lost a file
    path (or a signature or resolution) to a placeholder. Nothing in these sessions is a secret."""
    import sqlite3

    repo = home.parent / "repo"  # run from inside a git repository, as a user would (paths are then relative)
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    _recall(tree, home, "import-sessions", "-q", str(SWECB), cwd=repo)
    db = sqlite3.connect(home / "learnings.db")
    rows = db.execute("select file_paths_touched, resolution_summary from learnings").fetchall()
    signatures = db.execute("select text from signatures").fetchall()
    paths = [p for (fp, _) in rows for p in json.loads(fp)]
    return {
        "learnings": len(rows),
        "learnings_with_a_redacted_path": sum("<redacted:" in fp for fp, _ in rows),
        "file_paths": len(paths),
        "file_paths_redacted": sum("<redacted:" in p for p in paths),
        "redacted_path_examples": [p for p in paths if "<redacted:" in p][:5],
        "resolutions_redacted": sum("<redacted:" in r for _, r in rows),
        "signatures": len(signatures),
        "signatures_redacted": sum("<redacted:" in s for (s,) in signatures),
    }


# --------------------------------------------------------------------------- time


def timing(tree: Path | None, ordinary: list[dict], secrets: list[dict]) -> dict:
    """ms per 100 kB and per MB of real transcript text (and of secret-dense text); import and first-call
    cost (the hook pays them once per process)."""
    code = r"""
import json, sys, time
t0 = time.perf_counter()
from PKG.redact import redact
t_import = time.perf_counter() - t0
texts = json.load(open(sys.argv[1]))
error = texts["error"]
t0 = time.perf_counter(); redact(error); t_first = time.perf_counter() - t0
res = {"import_ms": t_import * 1000, "first_call_ms": t_first * 1000}
for name in ("transcripts", "secrets"):
    blob = texts[name]
    chunks = [blob[i:i + 100_000] for i in range(0, len(blob), 100_000)]
    runs = []
    for _ in range(3):
        t0 = time.process_time()
        for c in chunks: redact(c)
        runs.append((time.process_time() - t0) / (len(blob) / 1e6))
    res[name + "_ms_per_mb"] = min(runs) * 1000
    res[name + "_mb"] = len(blob) / 1e6
t0 = time.process_time()
for _ in range(20): redact(error)
res["error_ms"] = (time.process_time() - t0) / 20 * 1000
print(json.dumps(res))
"""
    transcripts = "\n".join(r["text"] for r in ordinary if r["corpus"] == "transcripts")[:1_000_000]
    dense = "\n".join(c["text"] for c in secrets)[:1_000_000]
    error = next((r["text"] for r in ordinary if r["corpus"] == "team" and "Traceback" in r["text"]), "")
    error = (error + "\n" + "\n".join(r["text"] for r in ordinary[:40]))[:4000]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"transcripts": transcripts, "secrets": dense, "error": error}, f)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code.replace("PKG", _package(tree)), f.name],
            env=_env(tree),
            cwd=tempfile.gettempdir(),
            capture_output=True,
            text=True,
            timeout=1800,
        )
    finally:
        os.unlink(f.name)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def import_time(tree: Path | None) -> float:
    """Self+cumulative import time of the redaction module in a fresh interpreter (-X importtime), ms."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {_package(tree)}.redact"],
        env=_env(tree),
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    total = 0.0
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s+(\S.*)", line)
        if m and m.group(3).strip().startswith(f"{_package(tree)}.redact"):
            total = max(total, int(m.group(2)) / 1000)
    return total


# --------------------------------------------------------------------------- report


def _rate(n: int, total: int) -> str:
    return f"{n} / {total} ({100 * n / max(total, 1):.1f}%)"


def report(name: str, secrets: list[dict], ordinary: list[dict], run: dict) -> dict:
    out: dict = {"leaks": {}, "false_redactions": {}, "structures": {}}
    print(f"\n## {name}\n")
    print("| path | " + " | ".join(f"leaked, {s}" for s in SPLITS) + " |\n|---|---|---|")
    for path, by_case in run["paths"].items():
        cells = []
        for s in SPLITS:
            ids = [c["id"] for c in secrets if c["split"] == s and c["id"] in by_case]
            n = sum(by_case[i] for i in ids)
            cells.append(f"{n} / {len(ids)}")
            out["leaks"].setdefault(path, {})[s] = {"leaked": n, "cases": len(ids)}
        print(f"| {path} | " + " | ".join(cells) + " |")
    if len(run["paths"]) > 1:
        print("\n(the store paths run the cases whose secret is distinct: in no text but its own cases')")
    by_corpus = sorted({c["corpus"] for c in secrets})
    if "redact" in run["paths"]:
        print("\n| corpus (redact) | " + " | ".join(f"leaked, {s}" for s in SPLITS) + " |\n|---|---|---|")
        for corpus in by_corpus:
            cells = []
            for s in SPLITS:
                ids = [c["id"] for c in secrets if c["split"] == s and c["corpus"] == corpus]
                n = sum(run["paths"]["redact"][i] for i in ids)
                cells.append(f"{n} / {len(ids)}")
                out["leaks"].setdefault(f"redact:{corpus}", {})[s] = {"leaked": n, "cases": len(ids)}
            print(f"| {corpus} | " + " | ".join(cells) + " |")
        structures: dict[str, Counter] = defaultdict(Counter)
        for c in secrets:
            st = structure_of(c)
            structures[st][f"{c['split']}:cases"] += 1
            structures[st][f"{c['split']}:leaked"] += run["paths"]["redact"][c["id"]]
        print("\n| structure (redact, every corpus) | " + " | ".join(f"leaked, {s}" for s in SPLITS) + " |")
        print("|---|---|---|")
        for st, cnt in sorted(structures.items()):
            print(
                f"| {st} | "
                + " | ".join(f"{cnt[f'{s}:leaked']} / {cnt[f'{s}:cases']}" for s in SPLITS)
                + " |"
            )
            out["structures"][st] = dict(cnt)
    if run.get("outputs") is not None:
        changed = run["changed"]
        print("\n| ordinary lines changed | " + " | ".join(SPLITS) + " |\n|---|---|---|")
        for corpus in sorted({r["corpus"] for r in ordinary}):
            cells = []
            for s in SPLITS:
                rows = [r for r in ordinary if r["split"] == s and r["corpus"] == corpus]
                n = sum(r["id"] in changed for r in rows)
                cells.append(_rate(n, len(rows)))
                out["false_redactions"].setdefault(corpus, {})[s] = {"changed": n, "lines": len(rows)}
            print(f"| {corpus} | " + " | ".join(cells) + " |")
        target = [r for r in ordinary if not r["corpus"].endswith("-negatives")]
        cells = []
        for s in SPLITS:
            rows = [r for r in target if r["split"] == s]
            n = sum(r["id"] in changed for r in rows)
            cells.append(_rate(n, len(rows)))
            out["false_redactions"].setdefault("all ordinary (target)", {})[s] = {
                "changed": n,
                "lines": len(rows),
            }
        print("| **all ordinary lines** (detector negatives aside) | " + " | ".join(cells) + " |")
        cells = []
        for s in SPLITS:
            rows = [r for r in ordinary if r["split"] == s and r.get("role") == "path"]
            n = sum(r["id"] in changed for r in rows)
            cells.append(f"{n} / {len(rows)}")
            out["false_redactions"].setdefault("transcript file paths", {})[s] = {
                "changed": n,
                "lines": len(rows),
            }
        print("| file paths of real transcripts | " + " | ".join(cells) + " |")
    if run.get("real_import"):
        ri = run["real_import"]
        print(
            f"\nimport of the 300 real sessions: {ri['learnings']} learnings, "
            f"{ri['learnings_with_a_redacted_path']} with a redacted file path "
            f"({ri['file_paths_redacted']} of {ri['file_paths']} paths); "
            f"{ri['signatures_redacted']} of {ri['signatures']} signatures and {ri['resolutions_redacted']} "
            "resolutions hold a placeholder"
        )
        out["real_import"] = ri
    if run.get("timing"):
        t = run["timing"]
        print(
            f"\ntime: {t['transcripts_ms_per_mb']:.0f} ms per MB of transcript text "
            f"({t['transcripts_ms_per_mb'] / 10:.1f} ms per 100 kB), {t['secrets_ms_per_mb']:.0f} ms per MB of "
            f"secret-dense text; import {run['import_ms']:.1f} ms (-X importtime), first call on a 4 kB error "
            f"{t['first_call_ms']:.1f} ms, then {t['error_ms']:.2f} ms per call"
        )
        out["timing"] = t | {"import_ms_importtime": run["import_ms"]}
    return out


def measure(
    tree: Path | None, paths: list[str], secrets: list[dict], ordinary: list[dict], tmp: Path, label: str
) -> dict:
    run: dict = {"paths": {}}
    store_cases = distinct(secrets)
    for path in paths:
        work = tmp / label / path
        home = work / "home"
        home.mkdir(parents=True)
        t0 = time.perf_counter()
        if path == "redact":
            run["paths"]["redact"] = path_redact(secrets, work, tree)
            outputs = redacted_texts(ordinary, work / "ordinary", tree)
            run["outputs"] = outputs
            run["changed"] = {r["id"] for r, o in zip(ordinary, outputs, strict=True) if o != r["text"]}
        elif path == "import":
            run["paths"]["import"] = path_import(store_cases, home, tree)
            if SWECB.exists():
                (work / "real" / "home").mkdir(parents=True)
                run["real_import"] = real_import(work / "real" / "home", tree)
        else:
            run["paths"][path] = globals()[f"path_{path}"](store_cases, home, tree)
        print(f"{label} {path}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if "redact" in paths:
        run["timing"] = timing(tree, ordinary, secrets)
        run["import_ms"] = import_time(tree)
    return run


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paths", nargs="*", default=list(PATHS), choices=PATHS)
    ap.add_argument(
        "--release", default=RELEASE, help=f"commit run side by side (default {RELEASE}; '' skips)"
    )
    ap.add_argument("--release-paths", nargs="*", default=list(PATHS), choices=PATHS)
    ap.add_argument("--show", choices=SPLITS, help="print the leaks and false redactions of one half")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("worker_args", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        a = [Path(x) for x in args.worker_args]
        {"redact": worker_redact, "hooks": worker_hooks}[args.worker](*a)
        return 0
    secrets, ordinary, missing = load()
    if missing:
        print(f"missing corpora (run bench/redaction/sources.py): {', '.join(missing)}", file=sys.stderr)
    load_avg = Path("/proc/loadavg").read_text().split()[:3]
    summary: dict = {"load_average": load_avg, "missing_corpora": missing, "release": args.release}
    print(f"{len(secrets)} secret cases, {len(ordinary)} ordinary lines; load average {' '.join(load_avg)}")
    with tempfile.TemporaryDirectory(prefix="recall-redaction-") as tmp:
        tmp_path = Path(tmp)
        current = measure(None, args.paths, secrets, ordinary, tmp_path, "this checkout")
        summary["current"] = report("this checkout", secrets, ordinary, current)
        if args.release:
            tree = release_tree(tmp_path, args.release)
            paths = [p for p in args.release_paths if p in args.paths]
            released = measure(tree, paths, secrets, ordinary, tmp_path, f"release {args.release}")
            summary["release_run"] = report(f"release {args.release}", secrets, ordinary, released)
    if args.show:
        from recall_agent.redact import redact

        for c in secrets:
            if c["split"] == args.show and current["paths"].get("redact", {}).get(c["id"]):
                print(f"\nLEAK {c['id']} [{structure_of(c)}]: {redact(c['text'])[:300]!r}")
        for r in ordinary:
            if r["split"] == args.show and r["id"] in current.get("changed", set()):
                print(f"\nFALSE {r['id']}: {r['text'][:200]!r}\n   -> {redact(r['text'])[:200]!r}")
    summary["load_average_after"] = Path("/proc/loadavg").read_text().split()[:3]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
