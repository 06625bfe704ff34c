"""What a project declares about a package, and the command that installs its dependencies, read from its
own files: pyproject.toml, requirements*.txt, setup.cfg, setup.py, Pipfile (Python); package.json
(JavaScript/TypeScript); go.mod (Go); Cargo.toml (Rust); Gemfile and *.gemspec (Ruby); pom.xml and
build.gradle (Java/Kotlin). The install command is the repository's own: a Makefile target that sets up
dependencies, else the tool of its lock file (uv.lock -> `uv sync`, package-lock.json -> `npm ci`, ...).

`declarations(root, folders, eco, names)` looks in each folder given (the folders of the files that import
the package, and the repository's root: a monorepo's packages have manifests of their own) and returns
where each name is declared, with the line, the section and the line's text. Parsing is the standard
library's (tomllib, json) plus line scans for the formats without one; nothing here imports a parser of
source code.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

PYTHON, NODE, GO, RUST, RUBY, JAVA = "python", "node", "go", "rust", "ruby", "java"
MANIFESTS = {
    PYTHON: ("pyproject.toml", "setup.cfg", "setup.py", "Pipfile", "requirements.txt"),
    NODE: ("package.json",),
    GO: ("go.mod",),
    RUST: ("Cargo.toml",),
    RUBY: ("Gemfile", "*.gemspec"),
    JAVA: ("pom.xml", "build.gradle", "build.gradle.kts"),
}
# lock file -> the command that installs exactly what it pins (first found wins, in this order)
LOCKS = {
    PYTHON: (
        ("uv.lock", "uv sync"),
        ("poetry.lock", "poetry install"),
        ("pdm.lock", "pdm install"),
        ("Pipfile.lock", "pipenv install --dev"),
    ),
    NODE: (
        ("pnpm-lock.yaml", "pnpm install"),
        ("yarn.lock", "yarn install"),
        ("bun.lockb", "bun install"),
        ("bun.lock", "bun install"),
        ("package-lock.json", "npm ci"),
        ("npm-shrinkwrap.json", "npm ci"),
    ),
    GO: (("go.sum", "go mod download"),),
    RUST: (("Cargo.lock", "cargo fetch"),),
    RUBY: (("Gemfile.lock", "bundle install"),),
    JAVA: (("gradlew", "./gradlew build"), ("mvnw", "./mvnw install")),
}
# without a lock file: the manifest's own tool
FALLBACK = {
    "package.json": "npm install",
    "go.mod": "go mod tidy",
    "Cargo.toml": "cargo build",
    "Gemfile": "bundle install",
    "pom.xml": "mvn install",
    "build.gradle": "gradle build",
    "build.gradle.kts": "gradle build",
    "Pipfile": "pipenv install --dev",
    "requirements.txt": "pip install -r requirements.txt",
}
# Makefile targets that set up a checkout's dependencies, most specific first
SETUP_TARGETS = (
    "deps",
    "dependencies",
    "install-deps",
    "setup",
    "bootstrap",
    "dev",
    "install",
    "init",
    "vendor",
)
# Python import names whose distribution is named otherwise (the common cases; `py`/`-py`/`python-`
# variants are tried for every name)
PY_DISTRIBUTIONS = {
    "yaml": "pyyaml",
    "PIL": "pillow",
    "cv2": "opencv-python",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "jwt": "pyjwt",
    "attr": "attrs",
    "dotenv": "python-dotenv",
    "Crypto": "pycryptodome",
    "OpenSSL": "pyopenssl",
    "git": "gitpython",
    "magic": "python-magic",
    "serial": "pyserial",
    "socks": "pysocks",
    "docx": "python-docx",
    "jose": "python-jose",
    "multipart": "python-multipart",
    "zmq": "pyzmq",
    "gi": "pygobject",
    "win32api": "pywin32",
    "google": "protobuf",
    "pkg_resources": "setuptools",
    "mpl_toolkits": "matplotlib",
    "Levenshtein": "levenshtein",
}
MAX_BYTES = 512 * 1024  # a manifest bigger than this is not read


@dataclass
class Declaration:
    file: str  # repository-relative
    line: int
    section: str  # "dependencies", "[project.optional-dependencies] cli", "require", ...
    name: str  # as the manifest spells it
    text: str  # the declaring line, trimmed

    @property
    def dev(self) -> bool:
        s = self.section.lower()
        return any(w in s for w in ("dev", "test", "group", "build-system", "lint", "doc"))


def ecosystem_of(lang: str) -> str:
    return {"javascript": NODE, "typescript": NODE, "tsx": NODE, "kotlin": JAVA}.get(lang, lang)


def normalize(eco: str, name: str) -> str:
    if eco == PYTHON:
        return re.sub(r"[-_.]+", "-", name).lower()
    if eco == RUST:
        return name.replace("-", "_").lower()
    return name.lower()


def python_names(module: str) -> list[str]:
    """Distribution names an import name may be published under, normalized."""
    top = module.split(".")[0]
    names = [top, PY_DISTRIBUTIONS.get(top, top), f"py{top}", f"{top}-py", f"python-{top}", f"{top}py"]
    return list(dict.fromkeys(normalize(PYTHON, n) for n in names))


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _line_of(lines: list[str], name: str, start: int = 0) -> int:
    """1-based line of the first mention of `name` (as a word, not in a comment) at or after `start`, else 0."""
    word = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", re.IGNORECASE)
    for i in range(start, len(lines)):
        if not lines[i].lstrip().startswith("#") and word.search(lines[i]):
            return i + 1
    return 0


def _header_line(lines: list[str], header: str) -> int:
    for i, line in enumerate(lines):
        if line.strip().replace(" ", "") == header.replace(" ", ""):
            return i
    return 0


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _requirement_name(item: str) -> str:
    m = _NAME.match(item.lstrip())
    return m.group(0) if m else ""


def manifests_in(root: Path, folder: str, eco: str) -> list[Path]:
    base = root / folder if folder else root
    found: list[Path] = []
    for pattern in MANIFESTS[eco]:
        found.extend(sorted(base.glob(pattern)) if "*" in pattern else [base / pattern])
    if eco == PYTHON:
        found.extend(sorted(base.glob("requirements*.txt"))[:8] + sorted(base.glob("requirements/*.txt"))[:8])
    return [p for p in dict.fromkeys(found) if p.is_file()]


def declarations(root: Path, folders: list[str], eco: str, wanted: list[str]) -> list[Declaration]:
    """Where the manifests in `folders` (repository-relative, "" the root) declare one of `wanted`
    (names as normalize() gives them)."""
    out: list[Declaration] = []
    seen: set[Path] = set()
    for folder in dict.fromkeys(folders):
        for path in manifests_in(root, folder, eco):
            if path in seen:
                continue
            seen.add(path)
            rel = path.relative_to(root).as_posix()
            out.extend(d for d in _declared(path, rel, eco) if normalize(eco, d.name) in wanted)
    return out


def _declared(path: Path, rel: str, eco: str) -> list[Declaration]:
    text = _read(path)
    if not text:
        return []
    lines = text.splitlines()
    name = path.name
    if name in ("pyproject.toml", "Cargo.toml", "Pipfile"):
        return _toml(text, lines, rel)
    if name == "package.json":
        return _package_json(text, lines, rel)
    if name == "go.mod":
        return _go_mod(lines, rel)
    if name.endswith(".txt"):
        return [
            Declaration(rel, i + 1, "requirements", n, line.strip())
            for i, line in enumerate(lines)
            if not line.lstrip().startswith(("#", "-")) and (n := _requirement_name(line))
        ]
    if name == "setup.cfg":
        return _setup_cfg(lines, rel)
    if name == "setup.py":
        return [
            Declaration(rel, i + 1, "setup.py", m.group(1), line.strip())
            for i, line in enumerate(lines)
            for m in re.finditer(
                r"[\"']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[\w,\s]*\])?\s*(?:[<>=!~;][^\"']*)?[\"']", line
            )
            if "require" in text
        ]
    if name == "Gemfile" or name.endswith(".gemspec"):
        return _ruby(lines, rel)
    return _java(lines, rel)


def _toml(text: str, lines: list[str], rel: str) -> list[Declaration]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    found: list[tuple[str, str]] = []  # (section, name)
    project = data.get("project") or {}
    for item in project.get("dependencies") or []:
        found.append(("[project] dependencies", _requirement_name(str(item))))
    for extra, items in (project.get("optional-dependencies") or {}).items():
        found.extend((f"[project.optional-dependencies] {extra}", _requirement_name(str(i))) for i in items)
    for group, items in (data.get("dependency-groups") or {}).items():
        found.extend(
            (f"[dependency-groups] {group}", _requirement_name(str(i))) for i in items if isinstance(i, str)
        )
    for item in (data.get("build-system") or {}).get("requires") or []:
        found.append(("[build-system] requires", _requirement_name(str(item))))
    poetry = (data.get("tool") or {}).get("poetry") or {}
    for key in ("dependencies", "dev-dependencies"):
        found.extend(_table(f"[tool.poetry.{key}]", poetry.get(key)))
    for group, body in (poetry.get("group") or {}).items():
        found.extend(_table(f"[tool.poetry.group.{group}.dependencies]", (body or {}).get("dependencies")))
    for key in ("packages", "dev-packages"):  # Pipfile
        found.extend(_table(f"[{key}]", data.get(key)))
    for key in ("dependencies", "dev-dependencies", "build-dependencies"):  # Cargo.toml
        found.extend(_table(f"[{key}]", data.get(key)))
        found.extend(_table(f"[workspace.{key}]", (data.get("workspace") or {}).get(key)))
    for target, body in (data.get("target") or {}).items():
        for key in ("dependencies", "dev-dependencies", "build-dependencies"):
            found.extend(_table(f"[target.{target}.{key}]", (body or {}).get(key)))
    out = []
    for section, name in found:
        if not name or name == "python":
            continue
        header = section.split("]")[0] + "]"
        line = _line_of(lines, name, _header_line(lines, header))
        out.append(Declaration(rel, line, section, name, lines[line - 1].strip() if line else ""))
    return out


def _table(section: str, body: object) -> list[tuple[str, str]]:
    """(section, name) for a TOML dependency table; an optional one (an extra, a Cargo feature) says so."""
    if not isinstance(body, dict):
        return []
    return [
        (f"{section} (optional)" if isinstance(v, dict) and v.get("optional") else section, n)
        for n, v in body.items()
    ]


def _package_json(text: str, lines: list[str], rel: str) -> list[Declaration]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    out = []
    for section in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        body = data.get(section) if isinstance(data, dict) else None
        if not isinstance(body, dict):
            continue
        start = next((i for i, line in enumerate(lines) if f'"{section}"' in line), 0)
        for name in body:
            line = next((i + 1 for i in range(start, len(lines)) if f'"{name}"' in lines[i]), 0)
            out.append(Declaration(rel, line, section, name, lines[line - 1].strip() if line else ""))
    return out


def _go_mod(lines: list[str], rel: str) -> list[Declaration]:
    out = []
    block = False
    for i, raw in enumerate(lines):
        line = raw.split("//")[0].strip() if "// indirect" not in raw else raw.strip()
        if line.startswith("require ("):
            block = True
            continue
        if block and line.startswith(")"):
            block = False
            continue
        body = line[len("require ") :] if line.startswith("require ") else line if block else ""
        parts = body.split()
        if len(parts) >= 2:
            section = "require (indirect)" if "// indirect" in raw else "require"
            out.append(Declaration(rel, i + 1, section, parts[0], raw.strip()))
    return out


def go_module(root: Path, folder: str = "") -> str:
    """The module path go.mod declares (`module github.com/x/y`), else ''."""
    for line in _read((root / folder if folder else root) / "go.mod").splitlines():
        if line.startswith("module "):
            return line.split()[1].strip('"')
    return ""


def _setup_cfg(lines: list[str], rel: str) -> list[Declaration]:
    out = []
    section = ""
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
            continue
        if (
            section not in ("[options]", "[options.extras_require]")
            or not stripped
            or stripped.startswith("#")
        ):
            continue
        key, eq, value = stripped.partition("=")
        item = value if eq and not line[:1].isspace() else stripped
        if eq and not line[:1].isspace() and section == "[options]" and "requires" not in key:
            continue
        if name := _requirement_name(item):
            out.append(Declaration(rel, i + 1, section, name, stripped))
    return out


_GEM = re.compile(r"""^\s*(?:gem|\w+\.add_(?:runtime_|development_)?dependency)\s*\(?\s*["']([\w.-]+)["']""")


def _ruby(lines: list[str], rel: str) -> list[Declaration]:
    out = []
    for i, line in enumerate(lines):
        if m := _GEM.match(line):
            dev = "development" in line or rel == "Gemfile" and "group" in "".join(lines[max(0, i - 30) : i])
            out.append(Declaration(rel, i + 1, "development" if dev else "runtime", m.group(1), line.strip()))
    return out


_POM_DEP = re.compile(r"<groupId>\s*([\w.-]+)\s*</groupId>")
_GRADLE_DEP = re.compile(r"""["']([\w.-]+):([\w.-]+)(?::[^"']*)?["']""")


def _java(lines: list[str], rel: str) -> list[Declaration]:
    """Maven/Gradle coordinates, named by their groupId (a Java package starts with it)."""
    out = []
    for i, line in enumerate(lines):
        for m in _POM_DEP.finditer(line):
            artifact = re.search(r"<artifactId>\s*([\w.-]+)", " ".join(lines[i : i + 2]))
            text = f"{m.group(1)}:{artifact.group(1)}" if artifact else m.group(1)
            out.append(Declaration(rel, i + 1, "dependency", m.group(1), text))
        if rel.endswith((".gradle", ".kts")):
            for m in _GRADLE_DEP.finditer(line):
                out.append(Declaration(rel, i + 1, "dependencies", m.group(1), line.strip()))
    return out


def install_command(root: Path, folder: str, eco: str) -> tuple[str, str]:
    """(command, where it was read) installing the project's dependencies, or ("", "")."""
    make = make_target(root, SETUP_TARGETS)
    if make:
        return make
    for base in dict.fromkeys([folder, ""]):
        here = root / base if base else root
        for lock, command in LOCKS.get(eco, ()):
            if (here / lock).is_file():
                return command, (f"{base}/{lock}" if base else lock)
        for manifest in MANIFESTS.get(eco, ()):
            if manifest in FALLBACK and (here / manifest).is_file():
                return FALLBACK[manifest], (f"{base}/{manifest}" if base else manifest)
        if eco == PYTHON and (here / "pyproject.toml").is_file():
            text = _read(here / "pyproject.toml")
            tool = "poetry install" if "[tool.poetry" in text else "pip install -e ."
            return tool, (f"{base}/pyproject.toml" if base else "pyproject.toml")
        if eco == RUBY and any(here.glob("*.gemspec")):
            return "bundle install", next(p.name for p in here.glob("*.gemspec"))
    return "", ""


def make_target(root: Path, targets: tuple[str, ...]) -> tuple[str, str] | None:
    """(`make <target>`, Makefile:<line> and its `##` help) for the first of `targets` the Makefile has."""
    for name in ("Makefile", "makefile", "GNUmakefile"):
        lines = _read(root / name).splitlines()
        if not lines:
            continue
        found = {}
        for i, line in enumerate(lines):
            if m := re.match(r"^([\w.-]+)\s*:(?!=)", line):
                found.setdefault(m.group(1), (i + 1, line.partition("##")[2].strip()))
        for target in targets:
            if target in found:
                line, help_text = found[target]
                return f"make {target}", f"{name}:{line}" + (f": {help_text}" if help_text else "")
    return None
