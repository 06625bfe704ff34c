"""A learning checks itself against the repository at hand before it is shown.

A learning's fix evidence (models.FixEvidence; nothing else counts) names the files the fix changed, the functions around each
change and the change itself (`old` → `new`, `added …`, `removed …`, `created`), and the packages of a
dependency fix. Against a checkout that gives one verdict:

- `stale` ("may be stale"): a cited file is gone, none of its cited functions is in it any more, or it was
  rewritten (neither the old nor the fixed text is there);
- `applied` ("already applied here"): every cited change already reads the fixed way, every package is
  declared in one of the repository's manifests;
- `ok`: the evidence still fits (the old text is still there, the files and functions exist);
- `elsewhere` ("another case"): the fix was that the shell was already inside a folder, and it is not
  inside it now (the same `cd x: no such file or directory` has the other cause: `x` does not exist yet);
- `branch` ("fix on another branch"): what would be stale is a fix this checkout never had: git finds it on
  another branch or in a commit never merged (`recall_agent.branches`), and the verdict says where
  ("fix on branch feat-x, commit abc1234"); shown and injected with that note, never dropped;
- `unchecked`: nothing to check (no evidence, no checkout, another repository's learning).

A folder fix (`folder`: created, or the shell was already inside it) is checked against where the shell is
when the error comes back (`cwd`): a created folder that exists there, or that the shell is in, is
"already applied here".

Bounded: at most MAX_FILES cited files and the manifests at the top of the checkout, each read up to
MAX_BYTES; nothing outside the checkout is read. Standard library only (the hook's path).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_FILES = 20
MAX_BYTES = 512 * 1024
MAX_HITS = 2000  # occurrences of a fragment looked at before giving up
LOCATE_S = 1.5  # git's time to find where a fix that looks stale here lives (branches.py), per learning
ELLIPSIS = "…"
ARROW = " → "
# dependency manifests, at the top of a checkout (a monorepo's nested ones are not looked for)
MANIFESTS = (
    "pyproject.toml", "setup.cfg", "setup.py", "Pipfile", "environment.yml", "package.json", "Cargo.toml",
    "go.mod", "Gemfile", "composer.json",
)  # fmt: skip
_NAME_TOKEN = re.compile(r"[a-z0-9][a-z0-9._/-]*")
VERDICTS = ("stale", "applied", "elsewhere", "branch", "ok", "unchecked")
LABELS = {"stale": "may be stale", "applied": "already applied here", "elsewhere": "another case here",
          "branch": "fix on another branch", "ok": "still applies", "unchecked": ""}  # fmt: skip
# the order matches are shown in, within their ranking: fixes that fit first (one on another branch among
# them: it is not in this checkout yet), then one already in place, then the other case of the same error,
# then the stale
SHOWN_ORDER = {"ok": 0, "unchecked": 0, "branch": 0, "applied": 1, "elsewhere": 2, "stale": 3}


@dataclass(frozen=True)
class Check:
    verdict: str
    reason: str = ""

    @property
    def label(self) -> str:
        return LABELS[self.verdict]

    def as_dict(self) -> dict[str, str]:
        return {"verdict": self.verdict, "label": self.label, "reason": self.reason}


UNCHECKED = Check("unchecked")


def check(
    fix: dict[str, Any] | None,
    root: Path | None,
    cwd: str | Path | None = None,
    locate_s: float = LOCATE_S,
) -> Check:
    """The verdict of a learning's evidence (`fix`) against the checkout `root`, and for a folder fix,
    against the folder the shell is in now (`cwd`). A stale verdict asks git where the fix lives for at
    most `locate_s` seconds (0: not at all)."""
    fix = fix if isinstance(fix, dict) else {}
    folder = fix.get("folder")
    if cwd is not None and isinstance(folder, dict) and isinstance(folder.get("path"), str):
        return _folder_verdict(folder["path"], str(folder.get("cause")), str(cwd))
    if root is None:
        return UNCHECKED
    # only recorded evidence counts: a bare touched path (a learning from before the evidence existed, or
    # a server's that names a file relative to somewhere else) says too little to call a learning stale
    files = [f for f in fix.get("files") or [] if isinstance(f, dict) and isinstance(f.get("path"), str)]
    stale: list[str] = []
    stale_paths: list[str] = []
    applied: list[str] = []
    fits = 0
    for item in files[:MAX_FILES]:
        verdict, reason = _file_verdict(root, item)
        if verdict == "stale":
            stale.append(reason)
            stale_paths.append(item["path"])
        elif verdict == "applied":
            applied.append(reason)
        elif verdict == "ok":
            fits += 1
    packages = [
        p for p in fix.get("packages") or [] if isinstance(p, dict) and isinstance(p.get("name"), str)
    ]
    if packages:
        declared = _declared(root)
        for pkg in packages[:MAX_FILES]:
            where = declared.get(_norm_name(pkg["name"]))
            if where:
                applied.append(f"`{pkg['name']}` is declared in {where}")
            else:
                fits += 1
    if stale:
        located = _locate(fix, root, stale_paths, locate_s)
        if located is not None:
            return Check("branch", located.describe())
        return Check("stale", "; ".join(stale[:3]))
    if applied and not fits:
        return Check("applied", "; ".join(applied[:3]))
    if applied or fits:
        return Check("ok")
    return UNCHECKED


def _locate(fix: dict[str, Any], root: Path, stale_paths: list[str], budget_s: float) -> Any:
    """Where a fix that looks stale here lives (`branches.locate`), when `root` is a git checkout."""
    if budget_s <= 0:
        return None
    from recall_agent import branches, repo

    top = repo.toplevel(root)
    return branches.locate(fix, top, stale_paths, budget_s) if top is not None else None


def annotate(
    matches: list[dict[str, Any]],
    root: Path | None,
    repo: str | Iterable[str],
    cwd: str | Path | None = None,
    locate_s: float = LOCATE_S,
) -> list[dict[str, Any]]:
    """Each match of this repository gets `check` (Check.as_dict()) and the matches are reordered by it
    (SHOWN_ORDER; the ranking is kept within each verdict). Matches of other repositories are not checked
    against this checkout (`repo`: its identity, or every name it goes by, `recall_agent.repo.aliases`).
    Finding where stale-looking fixes live shares `locate_s` seconds."""
    import time

    names = {repo} if isinstance(repo, str) else set(repo)
    deadline = time.monotonic() + locate_s
    for m in matches:
        same = m.get("repo") in names
        left = max(0.0, deadline - time.monotonic())
        result = check(m.get("fix"), root, cwd, left) if same else UNCHECKED
        m["check"] = result.as_dict()
    return sorted(matches, key=lambda m: SHOWN_ORDER.get(m["check"]["verdict"], 0))


def _folder_verdict(path: str, cause: str, cwd: str) -> Check:
    inside = shell_inside(cwd, path)
    if cause == "shell_inside":
        if inside:
            return Check("ok", f"the shell is in `{path}` now")
        return Check("elsewhere", f"the shell is not in `{path}` now")
    if inside:
        return Check("applied", f"the shell is in `{path}` now")
    try:
        exists = (Path(path) if os.path.isabs(path) else Path(cwd) / path).exists()
    except OSError:
        exists = False
    return Check("applied", f"`{path}` exists") if exists else Check("ok")


def shell_inside(cwd: str, path: str) -> bool:
    """Is the shell's folder `cwd` the folder `path` names (`testbed` from `/x/testbed`, `./a/testbed`)?"""
    want = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    have = [p for p in cwd.replace("\\", "/").split("/") if p not in ("", ".")]
    return bool(want) and ".." not in want and have[-len(want) :] == want


# ---------------------------------------------------------------------- one cited file


def _file_verdict(root: Path, item: dict[str, Any]) -> tuple[str, str]:
    rel = item["path"]
    path = _inside(root, rel)
    if path is None:
        return "unchecked", ""
    kind, old, new = parse_change(item.get("change"))
    if not path.is_file():
        return "stale", f"`{rel}` is gone"
    text = _read(path)
    if text is None:
        return "unchecked", ""
    flat = " ".join(text.split()).replace("`", "'")
    symbols = [s for s in item.get("symbols") or [] if isinstance(s, str) and s.strip()]
    if symbols and not any(has_word(text, s.rsplit(".", 1)[-1]) for s in symbols):
        return "stale", f"`{symbols[0]}` is no longer in `{rel}`"
    if kind == "replace":
        has_old, has_new = _has(flat, old), _has(flat, new)
        if has_new and not has_old:
            return "applied", f"`{rel}` already reads the fixed way"
        if not has_old and not has_new:
            return "stale", f"`{rel}` was rewritten since (neither the old nor the fixed text is there)"
        return "ok", ""
    if kind == "added":
        return ("applied", f"`{rel}` already has the added text") if _has(flat, new) else ("ok", "")
    if kind == "removed":
        return ("ok", "") if _has(flat, old) else ("applied", f"`{rel}` no longer has the removed text")
    if kind == "created":
        return "applied", f"`{rel}` exists"
    return "ok", ""


def parse_change(change: object) -> tuple[str, str, str]:
    """(kind, old, new) of a capture's change text (capture/edits.describe): replace, added, removed,
    created, or none."""
    if not isinstance(change, str) or not change.strip():
        return "none", "", ""
    text = change.strip()
    if text == "created":
        return "created", "", ""
    for kind in ("added", "removed"):
        if text.startswith(f"{kind} `") and text.endswith("`"):
            body = text[len(kind) + 2 : -1]
            return (kind, "", body) if kind == "added" else (kind, body, "")
    if text.startswith("`") and text.endswith("`") and "`" + ARROW + "`" in text:
        old, new = text[1:-1].split("`" + ARROW + "`", 1)
        return "replace", old, new
    return "none", "", ""


def _has(flat: str, fragment: str) -> bool:
    """Is the (whitespace-folded, maybe cut with …) fragment in the folded file text, not as a piece of a
    longer name (`import requests_oauth` is not in `import requests_oauthlib`)?"""
    cut = fragment.strip().endswith(ELLIPSIS)
    fragment = fragment.strip().removesuffix(ELLIPSIS).strip()
    return bool(fragment) and has_word(flat, fragment, open_end=cut)


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def has_word(text: str, word: str, open_end: bool = False) -> bool:
    """`word` in `text`, not inside a longer identifier at either end (where `word` itself begins or ends
    with an identifier character); `open_end`: the word was cut, anything may follow. Linear: str.find."""
    if not word:
        return False
    check_before, check_after = _word_char(word[0]), _word_char(word[-1]) and not open_end
    start = text.find(word)
    for _ in range(MAX_HITS):  # a file of one repeated word must not cost a find per character
        if start < 0:
            return False
        end = start + len(word)
        before_ok = not check_before or start == 0 or not _word_char(text[start - 1])
        after_ok = not check_after or end >= len(text) or not _word_char(text[end])
        if before_ok and after_ok:
            return True
        start = text.find(word, start + 1)
    return False


def _inside(root: Path, rel: str) -> Path | None:
    """`rel` under `root`, or None when it points outside (an absolute path elsewhere, `..`)."""
    try:
        base = root.resolve()
        path = Path(rel) if os.path.isabs(rel) else base / rel
        resolved = path.resolve()
        resolved.relative_to(base)
    except (OSError, ValueError, RuntimeError):
        return None
    return resolved


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            return fh.read(MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


# ---------------------------------------------------------------------- declared packages


def _norm_name(name: str) -> str:
    """PEP 503 normalisation (also fine for npm, cargo and go names): lower case, runs of -_. as -."""
    out: list[str] = []
    for ch in name.strip().lower():
        if ch in "-_.":
            if out and out[-1] != "-":
                out.append("-")
        else:
            out.append(ch)
    return "".join(out).strip("-")


def _declared(root: Path) -> dict[str, str]:
    """Normalised package name -> the manifest declaring it, for every name-like token of the manifests
    at the top of the checkout (requirements*.txt included)."""
    found: dict[str, str] = {}
    try:
        names = sorted(p.name for p in root.iterdir() if p.is_file())
    except OSError:
        return found
    wanted = [n for n in names if n in MANIFESTS or (n.startswith("requirements") and n.endswith(".txt"))]
    for name in wanted:
        text = _read(root / name)
        if text:
            for token in _tokens(text.lower()):
                found.setdefault(_norm_name(token), name)
    return found


def _tokens(text: str) -> Iterable[str]:
    """Runs of package-name characters."""
    return (m.group(0) for m in _NAME_TOKEN.finditer(text))
