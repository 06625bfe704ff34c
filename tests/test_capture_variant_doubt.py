"""The variant model's input of issue 33's fifteenth round: the run model's doubt that the failed call failed
(`variant_doubt`), from a tuning session's shape, replayed through the real engine with the shipped weights."""

from __future__ import annotations

import sys
from pathlib import Path

from recall_agent.capture import learning

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from capture_fixtures import replay_bash  # noqa: E402

# website-1-wun-production: a node script written by a heredoc runs, prints its answers and exits 0; the
# shell then complains about the heredoc's end marker. The next call writes and runs another script (it
# reads the recent executions). The labels call the EOF complaint never fixed.
FAILED = (
    "cat > /tmp/test_workflow_execution.js << 'EOF'\n"
    "const https = require('https');\n"
    "\n"
    "const apiKey = '<redacted:jwt>';\n"
    "\n"
    "// Test webhook data that matches the expected format\n"
    "const testData = {\n"
    "  name: 'Test User Fix',\n"
    "  email: 'test_fix_' + Date.now() + '@example.com',\n"
    "  paymentStatus: 'SUCCEEDED',\n"
    "  paymentMethod: 'QR_PROMPT_PAY',\n"
    "  amount: 99000,\n"
    "  currency: 'THB',\n"
    "  transactionId: 'ch_test_' + Date.now(),\n"
    "  transactionTime: new Date().toISOString(),\n"
    "  referenceId: 'test-ref-' + Date.now()\n"
    "};\n"
    "\n"
    "const options = {\n"
    "  hostname: 'atm.example.me',\n"
    "  path: '/webhook/beam-checkout-prd',\n"
    "  method: 'POST',\n"
    "  headers: {\n"
    "    'Content-Type': 'application/json'\n"
    "  }\n"
    "};\n"
    "\n"
    "const req = https.request(options, (res) => {\n"
    "  let data = '';\n"
    "  res.on('data', (chunk) => { data += chunk; });\n"
    "  res.on('end', () => {\n"
    "    console.log('Webhook Response Status:', res.statusCode);\n"
    "    try {\n"
    "      const response = JSON.parse(data);\n"
    "      console.log('Response:', JSON.stringify(response, null, 2));\n"
    "      console.log('\\\\nTest data sent:');\n"
    "      console.log('Email:', testData.email);\n"
    "      console.log('Name:', testData.name);\n"
    "    } catch (e) {\n"
    "      console.log('Response:', data);\n"
    "    }\n"
    "  });\n"
    "});\n"
    "\n"
    "req.on('error', (e) => {\n"
    "  console.error('error: ' + e.message);\n"
    "});\n"
    "\n"
    "req.write(JSON.stringify(testData));\n"
    "req.end();\n"
    "\n"
    "console.log('🚀 Triggering workflow with test data...');\n"
    "console.log('Email:', testData.email);\n"
    "EOF\n"
    "node /tmp/test_workflow_execution.js\n"
    "sleep 3\n"
    'echo "Waiting for execution to complete..."\n'
    "EOF\n"
    "node /tmp/test_workflow_execution.js && sleep 4\n"
)
FAILED_OUT = (
    "🚀 Triggering workflow with test data...\n"
    "Email: test_fix_1763991992537@example.com\n"
    "Webhook Response Status: 200\n"
    "Response: {\n"
    '  "message": "Workflow was started"\n'
    "}\n"
    "\\nTest data sent:\n"
    "Email: test_fix_1763991992537@example.com\n"
    "Name: Test User Fix\n"
    "Waiting for execution to complete...\n"
    "🚀 Triggering workflow with test data...\n"
    "Email: test_fix_1763991995849@example.com\n"
    "Webhook Response Status: 200\n"
    "Response: {\n"
    '  "message": "Workflow was started"\n'
    "}\n"
    "\\nTest data sent:\n"
    "Email: test_fix_1763991995849@example.com\n"
    "Name: Test User Fix\n"
    "(eval):58: command not found: EOF"
)
NEXT = (
    "cat > /tmp/check_recent_executions.js << 'EOF'\n"
    "const https = require('https');\n"
    "\n"
    "const apiKey = '<redacted:jwt>';\n"
    "\n"
    "const options = {\n"
    "  hostname: 'atm.example.me',\n"
    "  path: '/api/v1/executions?workflowId=WORKFLOW_ID&limit=5',\n"
    "  method: 'GET',\n"
    "  headers: {\n"
    "    'X-N8N-API-KEY': apiKey,\n"
    "    'Content-Type': 'application/json'\n"
    "  }\n"
    "};\n"
    "\n"
    "const req = https.request(options, (res) => {\n"
    "  let data = '';\n"
    "  res.on('data', (chunk) => { data += chunk; });\n"
    "  res.on('end', () => {\n"
    "    try {\n"
    "      const result = JSON.parse(data);\n"
    "      console.log('=== RECENT EXECUTIONS (after fix) ===\\n');\n"
    "      if (result.data && result.data.length > 0) {\n"
    "        result.data.forEach((exec, i) => {\n"
    "          console.log('[' + i + '] ID: ' + exec.id);\n"
    "          console.log('    Status: ' + exec.status);\n"
    "          console.log('    Started: ' + exec.startedAt);\n"
    "          console.log('    Mode: ' + exec.mode);\n"
    "          console.log('');\n"
    "        });\n"
    "      } else {\n"
    "        console.log('No executions found');\n"
    "      }\n"
    "    } catch (e) {\n"
    "      console.error('Error:', e.message);\n"
    "      console.log('Response:', data.substring(0, 500));\n"
    "    }\n"
    "  });\n"
    "});\n"
    "\n"
    "req.on('error', (e) => {\n"
    "  console.error('problem with request: ' + e.message);\n"
    "});\n"
    "\n"
    "req.end();\n"
    "EOF\n"
    "node /tmp/check_recent_executions.js\n"
)
NEXT_OUT = (
    "=== RECENT EXECUTIONS (after fix) ===\n"
    "\n"
    "[0] ID: 11355\n"
    "    Status: success\n"
    "    Started: 2025-11-24T13:46:36.230Z\n"
    "    Mode: webhook\n"
    "\n"
    "[1] ID: 11354\n"
    "    Status: success\n"
    "    Started: 2025-11-24T13:46:32.852Z\n"
    "    Mode: webhook\n"
    "\n"
    "[2] ID: 11353\n"
    "    Status: error\n"
    "    Started: 2025-11-24T13:39:32.312Z\n"
    "    Mode: manual\n"
    "\n"
    "[3] ID: 11352\n"
    "    Status: error\n"
    "    Started: 2025-11-24T13:33:56.667Z\n"
    "    Mode: manual\n"
    "\n"
    "[4] ID: 11351\n"
    "    Status: success\n"
    "    Started: 2025-11-24T13:33:46.640Z\n"
    "    Mode: manual"
)


def test_another_script_after_a_doubtful_shell_complaint_is_no_fix(tmp_path: Path) -> None:
    engine = replay_bash(
        tmp_path, "sess-doubt", "check the workflow", [(FAILED, FAILED_OUT, 0), (NEXT, NEXT_OUT, 0)]
    )
    (first, _f, failed), (_second, _g, passed) = engine.judged_runs
    assert failed and not passed
    offered = [ep for ep in engine.judged_episodes if ep.variant]
    assert offered, "the next script is offered to the variant model as the command line written again"
    features = offered[0].features
    # the failure was read off an exit-0 output: the run model was far from sure
    assert 0.2 < features["variant_doubt"] < 0.8
    # main (without it) stored "Fixed by the command: `node /tmp/check_recent_executions.js`
    # instead of `node /tmp/test_workflow_execution.js`"
    assert not any(ep.keep for ep in offered)
    # and it is the doubt that pulls it down: the same candidate read as a sure failure scores higher
    sure = dict(features, variant_doubt=0.0)
    assert engine._variant_model.probability(sure) > engine._variant_model.probability(features)
    assert not [b for b in (learning.build(ep, _context(tmp_path)) for ep in engine.episodes()) if b]


def test_a_flagged_failure_is_not_doubted(tmp_path: Path) -> None:
    # the same complaint with the client's exit flag: the run model is sure, the input says so
    engine = replay_bash(
        tmp_path,
        "sess-doubt",
        "check the workflow",
        [(FAILED, "Exit code 127\n" + FAILED_OUT, 127), (NEXT, NEXT_OUT, 0)],
    )
    offered = [ep for ep in engine.judged_episodes if ep.variant]
    assert offered and offered[0].features["variant_doubt"] < 0.05


def _context(tmp_path: Path) -> learning.Context:
    return learning.Context(session_id="sess-doubt", root=str(tmp_path), branch=None, repo="r")
