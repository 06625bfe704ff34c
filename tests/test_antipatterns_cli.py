"""`recall catalog check|list|show` as a real process."""

from __future__ import annotations

import subprocess
from pathlib import Path

TEAM = """\
- id: team-no-print
  name: print() in service code
  category: maintainability
  severity: low
  languages: [python]
  description: Services log through the logger.
  rationale: print output is lost in production.
  bad_example: "print('started')\\n"
  good_example: "log.info('started')\\n"
  detectors:
    - {kind: regex, pattern: '\\bprint\\('}
"""


def run(cmd: list[str], env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, "catalog", *args], capture_output=True, text=True, env=env, timeout=120)


def test_check_passes_on_the_shipped_catalog(
    recall_cmd: list[str], subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    proc = run(recall_cmd, subprocess_env, "--repo", str(tmp_path), "check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("0 problem(s)")
    assert "shipped" in proc.stdout


def test_check_reports_team_problems_and_exits_1(
    recall_cmd: list[str], subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / ".recall" / "antipatterns"
    folder.mkdir(parents=True)
    (folder / "ok.yaml").write_text(TEAM)
    (folder / "wrong.yaml").write_text(
        TEAM.replace("team-no-print", "team-wrong").replace("log.info", "print")
    )
    (folder / "bad.yaml").write_text(
        TEAM.replace("team-no-print", "team-bad").replace("severity: low", "severity: meh")
    )
    proc = run(recall_cmd, subprocess_env, "--repo", str(tmp_path), "check")
    assert proc.returncode == 1
    lines = proc.stdout.strip().splitlines()
    assert any(str(folder / "bad.yaml") in ln and "(id team-bad).severity" in ln for ln in lines)
    assert any(
        str(folder / "wrong.yaml") in ln and "(id team-wrong).detectors[0]: fires on its good example" in ln
        for ln in lines
    )
    assert lines[-1].endswith("2 problem(s)") and "2 repo" in lines[-1]
    listed = run(recall_cmd, subprocess_env, "--repo", str(tmp_path), "list", "--origin", "repo")
    assert listed.returncode == 0
    assert [ln.split()[0] for ln in listed.stdout.splitlines()] == ["team-no-print", "team-wrong"]


def test_show_and_bad_arguments(
    recall_cmd: list[str], subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    shown = run(recall_cmd, subprocess_env, "--repo", str(tmp_path), "show", "py-subprocess-shell-true")
    assert shown.returncode == 0
    assert "subprocess.run(cmd, shell=True, check=True)" in shown.stdout and "Fix:" in shown.stdout
    missing = run(recall_cmd, subprocess_env, "--repo", str(tmp_path), "show", "nope")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.strip() == "recall catalog: no entry with id 'nope' (see `recall catalog list`)"
    nodir = run(recall_cmd, subprocess_env, "--repo", str(tmp_path / "absent"), "check")
    assert nodir.returncode == 2 and len(nodir.stderr.strip().splitlines()) == 1
    bogus = run(recall_cmd, subprocess_env, "bogus")
    assert bogus.returncode == 2 and "Traceback" not in bogus.stderr
