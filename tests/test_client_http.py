"""The HTTP path end to end: a real `recall` process against a real server on 127.0.0.1.

Both up, one down, one slower than the budget, garbage, HTML error pages, a JSON list; 1 MB of binary
input on stdin. The server is tests/client_fixtures.py's RecordingServer.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from recall_agent.config import DEFAULT_FEDERATION_PATH, DEFAULT_RETRIEVAL_PATH
from recall_agent.safety.render import FRAME  # the one framing line (docs/security.md)

pytest_plugins = ["client_fixtures"]

GOLDEN = Path(__file__).parent / "golden"
QUERY = "HandlerContextInjection"


def closed_port_url(path: str) -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now: connection refused
    return f"http://127.0.0.1:{port}{path}"


def run_recall(recall_cmd, env, cwd, *argv, learnings=None, federation=None, stdin=None, timeout=30):
    env = dict(env)
    if learnings:
        env["AGENT_LEARNING_RETRIEVAL_URL"] = learnings
    if federation:
        env["KNOWLEDGE_FEDERATION_URL"] = federation
    start = time.monotonic()
    proc = subprocess.run(
        [*recall_cmd, *argv], cwd=cwd, env=env, input=stdin, capture_output=True, timeout=timeout
    )
    return proc, time.monotonic() - start


def test_both_up_prints_the_seed_answer_byte_for_byte(http_backend, client_env, recall_cmd, tmp_path):
    proc, _ = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        QUERY,
        learnings=http_backend.url("ok", "learnings"),
        federation=http_backend.url("ok", "federation"),
    )
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout.decode() == (GOLDEN / "seed_example.md").read_text(encoding="utf-8")
    paths = sorted(path for path, _ in http_backend.requests)
    assert paths == ["/ok" + DEFAULT_RETRIEVAL_PATH, "/ok" + DEFAULT_FEDERATION_PATH]


def test_learnings_down_federation_still_shows(http_backend, client_env, recall_cmd, tmp_path):
    down = closed_port_url(DEFAULT_RETRIEVAL_PATH)
    proc, _ = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        QUERY,
        learnings=down,
        federation=http_backend.url("ok", "federation"),
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0
    assert f"[Learnings] unavailable (connection refused: {down}" in out
    assert "Partial results shown." in out
    assert "### [Architecture] Result 1\n**Source:** repowise | **Rank:** 0" in out
    assert "### [Antipatterns] Result 1\n**Source:** qdrant | **Rank:** 0" in out
    assert out.index("[Learnings] unavailable") < out.index("[Architecture] Result 1")


@pytest.mark.slow
def test_slow_backend_is_cut_at_the_budget(http_backend, client_env, recall_cmd, tmp_path):
    proc, wall = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        QUERY,
        learnings=http_backend.url("slow", "learnings"),
        federation=http_backend.url("ok", "federation"),
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0
    assert wall < 11.0, f"took {wall:.1f} s"
    assert re.search(r"\[Learnings\] unavailable \(timeout after [89](\.\d)? s", out), out
    assert "HandlerContextInjection wires pattern retrieval" in out


@pytest.mark.parametrize(
    ("mode", "needle"),
    [
        ("garbage", '[Learnings] unavailable (not JSON (application/json): {"matches": [tru'),
        ("html", "[Learnings] unavailable (HTTP 502 Bad Gateway: 502 Bad Gateway 502 Bad Gateway"),
        ("html200", "[Learnings] unavailable (not JSON (text/html): 502 Bad Gateway 502 Bad Gateway"),
        ("notobject", "[Learnings] unavailable (expected a JSON object, got list). Partial results shown."),
    ],
)
def test_bad_learnings_response_reported_other_backend_shown(
    mode, needle, http_backend, client_env, recall_cmd, tmp_path
):
    proc, _ = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        QUERY,
        learnings=http_backend.url(mode, "learnings"),
        federation=http_backend.url("ok", "federation"),
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "Traceback" not in proc.stderr.decode()
    assert needle in out
    assert "Detected pattern: direct Kafka topic string hardcoded in handler..." in out


def test_federation_html_error_page_learnings_still_shown(http_backend, client_env, recall_cmd, tmp_path):
    proc, _ = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        QUERY,
        learnings=http_backend.url("ok", "learnings"),
        federation=http_backend.url("html", "federation"),
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0
    assert "### [Learnings] Match 1 (92% similarity, error_signature, 2 days old)" in out
    assert "[Architecture] unavailable (HTTP 502 Bad Gateway" in out
    assert "[Antipatterns] unavailable (HTTP 502 Bad Gateway" in out


def test_both_down_exit_0_and_says_so(client_env, recall_cmd, tmp_path):
    proc, _ = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        QUERY,
        learnings=closed_port_url(DEFAULT_RETRIEVAL_PATH),
        federation=closed_port_url(DEFAULT_FEDERATION_PATH),
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0
    assert out.count("unavailable (connection refused") == 3  # learnings + both federation sections
    assert out.rstrip().endswith("No relevant knowledge found for this context.")


def test_json_format_reports_responses_and_failures(http_backend, client_env, recall_cmd, tmp_path):
    proc, _ = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        "--format",
        "json",
        QUERY,
        learnings=http_backend.url("garbage", "learnings"),
        federation=http_backend.url("ok", "federation"),
    )
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["scope"] == "all"
    assert doc["learnings"]["response"] is None
    assert doc["learnings"]["failure"]["kind"] == "bad_response"
    assert "not JSON" in doc["learnings"]["failure"]["message"]
    assert doc["federation"]["failure"] is None
    assert doc["federation"]["response"]["results"][0]["source"] == "repowise"
    assert doc["federation"]["payload"] == {"query": QUERY}  # over HTTP: exactly the seed's payload


def test_one_megabyte_of_binary_on_stdin_is_cut_to_the_wire_limit(
    http_backend, client_env, recall_cmd, tmp_path
):
    blob = b"Error: \xff\xfe\x00 broken \xc3(" + "é".encode() * 600_000  # > 1 MB, invalid UTF-8 inside
    proc, _ = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        "--stdin",
        stdin=blob,
        learnings=http_backend.url("empty", "learnings"),
        federation=http_backend.url("empty", "federation"),
    )
    assert proc.returncode == 0, proc.stderr
    posted = dict(http_backend.requests)
    error_text = posted["/empty" + DEFAULT_RETRIEVAL_PATH]["error_text"]
    assert len(error_text) == 4000
    assert error_text.startswith("Error: \ufffd\ufffd broken \ufffd(éé")
    assert posted["/empty" + DEFAULT_FEDERATION_PATH]["query"] == error_text
    assert "No relevant knowledge found for this context." in proc.stdout.decode()


def test_invalid_utf8_in_argv(http_backend, client_env, recall_cmd, tmp_path):
    proc, _ = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        b"KeyError: \xff\xfe",
        learnings=http_backend.url("empty", "learnings"),
        federation=http_backend.url("empty", "federation"),
    )
    assert proc.returncode == 0, proc.stderr
    posted = dict(http_backend.requests)
    assert posted["/empty" + DEFAULT_RETRIEVAL_PATH]["error_text"] == "KeyError: \ufffd\ufffd"


def test_secrets_are_redacted_before_leaving_the_process(http_backend, client_env, recall_cmd, tmp_path):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    proc, _ = run_recall(
        recall_cmd,
        client_env,
        tmp_path,
        f"401 Unauthorized: Authorization: Bearer {secret} rejected",
        learnings=http_backend.url("empty", "learnings"),
        federation=http_backend.url("empty", "federation"),
    )
    assert proc.returncode == 0, proc.stderr
    posted = dict(http_backend.requests)
    for body in posted.values():
        text = json.dumps(body)
        assert secret not in text and "<redacted:" in text and "401 Unauthorized" in text


@pytest.mark.slow
def test_against_the_real_recall_server(client_env, recall_cmd, git_repo: Path, tmp_path: Path):
    """`recall serve` on 127.0.0.1 and the client over HTTP: a stored learning and the repo's index answer."""
    import urllib.request

    (git_repo / "billing.py").write_text("class InvoiceTotals:\n    def total(self):\n        return 0\n")
    env = dict(client_env)
    error = "ZeroDivisionError: division by zero in InvoiceTotals.total"
    fix = "Empty invoices have no lines. Return Decimal(0) before dividing and cover it with a unit test."
    learned = subprocess.run(
        [*recall_cmd, "learn", f"--error={error}", f"--resolution={fix}", "--file", "billing.py"],
        cwd=git_repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert learned.returncode == 0, learned.stderr
    port = int(closed_port_url("").rsplit(":", 1)[1])
    server = subprocess.Popen(
        [*recall_cmd, "serve", "--port", str(port), "--repo", str(git_repo)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "/health", timeout=1) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"recall serve did not start: {server.stderr.read().decode()[-500:]}")
                time.sleep(0.2)
        proc, _ = run_recall(
            recall_cmd,
            env,
            git_repo,
            error,
            learnings=base + DEFAULT_RETRIEVAL_PATH,
            federation=base + DEFAULT_FEDERATION_PATH,
            timeout=60,
        )
        out = proc.stdout.decode()
        assert proc.returncode == 0, proc.stderr
        assert out.startswith(f"## Recall Results — scope: all\n\n{FRAME}\n\n### [Learnings] Match 1 (")
        assert "**Source:** agent_learnings | **Repo:** omnibase_infra" in out
        assert f"**Resolution:** {fix}" in out
        assert "### [Architecture] Result 1" in out and "InvoiceTotals" in out
    finally:
        server.terminate()
        server.wait(timeout=30)
