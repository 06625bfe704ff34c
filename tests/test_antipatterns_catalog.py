"""The shipped catalog, its detectors (each against its own examples), and team/user catalog validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_agent.antipatterns.catalog import SEVERITIES, load_catalog
from recall_agent.antipatterns.source import ScanContext, file_kind

SHIPPED = load_catalog()
WITH_DETECTORS = [(entry.id, i) for entry in SHIPPED.entries.values() for i, _ in enumerate(entry.detectors)]


def test_shipped_catalog_loads_without_errors_and_is_broad() -> None:
    assert SHIPPED.errors == []
    entries = list(SHIPPED.entries.values())
    assert len(entries) >= 60
    langs = {lang for e in entries for lang in e.languages}
    for needed in ("python", "javascript", "typescript", "sql", "shell", "dockerfile", "yaml", "general"):
        assert needed in langs, needed
    for e in entries:
        assert e.severity in SEVERITIES
        assert e.description and e.rationale and e.bad_example.strip() and e.good_example.strip()
        assert e.bad_example != e.good_example
    assert sum(1 for e in entries if e.detectors) >= 60


@pytest.mark.parametrize(
    "must_have",
    [
        "hardcoded-secret",
        "sql-string-formatting",
        "py-broad-except-swallow",
        "py-mutable-default-arg",
        "py-blocking-call-in-async",
        "n-plus-one-queries",
        "hardcoded-topic-in-handler",
        "py-request-without-timeout",
        "retry-without-backoff",
        "py-subprocess-shell-true",
        "docker-latest-tag",
    ],
)
def test_catalog_covers_the_issue_list(must_have: str) -> None:
    assert must_have in SHIPPED.entries


def _kind_for(entry_id: str, index: int) -> str:
    entry = SHIPPED.entries[entry_id]
    det = entry.detectors[index]
    return entry.example_language if entry.example_language in det.file_kinds else det.file_kinds[0]


@pytest.mark.parametrize(("entry_id", "index"), WITH_DETECTORS, ids=[f"{e}[{i}]" for e, i in WITH_DETECTORS])
def test_detector_fires_on_bad_example_and_not_on_good(entry_id: str, index: int) -> None:
    entry = SHIPPED.entries[entry_id]
    det = entry.detectors[index]
    kind = _kind_for(entry_id, index)
    bad = det.bad or entry.bad_example
    good = det.good or entry.good_example
    hits = det.find(ScanContext(bad, kind))
    assert hits, f"{entry_id} detector {index} ({det.kind}) missed its bad example"
    lines = bad.splitlines()
    for h in hits:
        assert 1 <= h.line <= len(lines)
        assert h.snippet == lines[h.line - 1].strip()[: len(h.snippet)].rstrip("…") or h.snippet.endswith("…")
    assert det.find(ScanContext(good, kind)) == [], f"{entry_id} detector {index} fired on its good example"


def test_bandit_checks_resolve_import_aliases_and_drop_fixed_commands() -> None:
    det = SHIPPED.entries["py-subprocess-shell-true"].detectors[0]
    code = "from subprocess import run as sh\n\ndef go(c):\n    sh(c, shell=True)\n"
    [hit] = det.find(ScanContext(code, "python"))
    assert (hit.line, hit.check, hit.cwe, hit.severity) == (4, "B602", 78, "high")
    literal = "import subprocess\nsubprocess.run('ls -l | wc -l', shell=True)\n"
    assert det.find(ScanContext(literal, "python")) == []  # bandit grades a fixed command LOW: "seems safe"


def test_python_rule_ignores_syntax_errors() -> None:
    det = SHIPPED.entries["py-mutable-default-arg"].detectors[0]
    assert det.find(ScanContext("def f(x=[]:\n", "python")) == []


def test_file_kinds() -> None:
    assert file_kind("a/b/app.py") == "python"
    assert file_kind("Dockerfile") == "dockerfile"
    assert file_kind("deploy/api.Dockerfile") == "dockerfile"
    assert file_kind("Dockerfile.prod") == "dockerfile"
    assert file_kind(".github/workflows/ci.yml") == "yaml"
    assert file_kind("web/App.tsx") == "tsx"
    assert file_kind("logo.png") is None


# --------------------------------------------------------------------------- team and user catalogs

GOOD_ENTRY = """
antipatterns:
  - id: team-no-print
    name: print() in service code
    category: maintainability
    severity: low
    languages: [python]
    description: Services log through the logger, never print.
    rationale: print output is lost in production and has no level.
    bad_example: |
      print("started")
    good_example: |
      log.info("started")
    detectors:
      - kind: tree-sitter
        languages: [python]
        query: |
          ((call function: (identifier) @f) @match (#eq? @f "print"))
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_repo_catalog_adds_entries_and_overrides_by_id(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write(repo / ".recall" / "antipatterns", "team.yaml", GOOD_ENTRY)
    override = """
- id: docker-latest-tag
  name: Untagged images (team rule)
  category: operations
  severity: critical
  languages: [dockerfile]
  description: Our deploys require pinned digests.
  rationale: Incident 42.
  bad_example: "FROM python\\n"
  good_example: "FROM python@sha256:abc\\n"
  source_ticket: OPS-42
"""
    _write(repo / ".recall" / "antipatterns", "override.yml", override)
    cat = load_catalog(repo)
    assert cat.errors == []
    assert cat.entries["team-no-print"].origin == "repo"
    hits = (
        cat.entries["team-no-print"].detectors[0].find(ScanContext('print("x")\nlog.info("y")\n', "python"))
    )
    assert [h.line for h in hits] == [1]
    over = cat.entries["docker-latest-tag"]
    assert (over.name, over.severity, over.source_ticket, over.enforcement) == (
        "Untagged images (team rule)",
        "critical",
        "OPS-42",
        "block",
    )
    assert len(cat.entries) == len(SHIPPED.entries) + 1
    assert cat.digest != SHIPPED.digest


def test_user_catalog_under_recall_home_and_disable(isolated_recall_env: Path, tmp_path: Path) -> None:
    _write(isolated_recall_env / "antipatterns", "mine.yaml", GOOD_ENTRY)
    _write(isolated_recall_env / "antipatterns", "off.yaml", "- {id: js-var-declaration, disabled: true}\n")
    cat = load_catalog(tmp_path)
    assert cat.errors == []
    assert cat.entries["team-no-print"].origin == "user"
    assert "js-var-declaration" not in cat.entries


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("antipatterns: [unclosed\n", "invalid YAML: line"),
        ("just a string\n", "antipatterns: expected a list"),
        (
            GOOD_ENTRY.replace("    severity: low\n", ""),
            "antipatterns[0] (id team-no-print).severity: required",
        ),
        (GOOD_ENTRY.replace("severity: low", "severity: urgent"), ".severity: required, one of low, medium"),
        (
            GOOD_ENTRY.replace("    rationale: print output is lost in production and has no level.\n", ""),
            ".rationale: required",
        ),
        (GOOD_ENTRY.replace("category:", "categroy:"), ".categroy: unknown field"),
        (GOOD_ENTRY.replace('"print"))', '"print")'), ".detectors[0].query: does not compile for python"),
        (GOOD_ENTRY.replace("(identifier) @f", "(no_such_node) @f"), ".detectors[0].query: does not compile"),
        (GOOD_ENTRY.replace("kind: tree-sitter", "kind: magic"), ".detectors[0].kind: must be one of rule"),
        (
            GOOD_ENTRY.replace("kind: tree-sitter", "kind: regex\n        pattern: 'print(('"),
            ".detectors[0].pattern: regex does not compile",
        ),
        (
            GOOD_ENTRY.replace("kind: tree-sitter", "kind: rule\n        rule: py-nope"),
            ".detectors[0].rule: unknown rule 'py-nope'",
        ),
        (
            GOOD_ENTRY.replace("languages: [python]\n        query", "languages: [cobol]\n        query"),
            "unknown file kind 'cobol'",
        ),
    ],
)
def test_invalid_team_catalog_names_file_and_field_and_the_rest_loads(
    tmp_path: Path, text: str, expected: str
) -> None:
    repo = tmp_path / "repo"
    folder = repo / ".recall" / "antipatterns"
    bad = _write(folder, "broken.yaml", text)
    _write(folder, "fine.yaml", GOOD_ENTRY.replace("team-no-print", "team-ok"))
    cat = load_catalog(repo)
    assert len(cat.errors) == 1, cat.errors
    assert cat.errors[0].startswith(f"{bad}: ")
    assert expected in cat.errors[0]
    assert "team-ok" in cat.entries
    assert "team-no-print" not in cat.entries
    assert len(cat.entries) == len(SHIPPED.entries) + 1


def test_detector_in_another_language_needs_its_own_examples(tmp_path: Path) -> None:
    text = GOOD_ENTRY.replace("languages: [python]\n        query", "languages: [javascript]\n        query")
    text = text.replace("((call function:", "((call_expression function:")
    repo = tmp_path / "repo"
    _write(repo / ".recall" / "antipatterns", "t.yaml", text)
    cat = load_catalog(repo)
    assert "own 'bad' and 'good' examples" in cat.errors[0]


def test_one_bad_entry_does_not_drop_its_neighbours(tmp_path: Path) -> None:
    two = GOOD_ENTRY + GOOD_ENTRY.split("antipatterns:\n", 1)[1].replace("team-no-print", "team-two").replace(
        "severity: low", "severity: 3"
    )
    repo = tmp_path / "repo"
    _write(repo / ".recall" / "antipatterns", "t.yaml", two)
    cat = load_catalog(repo)
    assert "team-no-print" in cat.entries and "team-two" not in cat.entries
    assert "antipatterns[1] (id team-two).severity" in cat.errors[0]


# near misses seen in real code (this repository's own SQLite/PostgreSQL stores), and the real thing
@pytest.mark.parametrize(
    ("entry_id", "code", "fires"),
    [
        ("sql-string-formatting", 'cur.execute(f"SELECT * FROM t WHERE id IN ({marks})", ids)', False),
        ("sql-string-formatting", 'cur.execute(f"DELETE FROM {table} WHERE id=?", (i,))', False),
        ("sql-string-formatting", 'cur.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")', False),
        ("sql-string-formatting", 'cur.execute("SELECT * FROM t WHERE id = %s", (uid,))', False),
        ("sql-string-formatting", 'cur.execute(f"SELECT * FROM t WHERE id = {user_id}")', True),
        ("sql-string-formatting", 'cur.execute("SELECT * FROM t WHERE name = \'" + name + "\'")', True),
        ("sql-string-formatting", "q = f\"SELECT * FROM u WHERE n = '{n}'\"\ncur.execute(q)", True),
        ("n-plus-one-queries", "for v in versions:\n    conn.execute(MIGRATIONS[v])", False),
        (
            "n-plus-one-queries",
            "for i in range(0, len(ids), 500):\n    conn.execute('SELECT a FROM t WHERE id IN (?)', ids)",
            False,
        ),
        ("n-plus-one-queries", "for row in rows:\n    conn.execute('INSERT INTO t VALUES (?)', row)", False),
        (
            "n-plus-one-queries",
            "Q = 'SELECT a FROM t WHERE id=%s'\nfor i in ids:\n    cur.execute(Q, (i,))",
            True,
        ),
        ("hardcoded-secret", 'ENV_TOKEN = "RECALL_TOKEN"', False),
    ],
)
def test_detector_near_misses(entry_id: str, code: str, fires: bool) -> None:
    det = SHIPPED.entries[entry_id].detectors[0]
    assert bool(det.find(ScanContext(code, "python"))) is fires


def test_sql_detectors_read_sql_string_literals_in_python() -> None:
    code = (
        "def upgrade(op, cur):\n"
        '    op.execute("CREATE INDEX ix_orders_customer ON orders (customer_id)")\n'
        "    cur.execute(\n"
        '        """\n'
        "        DELETE FROM sessions\n"
        '        """\n'
        "    )\n"
        '    cur.execute("DELETE FROM sessions WHERE id = %s", (1,))\n'
        '    title = "select the best option from the list"\n'
    )
    ctx = ScanContext(code, "python")
    found = {
        (e.id, h.line, h.snippet) for e in SHIPPED.entries.values() for d in e.detectors for h in d.find(ctx)
    }
    assert found == {
        (
            "sql-blocking-index-creation",
            2,
            'op.execute("CREATE INDEX ix_orders_customer ON orders (customer_id)")',
        ),
        ("sql-update-delete-without-where", 5, "DELETE FROM sessions"),
    }
