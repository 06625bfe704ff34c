"""The antipattern catalog: shipped YAML files, merged with team and user catalogs, validated per entry.

Load order (later wins, by id): the package's `catalog/*.yaml`, then `$RECALL_HOME/antipatterns/*.yaml`
(the user's), then `<repo>/.recall/antipatterns/*.yaml` (the team's, in the repository). A bad file or a
bad entry is reported as one error line naming the file and the field, and everything else still loads.
An entry with `disabled: true` removes the entry with that id from the merged catalog.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from recall_agent.antipatterns.detectors import Detector, DetectorError, build_detector

SEVERITIES = ("low", "medium", "high", "critical")
ENFORCEMENTS = ("advisory", "warn", "block")
IN_TESTS = ("report", "skip")
REQUIRED_TEXT = ("id", "name", "category", "description", "rationale", "bad_example", "good_example")
OPTIONAL_TEXT = ("remedy", "source_ticket", "example_language")
KNOWN_FIELDS = (
    set(REQUIRED_TEXT)
    | set(OPTIONAL_TEXT)
    | {
        "severity",
        "enforcement",
        "languages",
        "keywords",
        "phrases",
        "detectors",
        "disabled",
        "in_tests",
    }
)
MAX_CATALOG_FILE_BYTES = 2_000_000
SHIPPED_DIR = Path(__file__).resolve().parent / "catalog"


@dataclass
class Antipattern:
    id: str
    name: str
    category: str
    severity: str
    enforcement: str
    languages: tuple[str, ...]
    description: str
    rationale: str
    bad_example: str
    good_example: str
    example_language: str
    remedy: str = ""
    keywords: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()  # how people describe it in their own words (each embedded on its own)
    detectors: list[Detector] = field(default_factory=list)
    source_ticket: str | None = None
    in_tests: str = "report"  # "skip": in test files this is a fixture, not a risk (fake secrets, localhost)
    origin: str = "shipped"  # "shipped", "user" or "repo"
    source_file: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def search_text(self) -> str:
        """What the semantic and lexical matchers read for this entry."""
        parts = [self.name, self.description, self.remedy, " ".join(self.keywords), self.category]
        parts.append(" ".join(self.languages))
        return "\n".join(p for p in parts if p)

    def lexical_text(self) -> str:
        """What BM25 reads: the search text and the phrases people use for it."""
        return "\n".join([self.search_text(), *self.phrases])


@dataclass
class Catalog:
    entries: dict[str, Antipattern]
    errors: list[str]
    files: list[Path]

    @cached_property
    def digest(self) -> str:
        """sha256 over the merged entries' content: the semantic index is rebuilt only when it changes."""
        payload = json.dumps([self.entries[k].raw for k in sorted(self.entries)], sort_keys=True, default=str)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    @property
    def version(self) -> str:
        from recall_agent import __version__

        return f"{__version__}+{self.digest[:12]}"


class CatalogEntryError(ValueError):
    """One invalid entry; the message starts with the field path ('severity: ...')."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")


def user_catalog_dir() -> Path:
    from recall_agent.config import recall_home

    return recall_home() / "antipatterns"


def repo_catalog_dir(repo_path: str | Path) -> Path:
    return Path(repo_path) / ".recall" / "antipatterns"


def load_catalog(repo_path: str | Path | None = None, *, include_shipped: bool = True) -> Catalog:
    """Merge shipped, user and repository catalogs; invalid files or entries become `errors` lines."""
    entries: dict[str, Antipattern] = {}
    errors: list[str] = []
    files: list[Path] = []
    layers: list[tuple[str, Path]] = []
    if include_shipped:
        layers.append(("shipped", SHIPPED_DIR))
    layers.append(("user", user_catalog_dir()))
    if repo_path is not None:
        layers.append(("repo", repo_catalog_dir(repo_path)))
    for origin, folder in layers:
        if not folder.is_dir():
            continue
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
            files.append(path)
            for item in _load_file_cached(path, origin, errors):
                if item.raw.get("disabled"):
                    entries.pop(item.id, None)
                else:
                    entries[item.id] = item
    return Catalog(entries, errors, files)


_file_cache: dict[tuple[str, str], tuple[tuple[int, int], list[Antipattern], list[str]]] = {}


def _load_file_cached(path: Path, origin: str, errors: list[str]) -> list[Antipattern]:
    """load_file, reused while the file's size and mtime are unchanged (a server answers many queries)."""
    try:
        st = path.stat()
    except OSError as exc:
        errors.append(f"{path}: cannot read: {exc}")
        return []
    key, stamp = (str(path), origin), (st.st_mtime_ns, st.st_size)
    cached = _file_cache.get(key)
    if cached is None or cached[0] != stamp:
        file_errors: list[str] = []
        cached = (stamp, load_file(path, origin, file_errors), file_errors)
        _file_cache[key] = cached
    errors.extend(cached[2])
    return cached[1]


def load_file(path: Path, origin: str, errors: list[str]) -> list[Antipattern]:
    """Valid entries of one catalog file; every problem appended to `errors` as '<file>: <where>: <what>'."""
    import yaml

    try:
        if path.stat().st_size > MAX_CATALOG_FILE_BYTES:
            errors.append(f"{path}: file is larger than {MAX_CATALOG_FILE_BYTES} bytes, skipped")
            return []
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~20x faster than pure Python
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 (a safe loader)
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(f"{path}: cannot read: {exc}")
        return []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        errors.append(f"{path}: invalid YAML: {where}{getattr(exc, 'problem', None) or exc}")
        return []
    if isinstance(data, dict):
        data = data.get("antipatterns")
    if not isinstance(data, list):
        errors.append(
            f"{path}: antipatterns: expected a list of entries (or a mapping with an 'antipatterns' list)"
        )
        return []
    out: list[Antipattern] = []
    seen: set[str] = set()
    for index, raw in enumerate(data):
        label = f"antipatterns[{index}]"
        if isinstance(raw, dict) and isinstance(raw.get("id"), str):
            label += f" (id {raw['id']})"
        try:
            item = parse_entry(raw, origin, str(path))
        except CatalogEntryError as exc:
            errors.append(f"{path}: {label}.{exc}")
            continue
        if item.id in seen:
            errors.append(f"{path}: {label}.id: duplicate id in the same file")
            continue
        seen.add(item.id)
        out.append(item)
    return out


def parse_entry(raw: Any, origin: str = "shipped", source_file: str = "") -> Antipattern:
    if not isinstance(raw, dict):
        raise CatalogEntryError("entry", "must be a mapping")
    if raw.get("disabled") is True and isinstance(raw.get("id"), str):
        return _disabled(raw, origin, source_file)
    unknown = sorted(k for k in raw if k not in KNOWN_FIELDS)
    if unknown:
        raise CatalogEntryError(unknown[0], f"unknown field (known: {', '.join(sorted(KNOWN_FIELDS))})")
    for name in REQUIRED_TEXT:
        value = raw.get(name)
        if not isinstance(value, str) or not value.strip():
            raise CatalogEntryError(name, "required, must be a non-empty string")
    for name in OPTIONAL_TEXT:
        if raw.get(name) is not None and not isinstance(raw[name], str):
            raise CatalogEntryError(name, "must be a string")
    severity = raw.get("severity")
    if severity not in SEVERITIES:
        raise CatalogEntryError("severity", f"required, one of {', '.join(SEVERITIES)} (got {severity!r})")
    enforcement = raw.get("enforcement", "block" if severity == "critical" else "warn")
    if enforcement not in ENFORCEMENTS:
        raise CatalogEntryError("enforcement", f"one of {', '.join(ENFORCEMENTS)} (got {enforcement!r})")
    languages = _string_list(raw, "languages", required=True)
    keywords = _string_list(raw, "keywords", required=False)
    phrases = _string_list(raw, "phrases", required=False)
    example_language = raw.get("example_language") or languages[0]
    detectors = _detectors(raw, example_language, eager=origin != "shipped")
    in_tests = raw.get("in_tests", "report")
    if in_tests not in IN_TESTS:
        raise CatalogEntryError("in_tests", f"one of {', '.join(IN_TESTS)} (got {in_tests!r})")
    return Antipattern(
        id=raw["id"].strip(),
        name=raw["name"].strip(),
        category=raw["category"].strip(),
        severity=severity,
        enforcement=enforcement,
        languages=tuple(languages),
        description=raw["description"].strip(),
        rationale=raw["rationale"].strip(),
        bad_example=raw["bad_example"],
        good_example=raw["good_example"],
        example_language=example_language,
        remedy=(raw.get("remedy") or "").strip(),
        keywords=tuple(keywords),
        phrases=tuple(phrases),
        detectors=detectors,
        source_ticket=raw.get("source_ticket"),
        in_tests=in_tests,
        origin=origin,
        source_file=source_file,
        raw=raw,
    )


def _disabled(raw: dict[str, Any], origin: str, source_file: str) -> Antipattern:
    return Antipattern(
        id=raw["id"],
        name="",
        category="",
        severity="low",
        enforcement="advisory",
        languages=(),
        description="",
        rationale="",
        bad_example="",
        good_example="",
        example_language="",
        origin=origin,
        source_file=source_file,
        raw=raw,
    )


def _string_list(raw: dict[str, Any], name: str, *, required: bool) -> list[str]:
    value = raw.get(name)
    if value is None and not required:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise CatalogEntryError(name, "must be a list of non-empty strings")
    if required and not value:
        raise CatalogEntryError(name, "must name at least one language")
    return [v.strip() for v in value]


def _detectors(raw: dict[str, Any], example_language: str, *, eager: bool) -> list[Detector]:
    specs = raw.get("detectors") or []
    if not isinstance(specs, list):
        raise CatalogEntryError("detectors", "must be a list")
    out: list[Detector] = []
    for i, spec in enumerate(specs):
        try:
            det = build_detector(spec, (example_language,), eager=eager)
        except DetectorError as exc:
            raise CatalogEntryError(
                f"detectors[{i}].{exc.args[0].split(':', 1)[0]}", exc.args[0].split(": ", 1)[-1]
            ) from exc
        if example_language not in det.file_kinds and (det.bad is None or det.good is None):
            raise CatalogEntryError(
                f"detectors[{i}]",
                f"runs on {', '.join(det.file_kinds)} but the entry's examples are {example_language}: "
                "give the detector its own 'bad' and 'good' examples",
            )
        out.append(det)
    return out
