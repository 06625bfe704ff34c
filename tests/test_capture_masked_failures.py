"""Failures a piped command's exit code hides, read off the output (issue 33, thirteenth round): a reporter's
failure mark (`failure_mark`: biome's `× Some errors were emitted`, eslint's `✖ 1 problem (1 error, …)`) and a
Node crash whose error line stands above its stack (`error_in_tail`: the output ends in the stack, the error
object and `Node.js v24.2.0`). Each from a real session's shape, replayed through the engine with the shipped
weights."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capture_fixtures import replay_bash  # noqa: E402

# eagerminds-bookmarks: a Playwright check run from /tmp, behind `| tail -30`, exits 0 (tail's code)
NODE_CRASH = """node:internal/modules/package_json_reader:255
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'playwright' imported from /private/tmp/verify-ui.mjs
    at Object.getPackageJSONURL (node:internal/modules/package_json_reader:255:9)
    at packageResolve (node:internal/modules/esm/resolve:767:81)
    at moduleResolve (node:internal/modules/esm/resolve:853:18)
    at defaultResolve (node:internal/modules/esm/resolve:983:11)
    at ModuleLoader.defaultResolve (node:internal/modules/esm/loader:801:12)
    at #cachedDefaultResolve (node:internal/modules/esm/loader:725:25)
    at ModuleLoader.resolve (node:internal/modules/esm/loader:708:38)
    at ModuleLoader.getModuleJobForImport (node:internal/modules/esm/loader:309:38)
    at #link (node:internal/modules/esm/module_job:201:49) {
  code: 'ERR_MODULE_NOT_FOUND'
}

Node.js v24.2.0"""

# me: biome's check of a stylesheet, behind `| tail -40`
BIOME = """src/styles/global.css:2:2 parse ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Tailwind-specific syntax is disabled.

    1 │ @import "tailwindcss";
  > 2 │ @plugin "@tailwindcss/typography";
      │  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    3 │ @import "@fontsource/shippori-mincho/400.css";

  i Enable `tailwindDirectives` in the css parser options, or remove this if you are not using Tailwind CSS.


src/styles/global.css format ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Code formatting aborted due to parsing errors. To format code with errors, enable the 'formatter.formatWithErrors' option.


Checked 1 file in 2ms. No fixes applied.
Found 2 errors.
check ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Some errors were emitted while running checks."""


def _judged(tmp_path: Path, calls: list[tuple[str, str, int]]) -> list[tuple[dict[str, float], bool]]:
    engine = replay_bash(tmp_path, "sess-masked", "check the page renders", calls)
    return [(features, failed) for _run, features, failed in engine.judged_runs]


def test_a_node_crash_behind_tail_with_exit_code_0_is_a_failure(tmp_path: Path) -> None:
    ((features, failed),) = _judged(
        tmp_path, [("cd /Users/me/tasks1; node /tmp/verify-ui.mjs 2>&1 | tail -30", NODE_CRASH, 0)]
    )
    assert failed
    assert features["masked"] == 1.0 and features["error_in_tail"] == 1.0


def test_the_crash_is_captured_with_the_call_that_fixed_it(tmp_path: Path) -> None:
    engine = replay_bash(
        tmp_path,
        "sess-masked",
        "check the page renders",
        [
            ("cd /Users/me/tasks1; node /tmp/verify-ui.mjs 2>&1 | tail -20", NODE_CRASH, 0),
            (
                "cp /tmp/verify-ui.mjs /Users/me/tasks1/verify-ui.mjs && cd /Users/me/tasks1 && "
                "node verify-ui.mjs 2>&1 | tail -20",
                "login page ok\nswitch toggled\nALL CHECKS PASSED",
                0,
            ),
        ],
    )
    (episode,) = engine.judged_episodes
    assert "Cannot find package 'playwright'" in " ".join(e["text"] for e in episode.errors)


def test_a_crash_the_output_goes_on_after_is_not_in_its_tail(tmp_path: Path) -> None:
    # oh-my-posh: one section of a survey crashed, the next printed its answer
    out = NODE_CRASH + "\n=== next ===\nPINNED OK"
    ((features, _failed),) = _judged(
        tmp_path, [("node -e 'pin()' 2>&1; echo '=== next ==='; node pin.js", out, 0)]
    )
    assert features["error_in_tail"] == 0.0


def test_a_check_that_prints_failure_marks_behind_tail_is_a_failure(tmp_path: Path) -> None:
    ((features, failed),) = _judged(
        tmp_path, [("npx @biomejs/biome check src/styles/global.css 2>&1 | tail -40", BIOME, 0)]
    )
    assert failed
    assert features["failure_mark"] == 1.0


def test_a_summary_of_no_errors_is_no_failure_mark(tmp_path: Path) -> None:
    # vale and eslint mark their summary with ✖ also when it counts only warnings
    vale = "docs/a.md\n 3:1  warning  Use 'it is'  Microsoft.Contractions\n\n✖ 0 errors, 1 warning and 0 suggestions in 1 file."
    eslint = "src/a.tsx\n  4:10  warning  'x' is defined but never used\n\n✖ 1 problem (0 errors, 1 warning)"
    (first, _), (second, _) = _judged(
        tmp_path, [("vale docs/a.md 2>&1 | tail -5", vale, 0), ("npm run lint 2>&1 | tail -10", eslint, 0)]
    )
    assert first["failure_mark"] == 0.0 and second["failure_mark"] == 0.0
