"""What the run model reads as an error the output ends with (issue 33, twelfth round): Node's and the
JavaScript clients' errors end with an object or a stack after the error line, and curl says its own failure
in words of its own. Each from a real session's shape (eagerminds-bookmarks, website-1-wun-production),
replayed through the engine."""

from __future__ import annotations

import sys
from pathlib import Path

from recall_agent.capture import output

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capture_fixtures import replay_bash  # noqa: E402

NODE_CRASH = """node:internal/modules/package_json_reader:256
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'playwright' imported from /private/tmp/verify-ui.mjs
    at Object.getPackageJSONURL (node:internal/modules/package_json_reader:256:9)
    at packageResolve (node:internal/modules/esm/resolve:768:81)
    at moduleResolve (node:internal/modules/esm/resolve:854:18)
    at ModuleLoader.getModuleJobForImport (node:internal/modules/esm/loader:309:38)
    at #link (node:internal/modules/esm/module_job:201:49) {
  code: 'ERR_MODULE_NOT_FOUND'
}

Node.js v24.2.0"""

ERROR_OBJECT = """Fetching modules...
Error: {
  code: '42703',
  details: null,
  hint: null,
  message: 'column modules.number does not exist'
}"""


def _judged(tmp_path: Path, command: str, out: str, code: int = 0) -> tuple[dict[str, float], bool]:
    engine = replay_bash(tmp_path, "sess-tail", "check the page", [(command, out, code)])
    ((_run, features, failed),) = engine.judged_runs
    return features, failed


def test_a_node_crash_behind_tail_ends_with_its_error(tmp_path: Path) -> None:
    # eagerminds-bookmarks: the script crashed, `| tail -30` hid the exit code, the stack and Node's trailer
    # came after the error line
    features, failed = _judged(
        tmp_path, "cd /Users/u/tasks1; node /tmp/verify-ui.mjs 2>&1 | tail -30", NODE_CRASH
    )
    assert features["error_in_tail"] == 1.0
    assert failed


def test_an_error_object_a_script_prints_is_its_tail(tmp_path: Path) -> None:
    # website-1-wun-production: the script caught the Supabase error and printed it, exit 0
    features, _failed = _judged(tmp_path, "node check-progress.js", ERROR_OBJECT)
    assert features["error_in_tail"] == 1.0


def test_an_answer_object_after_an_ok_line_is_not_an_error(tmp_path: Path) -> None:
    out = 'Fetching modules...\nFound 6 modules\n{\n  "data": [\n    {"id": 1},\n    {"id": 2}\n  ],\n  "error": null\n}'
    features, failed = _judged(tmp_path, "node check-progress.js", out)
    assert features["error_in_tail"] == 0.0
    assert not failed
    # an error line well before a data object that is not its own does not end the output
    out = "Error: retrying once\n" + "\n".join(f"row {i}" for i in range(8)) + '\n{\n  "rows": 8\n}'
    features, _failed = _judged(tmp_path / "b", "node check-progress.js", out)
    assert features["error_in_tail"] == 0.0


def test_curl_s_own_complaint_is_an_error_line(tmp_path: Path) -> None:
    # website-1-wun-production: a curl line with a continuation the Bash tool broke; `| head` hid curl's exit 2
    out = "curl: option : blank argument where content is expected\ncurl: try 'curl --help' or 'curl --manual' for more information"
    features, failed = _judged(
        tmp_path, 'curl -s "https://n8n.example/api/v1/workflows" -H "X-N8N-API-KEY: k" | head -100', out
    )
    assert features["error_in_tail"] == 1.0
    assert failed
    assert output.is_error_line("curl: (6) Could not resolve host: api.example")
    assert not output.is_error_line("curl: try 'curl --help' for more information")


def test_the_block_is_looked_back_over_a_bounded_number_of_lines() -> None:
    lines = ["Error: {"] + ["  x: 1,"] * 5000 + ["}"]
    assert output._block_head(lines) is None  # too far back: not looked for
    assert output._block_head(["Error: {", "  x: 1", "}"]) == 0
    assert output._block_head(["ok", "done"]) is None
