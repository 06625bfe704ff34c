"""What a shell command is, for the capture rules: which check it runs, and when two runs are the same check.

A command line is split at `&&`, `||`, `;` and `|` into segments. Output plumbing (`| tail`, `| grep x`,
`2>&1`), a leading `cd DIR &&` and environment assignments are folded away; setup segments (`cd`,
`source`, `export`, `mkdir`, ...) and probes (`ls`, `grep`, `git status`, ... — they look at things, and
their failure is an answer, not an error) are not checks. What is left are the command's checks, each with

- `key`: the segment, whitespace-folded;
- `family`: the program and its subcommand (`pytest`, `npm test`, `git push`, `python app.py`), with an
  interpreter's version folded (`python3.11` and `python` are one program);
- `targets`: the remaining non-option arguments.

A later run is the same check as a failure when one of its checks has the failure's key, or its family
and targets that cover the failure's (`pytest tests/` covers `pytest tests/test_a.py::test_x`), or runs the
same script or targets under another interpreter or program version (`python t.py` → `python3 t.py`).
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from recall_agent.capture import wording
from recall_agent.capture.wording import cut

_WRAPPERS = {"sudo", "time", "env", "nice", "npx", "bunx", "command", "exec", "stdbuf", "timeout", "gtimeout"}
# a wrapper's own options that take a value (`nice -n 10`, `sudo -u bob`, `timeout -s KILL 5`), and the
# wrappers whose first word after their options is theirs (`timeout 900 pytest`: the duration)
_TIMEOUT_OPTIONS = frozenset({"-s", "-k", "--signal", "--kill-after"})
_WRAPPER_VALUE_OPTIONS = {
    "nice": frozenset({"-n", "--adjustment"}), "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-U"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir"}), "npx": frozenset({"-p", "--package"}),
    "bunx": frozenset({"-p", "--package"}), "timeout": _TIMEOUT_OPTIONS, "gtimeout": _TIMEOUT_OPTIONS,
}  # fmt: skip
_WRAPPER_ARGUMENT = frozenset({"timeout", "gtimeout"})
_RUNNERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pnpm", "exec"), ("hatch", "run")}
_MULTI = {
    "git", "npm", "yarn", "pnpm", "bun", "cargo", "go", "make", "docker", "kubectl", "pip", "pip3", "uv",
    "poetry", "dotnet", "mvn", "gradle", "gradlew", "bundle", "rake", "terraform", "helm", "deno", "just",
    "tox", "nox", "mix", "swift", "rails", "conda", "brew", "apt", "apt-get", "gh", "az", "aws", "gcloud",
    "recall",
}  # fmt: skip
INTERPRETERS = {"python", "node", "ruby", "bash", "sh", "zsh", "perl", "php", "deno", "ts-node", "pypy"}
# commands that look at things rather than build, run or test them
PROBES = frozenset(
    {
        "ls", "cat", "head", "tail", "less", "grep", "egrep", "fgrep", "rg", "ag", "find", "fd", "test", "[",
        "which", "type", "whereis", "stat", "file", "wc", "pwd", "echo", "printf", "diff", "cmp", "tree",
        "du", "df", "ps", "pgrep", "sleep", "true", "false", "readlink", "realpath", "jq", "sort", "uniq",
        "git status", "git diff", "git log", "git show", "git grep", "git rev-parse", "git branch",
        "git ls-files", "git remote", "git config", "git stash", "git check-ignore", "git blame", "command",
        "python --version", "python -V", "pip show", "pip list", "pip freeze", "npm ls", "npm list", "env",
        "printenv", "date", "whoami", "hostname", "uname", "id", "sed -n", "awk", "cut", "tr", "xargs",
    }
)  # fmt: skip
# segments that prepare a run rather than run anything
SETUP = frozenset(
    {"cd", "source", ".", "export", "set", "unset", "mkdir", "pushd", "popd", "ulimit", "alias"}
)
# package managers' install commands: a fix that installs or pins a package
INSTALLS = frozenset(
    {
        "pip install", "pip3 install", "uv add", "uv pip", "poetry add", "conda install", "npm install",
        "npm i", "npm add", "yarn add", "pnpm add", "pnpm install", "bun add", "cargo add", "go get",
        "bundle add", "gem install", "apt install", "apt-get install", "brew install", "composer require",
    }
)  # fmt: skip
_PLUMBING_STAGE = re.compile(r" ?(?:tail|head|less|more|cat|tee|grep|wc|sort|uniq)\b[^|;&]*")
_REDIRECT = re.compile(r" ?\d?>&\d ?| ?\d?> ?/dev/null ?")
_CD_PREFIX = re.compile(r"^ ?cd (\"[^\"]*\"|'[^']*'|\S+) ?(?:&&|;) ?")
_SEPARATOR = re.compile(r"&&|\|\||;|\|")
_MASKING = re.compile(
    r"\|\| ?(?:true|:|echo\b|exit 0)|; ?(?:echo|true|exit 0)\b|\| ?(?:tail|head|grep|tee|less|more)\b"
)
_LEADING_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "("})
_BLOCK_WORDS = frozenset({"done", "fi", "}", ")", "esac", "for", "case", "select", "function", "return",
                          "break", "continue", ";;", "local", "declare", "read", "shift", "trap", "wait"})  # fmt: skip
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_VERSION_SUFFIX = re.compile(r"(?<=[a-z])[0-9][0-9.]*$")


@dataclass(frozen=True)
class Check:
    key: str
    family: str
    targets: tuple[str, ...] = ()
    program: str = ""  # the family's program with its version folded (python3.11 -> python)
    probe: bool = False
    setup: bool = False


@dataclass(frozen=True)
class Command:
    """A command line as the capture rules see it."""

    text: str  # whitespace-folded, plumbing and `cd` prefix kept
    cwd: str | None  # the folder of a leading `cd DIR &&`
    checks: tuple[Check, ...] = field(default_factory=tuple)
    masked: bool = False  # its exit code is not the check's (`| tail`, `|| true`, `; echo done`)
    # another tool's call with its inputs kept longer than `text` keeps them (TOOL_INPUT_FULL characters
    # each): only what a resolution says of a changed call reads it, never what compares calls
    full: str = field(default="", compare=False)

    @property
    def main(self) -> Check | None:
        """The check that decides the run: the last one that runs something (not setup, not a probe)."""
        real = [c for c in self.checks if not c.setup and not c.probe]
        return real[-1] if real else None

    @property
    def probe(self) -> bool:
        return self.main is None

    @property
    def installs(self) -> bool:
        return any(c.family in INSTALLS or c.family.split(" ")[0:2] == ["uv", "pip"] for c in self.checks)


@functools.lru_cache(maxsize=2048)
def parse(command: str) -> Command:
    """The checks of a command line (cached: a session runs the same few commands many times)."""
    text = " ".join(_lines_joined(command).split())
    cd = _CD_PREFIX.match(text)
    rest = text[cd.end() :] if cd else text
    stripped = _strip_plumbing(rest)
    masked = stripped != rest or _MASKING.search(rest) is not None
    rest = _REDIRECT.sub(" ", stripped)
    checks = tuple(c for c in (_check(part) for part in _segments(rest)) if c is not None)
    return Command(text=text, cwd=cd.group(1).strip("\"'") if cd else None, checks=checks, masked=masked)


_HEREDOC = re.compile(r"<<-? ?['\"]?([A-Za-z_][A-Za-z0-9_]{0,40})['\"]?")


def _lines_joined(command: str) -> str:
    """A multi-line script on one line: each line break outside quotes and here-documents is a `;` (as the
    shell reads it), a backslash-newline a space, a here-document's lines stay one argument of its command.
    Only line breaks change, so the result parses to the same checks again (`Command.text` is reparsed)."""
    if "\n" not in command:
        return command
    out: list[str] = []
    quote, heredoc = "", ""
    for line in command.split("\n"):
        if heredoc:
            out.append(" " + line)
            if line.strip() == heredoc:
                heredoc = ""
            continue
        if out:
            continued = not quote and out[-1].endswith("\\")
            if continued:
                out[-1] = out[-1][:-1]
            out.append(" " if quote or continued else " ; ")
        out.append(line)
        quote = _open_quote(line, quote)
        marks = _HEREDOC.findall(line) if not quote else []
        heredoc = marks[-1] if marks else ""
    return "".join(out)


def _open_quote(line: str, quote: str) -> str:
    """The quote still open at the end of `line`, given the one open at its start (a `#` after a blank
    starts a comment: nothing after it opens one)."""
    for i, ch in _unquoted(line, quote):
        if i == len(line):
            return ch
        if ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return ""
    return ""


def _unquoted(text: str, quote: str = "") -> Iterator[tuple[int, str]]:
    """Each character of `text` outside quotes, with its index, then (len(text), the quote still open). A
    backslash escapes the next character outside quotes and inside double quotes."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch == "\\":
            i += 1
        elif ch in "'\"":
            quote = ch
        else:
            yield i, ch
        i += 1
    yield n, quote


def _segments(text: str) -> list[str]:
    """The parts between `&&`, `||`, `;`, `|` and newlines outside quotes and here-documents (one pass)."""
    scan = _heredocs_blanked(text)  # the same length: a here-document's body splits nothing
    parts, start, n = [], 0, len(text)
    for i, ch in _unquoted(scan):
        if i < start or i == n or ch not in ";|&\n":
            continue  # the second character of `&&` / `||`, the end, or not a separator
        width = 2 if scan[i : i + 2] in ("&&", "||") else 1
        if ch != "&" or width == 2:
            parts.append(text[start:i])
            start = i + width
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _heredocs_blanked(text: str) -> str:
    """`text` with each here-document's body (as `_lines_joined` leaves it: `python - <<'EOF' a; b EOF`)
    blanked out, so that its `;`, `|` and quotes (Python code, a commit message) are not the shell's."""
    if "<<" not in text:
        return text
    out, pos = [], 0
    for m in _HEREDOC.finditer(text):
        if m.start() < pos:
            continue
        end = _heredoc_end(text, m.group(1), m.end())
        out.append(text[pos : m.end()])
        out.append(" " * (end - m.end()))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _heredoc_end(text: str, mark: str, start: int) -> int:
    """Where the body that starts at `start` ends: its marker standing alone as a word (end of the text, or a
    separator next); the text's end when the marker never comes."""
    i = text.find(mark, start)
    while i >= 0:
        after = text[i + len(mark) : i + len(mark) + 3].lstrip()
        if text[i - 1 : i].isspace() and (not after or after[0] in ";&|)"):
            return i
        i = text.find(mark, i + 1)
    return len(text)


def _strip_plumbing(cmd: str) -> str:
    """`cmd` without trailing `| tail`/`| grep x`/... stages (a loop, not one regex: linear time)."""
    while (i := cmd.rfind("|")) > 0 and cmd[i - 1] != "|" and _PLUMBING_STAGE.fullmatch(cmd[i + 1 :]):
        cmd = cmd[:i].rstrip()
    return cmd


def _unwrapped(words: list[str]) -> list[str]:
    """The words after a wrapper, its options and its own argument: `timeout 900 pytest -q` runs `pytest -q`
    (so a missing `timeout` is met by the same check without it, or under `gtimeout`)."""
    wrapper, rest = words[0], words[1:]
    if wrapper == "command" and rest[:1] in (["-v"], ["-V"]):
        return ["which", *rest[1:]]  # `command -v x` looks a program up, as `which x` does: a probe
    takes_value = _WRAPPER_VALUE_OPTIONS.get(wrapper, frozenset())
    while rest and rest[0].startswith("-") and rest[0] != "--":
        rest = rest[2:] if rest[0] in takes_value and len(rest) > 1 else rest[1:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    if wrapper in _WRAPPER_ARGUMENT and rest and _DURATION.fullmatch(rest[0]):
        rest = rest[1:]
    return rest


_DURATION = re.compile(r"\d+(?:\.\d+)?[smhd]?")


def _check(segment: str) -> Check | None:
    parts = segment.split()
    while parts and parts[0] in _LEADING_KEYWORDS:  # `do make x` is the check `make x`
        parts = parts[1:]
    key = " ".join(parts)
    try:
        words = shlex.split(key)
    except ValueError:
        words = key.split()
    if words and _ENV_ASSIGN.match(words[0]) and ("$(" in words[0] or "`" in words[0]):
        return None  # `n=$(awk ...)`: an assignment from a substitution, not a run of a check
    words = [w for w in words if not _ENV_ASSIGN.match(w)]
    # a multi-line script's lines are segments too: its keywords open or close blocks, they run nothing
    # (`done`, `fi`, `}`), or lead the command that does (`if grep -q x f` -> `grep -q x f`, above)
    if not words or words[0] in _BLOCK_WORDS:
        return None
    while words and (words[0] in _WRAPPERS or (len(words) > 1 and (words[0], words[1]) in _RUNNERS)):
        words = words[2:] if len(words) > 1 and (words[0], words[1]) in _RUNNERS else _unwrapped(words)
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if program.startswith("python") and len(rest) >= 2 and rest[0] == "-m":
        program, rest = rest[1], rest[2:]
    folded = _VERSION_SUFFIX.sub("", program) if program.startswith(tuple(INTERPRETERS)) else program
    args = [w for w in rest if not w.startswith("-")]
    family = program
    if (folded in _MULTI or folded in INTERPRETERS) and args:
        family = f"{program} {args[0]}"
        args = args[1:]
    first_flag = next((w for w in rest[:1] if w.startswith("-")), None)
    probe = (
        program in PROBES
        or family in PROBES
        or (first_flag is not None and f"{folded} {first_flag}" in PROBES)
    )
    return Check(
        key=key,
        family=family,
        targets=tuple(args),
        program=folded,
        probe=probe,
        setup=program in SETUP,
    )


TOOL_INPUT_SHOWN = 80  # characters of each input a tool call's text keeps (what calls are compared by)
TOOL_INPUT_FULL = 2000  # characters of each kept for saying what changed in a call (`Command.full`)


def tool_command(
    tool: str, tool_input: dict[str, object], text: str | None = None, full: str = ""
) -> Command:
    """Another tool's call (an MCP tool, a Skill) as a one-check command: the tool and its scalar inputs."""
    if text is None:
        text = tool_text(tool, tool_input)
    return Command(text=text, cwd=None, checks=(Check(key=text, family=tool, program=tool),), full=full)


def tool_text(tool: str, tool_input: dict[str, object], each: int = TOOL_INPUT_SHOWN) -> str:
    """The tool and its first six inputs by name, `each` characters of each (a structured one as JSON)."""
    parts = [tool]
    for name in sorted(tool_input)[:6]:
        value = tool_input[name]
        if isinstance(value, str | int | float | bool):
            parts.append(f"{name}={str(value)[:each]}")
        elif isinstance(value, dict | list):  # its shape is often what was wrong (`findings` nested)
            parts.append(f"{name}={_compact(value, each)}")
    return " ".join(" ".join(parts).split())


def _compact(value: dict | list, each: int = TOOL_INPUT_SHOWN) -> str:
    """A structured input as short JSON: its first `each` characters."""
    try:
        text = json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
    except ValueError:  # a circular value cannot come from JSON; say so rather than fail
        text = "…"
    return text[:each]


def option_values(command: str, option: str) -> list[str]:
    """The values a command line gives an option (`--error X`, `--error=X`), as the shell would pass them."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    values = []
    for i, word in enumerate(words):
        if word == option and i + 1 < len(words):
            values.append(words[i + 1])
        elif word.startswith(option + "="):
            values.append(word.split("=", 1)[1])
    return [_heredoc_body(v) for v in values]


def _heredoc_body(value: str) -> str:
    """`$(cat <<'MARK' ... MARK)` (how the skill passes text) -> the text between the markers."""
    lines = value.splitlines()
    if len(lines) >= 2 and lines[0].startswith("$(cat <<"):
        mark = lines[0].split("<<", 1)[1].strip().strip("'\"")
        body = lines[1:]
        if mark in body:
            body = body[: body.index(mark)]
        return "\n".join(body)
    return value


def same_check(
    failure: Command, later: Command, *, probes: bool = False, missing: Iterable[str] = ()
) -> bool:
    """Does `later` run the check that failed in `failure` (module docstring)? With `probes`, a probe's
    failure counts as a check too (its error named a missing path: the probe that names one of `missing`,
    else the last one of the line)."""
    want = failure.main
    if want is None and probes:
        want = _naming(failure, missing) or next((c for c in reversed(failure.checks) if not c.setup), None)
    if want is None:
        return False
    return any(
        _same(want, have, probe=probes and want.probe)
        for have in later.checks
        if not have.setup and (probes or not have.probe)
    )


_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish"})


def _program(check: Check) -> str:
    """The program, with shells as one and `pip3`/`pip`, `python -m pkg`/`pkg` console scripts alike."""
    name = check.program.replace("_", "-")
    if name in _SHELLS:
        return "sh"
    return _VERSION_SUFFIX.sub("", name) if name.startswith(("pip", "python")) else name


def overlap(a: Iterable[str], b: Iterable[str]) -> float:
    """The share of words two commands have in common (two empty ones agree)."""
    wa, wb = set(a), set(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def variant(failure: Command, later: Command) -> dict[str, float] | None:
    """`later` runs the failed command's program another way (not the same check, not a rerun, a narrower
    selection or other output flags): `make typecheck` -> `make type`, `zsh -c X` -> `bash -c X`, `pip install
    x` -> `pip3 install --user x`. What tells a fix from the next unrelated command of that program (`go test`
    then `go build`) is for the variant model to weigh: these features. None when it is no variant."""
    a, b = failure.main, later.main
    if a is None or b is None or later.installs != failure.installs or _program(a) != _program(b):
        return None
    if a.program in INTERPRETERS and a.program == b.program:
        return None  # another script under the same interpreter is another check, not another way to run it
    if same_check(failure, later) or not_a_fix(failure, later) is not None:
        return None
    return {
        "variant_same_family": float(a.family == b.family),
        "variant_overlap": overlap(_words(a.key)[1:], _words(b.key)[1:]),
        "variant_program_swap": float(a.program != b.program),
        "variant_folder": float(failure.cwd != later.cwd),
        "variant_steps": float(len(_real(later)) != len(_real(failure))),
    }


def rewritten(failure: Command, later: Command) -> dict[str, float] | None:
    """`later` is the command line the shell refused, written again (`for path in ...` with `path` renamed,
    the quoted glob, the same loop as a `python3 - <<'PY'` script): for an error the shell itself printed, the
    fix is a changed command line whatever program it runs. The variant model weighs it on the same features
    as a variant, over the lines' words. None when `later` is the same check or runs nothing."""
    if not later.checks or same_check(failure, later) or later.installs != failure.installs:
        return None
    a, b = failure.main, later.main
    words_a, words_b = _words(failure.text), _words(later.text)
    return {
        "variant_same_family": float(a is not None and b is not None and a.family == b.family),
        "variant_overlap": overlap(words_a, words_b),
        "variant_program_swap": float(a is None or b is None or _program(a) != _program(b)),
        "variant_folder": float(failure.cwd != later.cwd),
        "variant_steps": float(len(_real(later)) != len(_real(failure))),
    }


_TOKEN = re.compile(r"[^\W_][\w./:@+~-]{2,}")


def replaced(failure: Command, later: Command, looks: bool = False) -> dict[str, float] | None:
    """`later` may do what the failed call did another way, with another program or tool (an MCP tool's page
    opened with `open URL`, `gh` missing and `git remote add` instead, a snippet run from the project's folder):
    what the variant model weighs for such a candidate. None when `later` runs nothing or is the same check.
    `replaced_kept`: the share of the failed call's words (a URL, a path, a name) the new call keeps. With
    `looks`, a look (a probe) may replace a failed look: `find` when `tree` is not installed."""
    if (
        (later.probe and not (looks and failure.probe))
        or same_check(failure, later)
        or not_a_fix(failure, later) is not None
    ):
        return None  # a rerun, other output flags or a narrower selection is never a fix
    words = set(_TOKEN.findall(failure.text))
    kept = len(words & set(_TOKEN.findall(later.text))) / len(words) if words else 0.0
    return {"variant_replaced": 1.0, "replaced_kept": kept}


def runs_test(failure: Command, later: Command, test_id: str) -> bool:
    """Does `later` run the test `test_id` that the run `failure` reported failing (`pytest tests` failed
    `tests/a.py::test_x`; `pytest tests/a.py::test_x` or `pytest tests/a.py` runs it)?"""
    want, have = failure.main, later.main
    if want is None or have is None or not (want.family == have.family or (_tests(want) and _tests(have))):
        return False
    return any(_covers(t, test_id) for t in have.targets)


_CREATORS = frozenset({"git clone", "mkdir", "touch", "cp", "mv", "ln", "wget", "curl", "tar", "unzip",
                       "git worktree", "python -m venv", "virtualenv", "npm init", "cargo new", "git init"})  # fmt: skip


def creates(command: Command, paths: list[str]) -> bool:
    """Does the command create one of `paths` (`git clone URL DIR`, `mkdir -p DIR`, `cp A DIR`, ...)?"""
    names = {p.rstrip("/").removeprefix("./") for p in paths} | {
        p.rstrip("/").rsplit("/", 1)[-1] for p in paths
    }
    for check in command.checks:
        if check.family in _CREATORS or check.program in _CREATORS or check.family.startswith("git clone"):
            for target in (*check.targets, check.family.split(" ", 1)[-1]):
                t = target.rstrip("/").removeprefix("./")
                if t in names or t.rsplit("/", 1)[-1] in names:
                    return True
    return False


def _same(want: Check, have: Check, probe: bool = False) -> bool:
    if want.key == have.key:
        return True
    if want.family == have.family:
        if not have.targets:  # `pytest` runs everything `pytest tests/x.py` ran; `ls` does not name `ls x`
            return not probe
        # a probe of `.` (`grep -rn other .`) looks at something else than the missing path it failed on
        outer = [o for o in have.targets if not (probe and o.rstrip("/") in (".", ""))]
        return bool(outer) and _all_covered(outer, want.targets)
    # the same script or targets under another interpreter / version of the program, or from another folder
    if want.program == have.program and want.program in INTERPRETERS:
        return _same_path(want.family.split(" ", 1)[-1], have.family.split(" ", 1)[-1])
    if want.program == have.program and want.targets and len(want.targets) == len(have.targets):
        return all(_same_path(a, b) for a, b in zip(want.targets, have.targets, strict=True))
    # the same tests run another way (`pytest tests/x/test_y.py` -> `python tests/runtests.py x.test_y`)
    return _tests(want) and _tests(have) and bool(_stems(want) & _stems(have))


def _same_path(a: str, b: str) -> bool:
    """One path, named from two folders (`testbed/t.py` and `t.py`)."""
    a, b = a.rstrip("/").removeprefix("./"), b.rstrip("/").removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


PAIRS_MAX = 250_000  # target pairs one comparison looks at: a run naming thousands stays linear


def _all_covered(outer: Sequence[str], inner: Sequence[str], other_path: bool = False) -> bool:
    """Every inner target is one of `outer` or covered by one (`_covers`; with `other_path`, by one that is not
    the same path named from another folder). Past PAIRS_MAX pairs looked at, not shown covered (False)."""
    exact, budget = frozenset(outer), PAIRS_MAX
    for t in inner:
        if t in exact:
            continue
        budget -= len(outer)
        if budget < 0 or not any(_covers(o, t) and not (other_path and _same_path(o, t)) for o in outer):
            return False
    return True


def _covers(outer: str, inner: str) -> bool:
    outer = outer.rstrip("/").removeprefix("./")
    inner = inner.removeprefix("./")
    if outer.endswith("..."):  # go's `./...`, `./pkg/...`: every package below
        return inner.startswith(outer[:-3].rstrip("/"))
    return (
        inner == outer
        or inner.startswith(outer + "/")
        or inner.startswith(outer + "::")
        or outer == "."
        or _same_path(inner.split("::", 1)[0], outer)
    )


_TEST_WORDS = ("pytest", "runtests", "test", "unittest", "nose", "tox", "jest", "vitest", "mocha", "rspec")


def _tests(check: Check) -> bool:
    return any(w in check.family for w in _TEST_WORDS)


# linters and analysers: like a test run, one that checks fewer files or a sub-folder of what failed passes
# because it looks at less (`ruff check a.py b.py` -> `ruff check a.py`, `dart analyze lib/x/` -> `lib/x/domain/`)
_LINTERS = frozenset({"ruff", "flake8", "pylint", "mypy", "pyright", "eslint", "tsc", "golangci-lint", "staticcheck",
                      "markdownlint", "markdownlint-cli2", "shellcheck", "biome", "stylelint", "swiftlint", "rubocop",
                      "vale", "black", "isort", "prettier"})  # fmt: skip
_ANALYSES = frozenset({"go vet", "cargo clippy", "dart analyze", "flutter analyze"})


def _lints(check: Check) -> bool:
    # `go vet` and `cargo clippy` parse as a family; `dart analyze`'s subcommand parses as its first target
    first = f"{check.program} {check.targets[0]}" if check.targets else ""
    return check.program in _LINTERS or check.family in _ANALYSES or first in _ANALYSES


def _stems(check: Check) -> set[str]:
    """The test modules a test run names: `tests/x/test_y.py::T::t` and `x.test_y.T` both name test_y."""
    stems = set()
    for target in check.targets:
        head = target.split("::", 1)[0].removesuffix(".py")
        for part in re.split(r"[/.]", head):
            if part.startswith("test") and len(part) > 4:
                stems.add(part)
    return stems


def moved(shell: list[str], command: Command) -> list[str]:
    """The shell's folder after a command that ran: its `cd`s followed (relative ones stack, `..` pops, an
    absolute or home one starts over)."""
    out = list(shell)
    targets = ([command.cwd] if command.cwd else []) + [
        c.targets[0] if c.targets else "~" for c in command.checks if c.family == "cd"
    ]
    for target in targets:
        if target.startswith(("/", "~")):
            out = [p for p in target.split("/") if p not in ("", "~")][-1:]  # its last part is what names it
            continue
        for part in target.split("/"):
            if part == "..":
                out = out[:-1]
            elif part not in ("", "."):
                out.append(part)
    return out


def inside(shell: list[str], path: str) -> bool:
    """Does a relative path start with the folder the shell is already in (`testbed/x` inside testbed)?"""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return bool(shell and parts) and not path.startswith(("/", "~")) and parts[0] == shell[-1]


def _naming(failure: Command, missing: Iterable[str]) -> Check | None:
    """The check of a line that named a missing path (`ls x/y && echo done`: `ls`, not the `echo` after it)."""
    names = {m.rstrip("/").removeprefix("./") for m in missing}
    return next(
        (c for c in failure.checks if any(t.rstrip("/").removeprefix("./") in names for t in c.targets)), None
    )


def uses_inner(command: Command, failure: Command, missing: list[str], folder: str) -> bool:
    """Does a command that ran use a missing `folder/x` path as `x` (the shell was already in folder), or
    rerun the failing program from where it is (`ls testbed/` -> `ls`)?"""
    inner = [m.removeprefix("./").split("/", 1)[1] if "/" in m.removeprefix("./") else "" for m in missing]
    want = _naming(failure, missing) or (failure.checks[-1] if failure.checks else None)
    for check in command.checks:
        if check.setup:
            continue
        for target in check.targets:
            t = target.rstrip("/").removeprefix("./")
            if t and any(i.rstrip("/").startswith(t) or t.startswith(i.rstrip("/")) for i in inner if i):
                return True
        if want is not None and check.program == want.program and not any(folder in t for t in check.targets):
            return True
    return False


ALREADY_THERE = " (the shell was already there)"


def change(before: Command, after: Command, context: bool = True) -> str | None:
    """How `after` differs from `before` when the difference is the fix (another program version, flags,
    arguments, working folder); None when they are the same command. Long lines that look alike: what
    changed, then (with `context`) the passing line around it."""
    if before.text == after.text or not_a_fix(before, after) in ("output", "narrowed"):
        return None
    # the same checks: the folder or the setup around them changed (of two calls that only look, their looks)
    if _real(before) == _real(after) and (_real(before) or _looks(before) == _looks(after)):
        if after.cwd and after.cwd != before.cwd:
            return f"ran it after `cd {after.cwd}`"
        dropped = [c.key for c in before.checks if c.setup and c not in after.checks]
        if before.cwd and not after.cwd:
            dropped.insert(0, f"cd {before.cwd}")
        added = [c.key for c in after.checks if c.setup and c not in before.checks]
        if added:
            return f"ran it after `{'; '.join(added)}`"
        if dropped:
            return f"ran it without `{'; '.join(dropped)}`{ALREADY_THERE}"
        return _probes_changed(before, after)
    dropped = _only_dropped(before, after)
    if dropped:
        return f"ran it without `{dropped}` (`{_shown(after)}`)"
    moved = before.cwd != after.cwd
    shown_after, shown_before = _shown(after, moved), _shown(before, moved)
    # the folder said when it changed; a tool call's longer inputs when both calls have them (a call read
    # back from the state of an older version has only its text)
    full = bool(before.full and after.full)
    plain = _plain(before, moved, full), _plain(after, moved, full)
    if max(len(plain[0]), len(plain[1])) > ALIKE_MIN:
        # long lines that look alike: what changed, said first; else what changed in the check that decides
        mains = [_shown(c, moved, 10**6).replace("`", "'") for c in (before, after)]
        led = wording.led(*plain, context) or (
            wording.led(*mains, context) if max(len(m) for m in mains) > ALIKE_MIN else None
        )
        if led:
            return led
    if shown_after != shown_before and not shown_after.endswith("…"):
        return f"`{shown_after}` instead of `{shown_before}`"
    # the shortened texts hide the change: the whole lines when short, else the segment that changed (`hk x &&
    # git commit` -> `mise x hk -- hk x && git commit`), else the words that differ
    full_before, full_after = before.text.replace("`", "'"), after.text.replace("`", "'")
    if max(len(full_before), len(full_after)) <= SHOWN_MAX:
        return f"`{full_after}` instead of `{full_before}`"
    if shown_after == shown_before:
        segment = _changed_segment(before, after)
        if segment:
            return segment
    shown_before, shown_after = differing(full_before, full_after)
    return f"`{shown_after}` instead of `{shown_before}`"


def _only_dropped(before: Command, after: Command) -> str | None:
    """The words `after` left out of `before` when that is all that changed (`python -m pytest x` ->
    `pytest x`: `python -m`; `gh pr create … --label patch` -> `gh pr create …`: `--label patch`), the
    leading `cd DIR` and the checks compared, output plumbing not; None when anything was added or
    replaced. "X instead of Y" hides such a difference in two long lines that look alike."""

    def words(cmd: Command) -> list[str]:
        return [*(["cd", cmd.cwd, "&&"] if cmd.cwd else []), *" && ".join(_real(cmd)).split()]

    a, b = words(before), words(after)
    if not b or len(b) >= len(a) or not set(b) <= set(a):  # nothing was only left out (most pairs: no diff)
        return None
    import difflib  # here, not at the top: the hooks import this module, and most pairs never get this far

    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops or any(op[0] != "delete" for op in ops):
        return None
    gone = [" ".join(a[i1:i2]).removesuffix(" &&").removeprefix("&& ") for _, i1, i2, _, _ in ops]
    return cut(" … ".join(g for g in gone if g), 80) or None


def _probes_changed(before: Command, after: Command) -> str | None:
    """The same checks, and the difference is a wait: the `sleep 30` the client refused (`sleep 30 && gh pr
    view 94` -> `gh pr view 94`), or one that gave a server time to start. (An `echo` or `ls` around the
    same checks is a rerun, never a fix.)"""
    keys_before, keys_after = {c.key for c in before.checks}, {c.key for c in after.checks}
    gone = [c.key for c in before.checks if c.family == "sleep" and c.key not in keys_after]
    new = [c.key for c in after.checks if c.family == "sleep" and c.key not in keys_before]
    if gone and not new:
        return f"ran it without `{cut('; '.join(gone))}`"
    if new and not gone:
        return f"ran it after `{cut('; '.join(new))}`"
    return None


def _changed_segment(before: Command, after: Command) -> str | None:
    """The same last check: the difference is in another segment, said when it fits whole."""
    gone = [c.key for c in before.checks if not c.setup and c.key not in {x.key for x in after.checks}]
    new = [c.key for c in after.checks if not c.setup and c.key not in {x.key for x in before.checks}]
    if any(len(k) > SHOWN_MAX for k in gone + new):
        return None
    if gone and new:
        return f"`{new[0]}` instead of `{gone[0]}`"
    if new:
        return f"ran it after `{cut('; '.join(new))}`"
    if gone:
        return f"ran it without `{cut('; '.join(gone))}`"
    return None


SHOWN_MAX = 140
ALIKE_MIN = 60  # characters of a command line up to which "`after` instead of `before`" is read at a glance


def _plain(cmd: Command, with_folder: bool = True, full: bool = True) -> str:
    """A command line as its checks see it: the leading `cd DIR &&` kept (`with_folder`), its output
    plumbing (`| tail -5`, `2>&1`) left out (how much of a run was shown is never the fix), backquotes as
    quotes; another tool's call with its inputs as `Command.full` keeps them."""
    if cmd.full and full:
        return cmd.full.replace("`", "'")
    cd = _CD_PREFIX.match(cmd.text)
    rest = cmd.text[cd.end() :] if cd else cmd.text
    rest = " ".join(_REDIRECT.sub(" ", _strip_plumbing(rest)).split())
    return ((f"cd {cd.group(1)} && " if cd and with_folder else "") + rest).replace("`", "'")


def differing(before: str, after: str, context: int = 2) -> tuple[str, str]:
    """The words of two command lines that differ, with up to `context` words around them, `…` where words
    were left out (what a summary shows when the shortened commands look alike)."""
    import difflib

    a, b = before.split(), after.split()
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return before, after

    def window(words: list[str], start: int, end: int) -> str:
        lo, hi = max(0, start - context), min(len(words), end + context)
        text = ("… " if lo else "") + " ".join(words[lo:hi]) + (" …" if hi < len(words) else "")
        return cut(text, SHOWN_MAX)

    return window(a, ops[0][1], ops[-1][2]), window(b, ops[0][3], ops[-1][4])


# options that change only what a run prints, never what it checks (pytest, unittest, go test, cargo, jest...)
_OUTPUT_FLAGS = frozenset(
    {
        "-v", "-vv", "-vvv", "-q", "-qq", "-s", "--verbose", "--quiet", "--no-header", "--no-summary",
        "--capture=no", "--color", "--no-color", "--disable-warnings", "-rA", "-ra", "-rf", "-rs", "-rfE",
        "--showlocals", "-l", "--durations", "--nocapture", "--show-output", "--reporter", "--silent",
        "--full-trace", "--no-cov", "--tb", "-p", "--colors", "-W",
    }
)  # fmt: skip
_OUTPUT_VALUE_FLAGS = frozenset({"--tb", "--durations", "--reporter", "--color", "-p", "-W"})
_SHORT_OUTPUT = frozenset("vqsl")
# options that narrow what a test run checks (fewer tests run, or it stops at the first failure)
_NARROWING = frozenset(
    {"-k", "-x", "--exitfirst", "--lf", "--last-failed", "--ff", "--maxfail", "-m", "--deselect", "-run",
     "--run", "-t", "--testNamePattern", "--bail", "--only", "--filter", "--exact", "--sw", "--stepwise"}
)  # fmt: skip
_NARROWING_VALUE = frozenset({"-k", "--maxfail", "-m", "--deselect", "-run", "--run", "-t", "--testNamePattern",
                              "--filter"})  # fmt: skip


def _words(key: str) -> list[str]:
    try:
        return shlex.split(key)
    except ValueError:
        return key.split()


def _selection(check: Check) -> tuple[tuple[str, ...], frozenset[str]]:
    """A check's words without output-only options, and the narrowing options it has (`-xvs` stops at the
    first failure: `-x`)."""
    words = _words(check.key)
    kept: list[str] = []
    narrowing: set[str] = set()
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        name = word.split("=", 1)[0]
        if name in _OUTPUT_FLAGS:
            skip = name in _OUTPUT_VALUE_FLAGS and "=" not in word and i + 1 < len(words)
            continue
        if re.fullmatch(r"-[a-zA-Z]{2,6}", word) and set(word[1:]) <= _SHORT_OUTPUT | {"x"}:
            if "x" in word:
                narrowing.add("-x")
            continue
        if name in _NARROWING:
            narrowing.add(name)
            skip = name in _NARROWING_VALUE and "=" not in word and i + 1 < len(words)
            continue
        kept.append(word)
    return tuple(kept), frozenset(narrowing)


def not_a_fix(before: Command, after: Command) -> str | None:
    """Why `after`, run after `before` failed, says nothing about a fix: "rerun" (the same checks), "output"
    (only what it prints changed: `-v`/`-q`/`-s`/`--tb=`, `2>&1`, `| head -N` / `| tail -N`), "narrowed" (a
    narrower test selection: `-k`, one test id, `-x`, fewer targets). None when the change may be the fix."""
    a, b = before.main, after.main
    if a is None or b is None or before.cwd != after.cwd:
        return None
    if _real(before)[:-1] != _real(after)[:-1] or _setup(before) != _setup(after):
        return None  # another step ran with it (`mv a b && cmd`, `pip install x && cmd`, `cd dir && cmd`)
    if a.key == b.key:
        return "rerun"
    if a.family != b.family or _requoted(a, b):
        return None
    (words_a, narrow_a), (words_b, narrow_b) = _selection(a), _selection(b)
    if words_a == words_b:
        return "narrowed" if narrow_b - narrow_a else "output"
    if not (narrow_b - narrow_a or b.targets != a.targets):
        return None
    if not (_tests(b) or _lints(b)):
        return None
    # the same targets named from another folder (`pytest testbed/t.py` -> `pytest t.py`): a folder fix
    if (
        len(a.targets) == len(b.targets)
        and all(_same_path(x, y) for x, y in zip(a.targets, b.targets, strict=True))
        and a.targets != b.targets
    ):
        return None
    # fewer or narrower targets, every one inside what the failing run checked
    inside = bool(b.targets) and _all_covered(a.targets, b.targets, other_path=True)
    inside = inside or bool(not a.targets and b.targets)
    targets_a, targets_b = frozenset(a.targets), frozenset(b.targets)
    rest_a = [w for w in words_a if w not in targets_a]
    rest_b = [w for w in words_b if w not in targets_b]
    if inside and rest_a == rest_b:
        return "narrowed"
    if narrow_b - narrow_a and rest_a == rest_b and a.targets == b.targets:
        return "narrowed"
    return None


def _requoted(a: Check, b: Check) -> bool:
    """The same words, quoted otherwise: what the shell made of them changed (zsh's `no matches found` for
    an unquoted `app/[locale]/page.tsx`, a `$` or space that split a word)."""
    return a.key != b.key and _words(a.key) == _words(b.key)


def _real(cmd: Command) -> tuple[str, ...]:
    return tuple(c.key for c in cmd.checks if not c.setup and not c.probe)


def _looks(cmd: Command) -> tuple[str, ...]:
    return tuple(c.key for c in cmd.checks if not c.setup)


def _setup(cmd: Command) -> tuple[str, ...]:
    return tuple(c.key for c in cmd.checks if c.setup)


def _shown(cmd: Command, with_folder: bool = False, limit: int = SHOWN_MAX) -> str:
    main = cmd.main
    text = main.key if main else cmd.text
    if with_folder and cmd.cwd:
        text = f"cd {cmd.cwd} && {text}"
    return text if len(text) <= limit else text[: limit - 1] + "…"
