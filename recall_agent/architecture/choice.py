"""Which definition a developer means: the package's own current code before legacy or vendored copies,
type stubs, examples, docs and tests.

`pydantic/fields.py` before `pydantic/v1/fields.py` and `tests/typechecking/fields.py`; zod's `src/v4/…`
before `src/v3/…`; `src/flask/app.py` before `examples/tutorial/flaskr/__init__.py`.
"""

from __future__ import annotations

import re

LEGACY = frozenset(
    {
        "legacy",
        "compat",
        "_compat",
        "deprecated",
        "old",
        "_vendor",
        "vendor",
        "vendored",
        "third_party",
        "extern",
    }
)
ASIDE = frozenset(
    {
        "example",
        "examples",
        "docs",
        "doc",
        "samples",
        "sample",
        "demo",
        "demos",
        "benchmarks",
        "bench",
        "scripts",
    }
)
_VERSION = re.compile(r"v(\d{1,3})")

# rank classes, best first
OWN, LEGACY_CODE, STUB, ASIDE_CODE, TEST = range(5)
_WEIGHT = {OWN: 1.0, LEGACY_CODE: 0.5, STUB: 0.7, ASIDE_CODE: 0.4, TEST: 0.35}


def rank_class(path: str, is_test: bool) -> int:
    parts = path.split("/")
    if is_test:
        return TEST
    if any(p in ASIDE for p in parts[:-1]):
        return ASIDE_CODE
    if any(p in LEGACY for p in parts[:-1]):
        return LEGACY_CODE
    if path.endswith((".pyi", ".d.ts")):
        return STUB
    return OWN


def version(path: str) -> int:
    """The version a `vN` folder in the path names; unversioned code counts as the newest."""
    found = [int(m.group(1)) for p in path.split("/")[:-1] if (m := _VERSION.fullmatch(p))]
    return min(found) if found else 1_000


def rank_key(path: str, is_test: bool) -> tuple[int, int]:
    """Sort key (smaller first) of a definition's file: own current code, then older versions, then the rest."""
    return rank_class(path, is_test), -version(path)


def weight(path: str, is_test: bool, asks_tests: bool = False) -> float:
    """Score multiplier for concept search: tests only count fully when the question is about tests."""
    cls = rank_class(path, is_test)
    if cls == TEST and asks_tests:
        return 1.0
    return _WEIGHT[cls]
