"""Free text → what is being asked about what.

"who calls X", "blast radius of X", "what imports X", "what does X depend on", "where is X defined",
"circular imports", "tests for X", or just a path / qualified name / identifier. Anything else (an error
message, a traceback) is scanned for names worth looking up: paths, quoted names, dotted and CamelCase names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

# intent -> federation role answering it
GRAPH_INTENTS = frozenset(
    {
        "dependents",
        "dependencies",
        "blast",
        "callers",
        "callees",
        "cycles",
        "tests",
        "cochange",
        "tests_to_run",
    }
)
HISTORY_INTENTS = frozenset({"cochange", "hotspots", "owners", "risk", "tests_to_run"})  # evolution.py
HISTORY_ONLY = frozenset({"hotspots", "owners"})  # answered without the code graph being current

_FILLER = r"(?:the\s+)?"
_ASK = r"(?:(?:are\s+there|is\s+there|any|find|show|list)\s+)*(?:the\s+)?(?:any\s+)?"
_KIND_WORDS = r"(?:\s+(?:module|class|function|method|file|package|symbol|struct|interface|type))?"
_X = rf"{_FILLER}(?:(?:module|class|function|method|file|package)\s+)?(?P<x>.+?){_KIND_WORDS}"

_MY_CHANGE = r"(?:my|this|the|current)\s+(?:changes?|diff|work|branch|commits?|working\s+tree)"
_REV = r"(?P<x>[\w./@^~-]+)"  # a range of commits (A..B) or a file: evolution.py tells them apart

_PATTERNS: list[tuple[str, str]] = [
    # history (evolution.py): co-change partners, hotspots, owners, change risk, tests to run
    (
        "cochange",
        rf"what\s+(?:else\s+)?(?:usually\s+|often\s+|typically\s+)?changes?\s+(?:together\s+)?with\s+{_X}",
    ),
    (
        "cochange",
        rf"(?:which|what)\s+files?\s+(?:usually\s+|often\s+)?(?:change|changes|are\s+changed)\s+(?:together\s+)?with\s+{_X}",
    ),
    (
        "cochange",
        rf"(?:co-?changes?|co-?change\s+partners|change\s+partners|(?:temporal|change|logical)\s+coupling)"
        rf"\s+(?:of|for|with)\s+{_X}",
    ),
    (
        "cochange",
        rf"what\s+(?:else\s+)?(?:should|do|must)\s+i\s+(?:also\s+)?(?:change|edit|update|touch)\s+(?:when|if)\s+i\s+"
        rf"(?:change|edit|touch|update)\s+{_X}",
    ),
    ("hotspots", rf"{_ASK}hot\s?spots?(?:\s+(?:in|of|under)\s+(?P<x>.+?))?"),
    (
        "hotspots",
        r"where\s+do\s+(?:bugs|fixes)\s+(?:keep\s+)?(?:land|happen|show\s+up)(?:\s+in\s+(?P<x>.+?))?",
    ),
    ("hotspots", rf"{_ASK}(?:riskiest|buggiest|most\s+fixed|most\s+changed)\s+files(?:\s+in\s+(?P<x>.+?))?"),
    (
        "owners",
        rf"who\s+(?:knows|owns|wrote|maintains|changed|changes|works\s+on|touched)\s+{_X}(?:\s+(?:best|most))?",
    ),
    ("owners", rf"(?:owners?|ownership|maintainers?|experts?|main\s+authors?)\s+(?:of|for)\s+{_X}"),
    ("owners", r"(?:the\s+)?bus\s+factor(?:\s+(?:of|for|in)\s+(?P<x>.+?))?"),
    ("risk", rf"what(?:'s|\s+is)\s+risky\s+(?:in|about)\s+(?:{_MY_CHANGE}|{_REV})"),
    ("risk", rf"(?:the\s+)?(?:change\s+)?risk\s+(?:of|in)\s+(?:{_MY_CHANGE}|{_REV})"),
    (
        "risk",
        rf"(?:is\s+{_MY_CHANGE}\s+risky|review\s+{_MY_CHANGE}|what\s+did\s+i\s+(?:miss|forget)(?:\s+in\s+{_MY_CHANGE})?)",
    ),
    (
        "tests_to_run",
        rf"(?:which|what)\s+tests?\s+(?:should\s+i\s+|do\s+i\s+(?:need\s+to\s+)?|to\s+)run"
        rf"(?:\s+(?:for|after|on)\s+(?:{_MY_CHANGE}|{_X}))?",
    ),
    ("tests_to_run", rf"tests?\s+to\s+run(?:\s+(?:for|after|on)\s+(?:{_MY_CHANGE}|{_X}))?"),
    ("tests_to_run", rf"(?:which\s+|what\s+)?tests?\s+(?:for|cover(?:s|ing)?)\s+{_MY_CHANGE}"),
    ("cycles", rf"{_ASK}(?:circular|cyclic)\s+(?:imports?|dependenc(?:y|ies))(?:\s+in\s+(?P<x>.+?))?"),
    ("cycles", rf"{_ASK}(?:import|dependency)\s+cycles?(?:\s+in\s+(?P<x>.+?))?"),
    ("cycles", rf"{_ASK}cycles(?:\s+in\s+(?P<x>.+?))?"),
    ("blast", rf"(?:what(?:'s|\s+is)\s+)?(?:the\s+)?blast\s+radius\s+(?:of|for)\s+{_X}"),
    ("blast", rf"(?:the\s+)?impact\s+of\s+(?:changing\s+)?{_X}"),
    (
        "blast",
        rf"what\s+(?:breaks|would\s+break|is\s+affected)\s+if\s+(?:i\s+)?(?:change|edit|modify|touch|remove)\s+{_X}",
    ),
    ("blast", rf"transitive\s+(?:dependents|effects|importers)\s+of\s+{_X}"),
    ("blast", rf"what\s+(?:does|would|could)\s+(?:changing\s+)?{_X}\s+affect"),
    ("blast", rf"what\s+(?:is|gets)\s+affected\s+(?:by|if\s+i\s+change)\s+(?:changing\s+)?{_X}"),
    ("callers", rf"(?:who|what|which\s+functions?)\s+calls?\s+{_X}"),
    ("callers", rf"(?:callers|call\s+sites|usages?|uses|references)\s+(?:of|to|for)\s+{_X}"),
    ("callers", rf"where\s+is\s+{_X}\s+(?:called|used)"),
    ("callees", rf"what\s+does\s+{_X}\s+call"),
    ("callees", rf"(?:callees|calls)\s+(?:of|from|in|made\s+by)\s+{_X}"),
    ("dependencies", rf"what\s+does\s+{_X}\s+(?:depend\s+on|import|require|need)"),
    ("dependencies", rf"(?:dependencies|imports|deps)\s+(?:of|for)\s+{_X}"),
    (
        "dependents",
        rf"(?:what|who|which\s+(?:files?|modules?))\s+(?:imports?|depends\s+on|requires?|uses)\s+{_X}",
    ),
    ("dependents", rf"(?:dependents|importers|reverse\s+dependencies|users)\s+(?:of|for)\s+{_X}"),
    (
        "tests",
        rf"(?:which\s+|what\s+)?tests?\s+(?:for|touch(?:es|ing)?|cover(?:s|ing)?|of|exercis(?:e|es|ing))\s+{_X}",
    ),
    ("tests", rf"(?:which|what)\s+tests\s+(?:touch|cover|exercise|import)\s+{_X}"),
    ("lookup", rf"where\s+is\s+{_X}\s+(?:defined|declared|implemented)"),
    (
        "lookup",
        rf"(?:what\s+is|what's|define|definition\s+of|find|show|lookup|look\s+up|where\s+is|explain)\s+{_X}",
    ),
]
_COMPILED: list[re.Pattern[str] | None] = [None] * len(
    _PATTERNS
)  # each compiled when first needed (_patterns)
_DEPTH = re.compile(r",?[ ]?\b(?:(?:with|to|at) )?(?:max )?depth ?(?:(?:=|:|of) ?)?(\d+)", re.IGNORECASE)

# names worth looking up inside free text (an error, a traceback, a sentence)
_TRACE_FILE = re.compile(r'File "([^"]+)", line (\d+)')
_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:py|pyi|js|jsx|ts|tsx|mjs|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php))\b"
)
_QUOTED = re.compile(r"[`'\"]([\w.:/-]{2,})[`'\"]")
_DOTTED = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\b")
_IDENT = re.compile(r"\b([A-Z][a-z0-9]+[A-Z]\w*|[a-z]+_[a-z0-9_]+|_\w+)\b")
_SINGLE = re.compile(r"^[\w$.:/#@-]+(?:\(\))?$")


@dataclass
class Intent:
    action: str  # lookup, dependents, dependencies, blast, callers, callees, cycles, tests, auto
    subject: str = ""
    depth: int | None = None
    candidates: list[str] = field(default_factory=list)  # for "auto": names found in free text
    text: str = ""  # the question as asked (for "auto": error messages are read whole)

    @property
    def role(self) -> str:
        return "memgraph" if self.action in GRAPH_INTENTS else "repowise"


def _patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    """The question patterns in order, each compiled the first time a question gets that far: a CLI
    process asks one question, and "who calls X" matches before half of them are needed. Threads that
    race compile the same pattern twice, harmlessly."""
    for i, (intent, text) in enumerate(_PATTERNS):
        pattern = _COMPILED[i]
        if pattern is None:
            pattern = _COMPILED[i] = re.compile(rf"^\s*{text}\s*[?.!]*\s*$", re.IGNORECASE)
        yield intent, pattern


def LAZY_PATTERNS() -> list[re.Pattern[str]]:  # noqa: N802  (the name tests/regex_inventory.py looks for)
    """Every question pattern, compiled: what the regex-safety test times."""
    return [pattern for _, pattern in _patterns()]


def understand(text: str) -> Intent:
    text = " ".join(text.split())
    depth = None
    if m := _DEPTH.search(text):
        depth = int(m.group(1))
        text = (text[: m.start()] + " " + text[m.end() :]).strip()
    for intent, pattern in _patterns():
        m = pattern.match(text)
        if m:
            subject = (m.groupdict().get("x") or "").strip()
            return Intent(intent, subject, depth)
    if _SINGLE.match(text):
        return Intent("lookup", text, depth)
    return Intent("auto", "", depth, candidates(text), text)


def candidates(text: str, limit: int = 6) -> list[str]:
    """Names in free text worth a lookup, most specific first (paths, quoted names, dotted, identifiers)."""
    found: list[str] = []

    def add(name: str) -> None:
        name = name.strip(".:")
        if len(name) >= 3 and name not in found:
            found.append(name)

    for m in _TRACE_FILE.finditer(text):  # the failing function first, then its file
        add(f"{m.group(1)}:{m.group(2)}")
        add(m.group(1))
    for m in _PATH.finditer(text):
        add(m.group(1))
    for m in _QUOTED.finditer(text):
        add(m.group(1))
    for m in _DOTTED.finditer(text):
        if not re.search(r"\.(?:py|js|ts|go|rs|java|rb|php|cs|kt)$", m.group(1)):
            add(m.group(1))
    for m in _IDENT.finditer(text):
        add(m.group(1))
    return found[:limit]
