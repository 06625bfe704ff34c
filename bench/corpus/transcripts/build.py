"""Build the labelled episode set for `recall import-sessions` (bench/bench_import.py reads it).

Each `<name>.jsonl` here is one Claude Code session in the client's layout (bench/transcript_writer.py),
holding one or two episodes; `labels.json` says, per file, which errors were really fixed in that session
(`fix: true`) and which were not (an error left open, a declined or interrupted call, a probe that found
nothing, a flaky retry, a test skipped instead of fixed, a workaround with another command). A `marker` is
a line of the episode's error text: a learning whose signature holds it is that episode's.

Error texts are real tool output, never written by hand: each is one case of bench/corpus/errors.jsonl
(produced by bench/corpus/generate.py running python, pytest, gcc, cargo, git, node, npm, ruff, mypy...);
`source` names the case. The episode shapes around them (what the agent did between the failure and the
success) are modelled on public transcripts the real client wrote: split replies sharing a message id,
thinking blocks, parallel tool calls, `cd ... && cmd 2>&1 | tail`, subagent files, `/compact`, harness
messages for declined permissions and interruptions.

    python3 bench/corpus/transcripts/build.py     # rewrites the files here (deterministic)
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from transcript_writer import TranscriptWriter  # noqa: E402

ERRORS = HERE.parent / "errors.jsonl"
COMMANDS = [  # cause prefix -> (failing command, a passing run of the same command)
    ("pytest-", "python -m pytest tests/test_api.py -q", "python -m pytest tests/test_api.py -q"),
    ("py-", "python src/app.py", "python src/app.py"),
    ("c-", "gcc -Wall -o build/app src/main.c", "gcc -Wall -o build/app src/main.c"),
    ("cargo-", "cargo build", "cargo build"),
    ("rust-", "cargo build", "cargo build"),
    ("git-", "git push origin HEAD", "git push origin HEAD"),
    ("mypy-", "mypy src", "mypy src"),
    ("node-", "node index.js", "node index.js"),
    ("npm-", "npm test", "npm test"),
    ("pip-", "pip install -r requirements.txt", "pip install -r requirements.txt"),
    ("ruff-", "ruff check src", "ruff check src"),
    ("sh-", "./scripts/run.sh", "./scripts/run.sh"),
    ("sqlite-", "sqlite3 app.db < schema.sql", "sqlite3 app.db < schema.sql"),
]
_ERRORISH = re.compile(r"[A-Za-z]+(?:Error|Exception)\b|\berror\b|\bfatal\b|\bFAILED\b|\bE\d{3,4}\b|panic")


def _command(cause: str) -> tuple[str, str]:
    for prefix, failing, passing in COMMANDS:
        if cause.startswith(prefix):
            return failing, passing
    return "make test", "make test"


def _marker(text: str) -> str | None:
    lines = [ln.strip() for ln in text.splitlines() if 12 <= len(ln.strip()) <= 160]
    telling = [ln for ln in lines if _ERRORISH.search(ln) and "<redacted" not in ln]
    return telling[-1] if telling else None


def load_cases() -> list[dict[str, Any]]:
    cases = []
    for n, line in enumerate(ERRORS.read_text().splitlines(), 1):
        case = json.loads(line)
        if (
            case["kind"] != "cause"
            or case["color"]
            or case["log_prefix"]
            or case["cause"] == "sh-cat-missing"
        ):
            continue
        marker = _marker(case["text"])
        if marker:
            cases.append(
                case | {"marker": marker, "source": f"bench/corpus/errors.jsonl line {n} ({case['cause']})"}
            )
    return cases


def _words(case: dict[str, Any]) -> str:
    return (
        f"That failure came from the code, not the environment. The fix: {case['resolution']}. "
        "I reran the same command and it passes now."
    )


Label = dict[str, Any]
Shape = Callable[[TranscriptWriter, dict[str, Any], random.Random], list[Label]]


def _fix(case: dict[str, Any], note: str) -> Label:
    return {"marker": case["marker"], "fix": True, "note": note, "source": case["source"]}


def _not(case: dict[str, Any], note: str) -> Label:
    return {"marker": case["marker"], "fix": False, "note": note, "source": case["source"]}


# ---------------------------------------------------------------------- real fixes


def classic(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("the build is red, can you fix it?")
    w.bash(failing, case["text"], exit_code=1, text_before="Let me run it first.")
    w.read("src/app.py", "import os\n" * 30)
    w.edit("src/app.py", "old", "new")
    w.bash(passing, "ok")
    w.say(_words(case), thinking="Now it passes.")
    return [_fix(case, "fail, read, edit, same command passes")]


def install_fix(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("run the service")
    w.bash(failing, case["text"], exit_code=1)
    w.bash("pip install -e '.[dev]'", "Successfully installed app-0.1.0")
    w.bash(passing, "started")
    w.say(_words(case))
    return [_fix(case, "no edit: another command (an install) made it pass")]


def covering_run(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    w.prompt("one test fails")
    w.bash("pytest tests/test_api.py::test_create -q", case["text"], exit_code=1)
    w.edit("src/api.py")
    w.bash("pytest tests/ -q", "42 passed in 1.20s")
    w.say(_words(case))
    return [_fix(case, "fixed test, verified by a run covering it")]


def cd_and_pipes(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, _passing = _command(case["cause"])
    w.prompt("please check the tests")
    w.bash(f"cd {w.cwd} && {failing} 2>&1 | tail -40", case["text"], exit_code=1)
    w.edit("src/handlers.py")
    w.bash(f"{failing} 2>&1 | head -5", "ok")
    w.say(_words(case))
    return [_fix(case, "cd prefix and output plumbing differ between failure and success")]


def split_reply(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("fix it")
    w.bash(failing, case["text"], exit_code=1)
    w.edit("src/app.py")
    w.bash(passing, "done")
    w.reply(
        {"type": "thinking", "thinking": "It works now; summarise.", "signature": "c2ln"},
        {"type": "text", "text": "It failed because of a mistake in the code."},
        {"type": "text", "text": f"The fix: {case['resolution']}."},
    )
    return [_fix(case, "explanation split over lines with one message id")]


def subagent(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("delegate the fix to a subagent")
    w.tool("Task", {"description": "fix build", "prompt": "fix it"}, [{"type": "text", "text": "Fixed."}])
    w.say("The subagent fixed it.")
    sub = TranscriptWriter(
        w.path.with_suffix("") / "subagents" / "agent-a7f3.jsonl",
        w.session_id,
        w.cwd,
        w.branch,
        sidechain=True,
        agent_id="a7f3",
    )
    sub.prompt("fix it")
    sub.bash(failing, case["text"], exit_code=1)
    sub.edit("src/app.py")
    sub.bash(passing, "ok")
    sub.say(_words(case))
    sub.save()
    return [_fix(case, "fixed inside a subagent's own transcript")]


def sidechain_inline(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    """Older clients: the subagent's entries in the session file, marked isSidechain."""
    failing, passing = _command(case["cause"])
    w.prompt("use a helper agent")
    w.sidechain, w.agent_id = True, "b19c"
    w.bash(failing, case["text"], exit_code=1)
    w.edit("src/app.py")
    w.bash(passing, "ok")
    w.say(_words(case))
    w.sidechain, w.agent_id = False, None
    w.say("The helper is done.")
    return [_fix(case, "fixed in sidechain entries of the session file")]


def across_compaction(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("fix the failure")
    w.bash(failing, case["text"], exit_code=1)
    w.edit("src/app.py")
    replay = list(w.lines)
    w.compact("This session is being continued from a previous conversation that ran out of context.")
    w.bash(passing, "ok")
    w.say(_words(case))
    for line in replay:  # a later /compact appends earlier entries again (same uuids)
        w.raw(line)
    return [_fix(case, "failure before /compact, fix after; earlier entries re-appended")]


def retries_then_fix(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("make it pass")
    w.bash(failing, case["text"], exit_code=1)
    w.edit("src/app.py", "a", "b")
    w.bash(failing, case["text"], exit_code=1)
    w.edit("src/app.py", "b", "c")
    w.bash(passing, "ok")
    w.say(_words(case))
    return [_fix(case, "two attempts before the fix")]


def parallel_calls(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("what is wrong?")
    t1, t2 = "toolu_01par" + w.session_id[:6] + "a", "toolu_01par" + w.session_id[:6] + "b"
    w.reply(
        {"type": "tool_use", "id": t1, "name": "Bash", "input": {"command": failing}},
        {"type": "tool_use", "id": t2, "name": "Read", "input": {"file_path": f"{w.cwd}/src/app.py"}},
    )
    for tid, content, err in ((t1, case["text"], True), (t2, "     1\u2192import os", False)):
        entry = w._base("user") | {
            "message": {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": content,
                                                     "is_error": err}]},
            "uuid": w._uuid(),
            "timestamp": w._tick(1),
        }  # fmt: skip
        w.entry(entry)
    w.edit("src/app.py")
    w.bash(passing, "ok")
    w.say(_words(case))
    return [_fix(case, "failure arrived with a parallel Read")]


def second_turn(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("run it")
    w.bash(failing, case["text"], exit_code=1)
    w.say("It fails; I can look into it if you want.")
    w.prompt("yes please fix it")
    w.edit("src/app.py")
    w.bash(passing, "ok")
    w.say(_words(case))
    return [_fix(case, "fixed in the next turn")]


def write_new_file(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("fix the failure")
    w.bash(failing, case["text"], exit_code=1)
    w.write("src/settings_local.py", "DEBUG = False\n")
    w.bash(passing, "ok")
    w.say(_words(case))
    return [_fix(case, "fixed by writing a new file")]


def silent_fix(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("fix")
    w.bash(failing, case["text"], exit_code=1)
    w.edit("src/app.py")
    w.bash(passing, "ok")
    return [_fix(case, "fixed without a word from the agent")]


def two_fixes(
    w: TranscriptWriter, case: dict[str, Any], rng: random.Random, other: dict[str, Any]
) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("fix everything")
    w.bash(failing, case["text"], exit_code=1)
    w.edit("src/app.py")
    w.bash(passing, "ok")
    w.say(_words(case))
    f2, p2 = _command(other["cause"])
    w.bash(f2, other["text"], exit_code=1)
    w.edit("src/other.py")
    w.bash(p2, "ok")
    w.say(_words(other))
    return [_fix(case, "first of two fixes in one turn"), _fix(other, "second of two fixes in one turn")]


def other_verifier(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, _ = _command(case["cause"])
    w.prompt("fix it")
    w.bash(failing, case["text"], exit_code=1)
    w.edit("src/app.py")
    w.bash("python -c 'import app; print(app.__version__)'", "0.3.1")
    w.say(_words(case))
    return [_fix(case, "known limit: verified by another command, not the failing one")]


# ---------------------------------------------------------------------- not fixes


def unresolved(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, _ = _command(case["cause"])
    w.prompt("try to fix it")
    w.bash(failing, case["text"], exit_code=1)
    w.edit("src/app.py")
    w.bash(failing, case["text"], exit_code=1)
    w.say("I could not find the cause yet; it needs a closer look.")
    return [_not(case, "never fixed")]


def interrupted(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("run it")
    w.bash(failing, case["text"], exit_code=1)
    w.tool("Bash", {"command": passing}, "[Request interrupted by user for tool use]", is_error=True,
           result={"stdout": "", "stderr": "", "interrupted": True, "isImage": False})  # fmt: skip
    w.prompt("[Request interrupted by user for tool use]")
    return [_not(case, "the user interrupted the rerun")]


def declined(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("run it")
    w.tool_error("Bash", {"command": failing}, "The user doesn't want to proceed with this tool use. The tool use "
                 "was rejected (eg. if it was a file edit, the new_string was NOT written to the file).")  # fmt: skip
    w.bash(passing, "ok")
    w.bash(failing, case["text"], exit_code=1)
    w.say("It still fails; stopping here as asked.")
    return [_not(case, "declined, then a failure left open")]


def permission_then_run(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("deploy")
    w.tool_error("Bash", {"command": failing}, "Claude requested permissions to use Bash, but you haven't "
                 "granted it yet.")  # fmt: skip
    w.edit("README.md")
    w.bash(passing, "ok")
    w.bash(failing, case["text"], exit_code=1)
    return [_not(case, "a permission prompt is not an error; the real failure stayed open")]


def flaky_retry(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, passing = _command(case["cause"])
    w.prompt("run the suite")
    w.bash(failing, case["text"], exit_code=1)
    w.bash("git status --short", " M src/app.py")
    w.bash("ls src", "app.py\nutil.py")
    w.bash(passing, "ok")
    w.say("It passed on the second run; looks flaky.")
    return [_not(case, "passed on a retry with only looking around in between")]


def skipped_test(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    w.prompt("CI must be green")
    w.bash("pytest -q", case["text"], exit_code=1)
    w.edit("tests/test_api.py", "def test_create", "@pytest.mark.skip\ndef test_create")
    w.bash("pytest -q", "41 passed, 1 skipped")
    w.say("I marked the failing test as skipped so CI is green; the underlying failure is not fixed.")
    return [_not(case, "the test was skipped, not fixed (a learning here is a false positive)")]


def workaround(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, _ = _command(case["cause"])
    w.prompt("run it")
    w.bash(failing, case["text"], exit_code=1)
    w.bash("docker compose run --rm app make check", "ok")
    w.say("Running it in the container works instead.")
    return [_not(case, "worked around with a different command")]


def probes(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, _ = _command(case["cause"])
    w.prompt("look around")
    w.bash("ls build/", "ls: cannot access 'build/': No such file or directory", exit_code=2)
    w.bash("mkdir -p build", "")
    w.bash("ls build/", "")
    w.bash("grep -rn 'def handler' src", "", exit_code=1)
    w.edit("src/app.py")
    w.bash("grep -rn 'def handler' src", "src/app.py:3:def handler(event):")
    w.bash("cat .env.local", "cat: .env.local: No such file or directory", exit_code=1)
    w.write(".env.local", "DEBUG=1\n")
    w.bash("cat .env.local", "DEBUG=1")
    w.bash(failing, case["text"], exit_code=1)
    return [_not(case, "probes that found nothing, then a failure left open")]


def tool_usage_errors(w: TranscriptWriter, case: dict[str, Any], rng: random.Random) -> list[Label]:
    failing, _ = _command(case["cause"])
    w.prompt("edit the config")
    w.tool_error("Read", {"file_path": f"{w.cwd}/conf.yml"}, "File does not exist. Note: your current working "
                 "directory is " + w.cwd + ".")  # fmt: skip
    w.tool_error("Edit", {"file_path": f"{w.cwd}/conf.yaml", "old_string": "a", "new_string": "b"},
                 "<tool_use_error>String to replace not found in file.\nString: a</tool_use_error>")  # fmt: skip
    w.edit("conf.yaml", "x", "y")
    w.bash(failing, case["text"], exit_code=1)
    w.say("The config is edited, but the run still fails.")
    return [_not(case, "file tools' usage errors; the run's failure left open")]


POSITIVE: list[Shape] = [
    classic, install_fix, covering_run, cd_and_pipes, split_reply, subagent, sidechain_inline,
    across_compaction, retries_then_fix, parallel_calls, second_turn, write_new_file, silent_fix, other_verifier,
]  # fmt: skip
NEGATIVE: list[Shape] = [
    unresolved, interrupted, declined, permission_then_run, flaky_retry, skipped_test, workaround, probes,
    tool_usage_errors,
]  # fmt: skip


def build() -> dict[str, list[Label]]:
    rng = random.Random(12)
    cases = load_cases()
    rng.shuffle(cases)
    for old in HERE.iterdir():
        if old.suffix == ".jsonl" or (old.is_dir() and old.name != "__pycache__"):
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    labels: dict[str, list[Label]] = {}
    plan: list[tuple[str, Shape]] = [(s.__name__, s) for s in POSITIVE for _ in range(3)]
    plan += [(s.__name__, s) for s in NEGATIVE for _ in range(2)]
    plan += [("two_fixes", None)] * 3  # type: ignore[list-item]
    projects = ["shop-api", "billing", "ml-pipeline", "dash", "infra-tools"]
    for n, (shape_name, shape) in enumerate(plan):
        case = cases[n % len(cases)]
        name = f"{n:02d}-{shape_name}.jsonl"
        cwd = f"/home/dev/src/{projects[n % len(projects)]}"
        branch = rng.choice(["main", "fix/PAY-311-rounding", "feat/search", "HEAD"])
        w = TranscriptWriter(HERE / name, f"{n:04d}c0de-{rng.randrange(16**6):06x}", cwd, branch, seed=n)
        w.noise()
        if shape is None:
            labels[name] = two_fixes(w, case, rng, cases[(n + 7) % len(cases)])
        else:
            labels[name] = shape(w, case, rng)
        w.noise()
        w.save()
    (HERE / "labels.json").write_text(json.dumps(labels, indent=1) + "\n")
    return labels


if __name__ == "__main__":
    built = build()
    episodes = [e for eps in built.values() for e in eps]
    fixes = sum(e["fix"] for e in episodes)
    print(f"{len(built)} transcripts, {len(episodes)} episodes ({fixes} fixes, {len(episodes) - fixes} not)")
