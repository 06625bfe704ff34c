"""Evidence that a stored error and a query are the same cause: the features the acceptance model reads.

A `Query` is a normalized signature (see signatures.py) read once: its cause lines, its context lines
(`+ `, the other distinctive lines the tool printed), token weights per line, subjects, frame. `evidence()`
compares two of them and returns named features, each in 0–1 (acceptance.py turns them into a
probability; the weights are fitted, not set here). What the features measure:

  lexical   lexical (the best of) bag / soft / coverage, and best_line: token overlap of the cause lines (whole bags, each line to
            its best counterpart, the shorter side found in the longer one, the best single line pair);
  shared    a line of either text, cause or context, found whole in a line of the other (whatever stands
            in front of it: `Error: `, a prompt, a service prefix) — how much of it, how much it says,
            whether both lines are error lines, and how rare it is among the request's candidates;
  template  the best line pair's words aligned: the share that agrees, and whether they differ in a
            decisive slot (a library, module, key, table, dialect, command: a name-like word, not a
            placeholder — paths, numbers, URLs, ids are folded before this point);
  subjects  quoted values and identifier-like names of the best line pair: equal, disjoint, partly
            shared, swapped, named on one side only, one word swapped in a short line;
  kind      the exception type / tool code of the best line pair: the same, or both present and not;
  rule      the linter rule / type-checker or compiler code of the best line pair (`(errcheck)`, `[arg-type]`,
            `TS2345`, `E0308`, `F401`, `no-unused-vars`): the same, or both present and not — a rule met again
            on other identifiers is the same cause when its fix is the project's way with that rule (issue 34);
  text      cosine of the whole normalized texts' token weights (cause and context lines);
  frame     both generic messages (nothing named) raised from different application frames;
  noise     the query has no error line at all (only its first lines, `~ `).

The token weights and overlap shapes below define the features (how much a word says), not a decision.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from recall_agent.learnings import signatures as sigs

FEATURES = (
    "lexical",
    "bag",
    "soft",
    "coverage",
    "best_line",
    "shared",
    "shared_mass",
    "shared_errors",
    "shared_rare",
    "template",
    "slot_decisive",
    "slot_other",
    "slot_extra",
    "decisive_same_template",
    "disjoint_same_template",
    "subj_equal",
    "subj_disjoint",
    "subj_partial",
    "subj_swapped",
    "subj_one_side",
    "short_swap",
    "kind_same",
    "kind_differs",
    "rule_same",
    "rule_differs",
    "rule_template",
    "rule_other_subject",
    "text",
    "generic_other_frame",
    "query_noise",
)
MAX_QUERY_TERMS = 16
# line overlap (Tversky): the side that says less pays fully for what it lacks, the longer side pays
# EXTRA_WEIGHT per weight unit for what it adds (a wrapper's prefix, a newer tool's extra clause); below
# MIN_CONTAINED_MASS weight units of the shorter side, plain Dice
EXTRA_WEIGHT = 0.4
MIN_CONTAINED_MASS = 4.0
SECONDARY_LINE_WEIGHT = 0.5  # lines that are not the error itself (hints, continuations) say less
SHARED_MASS_FULL = 12.0  # weight units of a shared line at which `shared_mass` reaches 1
SHORT_LINE = 6  # content tokens: a line this short with one word swapped for another says another thing

_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "be",
        "not",
        "no",
        "it",
        "this",
        "that",
        "as",
        "into",
        "error",
        "errors",
        "failed",
        "fatal",
    ]
)
_QUOTED = re.compile(r"""'([^']{1,120})'|"([^"]{1,120})"|`([^`]{1,120})`|‘([^’]{1,120})’""")
# errno-style and SCREAMING_SNAKE codes: EADDRINUSE, ERESOLVE, ER_NOT_SUPPORTED_AUTH_MODE (not DETAIL, HINT)
_CODE_TOKEN = re.compile(r"^(?:E[A-Z]{3,}|[A-Z][A-Z0-9]*_[A-Z0-9_]+)$")
_SPECIFIC_TOKEN = re.compile(r"^(?:[a-z]+_[\w]+|[a-z]+[A-Z]\w*|[A-Z]\w*[a-z][A-Z]\w*|[a-z]{1,4}\d{3,5})$")


@functools.lru_cache(maxsize=8192)
def _token_weight(tok: str, raw: str) -> float:
    if tok.startswith("<"):
        return 0.2
    if tok in _STOPWORDS or len(tok) == 1:
        return 0.3
    if _SPECIFIC_TOKEN.match(raw) or raw.endswith(("Error", "Exception")) or _CODE_TOKEN.match(raw):
        return 2.0
    return 1.0


def _token_weights(causes: list[str]) -> dict[str, float]:
    weights: dict[str, float] = {}
    for line in causes:
        for raw in re.findall(r"<\w+>|[A-Za-z_][A-Za-z0-9_]*|\d+", line):
            tok = raw.lower()
            weights[tok] = max(weights.get(tok, 0.0), _token_weight(tok, raw))
    return weights


# a line that is an error itself: "XError: ...", "error: ...", "fatal: ...", "npm error code", TS2304, E0382
_PRIMARY = re.compile(
    r"^(?:npm error |gyp ERR! )?(?:(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Failure)\b|(?:error|fatal|Error|ERROR|FATAL"
    r"|panic|FAILED)\b|[A-Z]{1,4}\d{3,5}\b|E[A-Z]{3,}\b|[A-Z][A-Z0-9]*_[A-Z0-9_]+\b)"
)
_TYPE_PREFIX = re.compile(r"^[^:'\"`(]{1,60}: ")


def _message_part(line: str) -> str:
    """'General error during analysis: Unsupported class...' -> 'Unsupported class...' (the message that
    wrappers and tool versions put different prefixes in front of); a prefix with a code in it stays."""
    m = _TYPE_PREFIX.match(line)
    if not m or any(_CODE_TOKEN.match(t) for t in re.findall(r"\w+", m.group(0))):
        return ""
    return line[m.end() :]


def _file_placeholders(line: str) -> str:
    """Quoted file names ('README.md', 'index.js') are where an error happened, not what it is."""
    return _QUOTED.sub(
        lambda m: "'<file>'" if _FILE_NAME.match(next(g for g in m.groups() if g)) else m.group(0), line
    )


# a quoted file name is where the error happened, not what it is about ('README.md', 'index.js')
_NAME_LIKE = re.compile(r"^[\w@/]+(?:[-.][\w]+)+$")  # analytics-client, settings.yaml, werkzeug.urls
_FILE_NAME = re.compile(
    r"^[\w.@+-]+\.(?:jsx?|tsx?|mjs|cjs|json|md|py|pyc|java|class|kt|rs|go|c|h|cc|cpp|hpp|txt|ya?ml|toml|cfg|ini"
    r"|sh|rb|php|html?|css|vue|lock|gradle|xml|properties|log|csv|so|dll|exe)$"
)
# a quoted file name right after these words says where something happened ("watch 'index.js'")
_AT_PLACE = re.compile(r"\b(?:watch|at|in|from|file)\s*$")
_VALUE_SLOT = re.compile(r":\s+([A-Za-z_][\w.-]{1,60})\s*$")
_SUBJECT_NAME = re.compile(r"(?<![\w<])(?:[A-Za-z]\w*(?:[-_.][A-Za-z0-9]\w*)+)(?![\w>])")


def _subjects(causes: list[str]) -> tuple[str, ...]:
    """What the error is about, in order: quoted values, then identifier-like names in the unquoted text
    (hyphenated, snake_case or dotted: package names, config keys, attributes). Placeholders excluded."""
    out: list[str] = []
    for line in causes:
        for m in _QUOTED.finditer(line):
            value = next(g for g in m.groups() if g is not None).strip()  # case kept: 'Yaml' is not 'yaml'
            if (
                value
                and "<" not in value
                and not (_FILE_NAME.match(value) and _AT_PLACE.search(line[: m.start()]))
            ):
                out.append(value)
        bare = _QUOTED.sub(" ", line.split(": ", 1)[-1] if ": " in line else line)
        out.extend(
            n.lower()
            for n in _SUBJECT_NAME.findall(bare)
            if not n.lower().startswith(("utf-", "e.g")) and not _FILE_NAME.match(n)
        )
        slot = _VALUE_SLOT.search(line)  # "no such table: orders": the word in the message's value slot
        if slot:
            out.append(slot.group(1))
    return tuple(dict.fromkeys(out))


def _overlap(a: dict[str, float], b: dict[str, float]) -> float:
    """Weighted Dice of two token bags, or Tversky with the longer side's additions at EXTRA_WEIGHT (a
    wrapped, cut or extended message) when the shorter one says enough on its own."""
    shared = sum(min(w, b[t]) for t, w in a.items() if t in b)
    ma, mb = sum(a.values()), sum(b.values())
    if not ma + mb:
        return 0.0
    dice = 2.0 * shared / (ma + mb)
    small, big = min(ma, mb), max(ma, mb)
    if small < MIN_CONTAINED_MASS:
        return dice
    return max(dice, shared / (small + EXTRA_WEIGHT * (big - shared)))


def _content(a: dict[str, float]) -> set[str]:
    return {t for t, w in a.items() if w >= 1.0 and not t.startswith("<")}


def _short_and_different(a: dict[str, float], b: dict[str, float]) -> bool:
    """Short lines alike but for one word swapped ('no such table: orders' / '... users'); a rewording
    (several words differ) is left to the overlap."""
    ca, cb = _content(a), _content(b)
    return min(len(ca), len(cb)) <= SHORT_LINE and len(ca - cb) == 1 and len(cb - ca) == 1


# --------------------------------------------------------------------------- the query


@dataclass
class Query:
    """A normalized signature read once (a request's error, or a stored row: cached by its text)."""

    normalized: str
    fingerprint: str
    causes: list[str]
    weights: dict[str, float]  # token weights of the cause lines
    subjects: tuple[str, ...]
    generic: bool
    frame: str | None
    noise: bool = False  # no error line at all (its first lines, `~ `): only shared lines can match it
    lines: list[dict[str, float]] = field(default_factory=list)  # token weights per cause line
    messages: list[dict[str, float]] = field(default_factory=list)  # the same, after the "Type: " prefixes
    importance: list[float] = field(default_factory=list)  # 1 for an error line, less for the others
    line_mass: list[float] = field(default_factory=list)  # each line's weight x importance
    mass: float = 0.0  # the cause lines' token weight
    line_subjects: list[tuple[str, ...]] = field(default_factory=list)  # subjects per cause line
    every: list[dict[str, float]] = field(default_factory=list)  # token weights of every line (+ context)
    every_mass: list[float] = field(default_factory=list)
    every_error: list[bool] = field(default_factory=list)  # the line is an error line (not context/noise)
    cores: list[str] = field(default_factory=list)  # every line without markers and prefixes, lowercased
    bag: dict[str, float] = field(default_factory=dict)  # token weights of the whole text
    bag_norm: float = 0.0

    @classmethod
    def from_text(cls, text: str) -> Query:
        return cls.from_normalized(sigs.normalize(text))

    @classmethod
    @functools.lru_cache(maxsize=16384)  # noqa: B019 - immutable inputs, bounded; stored rows repeat
    def from_normalized(cls, normalized: str) -> Query:
        lines = [ln for ln in normalized.split("\n") if ln]
        causes = [ln for ln in lines if not ln.startswith(("at ", sigs.CONTEXT))]
        context = [ln[len(sigs.CONTEXT) :] for ln in lines if ln.startswith(sigs.CONTEXT)]
        frames = [ln[3:] for ln in lines if ln.startswith("at ")]
        noise = bool(causes) and all(c.startswith(sigs.FALLBACK) for c in causes)
        matched = [] if noise else causes
        q = cls(
            normalized=normalized,
            fingerprint=sigs.fingerprint_normalized(normalized),
            causes=causes,
            weights=_token_weights(matched),
            subjects=_subjects(matched),
            generic=sigs.is_generic(causes),
            frame=frames[0] if frames else None,
            noise=noise,
            lines=[_token_weights([_file_placeholders(c)]) for c in matched],
            messages=[_token_weights([_file_placeholders(_message_part(c))]) for c in matched],
            importance=[1.0 if _PRIMARY.match(c) else SECONDARY_LINE_WEIGHT for c in matched],
            line_subjects=[_subjects([c]) for c in matched],
        )
        q.line_mass = [sum(w.values()) * k for w, k in zip(q.lines, q.importance, strict=True)]
        q.mass = sum(q.weights.values())
        plain = [c.removeprefix(sigs.FALLBACK) for c in causes] + context
        q.every = [_token_weights([_file_placeholders(ln)]) for ln in plain]
        q.every_mass = [sum(w.values()) for w in q.every]
        q.every_error = [not noise and i < len(causes) for i in range(len(plain))]
        q.cores = [_core(ln) for ln in plain]
        q.bag = _token_weights(plain)
        q.bag_norm = math.sqrt(sum(w * w for w in q.bag.values()))
        return q

    def terms(self) -> list[str]:
        """Search terms for the store's full-text index, heaviest first: the cause lines' (every line's for
        a text without an error line, so a paste of a tool's side line still finds its learning)."""
        weights = self.bag if self.noise else self.weights
        ranked = sorted(weights, key=lambda t: -weights[t])
        return [t for t in ranked if not t.startswith("<") and t not in _STOPWORDS][:MAX_QUERY_TERMS]


_LINE_PREFIX = re.compile(r"^(?:[\w.\[\]!#-]{1,30}: ){1,3}")


def _core(line: str) -> str:
    """A line without what tools and wrappers put in front of it (`Error: `, `remote: `, `npm error `)."""
    return _LINE_PREFIX.sub("", line.removeprefix("npm error ")).lower().strip()


def line_cores(q: Query) -> set[str]:
    """The distinct line cores of a signature, for counting how many candidates share a line."""
    return {c for c in q.cores if c}


# --------------------------------------------------------------------------- comparing two queries


@dataclass
class Evidence:
    """The features (names in FEATURES) and what explains them: the best line pair, the differing values."""

    values: dict[str, float]
    query_line: int = -1  # index into the query's cause lines of the best pair (-1: none)
    other_line: int = -1
    differs: tuple[str, str] | None = None  # the decisive values that differ (query's, stored one's)
    shared_line: str = ""  # the stored line found whole in the query, when that is the evidence


def evidence(q: Query, other: Query, line_df: dict[str, int] | None = None) -> Evidence:
    """Every feature of (query, stored signature); `line_df` counts the candidates holding each line core."""
    v = dict.fromkeys(FEATURES, 0.0)
    v["query_noise"] = float(q.noise)
    v["text"] = _cosine(q, other)
    ev = Evidence(v)
    _shared_line(q, other, line_df or {}, ev)
    if not q.lines or not other.lines:
        return ev
    shared = sum(min(w, other.weights[t]) for t, w in q.weights.items() if t in other.weights)
    total = q.mass + other.mass
    v["bag"] = 2.0 * shared / total if total else 0.0
    if shared < 1.0:  # nothing of weight in common: no line can match either
        return ev
    pair = [[_line_similarity(q, i, other, j) for j in range(len(other.lines))] for i in range(len(q.lines))]
    v["soft"], qi, oi = _soft_line_dice(q, other, pair)
    v["coverage"] = _coverage(q, other, pair)
    v["lexical"] = max(v["bag"], v["soft"], v["coverage"])
    v["best_line"] = pair[qi][oi]
    ev.query_line, ev.other_line = qi, oi
    _subject_features(q, other, qi, oi, v)
    v["template"], ev.differs, extra = _template(q.causes[qi], other.causes[oi])
    if ev.differs is not None:
        decisive = value_noun(q.causes[qi]) in DECISIVE_NOUNS
        v["slot_decisive" if decisive else "slot_other"] = 1.0
    v["slot_extra"] = float(extra)
    # the same message but for its decisive value: the near miss the other features cannot tell apart
    v["decisive_same_template"] = v["slot_decisive"] * v["template"]
    qk, ok = kind_of(q.causes[qi]), kind_of(other.causes[oi])
    v["kind_same"] = float(bool(qk) and qk == ok)
    v["kind_differs"] = float(bool(qk) and bool(ok) and qk != ok)
    qr, orule = rule_of(q.causes[qi]), rule_of(other.causes[oi])
    v["rule_same"] = float(bool(qr) and qr == orule)
    v["rule_differs"] = float(bool(qr) and bool(orule) and qr != orule)
    # the same rule's message with other identifiers in it: the recurring class (issue 34)
    v["rule_template"] = v["rule_same"] * v["template"]
    # the same rule on other identifiers: other subjects count against a match elsewhere, not here (a linear
    # model needs the interaction to learn that; its weight is fitted)
    v["rule_other_subject"] = v["rule_same"] * v["subj_disjoint"]
    v["generic_other_frame"] = float(
        q.generic and other.generic and bool(q.frame) and bool(other.frame) and q.frame != other.frame
    )
    v["disjoint_same_template"] = v["subj_disjoint"] * v["template"]
    return ev


def _line_similarity(q: Query, i: int, other: Query, j: int) -> float:
    """Two cause lines compared whole, and their messages without the "Type: " prefixes (when both
    messages say enough on their own)."""
    full = _overlap(q.lines[i], other.lines[j])
    qm, om = q.messages[i], other.messages[j]
    if sum(qm.values()) < MIN_CONTAINED_MASS or sum(om.values()) < MIN_CONTAINED_MASS:
        return full
    return max(full, _overlap(qm, om))


def _soft_line_dice(q: Query, other: Query, pair: list[list[float]]) -> tuple[float, int, int]:
    """Every cause line matched to its best counterpart on the other side, weighted by what the line says:
    an extra line on one side costs in proportion to its weight. Returns the score and the best pair."""
    qm, om = q.line_mass, other.line_mass
    total = sum(qm) + sum(om)
    best = max((v, i, j) for i, row in enumerate(pair) for j, v in enumerate(row))
    if not total:
        return 0.0, best[1], best[2]
    got = sum(m * max(row) for m, row in zip(qm, pair, strict=True))
    got += sum(m * max(row[j] for row in pair) for j, m in enumerate(om))
    return got / total, best[1], best[2]


def _coverage(q: Query, other: Query, pair: list[list[float]]) -> float:
    """How fully the side that says less is found in the other, once that side says enough."""
    q_small = q.mass <= other.mass
    small = q if q_small else other
    if small.mass < MIN_CONTAINED_MASS or not sum(small.line_mass):
        return 0.0
    if q_small:
        best = [max(row) for row in pair]
    else:
        best = [max(row[j] for row in pair) for j in range(len(other.lines))]
    return sum(m * v for m, v in zip(small.line_mass, best, strict=True)) / sum(small.line_mass)


def _shared_line(q: Query, other: Query, line_df: dict[str, int], ev: Evidence) -> None:
    """The best line of either text found whole in a line of the other (the smaller line's weight found in
    the larger one), among lines that say enough: how much of it, its weight, error lines or not, rarity."""
    best = (0.0, 0.0, -1, -1)
    for i, a in enumerate(q.every):
        ma = q.every_mass[i]
        for j, b in enumerate(other.every):
            small = min(ma, other.every_mass[j])
            if small < MIN_CONTAINED_MASS:
                continue
            got = sum(min(w, b[t]) for t, w in a.items() if t in b)
            score = (got / small, got)
            if score > best[:2]:
                best = (score[0], got, i, j)
    contained, got, i, j = best
    if i < 0:
        return
    v = ev.values
    v["shared"] = contained
    v["shared_mass"] = min(1.0, got / SHARED_MASS_FULL)
    v["shared_errors"] = (float(q.every_error[i]) + float(other.every_error[j])) / 2
    v["shared_rare"] = 1.0 / max(1, line_df.get(other.cores[j], 1))
    if contained >= 0.999 and not other.every_error[j]:
        ev.shared_line = other.cores[j]


def _cosine(q: Query, other: Query) -> float:
    if not q.bag_norm or not other.bag_norm:
        return 0.0
    dot = sum(w * other.bag[t] for t, w in q.bag.items() if t in other.bag)
    return dot / (q.bag_norm * other.bag_norm)


def _subject_features(q: Query, other: Query, qi: int, oi: int, v: dict[str, float]) -> None:
    qt, ot = q.line_subjects[qi], other.line_subjects[oi]
    qs, os_ = set(qt), set(ot)
    if qs and os_:
        v["subj_equal"] = float(qs == os_ and qt == ot)
        v["subj_swapped"] = float(qs == os_ and qt != ot)
        v["subj_disjoint"] = float(not qs & os_)
        v["subj_partial"] = float(bool(qs & os_) and not (qs <= os_ or os_ <= qs))
    elif bool(qs) != bool(os_) and any(_NAME_LIKE.match(x) for x in qs | os_):
        v["subj_one_side"] = 1.0  # one names a package or file, the other names none
    v["short_swap"] = float(_short_and_different(q.lines[qi], other.lines[oi]))


# --------------------------------------------------------------------------- templates and decisive slots

_CHUNK_PUNCT = "'\"`‘’“”,;:()[]{}\\"
_PLACEHOLDER = re.compile(r"<\w+>")
# a name-like word: a library, module, key, table, dialect, command (dotted, hyphenated, snake_case,
# camelCase, with digits, an errno-style code); plain words are wording, not values
_NAMEY = re.compile(r"[A-Za-z0-9][._/@+-][A-Za-z0-9<]|_|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|^[A-Z]{3,}$")


@functools.lru_cache(maxsize=8192)  # stored lines recur across requests (a server's, a benchmark's)
def _chunks(line: str) -> tuple[tuple[str, bool], ...]:
    """Whitespace-separated words without punctuation, each with whether it was quoted."""
    out = []
    for raw in line.split():
        word = raw.strip(_CHUNK_PUNCT)
        if word:
            out.append((word, raw[:1] in "'\"`‘“" or raw.rstrip(",.;:)")[-1:] in "'\"`’”"))
    return tuple(out)


_ID_LIKE = re.compile(r"^(?=(?:.*\d){3})[\w:.-]{16,}$")  # build refs, hashes, generated ids
# a shared library's name (libgthread-2.0.so.0): a name, however many digits it carries
_SONAME = re.compile(r"^lib[\w+-]{1,60}(?:\.\d{1,4}){0,3}\.so(?:\.\d{1,4}){0,4}$")


def _decisive(word: str, quoted: bool, noun: str = "value") -> bool:
    """A value that could decide the fix: name-like or quoted, not a placeholder, a file name or an id; in
    a line about a library, module, resource... (DECISIVE_NOUNS) any word in the slot."""
    bare = _PLACEHOLDER.sub("", word).strip("._-/")
    if not bare or not re.search(r"[A-Za-z]", bare) or (_ID_LIKE.match(bare) and not _SONAME.match(bare)):
        return False
    if noun in DECISIVE_NOUNS:
        return True
    return not _FILE_NAME.match(bare) and (quoted or bool(_NAMEY.search(word)))


@functools.lru_cache(maxsize=8192)
def _template(a: str, b: str) -> tuple[float, tuple[str, str] | None, bool]:
    """Align two lines' words: the share that agrees, the first pair of decisive values that differ (a
    replaced name-like or quoted word, one or two words on each side), and whether one side adds one."""
    ca, cb = _chunks(a.removeprefix(sigs.FALLBACK)), _chunks(b.removeprefix(sigs.FALLBACK))
    if not ca or not cb:
        return 0.0, None, False
    wa, wb = [w.lower() for w, _ in ca], [w.lower() for w, _ in cb]
    matcher = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    same = sum(size for _, _, size in matcher.get_matching_blocks())
    share = 2.0 * same / (len(wa) + len(wb))
    differs: tuple[str, str] | None = None
    extra = False
    noun = value_noun(a)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = ca[i1:i2], cb[j1:j2]
        one_for_one = len(left) == len(right) == 1
        if op == "replace" and len(left) <= 2 and len(right) <= 2 and differs is None:
            # a plain word swapped for another counts only one for one in a line about a decisive kind
            slot_noun = noun if one_for_one else "value"
            if _values_differ(left, right, slot_noun):
                differs = (_shown(left), _shown(right))
        elif op in ("insert", "delete") and len(left) + len(right) <= 2:
            extra = extra or any(_decisive(w, qd) for w, qd in left + right)
    return share, differs, extra


def _values_differ(left: list[tuple[str, bool]], right: list[tuple[str, bool]], noun: str) -> bool:
    """Both sides hold a decisive value and neither is the other qualified (`sqlalchemy.exc.X` / `X`)."""
    a = [w for w, q in left if _decisive(w, q, noun)]
    b = [w for w, q in right if _decisive(w, q, noun)]
    if not a or not b:
        return False
    x, y = _bare(" ".join(a)), _bare(" ".join(b))
    return x != y and not x.endswith("." + y) and not y.endswith("." + x)


def _bare(word: str) -> str:
    return _PLACEHOLDER.sub("", word).strip("\\\"'`.,:;()[]{}").lower()


def _shown(chunks: Iterable[tuple[str, bool]]) -> str:
    """A value as `why` shows it: placeholders and their separators dropped (libgthread-<int>.so -> ...)."""
    text = " ".join(w for w, _ in chunks)
    return re.sub(r"[-.]?<\w+>", "", text).strip(".-") or text


# what a line's decisive slot holds, by the words around it: the first that matches names it
_VALUE_NOUNS = (
    (re.compile(r"\.(?:so|dll|dylib)\b|shared (?:object|librar)|\blibrary\b|\bGLIBC", re.I), "library"),
    (re.compile(r"[\w/+-]\.h(?:pp)?\b|#include"), "header"),
    (re.compile(r"\bmodule\b|\bimport\b", re.I), "module"),
    (re.compile(r"\bkind\b"), "kind"),
    (re.compile(r"\bdialect|\bplugin|\bdriver\b|\bconfig\b|\bpreset\b|\bsyntax\b", re.I), "plugin"),
    (re.compile(r"\bInsufficient\b|\bresources?\b", re.I), "resource"),
    (re.compile(r"\bexecutable\b|\bcommand\b|\bscript\b|\binterpreter\b", re.I), "command"),
    (re.compile(r"\bMIME type\b|\bcontent[- ]type\b", re.I), "MIME type"),
    (re.compile(r"\bextension\b|\bext-\w", re.I), "extension"),
    (re.compile(r"\btable\b|\brelation\b", re.I), "table"),
    (re.compile(r"\bcolumn\b", re.I), "column"),
    (re.compile(r"\battribute\b|\bproperty\b", re.I), "attribute"),
    (re.compile(r"\bkey\b|KeyError", re.I), "key"),
    (re.compile(r"\bpackage\b|\bdistribution\b|\brequirement\b|\bcrate\b|\bgem\b", re.I), "package"),
    (re.compile(r"\bcontainer\b|\bimage\b", re.I), "container"),
    (re.compile(r"\bbranch\b|\bremote\b|\brepository\b", re.I), "branch"),
    (re.compile(r"\bproject\b|\btarget\b", re.I), "target"),
    (re.compile(r"\bdatabase\b", re.I), "database"),
    (re.compile(r"\brole\b|\buser\b", re.I), "user"),
)
# slots whose value decides the fix (another library is another fix); the other slots name instances
# (a container, branch, app id, project), so another value there is the same cause elsewhere
DECISIVE_NOUNS = frozenset(
    {
        "library",
        "header",
        "module",
        "kind",
        "plugin",
        "resource",
        "command",
        "MIME type",
        "extension",
        "table",
        "column",
        "attribute",
        "key",
    }
)


@functools.lru_cache(maxsize=8192)
def value_noun(line: str) -> str:
    """What kind of value a line's decisive slot holds, for `why` ("other library: libgthread vs libGL")."""
    for rx, noun in _VALUE_NOUNS:
        if rx.search(line):
            return noun
    return "value"


_KIND = re.compile(
    r"^(?:npm error )?(?:(?P<code>[A-Z]{1,4}\d{3,5}|E\d{4}|[A-Z][A-Z_]{3,}\b)|(?P<type>[A-Z]\w*(?:Error|Exception)"
    r"|[a-z]+(?:\[[A-Z]?\d+\])?(?=:)))"
)
_CODE_ANYWHERE = re.compile(r"\b(?:TS|E|C)\d{4}\b|\b[A-Z][A-Z_]{5,}\b")


# a linter's rule at the end of its line — golangci-lint `(errcheck)`, mypy `[arg-type]`, eslint `no-unused-vars` —
# or a checker's code anywhere — tsc `TS2345`, rustc `E0308`, ruff/flake8 `F401`
_RULE_AT_END = re.compile(
    r"(?:\(([a-z][a-z0-9_]{2,40})\)|\[([a-z][a-z0-9-]{2,40})\]|\s(@?[a-z][a-z0-9]{0,30}(?:-[a-z0-9]{1,30}){1,6}(?:/[a-z0-9-]{1,40})?))\s*$"
)
_RULE_CODE = re.compile(r"\b(?:TS\d{4}|E\d{4}|[A-Z]{1,3}\d{3,4})\b")


def rule_of(line: str) -> str:
    """The linter rule or checker code a line reports (empty when it names none)."""
    m = _RULE_AT_END.search(line[-200:])
    if m:
        return next(g for g in m.groups() if g)
    code = _RULE_CODE.search(line)
    return code.group(0) if code else ""


def kind_of(line: str) -> str:
    """The exception type or tool code a line starts with (or a compiler code anywhere in it)."""
    m = _KIND.match(line)
    if m and (m.group("code") or m.group("type")):
        return m.group("code") or m.group("type") or ""
    code = _CODE_ANYWHERE.search(line)
    return code.group(0) if code else ""
