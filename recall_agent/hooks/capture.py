"""Stop / SessionEnd: every error of the session that a later run resolved becomes one learning.

Per failing command (errors grouped by command key), the learning carries:
- `error_signatures`: the distinct error texts of that command (at most 3, redacted; the store normalizes);
- `file_paths_touched`: files the agent edited between the first failure and the resolving success
  (else all edits before it, else `git diff --name-only HEAD`);
- `ticket_id`: from the branch name, `RECALL_TICKET_PATTERN` (default tracker ids such as ABC-123);
- `task_type`: heuristics on branch prefix, then touched paths, then the command (wire task types);
- `resolution_summary`: 2-3 sentences of the agent's own message after the fix (the transcript's first
  assistant text after the resolving tool result, else `last_assistant_message`), else a factual line;
- `session_id`, `repo` (git top-level folder name), `confidence` 0.7 (below a hand-written `recall learn`).

Everything is redacted, then stored with `open_store().add()`, or POSTed to `$RECALL_SERVER_URL/v1/learnings`
(Bearer `RECALL_TOKEN`) when set; if the server cannot take it, it is kept locally and the log says so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recall_agent import repo
from recall_agent.hooks.events import ERROR_TEXT_MAX
from recall_agent.hooks.runtime import log
from recall_agent.learnings.extract import decisive
from recall_agent.redact import redact

DEFAULT_TICKET_PATTERN = r"(?<![A-Za-z0-9])([A-Za-z][A-Za-z0-9]{1,9}-\d{1,7})(?![0-9.])"
_NOT_PROJECT_KEYS = frozenset(
    [
        "fix",
        "bugfix",
        "hotfix",
        "feat",
        "feature",
        "release",
        "rc",
        "v",
        "ver",
        "version",
        "py",
        "python",
        "node",
        "test",
        "tests",
        "wip",
        "step",
        "part",
    ]
)
CAPTURE_CONFIDENCE = 0.7
TRANSCRIPT_TAIL_BYTES = 4 * 1024 * 1024
SUMMARY_MAX = 600
MAX_SIGNATURES = 3
MAX_FILES = 20

_FIX_WORDS = re.compile(
    r"(?i)\b(fix|fixed|fixes|resolv\w*|caus\w*|because|due to|root cause|the (?:issue|problem|error) was|"
    r"added|adding|changed|replaced|updated|renamed|installed|pinned|missing|instead|moved|removed|"
    r"corrected|wrong|needed|came from|does not exist|doesn't exist|failed because)\b"
)
_BRANCH_TYPES = [
    (re.compile(r"^(?:fix|bugfix|hotfix|bug)[/_-]", re.I), "bug_fix"),
    (re.compile(r"^(?:feat|feature)[/_-]", re.I), "feature"),
    (re.compile(r"^refactor[/_-]", re.I), "refactor"),
    (re.compile(r"^(?:docs?)[/_-]", re.I), "docs"),
    (re.compile(r"^(?:test|tests)[/_-]", re.I), "test"),
    (re.compile(r"^(?:ci|build)[/_-]", re.I), "ci_fix"),
    (re.compile(r"^(?:deps?|dependabot|renovate|chore/deps)[/_-]", re.I), "dependency"),
    (re.compile(r"^(?:migrat\w*)[/_-]", re.I), "migration"),
]
_DEP_FILES = re.compile(
    r"(?:^|/)(?:requirements[\w.-]*\.txt|pyproject\.toml|setup\.cfg|setup\.py|Pipfile(?:\.lock)?|poetry\.lock|"
    r"uv\.lock|package(?:-lock)?\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.(?:toml|lock)|go\.(?:mod|sum)|Gemfile"
    r"(?:\.lock)?|composer\.(?:json|lock))$"
)
_CI_FILES = re.compile(
    r"(?:^|/)(?:\.github/workflows/|\.gitlab-ci\.yml|Jenkinsfile|\.circleci/|azure-pipelines)"
)
_MIGRATION_FILES = re.compile(r"(?:^|/)(?:migrations?|alembic|db/migrate)/")
_TEST_FILES = re.compile(
    r"(?:^|/)(?:tests?/|test_[^/]+$|[^/]+_test\.\w+$|[^/]+\.(?:test|spec)\.\w+$|conftest\.py$)"
)


def capture(state: dict[str, Any], payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Learnings (wire `Learning` fields) for the resolved, not yet captured errors; marks them captured."""
    if not resolved_groups(state):
        return []
    root = state.get("repo_root") or state.get("cwd") or payload.get("cwd")
    transcript = _transcript_entries(payload.get("transcript_path"))
    last_message = payload.get("last_assistant_message")

    def explain(tool_use_id: str | None) -> str | None:
        text = _assistant_text_after(transcript, tool_use_id)
        return text or (last_message if isinstance(last_message, str) else None)

    return capture_resolved(
        state,
        session_id=str(payload.get("session_id") or state.get("session_id") or ""),
        root=root,
        branch=current_branch(Path(root)) if root else None,
        explain=explain,
    )


def resolved_groups(state: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Resolved, not yet captured errors, grouped by command key and resolving run (one learning per
    group): a command that failed, passed, then failed otherwise and passed again made two fixes."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in state["errors"]:
        if isinstance(entry, dict) and entry.get("resolved_ts") and not entry.get("captured"):
            by = entry.get("resolved_by")
            run = by.get("tool_use_id") if isinstance(by, dict) else None
            groups.setdefault(f"{entry.get('key')}\n{run}", []).append(entry)
    return groups


def capture_resolved(
    state: dict[str, Any],
    *,
    session_id: str,
    root: str | None,
    branch: str | None,
    explain: Callable[[str | None], str | None],
    use_git: bool = True,
) -> list[dict[str, Any]]:
    """The capture rules on a session record, wherever it came from (the hooks' state, or a transcript
    replayed by `recall import-sessions`). `explain(tool_use_id)` gives the agent's words after the
    resolving call; `use_git` allows `git diff` as the last source of touched files (only while the
    session's working tree is the one on disk). Marks the groups captured."""
    learnings = []
    for entries in resolved_groups(state).values():
        learning = _learning(state, entries, session_id, branch, explain, root, use_git)
        if learning:
            learnings.append(learning)
        for entry in entries:
            entry["captured"] = True
            state["captured"].append(entry.get("key"))
    return learnings


def _learning(
    state: dict[str, Any],
    entries: list[dict[str, Any]],
    session_id: str,
    branch: str | None,
    explain: Callable[[str | None], str | None],
    root: str | None,
    use_git: bool,
) -> dict[str, Any] | None:
    if not worth_learning(state, entries):
        return None
    signatures: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        if entry.get("text") and entry.get("ident") not in seen:
            seen.add(entry.get("ident"))
            signatures.append(decisive(redact(str(entry["text"])), ERROR_TEXT_MAX))
    if not signatures:
        return None
    first_ts = min(float(e.get("ts") or 0) for e in entries)
    resolved_ts = max(float(e.get("resolved_ts") or 0) for e in entries)
    resolving = (entries[-1].get("resolved_by") or {}) if entries else {}
    files = files_touched(state, first_ts, resolved_ts, root if use_git else None)
    text = explain(resolving.get("tool_use_id"))
    summary = summarize(text or "") or _fallback_summary(entries[-1], resolving, files)
    command = str(entries[-1].get("command") or "")
    return {
        "session_id": session_id[:128] or None,
        "repo": _repo_name(root),
        "file_paths_touched": [redact(f) for f in files],
        "error_signatures": signatures[-MAX_SIGNATURES:],
        "resolution_summary": redact(summary)[:2000],
        "ticket_id": redact(ticket) if (ticket := ticket_from_branch(branch)) else None,
        "task_type": task_type(branch, files, command),
        "confidence": CAPTURE_CONFIDENCE,
    }


# commands that look at things rather than build, run or test them: their failure is an answer ("no such
# file", "no match"), not an error someone fixes
_PROBES = frozenset(
    {
        "ls", "cat", "head", "tail", "less", "grep", "egrep", "fgrep", "rg", "ag", "find", "fd", "test", "[",
        "which", "type", "whereis", "stat", "file", "wc", "pwd", "echo", "printf", "diff", "cmp", "tree",
        "du", "df", "ps", "pgrep", "sleep", "true", "false", "readlink", "realpath", "jq", "sort", "uniq",
        "git status", "git diff", "git log", "git show", "git grep", "git rev-parse", "git branch",
        "git ls-files", "git remote", "git config", "git stash", "git check-ignore", "git blame",
    }
)  # fmt: skip
EXIT_CODE_LINE = re.compile(r"(?:Error: )?Exit code -?\d+")


def worth_learning(state: dict[str, Any], entries: list[dict[str, Any]]) -> bool:
    """Is a resolved group a fix worth keeping? Not when the command only looked at something (ls, grep,
        git status), when the error said nothing beyond its exit code (grep finding no match), or when the same
        command simply passed on a retry with nothing done in between (no edit, no command but looking around:
    a flaky run, not a fix)."""
    if str(entries[-1].get("family") or "") in _PROBES:
        return False
    if all(EXIT_CODE_LINE.fullmatch(str(e.get("text") or "").strip()) for e in entries):
        return False
    first_ts = min(float(e.get("ts") or 0) for e in entries)
    resolved_ts = max(float(e.get("resolved_ts") or 0) for e in entries)
    changes = [*state["files"], *(s for s in state["successes"] if s.get("family") not in _PROBES)]
    return any(isinstance(r, dict) and first_ts < float(r.get("ts") or 0) < resolved_ts for r in changes)


def _repo_name(root: str | None) -> str:
    return repo.name(Path(root), None) if root else "unknown"


# ---------------------------------------------------------------------- git facts (no git process)


def current_branch(root: Path) -> str | None:
    """The checked-out branch from `.git/HEAD` (a worktree's `.git` file is followed); None if detached."""
    git = root / ".git"
    try:
        if git.is_file():
            pointer = git.read_text(encoding="utf-8", errors="replace").strip()
            if pointer.startswith("gitdir:"):
                git = (root / pointer.split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None


def ticket_from_branch(branch: str | None) -> str | None:
    if not branch:
        return None
    pattern = os.environ.get("RECALL_TICKET_PATTERN") or DEFAULT_TICKET_PATTERN
    try:
        matches = list(re.finditer(pattern, branch))
    except re.error:
        log("capture", f"RECALL_TICKET_PATTERN is not a valid regex: {pattern!r}")
        pattern = DEFAULT_TICKET_PATTERN
        matches = list(re.finditer(pattern, branch))
    for match in matches:
        ticket = match.group(1) if match.groups() else match.group(0)
        if pattern == DEFAULT_TICKET_PATTERN and ticket.split("-")[0].lower() in _NOT_PROJECT_KEYS:
            continue  # fix-42, release-3: branch words, not tracker keys
        return (
            ticket.upper()[:64] if re.fullmatch(r"(?<![A-Za-z0-9])[A-Za-z0-9]+-\d+", ticket) else ticket[:64]
        )
    return None


def task_type(branch: str | None, files: list[str], command: str) -> str:
    """Wire task type: branch prefix first, then what the files are, then the failing command."""
    if branch:
        tail = branch.split("/", 1)[-1] if branch.count("/") > 1 else branch
        for pattern, kind in _BRANCH_TYPES:
            if pattern.search(branch) or pattern.search(tail):
                return kind
    if files:
        if all(f.endswith((".md", ".rst", ".txt")) and not _DEP_FILES.search(f) for f in files):
            return "docs"
        if any(_MIGRATION_FILES.search(f) for f in files):
            return "migration"
        if any(_CI_FILES.search(f) for f in files):
            return "ci_fix"
        if all(_DEP_FILES.search(f) for f in files):
            return "dependency"
        if all(_TEST_FILES.search(f) for f in files):
            return "test"
    if re.match(
        r"^\s*(?:pip|uv|poetry|npm|yarn|pnpm|cargo|bundle|go)\s+(?:install|add|sync|get|update)\b", command
    ):
        return "dependency"
    return "bug_fix" if files else "unknown"


def files_touched(state: dict[str, Any], first_ts: float, resolved_ts: float, root: str | None) -> list[str]:
    records = [f for f in state["files"] if isinstance(f, dict) and f.get("path")]
    during = [f["path"] for f in records if first_ts <= float(f.get("ts") or 0) <= resolved_ts]
    before = [f["path"] for f in records if float(f.get("ts") or 0) <= resolved_ts]
    files = during or before or _git_changed(root)
    return list(dict.fromkeys(files))[:MAX_FILES]


def _git_changed(root: str | None) -> list[str]:
    if not root or not (Path(root) / ".git").exists():
        return []
    try:
        out = subprocess.run(
            ["git", "diff", "--name-only", "HEAD"], cwd=root, capture_output=True, text=True, timeout=0.5
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [line for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []


# ---------------------------------------------------------------------- the agent's own words


def _transcript_entries(path: object) -> list[dict[str, Any]]:
    """The transcript's last entries (JSON Lines, read from the end, at most TRANSCRIPT_TAIL_BYTES)."""
    if not isinstance(path, str) or not path:
        return []
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - TRANSCRIPT_TAIL_BYTES))
            data = fh.read(TRANSCRIPT_TAIL_BYTES)
    except OSError:
        return []
    lines = data.split(b"\n")
    if size > TRANSCRIPT_TAIL_BYTES:
        lines = lines[1:]  # the first line was cut by the seek
    entries = []
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def _content_blocks(entry: dict[str, Any]) -> list[Any]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else entry.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _role(entry: dict[str, Any]) -> str | None:
    message = entry.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    return role or entry.get("type")


def _assistant_text_after(entries: list[dict[str, Any]], tool_use_id: str | None) -> str | None:
    """The first assistant text after the tool result with `tool_use_id` (the agent's words on the fix)."""
    if not tool_use_id:
        return None
    start = None
    for i, entry in enumerate(entries):
        for block in _content_blocks(entry):
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_result"
                and block.get("tool_use_id") == tool_use_id
            ):
                start = i
    if start is None:
        return None
    for entry in entries[start + 1 :]:
        if _role(entry) != "assistant":
            continue
        texts = [
            b["text"]
            for b in _content_blocks(entry)
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if any(t.strip() for t in texts):
            return "\n".join(texts)
    return None


def summarize(text: str, max_sentences: int = 3) -> str:
    """2-3 sentences that say what was wrong and what fixed it, in the message's own order."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"(?m)^[ \t]*(?:#+|[-*+]|\d+\.)[ \t]+", "", text)
    text = text.replace("**", "").replace("__", "")
    text = " ".join(text.split())
    if not text:
        return ""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`\"'(])", text) if s.strip()]
    scored = [(len(_FIX_WORDS.findall(s)), i, s) for i, s in enumerate(sentences) if len(s) > 3]
    useful = [t for t in scored if t[0] > 0]
    chosen = sorted(useful, key=lambda t: (-t[0], t[1]))[:max_sentences]
    for extra in scored:  # too little said about the fix: add the message's opening sentences for context
        if len(chosen) >= 2:
            break
        if extra not in chosen:
            chosen.append(extra)
    chosen.sort(key=lambda t: t[1])
    summary = " ".join(s for _, _, s in chosen)
    return summary if len(summary) <= SUMMARY_MAX else summary[: SUMMARY_MAX - 1].rstrip() + "…"


def _fallback_summary(entry: dict[str, Any], resolving: dict[str, Any], files: list[str]) -> str:
    command = " ".join(str(resolving.get("command") or entry.get("command") or "the command").split())[:200]
    edited = f"after editing {', '.join(files[:5])}" if files else "after changes in the session"
    return f"`{command}` succeeded {edited}."


# ---------------------------------------------------------------------- storing


def store(learnings: list[dict[str, Any]]) -> int:
    """Store (or POST) the learnings; returns how many were written. Raises nothing the caller must handle."""
    from recall_agent.models import Learning

    records = [Learning.model_validate(item) for item in learnings]
    server = os.environ.get("RECALL_SERVER_URL")
    pending = records
    if server:
        pending = [r for r in records if not _post(server, r)]
        if not pending:
            return len(records)
        log("capture", f"server {server} did not take {len(pending)} learning(s); kept locally")
    from recall_agent.learnings.store import open_store

    with open_store() as st:
        for record in pending:
            st.add(record)
    return len(records)


def _post(server: str, learning: Any) -> bool:
    import urllib.error
    import urllib.request

    url = server.rstrip("/") + "/v1/learnings"
    headers = {"Content-Type": "application/json"}
    token = os.environ.get("RECALL_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = learning.model_dump_json().encode()
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=0.8) as resp:
            return 200 <= resp.status < 300
    except (urllib.error.URLError, OSError, ValueError) as exc:
        log("capture", f"POST {url} failed: {exc}")
        return False
