"""The run model's cues of issue 33's eighth round (`recall_agent/capture/cues.py`), each from a real
session's shape, replayed through the engine: what the run model sees besides the exit flag and the error
lines."""

from __future__ import annotations

import sys
from pathlib import Path

from recall_agent.capture.engine import Engine
from recall_agent.capture.transcript import Transcript

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from capture_fixtures import replay_bash  # noqa: E402
from transcript_writer import TranscriptWriter  # noqa: E402


def _features(tmp_path: Path, command: str, out: str, code: int = 0) -> dict[str, float]:
    engine = replay_bash(tmp_path, "sess-cues", "check the API", [(command, out, code)])
    ((_run, features, _failed),) = engine.judged_runs
    return features


def test_an_http_error_answer_is_a_cue(tmp_path: Path) -> None:
    # website-1-wun-production: a node script prints the API's 400 and exits 0
    out = 'Status Code: 400\nResponse: {"message":"request/body must have required property \'name\'"}'
    assert _features(tmp_path, "node /tmp/update_workflow.js", out)["answer_error"] == 1.0


def test_a_javascript_error_object_and_curl_s_complaint_are_cues(tmp_path: Path) -> None:
    out = "Fetching modules...\nError: {\n  code: '42703',\n  message: 'column modules.number does not exist'\n}"
    assert _features(tmp_path, "node check-progress.js", out)["answer_error"] == 1.0
    out = "curl: option : blank argument where content is expected\ncurl: try 'curl --help' for more information"
    assert (
        _features(tmp_path / "b", "curl -s https://x.example/api \\\n -H 'a: b'", out)["answer_error"] == 1.0
    )


def test_a_successful_answer_or_a_json_message_is_not(tmp_path: Path) -> None:
    out = 'HTTP/2 200\ncontent-type: application/json\n{"message": "created", "id": 7}'
    assert _features(tmp_path, "curl -si https://x.example/api", out)["answer_error"] == 0.0


def test_an_error_answer_a_passing_run_printed_too_is_background(tmp_path: Path) -> None:
    # the same 404 printed by a run that passed (its exit flag is the client's word) is not what failed; the
    # probe prints its 200s too, so that the first run's verdict (the run model's) is "passed" on any refit
    out = "HTTP/2 200 /\nHTTP/2 200 /api/health\nHTTP/2 404 /favicon.ico\nok"
    engine = replay_bash(tmp_path, "sess-cues", "check the endpoints", [("./probe.sh", out, 0)] * 2)
    (_first, first, first_failed), (_again, again, _) = engine.judged_runs
    assert not first_failed, "precondition: the first probe is judged a passing run"
    assert first["answer_error"] == 1.0 and again["answer_error"] == 0.0


def test_a_command_that_restores_what_it_broke_is_a_cue(tmp_path: Path) -> None:
    # oh-my-posh: a mutation check breaks the fix, runs the tests, puts the file back
    command = (
        "cp prompt/primary.go /tmp/primary.bak && sed -i 's/gapRun(1)//' prompt/primary.go; "
        "go test ./prompt/ 2>&1 | tail -5; cp /tmp/primary.bak prompt/primary.go && echo '--- restored ---'"
    )
    out = "--- FAIL: TestCapturedRunsFinalSpace (0.00s)\nFAIL\n--- restored ---"
    assert _features(tmp_path, command, out)["restores"] == 1.0
    assert _features(tmp_path / "b", "go test ./prompt/ 2>&1 | tail -5", out)["restores"] == 0.0


def _said_then_run(tmp_path: Path, words: list[str], between: bool = False) -> list[dict[str, float]]:
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-intent", str(tmp_path))
    w.prompt("prove the new tests catch the bug")
    w.say(words[0])
    w.bash("go test ./prompt/ -run TestCaptured 2>&1 | tail -3", "--- FAIL: TestCapturedRunsFinalSpace\nFAIL")
    if between:
        w.say(words[1])
    w.bash("go test ./prompt/ 2>&1 | tail -1", "ok  \tgithub.com/x/prompt\t1.4s")
    engine = Engine(record=True)
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    return [features for _run, features, _failed in engine.judged_runs]


def test_the_agent_saying_the_next_call_must_fail_is_a_cue_for_that_call_only(tmp_path: Path) -> None:
    first, second = _said_then_run(tmp_path, ["Mutation check: reverting the fix must fail these tests."])
    assert first["expects_failure"] == 1.0
    assert second["expects_failure"] == 1.0  # no words in between: the same message announced both calls
    first, second = _said_then_run(
        tmp_path / "b",
        ["Mutation check: reverting the fix must fail these.", "Restored; the full suite now."],
        True,
    )
    assert first["expects_failure"] == 1.0 and second["expects_failure"] == 0.0


def test_ordinary_words_expect_nothing(tmp_path: Path) -> None:
    (first, _second) = _said_then_run(tmp_path, ["Let me run the tests to be safe."])
    assert first["expects_failure"] == 0.0


def test_the_expectation_is_kept_between_reads_of_a_live_transcript(tmp_path: Path) -> None:
    w = TranscriptWriter(tmp_path / "s.jsonl", "sess-live", str(tmp_path))
    w.prompt("prove the check rejects a bad binary")
    w.say("The script should be rejected with OMP_BIN pointing at cmd.exe.")
    path = w.save()
    t = Transcript(path)
    engine = Engine(record=True)
    engine.feed(t.steps())
    state = engine.state()
    assert state["streams"]["main"]["expects"] is True
    w.bash(
        "node scripts/ensure-artifacts.mjs",
        "Exit code 1\nCould not generate the build artifacts",
        exit_code=1,
    )
    later = Engine(state, record=True)
    later.feed(Transcript(w.save(), start=t.end).steps())
    ((_run, features, _failed),) = later.judged_runs
    assert features["expects_failure"] == 1.0


# oh-my-posh (6b6f4218): a mutation check that breaks the fix, runs the new tests, puts the file back and runs
# them again; the output ends on the passing run. The labels list no failure here: the failing tests are what
# the agent wanted to see.
_MUTATION = (
    "cp prompt/primary.go /tmp/primary.bak && sed -i 's/\\t\\te.appendCapturedRuns(gapRun(1), nil)//' "
    "prompt/primary.go ; go test ./prompt/ -run 'TestCapturedRunsFinalSpace|TestCapturedRunsWithoutFinalSpace' "
    "2>&1 | tail -8 ; cp /tmp/primary.bak prompt/primary.go ; echo '--- restored ---' ; "
    "go test ./prompt/ 2>&1 | tail -1"
)
_GO_FAIL = (
    "--- FAIL: TestCapturedRunsFinalSpace (0.00s)\n    runs_test.go:88: \n"
    "        \tError Trace:\tD:/oh-my-posh/src/prompt/runs_test.go:88\n        \tError:      \tNot equal: \n"
    "        \t            \texpected: 3\n        \t            \tactual  : 2\n"
    "FAIL\nFAIL\tgithub.com/jandedobbeleer/oh-my-posh/src/prompt\t0.155s\nFAIL"
)
_SUITE_OK = (
    "ok  \tgithub.com/jandedobbeleer/oh-my-posh/src/terminal\t0.2s\n"
    "ok  \tgithub.com/jandedobbeleer/oh-my-posh/src/prompt\t1.4s"
)


def _omp_session(tmp_path: Path, command: str, out: str, edit: bool = False, code: int = 0) -> Engine:
    w = TranscriptWriter(tmp_path / "s.jsonl", "6b6f4218-0b12-4d55-b930-462903683bea", "/d/oh-my-posh/src")
    w.prompt("Make sure the captured runs tests would catch the gap bug")
    w.say("Drop the gap run and the new tests must fail, then put it back.")
    w.bash(command, out, code)
    if edit:
        w.edit("prompt/primary.go", "e.appendCapturedRuns(nil)", "e.appendCapturedRuns(gapRun(1), nil)")
    w.say("Full suite:")
    w.bash("go test ./... 2>&1 | tail -3", _SUITE_OK, 0)
    engine = Engine(record=True)
    engine.feed(Transcript(w.save()).steps())
    engine.end_turn()
    return engine


def test_an_experiment_or_a_survey_is_a_feature_of_the_episode(tmp_path: Path) -> None:
    """Issue 33, thirteenth round: `error_experiment`, the episode model's, read off the failing call."""
    from recall_agent.capture import cues

    restored = _omp_session(
        tmp_path, _MUTATION, f"{_GO_FAIL}\n--- restored ---\nok  \tgithub.com/x/prompt\t1.395s"
    )
    (episode,) = restored.judged_episodes
    assert episode.features["error_experiment"] == 1.0
    plain = _omp_session(tmp_path / "b", "go test ./prompt/ 2>&1 | tail -8", _GO_FAIL, edit=True)
    (episode,) = plain.judged_episodes
    assert episode.features["error_experiment"] == 0.0
    # a survey: one command printing its own headings between its parts
    survey = (
        'grep -n "GOOS" website/scripts/build-wasm.mjs; echo "=== current size ==="; ls -la static/omp.wasm'
    )
    assert cues.headings(survey) and cues.headings("python3 - <<'PY' import json print('--- keys ---') PY")
    assert not cues.headings("git diff --stat -- a.go") and not cues.headings("go test ./... ; echo done")
    assert cues.ends_passing(["FAIL", "--- restored ---", "ok  \tgithub.com/x/prompt\t1.395s", "Exit code 1"])
    assert not cues.ends_passing(["FAIL\tgithub.com/x/prompt\t0.155s"]) and not cues.ends_passing(
        ["1 failed, 3 passed"]
    )


def test_a_break_and_restore_experiment_scores_below_the_same_failure_fixed(tmp_path: Path) -> None:
    """The mutation check above, whose tests pass again in the next call, was stored on main as "Fixed by the
    command: `go test ./...` instead of `go test ./prompt/`": `error_experiment` pulls its episode's score
    down (a fitted weight below zero), under the same failure fixed by an edit, which is stored with the file.
    Whether the experiment itself falls under the threshold is the fit's verdict on one borderline row: 0.35
    against 0.41 under the thirteenth round's weights, 0.44 against 0.43 under the fourteenth's mean of tied
    penalties; out of fold (oh-my-posh left out) both rounds store the real one (NOTES-background14-round14.md)."""
    from recall_agent.capture import learning, model

    episodes = model.load("episode")
    assert episodes.weights["error_experiment"] < 0
    restored = _omp_session(
        tmp_path, _MUTATION, f"{_GO_FAIL}\n--- restored ---\nok  \tgithub.com/x/prompt\t1.395s"
    )
    (experiment,) = restored.judged_episodes
    assert restored.failures == 1 and experiment.features["error_experiment"] == 1.0
    fixed = _omp_session(tmp_path / "b", "go test ./prompt/ 2>&1 | tail -8", _GO_FAIL, edit=True)
    (episode,) = fixed.episodes()
    assert episodes.probability(experiment.features) < episodes.probability(episode.features)
    without = experiment.features | {"error_experiment": 0.0}
    assert episodes.probability(experiment.features) < episodes.probability(without)
    ctx = learning.Context(session_id="6b6f4218", root="/d/oh-my-posh/src", branch=None, repo="r")
    built = learning.build(episode, ctx)
    assert built and "prompt/primary.go" in built["resolution_summary"]


# oh-my-posh (6b6f4218): a loop that checks out each commit of a rewritten branch and prints its own verdicts;
# the run model reads `FAIL` lines as a failure, but nothing in it names a cause the store could key on
_BISECT = (
    "cd /d/oh-my-posh && for c in $(git rev-list --reverse $(git merge-base origin/main rewrite)..rewrite); do "
    'git checkout -q $c; msg=$(git log -1 --format=%s $c) ; out=$(cd src && go test ./... 2>&1 | grep -E "^(FAIL|---)" '
    '| head -3) ; [ -z "$out" ] && echo "TEST OK    $msg" || { echo "TEST FAIL  $msg"; echo "$out"; } ; done'
)
_VERDICTS = (
    "TEST OK    WIP g1\nTEST OK    WIP g2\nTEST FAIL  WIP g3\n"
    "           FAIL\tgithub.com/jandedobbeleer/oh-my-posh/src/cli [build failed]\n           FAIL\n"
    "TEST OK    WIP g4\nTEST OK    WIP g5"
)
_NODE_CRASH = (
    "node:internal/modules/cjs/loader:1386\n  throw err;\n  ^\n\n"
    "Error: Cannot find module '/d/oh-my-posh/website/generated/hero.json'\nRequire stack:\n"
    "- D:\\oh-my-posh\\website\\[eval]\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1383:15)\n"
    "    at [eval]:2:9 {\n  code: 'MODULE_NOT_FOUND',\n  requireStack: [ 'D:\\oh-my-posh\\website\\[eval]' ]\n}\n\n"
    "Node.js v26.3.0"
)


def test_an_output_that_names_no_cause_is_a_feature_of_the_episode(tmp_path: Path) -> None:
    """Issue 33, thirteenth round: `error_no_cause`, the episode model's: the output the run model read as a
    failure names no cause line the store could key the learning on (the key would be its first lines). A Go
    assertion and a Node crash with its version trailer do name one."""
    from recall_agent.learnings import signatures

    # exit 1 so that every run model reads it as failed (exit 0, the merged thirteenth-round run model calls
    # this survey no failure, rightly: this test is about the episode's feature)
    survey = _omp_session(tmp_path, _BISECT, _VERDICTS, edit=True, code=1)
    (episode,) = survey.judged_episodes
    assert episode.features["error_no_cause"] == 1.0 and episode.features["error_experiment"] == 0.0
    go = _omp_session(tmp_path / "b", "go test ./prompt/ 2>&1 | tail -8", _GO_FAIL, edit=True)
    (episode,) = go.judged_episodes
    assert episode.features["error_no_cause"] == 0.0
    node = "node -e \"const h=require('/d/oh-my-posh/website/generated/hero.json')\""
    crash = _omp_session(tmp_path / "c", node, _NODE_CRASH, edit=True, code=1)
    (episode,) = crash.judged_episodes
    assert episode.features["error_no_cause"] == 0.0
    assert signatures.names_a_cause(_NODE_CRASH) and not signatures.names_a_cause(_VERDICTS)
