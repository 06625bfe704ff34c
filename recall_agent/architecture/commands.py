"""A missing command (`bash: mocha: command not found`), answered from the repository: where it uses the
command (Makefile, scripts, CI files, package.json scripts, ...) and what declares it (a dependency of that
name in a manifest, or the manifest of the toolchain the command belongs to), with the project's install
command.

Only the files where commands are written are read: the root's build and task files, CI configurations,
and the shell scripts of the usual script folders (bounded: at most `MAX_FILES` files of `MAX_BYTES`).
"""

from __future__ import annotations

import re
from pathlib import Path

from recall_agent.architecture import manifests as mf

MAX_FILES = 200
MAX_BYTES = 256 * 1024
SHOWN = 5
KIND = "Missing command"

_PATTERNS = (
    re.compile(r"([\w.+-]{1,60}): command not found"),
    re.compile(r"\bsh: (?:\d{1,6}: )?([\w.+-]{1,60}): not found"),
    re.compile(r"\bcommand not found:\s*([\w.+-]{1,60})"),
    re.compile(r"\bmake(?:\[\d+\])?: ([\w.+-]{1,60}): (?:Command not found|No such file or directory)"),
    re.compile(r"'([\w.+-]{1,60})' is not recognized as an internal or external command"),
    re.compile(r"\benv: '?([\w.+-]{1,60})'?: No such file or directory"),
    re.compile(r"exec: \"([\w.+-]{1,60})\": executable file not found"),
)
ROOT_FILES = (
    "Makefile",
    "makefile",
    "GNUmakefile",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    "Taskfile.yaml",
    "package.json",
    "pyproject.toml",
    "tox.ini",
    "noxfile.py",
    "setup.cfg",
    "Rakefile",
    "Dockerfile",
    "docker-compose.yml",
    ".travis.yml",
    ".gitlab-ci.yml",
    "azure-pipelines.yml",
    "appveyor.yml",
    ".pre-commit-config.yaml",
    "Procfile",
    "build.sh",
    "Cargo.toml",
    "go.mod",
    "pom.xml",
    "Gemfile",
)
CI_DIRS = (".github/workflows", ".circleci", ".buildkite", ".gitlab", "ci", ".ci")
SCRIPT_DIRS = ("script", "scripts", "bin", "tools", "hack", "verify", "build", "dev", "ci", ".husky")
SCRIPT_SUFFIXES = ("", ".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd", ".mk", ".yml", ".yaml", ".rake")
# the toolchain a command belongs to -> the manifests that mean "this project uses that toolchain"
TOOLCHAINS = {
    "go": ("go.mod",),
    "gofmt": ("go.mod",),
    "cargo": ("Cargo.toml", "rust-toolchain.toml", "rust-toolchain"),
    "rustc": ("Cargo.toml", "rust-toolchain.toml", "rust-toolchain"),
    "rustup": ("rust-toolchain.toml", "rust-toolchain", "Cargo.toml"),
    "node": ("package.json", ".nvmrc", ".node-version"),
    "npm": ("package.json",),
    "npx": ("package.json",),
    "yarn": ("yarn.lock", "package.json"),
    "pnpm": ("pnpm-lock.yaml", "package.json"),
    "bun": ("bun.lockb", "bun.lock", "package.json"),
    "mvn": ("pom.xml",),
    "gradle": ("build.gradle", "build.gradle.kts"),
    "ruby": ("Gemfile", ".ruby-version"),
    "bundle": ("Gemfile", "Gemfile.lock"),
    "bundler": ("Gemfile", "Gemfile.lock"),
    "gem": ("Gemfile",),
    "rake": ("Rakefile", "Gemfile"),
    "poetry": ("poetry.lock", "pyproject.toml"),
    "uv": ("uv.lock", "pyproject.toml"),
    "pdm": ("pdm.lock", "pyproject.toml"),
    "pipenv": ("Pipfile", "Pipfile.lock"),
    "tox": ("tox.ini", "pyproject.toml"),
    "nox": ("noxfile.py",),
    "python": ("pyproject.toml", "setup.py", ".python-version"),
    "python3": ("pyproject.toml", "setup.py", ".python-version"),
    "pip": ("pyproject.toml", "requirements.txt"),
    "docker": ("Dockerfile", "docker-compose.yml"),
    "make": ("Makefile",),
}
_NODE_BIN = "node_modules/.bin"


SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish", "tcsh", "csh"})


def parse(text: str) -> str | None:
    """The command a `command not found` error names (`zsh: command not found: x` names x, not zsh)."""
    best: tuple[int, str] | None = None
    for pattern in _PATTERNS:
        for m in pattern.finditer(text[:20_000]):
            if m.group(1) in SHELLS:
                continue
            if best is None or m.start(1) < best[0]:
                best = (m.start(1), m.group(1))
            break
    return best[1] if best else None


def answer(root: Path, text: str) -> tuple[str, dict] | None:
    command = parse(text)
    if not command:
        return None
    uses = _uses(root, command, _named_file(text, command))
    declared = _declared(root, command)
    toolchain = [m for m in TOOLCHAINS.get(command, ()) if (root / m).is_file()]
    if not uses and not declared and not toolchain:
        return None
    parts = [f"{KIND} (read from the code): `{command}`"]
    if uses:
        more = f" (+{len(uses) - SHOWN} more)" if len(uses) > SHOWN else ""
        parts.append("used in " + ", ".join(f"{p}:{n}" for p, n, _ in uses[:SHOWN]) + more)
        parts.append(f"e.g. `{uses[0][2][:120]}`")
    if declared:
        d = declared[0]
        eco = d[0]
        decl = d[1]
        where = f"{decl.file}:{decl.line} {decl.section}"
        if eco == mf.NODE:
            parts.append(
                f"declared in {where} — installed into {_NODE_BIN} by the project's install command; run it "
                f"there through `npx {command}` or the package.json script that calls it"
            )
        else:
            parts.append(f"declared in {where}: `{decl.text[:100]}`")
        install = mf.install_command(root, "", eco)
    elif toolchain:
        parts.append(
            f"it is the toolchain of {', '.join(toolchain)}: install it on the machine (not a package of this project)"
        )
        install = ("", "")
    else:
        parts.append(
            "no manifest of the project declares it: install it on the machine, or declare it as a dev dependency"
        )
        install = ("", "")
    if install[0]:
        parts.append(f"the project's install command: `{install[0]}` ({install[1]})")
    return "; ".join(parts) + ".", {
        "answer": "missing_command",
        "command": command,
        "uses": [f"{p}:{n}" for p, n, _ in uses[:SHOWN]],
        "declared": [f"{d.file}:{d.line}" for _, d in declared[:3]],
    }


def _named_file(text: str, command: str) -> str:
    """The script the error names (`script/test: line 60: bundle: command not found`), else ''."""
    m = re.search(rf"([\w./-]{{1,300}}): (?:line )?\d{{1,7}}: {re.escape(command)}:", text)
    return m.group(1).lstrip("./") if m else ""


def _files(root: Path, named: str = "") -> list[Path]:
    out = [root / named] if named and _inside(root, root / named) else []
    out.extend(root / name for name in ROOT_FILES)
    out.extend(sorted(root.glob("*.gemspec")) + sorted(root.glob("*.mk")))
    out.extend(sorted(root.glob("*.sh")))
    for folder in SCRIPT_DIRS:
        base = root / folder
        if base.is_dir():
            out.extend(sorted(p for p in base.iterdir() if p.suffix in SCRIPT_SUFFIXES))
    for folder in CI_DIRS:  # after the scripts: CI mostly calls them
        base = root / folder
        if base.is_dir():
            out.extend(sorted(p for p in base.rglob("*") if p.suffix in (".yml", ".yaml", ".sh", "")))
    return [p for p in dict.fromkeys(out) if p.is_file()][:MAX_FILES]


def _inside(root: Path, path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def _uses(root: Path, command: str, named: str = "") -> list[tuple[str, int, str]]:
    word = re.compile(rf"(?<![\w/.-]){re.escape(command)}(?![\w-])")
    out = []
    for path in _files(root, named):
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        rel = path.relative_to(root).as_posix()
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped.startswith(("#", "//")) or not word.search(stripped):
                continue
            if path.name == "package.json" and not _in_scripts(lines, i):
                continue
            out.append((rel, i + 1, " ".join(stripped.split())))
            break  # one line per file: the files are the answer
    return out


def _in_scripts(lines: list[str], index: int) -> bool:
    """A package.json line inside its "scripts" object (a dependency's name is not a use)."""
    for i in range(index, -1, -1):
        line = lines[i].strip()
        if line.startswith('"scripts"') and line[len('"scripts"') :].lstrip().startswith(":"):
            return True
        if i != index and line.startswith('"') and line.endswith("{"):
            return False
    return False


def _declared(root: Path, command: str) -> list[tuple[str, mf.Declaration]]:
    """A dependency named like the command in the root's manifests (mocha, pytest, rake, golint, ...)."""
    aliases = {"bundle": "bundler"}
    out = []
    for eco in (mf.NODE, mf.PYTHON, mf.RUBY, mf.RUST, mf.GO):
        names = [mf.normalize(eco, command), mf.normalize(eco, aliases.get(command, command))]
        for d in mf.declarations(root, [""], eco, names):
            out.append((eco, d))
    return out
