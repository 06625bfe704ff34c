"""Saying in words what changed between two command lines that look alike (issue 33, eleventh round): the
changes first (`` `print primary` → `print debug`, without `--debug` ``, `` quoted `src/pages/works/[id].astro`
``, `` `\\` → `/` (10 times) ``), then the passing line around the first one. `commands.change` calls it for
long lines; plain strings in, plain text out, linear in the lines' length."""

from __future__ import annotations

import re

LED_MAX = 170  # characters of what changed, said first
LED_CONTEXT = 110  # characters of the passing line shown after it, around its first change
_LED_PARTS = 4  # changes said at most (more: the lines are not alike)
_DIFF_TOKENS = 400  # tokens compared word by word; a longer middle is one change (linear in the line)
_SEPARATORS = frozenset({"&&", "||", ";", "|"})
_FINE = re.compile(r"\w+|\s+|[^\w\s]")
_QUOTES = "\"'"
_SHELL_SPECIAL = re.compile(r"[()\[\]*?$&;|<>{} ]")


def _ops(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """The opcodes (difflib's, `equal` ones too) of two token lists: the common start and end stripped
    (linear), what is left compared by difflib when it is short, else one change."""
    lo = 0
    while lo < len(a) and lo < len(b) and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < len(a) - lo and hi < len(b) - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    ea, eb = len(a) - hi, len(b) - hi
    head = [("equal", 0, lo, 0, lo)] if lo else []
    tail = [("equal", ea, len(a), eb, len(b))] if hi else []
    if lo == ea and lo == eb:
        return head + tail
    if lo in (ea, eb) or max(ea - lo, eb - lo) > _DIFF_TOKENS:
        tag = "insert" if lo == ea else "delete" if lo == eb else "replace"
        return [*head, (tag, lo, ea, lo, eb), *tail]
    import difflib  # here, not at the top: the hooks import this module, and most pairs never get this far

    matcher = difflib.SequenceMatcher(a=a[lo:ea], b=b[lo:eb], autojunk=False)
    middle = [(tag, i1 + lo, i2 + lo, j1 + lo, j2 + lo) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]
    return [*head, *middle, *tail]


def _slid(words: list[str], i: int, j: int) -> tuple[int, int]:
    """An added or dropped run of words moved (where the same words around it allow) to start or end at a
    separator: `gh pr ready 91 && gh pr merge` for `gh pr merge` added `gh pr ready 91 &&`, not `ready 91 &&
    gh pr`."""
    k = 0
    while i - k > 0 and words[i - k - 1] == words[j - k - 1]:
        k += 1
        if words[j - k - 1] in _SEPARATORS or i - k == 0 or words[i - k - 1] in _SEPARATORS:
            return i - k, j - k
    k = 0
    while j + k < len(words) and words[i + k] == words[j + k]:
        k += 1
        if words[j + k - 1] in _SEPARATORS or words[i + k - 1] in _SEPARATORS:
            return i + k, j + k
    return i, j


def _said(old: str, new: str, room: int = 90) -> str | None:
    """One change in words, whole: `x` → `y`, without `x`, added `y`; None when it does not fit in `room`
    (a change cut short does not say what changed)."""
    if len(old) + len(new) > room:
        return None
    if not new:
        return f"without `{old}`"
    if not old:
        return f"added `{new}`"
    return f"`{old}` → `{new}`"


def _fine(old: str, new: str) -> list[tuple[str, str]]:
    """The parts of one long changed span that differ, compared by word and punctuation character: a part
    met more than once bare (`'C:\\Users\\x'` -> `'C:/Users/x'`: `\\` → `/` twice); parts met once and a
    token or two apart as one (`const ul=` -> `(()=>{const u=`), with the tokens around it when short."""
    a, b = _FINE.findall(old), _FINE.findall(new)
    raw = []
    for tag, i1, i2, j1, j2 in _ops(a, b):
        if tag == "delete":
            i1, i2 = _whole(a, i1, i2)
        elif tag == "insert":
            j1, j2 = _whole(b, j1, j2)
        if tag != "equal":
            raw.append((tag, i1, i2, j1, j2))
    bare = [("".join(a[i1:i2]).strip(), "".join(b[j1:j2]).strip()) for _, i1, i2, j1, j2 in raw]
    times: dict[tuple[str, str], int] = {}
    for pair in bare:
        times[pair] = times.get(pair, 0) + 1
    spans: list[list[int]] = []  # [i1, i2, j1, j2, met once]
    for (_, i1, i2, j1, j2), pair in zip(raw, bare, strict=True):
        once = times[pair] == 1
        if spans and once and spans[-1][4] and sum(not t.isspace() for t in a[spans[-1][1] : i1]) < 3:
            spans[-1][1], spans[-1][3] = i2, j2
        else:
            spans.append([i1, i2, j1, j2, once])
    out = []
    for i1, i2, j1, j2, once in spans:
        x, y = "".join(a[i1:i2]).strip(), "".join(b[j1:j2]).strip()
        if once and min(len(x), len(y)) < 8:
            x = "".join(a[_around(a, i1, -1) : _around(a, i2, 1)]).strip()
            y = "".join(b[_around(b, j1, -1) : _around(b, j2, 1)]).strip()
        out.append((x, y))
    return out


_OPENING, _CLOSING = frozenset("\"'([{"), frozenset(",;)]}")


def _whole(tokens: list[str], i: int, j: int) -> tuple[int, int]:
    """An added or dropped run of tokens, of the places the same tokens around it allow, where it reads as a
    whole: starting with a word or an opening quote or bracket, ending with a comma or a closing bracket
    (`"key":"pattern",` dropped, not `","key":"pattern`); the first such place, else where it was."""

    def score(lo: int, hi: int) -> int:
        first, last = tokens[lo], tokens[hi - 1]
        return (first[:1].isalnum() or first in _OPENING) + (last in _CLOSING or last.isspace())

    places = [(i, j)]
    lo, hi = i, j
    while lo > 0 and tokens[lo - 1] == tokens[hi - 1] and len(places) < 50:
        lo, hi = lo - 1, hi - 1
        places.insert(0, (lo, hi))
    lo, hi = i, j
    while hi < len(tokens) and tokens[lo] == tokens[hi] and len(places) < 100:
        lo, hi = lo + 1, hi + 1
        places.append((lo, hi))
    return max(places, key=lambda p: score(*p))


def _around(tokens: list[str], at: int, step: int) -> int:
    """Where the context of a change starts (step -1, from `at`) or ends (step 1): two words, or the end
    (`shop-api/lib` for `lib`)."""
    n, i = 0, at
    while n < 2 and (i > 0 if step < 0 else i < len(tokens)):
        token = tokens[i - 1 if step < 0 else i]
        if token.isspace():
            break
        n += token[:1].isalnum() or token[:1] == "_"
        i += step
    return i


def _unquoted_word(word: str) -> str:
    return word[1:-1] if len(word) > 1 and word[0] == word[-1] and word[0] in _QUOTES else word


def _trim(words: list[str]) -> str:
    while words and words[0] in _SEPARATORS:
        words = words[1:]
    while words and words[-1] in _SEPARATORS:
        words = words[:-1]
    return " ".join(words)


def led(before: str, after: str, context: bool = True) -> str | None:
    """What changed between two lines that look alike, said first (`--debug` dropped and `print primary` ->
    `print debug`: "`print primary` → `print debug`, without `--debug`"; paths quoted: "quoted
    `src/pages/works/[id].astro`"), then the passing line from a little before its first change. None when
    the lines share too little for their differences to say it (under half their words), or when those are
    not said in _LED_PARTS changes and LED_MAX characters."""
    a, b = before.split(), after.split()
    ops = _ops([_unquoted_word(w) for w in a], [_unquoted_word(w) for w in b])  # a quoting is one change
    quoted = [
        (j1 + k, b[j1 + k]) for t, i1, i2, j1, _ in ops if t == "equal" for k in range(i2 - i1) if a[i1 + k] != b[j1 + k]
    ]  # fmt: skip
    ops = [op for op in ops if op[0] != "equal"]
    changed = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops)
    if not (ops or quoted) or 2 * changed > max(len(a), len(b)):
        return None
    pairs: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "delete":
            i1, i2 = _slid(a, i1, i2)
        elif tag == "insert":
            j1, j2 = _slid(b, j1, j2)
        old, new = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        if old and new and max(len(old), len(new)) > 50:
            pairs.extend(_fine(old, new))
            continue
        # the word it follows (`print primary` -> `print debug`; `rm` -> `rm -f`: a short word added alone)
        short = not old and j2 - j1 == 1 and len(new) < 12
        if (old and new or short) and i1 > 0 and a[i1 - 1] not in _SEPARATORS and len(a[i1 - 1]) <= 20:
            old, new = f"{a[i1 - 1]} {old}".strip(), f"{b[j1 - 1]} {new}"
        pairs.append((_trim(old.split()), _trim(new.split())))
    said: list[str] = []
    if quoted:
        # the word the shell would have split or expanded first (`(dashboard)`, `[id]`, `*`, `$`, a space)
        word = min((w for _, w in quoted), key=lambda w: not _SHELL_SPECIAL.search(_unquoted_word(w)))
        how = "quoted" if word[:1] in _QUOTES else "unquoted"
        more = f" and {len(quoted) - 1} more" if len(quoted) > 1 else ""
        said.append(f"{how} `{cut(_unquoted_word(word), 80)}`{more}")
    counts: dict[tuple[str, str], int] = {}
    for pair in pairs:
        if any(pair):
            counts[pair] = counts.get(pair, 0) + 1
    for (x, y), n in counts.items():
        one = _said(x, y)
        if one is None:
            return None
        said.append(one + (f" ({n} times)" if n > 1 else ""))
    lead = ", ".join(said)
    if not said or len(said) > _LED_PARTS or len(lead) > LED_MAX:
        return None
    if not context:
        return lead
    start = max(0, min([op[3] for op in ops] + [j for j, _ in quoted[:1]]) - 2)
    window = ("… " if start else "") + " ".join(b[start:])
    return f"{lead} (`{cut(window, LED_CONTEXT)}`)"


def cut(text: str, limit: int = 160) -> str:
    """`text` at most `limit` characters, an ellipsis where it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
