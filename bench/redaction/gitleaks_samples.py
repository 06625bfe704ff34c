"""The true- and false-positive samples of gitleaks' rules, read from their Go source
(cmd/generate/config/rules/*.go) without a Go toolchain.

Each rule's `tps`/`fps` are Go expressions built from string literals, `+`, `[]string{...}`,
`map[string]string{...}`, `append(...)`, `utils.GenerateSampleSecret(s)` (the secret written in ~30
config and code syntaxes), `utils.AlphaNumeric("n")` and friends (character classes) and
`secrets.NewSecret(regex)` (a random string matching the regex, like gitleaks' reggen). This evaluates
that subset; an expression outside it is skipped and counted. Random parts are seeded by the rule id, so
the samples are the same on every run.
"""

from __future__ import annotations

import random
import re
import re._constants as C  # noqa: N812
import re._parser as P  # noqa: N812
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gitleaks_rules import translate  # noqa: E402

_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/|`[^`]*`|"(?:[^"\\\n]|\\.)*"|\.\.\.|[A-Za-z_][\w.]*|\[\]|[{}(),+:=]|[^\s]""",
    re.S,
)

# utils.GenerateSampleSecrets' templates (cmd/generate/config/utils/generate.go, v8.30.1)
_SAMPLE_TEMPLATES = [
    '{i}Token="{s}"',
    '{i}Token = "{s}"',
    "{i}Token={s}",
    "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}',
    '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    '{i}_token: "{s}"',
    'string {i}Token = "{s}";',
    'var {i}Token string = "{s}"',
    '{i}Token := "{s}"',
    "{i}Token := `{s}`",
    'String {i}Token = "{s}";',
    'var {i}Token = "{s}"',
    '${i}Token .= "{s}"',
    "{i}Token = '{s}'",
    '{i}Token = "{s}"',
    'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"',
    '{i}_TOKEN = "{s}"',
    '{i}_TOKEN := "{s}"',
    '{i}_TOKEN ::= "{s}"',
    '{i}_TOKEN :::= "{s}"',
    '{i}_TOKEN ?= "{s}"',
]
_CLASSES = {
    "Numeric": "[0-9]{%s}",
    "Hex": "[a-f0-9]{%s}",
    "AlphaNumeric": "[a-z0-9]{%s}",
    "AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
    "AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
}


class Unsupported(Exception):
    pass


def _go_string(tok: str) -> str:
    if tok.startswith("`"):
        return tok[1:-1]
    return bytes(tok[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")


def _fill(template: str, ident: str, secret: str) -> str:
    return template.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", secret)


# --------------------------------------------------------------------------- random strings from a regex


def generate(pattern: str, rng: random.Random) -> str:
    return "".join(_gen(P.parse(translate(pattern)), rng))


_CATEGORY = {
    C.CATEGORY_DIGIT: string.digits,
    C.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    C.CATEGORY_SPACE: " ",
}


def _gen(items, rng: random.Random) -> list[str]:  # noqa: C901
    out: list[str] = []
    for op, av in items:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.ANY:
            out.append(rng.choice(string.ascii_letters + string.digits))
        elif op is C.IN:
            out.append(rng.choice(_charset(av)))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            hi = lo + 1 if hi is C.MAXREPEAT else hi  # reggen's limit 1 for open repeats
            for _ in range(rng.randint(lo, hi)):
                out.extend(_gen(sub, rng))
        elif op is C.SUBPATTERN:
            out.extend(_gen(av[-1], rng))
        elif op is C.BRANCH:
            out.extend(_gen(rng.choice(av[1]), rng))
        elif op is C.CATEGORY:
            out.append(rng.choice(_CATEGORY.get(av, "x")))
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        else:
            raise Unsupported(str(op))
    return out


def _charset(av) -> str:
    chars: list[str] = []
    negate = False
    for op, x in av:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            chars.append(chr(x))
        elif op is C.RANGE:
            chars.extend(chr(c) for c in range(x[0], x[1] + 1))
        elif op is C.CATEGORY:
            chars.extend(_CATEGORY.get(x, ""))
    if negate:
        allowed = set(chars)
        return "".join(c for c in string.ascii_letters + string.digits if c not in allowed) or "x"
    return "".join(chars) or "x"


# --------------------------------------------------------------------------- a tiny Go expression evaluator


class _Expr:
    def __init__(self, tokens: list[str], rng: random.Random, env: dict[str, list[str]]) -> None:
        self.t, self.i, self.rng, self.env = tokens, 0, rng, env

    def peek(self) -> str:
        return self.t[self.i] if self.i < len(self.t) else ""

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if not tok:
            raise Unsupported("end of input")
        if want is not None and tok != want:
            raise Unsupported(f"expected {want!r}, got {tok!r}")
        self.i += 1
        return tok

    def expr(self):
        value = self.term()
        while self.peek() == "+":
            self.take()
            right = self.term()
            if not (isinstance(value, str) and isinstance(right, str)):
                raise Unsupported("+ of lists")
            value += right
        return value

    def args(self) -> list:
        self.take("(")
        out = []
        while self.peek() != ")":
            if not self.peek():
                raise Unsupported("end of input")
            out.append(self.expr())
            if self.peek() == "...":
                self.take()
                out[-1] = ("spread", out[-1])
            if self.peek() == ",":
                self.take()
        self.take(")")
        return out

    def term(self):  # noqa: C901
        tok = self.take()
        if tok.startswith(("`", '"')):
            return _go_string(tok)
        if tok == "[]":
            self.take("string")
            return self.literal_list()
        if tok == "map[string]string" or tok == "map":
            if tok == "map":
                for want in ("[", "string", "]", "string"):
                    self.take(want)
            return self.literal_map()
        name = tok
        if self.peek() != "(":
            if name in self.env:
                return list(self.env[name])
            raise Unsupported(f"name {name}")
        args = self.args()
        short = name.rsplit(".", 1)[-1]
        if short == "GenerateSampleSecret":
            return f'{args[0]}_api_token = "{args[1]}"'
        if short == "GenerateSampleSecrets":
            return [_fill(t, args[0], args[1]) for t in _SAMPLE_TEMPLATES]
        if short == "NewSecret":
            return generate(args[0], self.rng)
        if short in _CLASSES:
            return _CLASSES[short] % args[0]
        if short == "Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if short == "append":
            base, *rest = args
            out = list(base)
            for a in rest:
                out.extend(a[1] if isinstance(a, tuple) else [a])
            return out
        if short == "Repeat":
            return args[0] * int(args[1]) if isinstance(args[1], str) and args[1].isdigit() else Unsupported
        raise Unsupported(f"call {name}")

    def literal_list(self) -> list[str]:
        self.take("{")
        out: list[str] = []
        while self.peek() != "}":
            start = self.i
            try:
                value = self.expr()
                out.extend(value if isinstance(value, list) else [value])
            except Unsupported:
                self.i = start
                self.skip_element()
                self.skipped += 1
            if self.peek() == ",":
                self.take()
            elif self.i == start or self.peek() not in ("}",):
                raise Unsupported("list element")
        self.take("}")
        return out

    def literal_map(self) -> list[str]:
        self.take("{")
        out: list[str] = []
        while self.peek() != "}":
            self.expr()
            self.take(":")
            start = self.i
            try:
                out.append(self.expr())
            except Unsupported:
                self.i = start
                self.skip_element()
                self.skipped += 1
            if self.peek() == ",":
                self.take()
            elif self.peek() != "}":
                raise Unsupported("map element")
        self.take("}")
        return out

    skipped = 0

    def skip_element(self) -> None:
        depth = 0
        while self.i < len(self.t):
            tok = self.peek()
            if tok in "({[" and len(tok) == 1:
                depth += 1
            elif tok in ")}]" and len(tok) == 1:
                if depth == 0:
                    return
                depth -= 1
            elif tok == "," and depth == 0:
                return
            self.i += 1


def _tokens(source: str) -> list[str]:
    toks = [m.group() for m in _TOKEN.finditer(source)]
    out = [t for t in toks if not (t.isspace() or t.startswith(("//", "/*")))]
    merged: list[str] = []
    for t in out:  # `map[string]string` arrives as map [ string ] string: keep it split, handled in term()
        merged.append(t)
    return merged


_FUNC = re.compile(r"^func (\w+)\(\) \*config\.Rule \{\n(.*?)^\}", re.S | re.M)
_RULE_ID = re.compile(r'RuleID:\s*"([^"]+)"|r\.RuleID\s*=\s*"([^"]+)"')
_ASSIGN = re.compile(r"^\s*(tps|fps)\s*(:=|=)\s*", re.M)


def samples(rules_dir: Path) -> tuple[list[dict], dict]:
    """[{rule, kind: tp|fp, text}], and counts of what was read and skipped."""
    out: list[dict] = []
    stats = {"functions": 0, "statements": 0, "skipped_statements": 0, "skipped_elements": 0}
    for path in sorted(rules_dir.glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        source = path.read_text()
        for fm in _FUNC.finditer(source):
            body = fm.group(2)
            ids = [a or b for a, b in _RULE_ID.findall(body)]
            if not ids:
                continue
            rule = ids[-1]
            stats["functions"] += 1
            rng = random.Random(rule)
            lists: dict[str, list[str]] = {"tps": [], "fps": []}
            for am in _ASSIGN.finditer(body):
                stats["statements"] += 1
                toks = _tokens(body[am.end() :])
                ev = _Expr(toks, rng, lists)
                try:
                    value = ev.expr()
                except (Unsupported, IndexError, ValueError, re.error) as exc:
                    stats["skipped_statements"] += 1
                    stats.setdefault("examples", []).append(f"{rule}: {exc}"[:120])
                    continue
                stats["skipped_elements"] += ev.skipped
                values = value if isinstance(value, list) else [value]
                lists[am.group(1)] = values
            for kind, name in (("tp", "tps"), ("fp", "fps")):
                for text in dict.fromkeys(lists[name]):
                    if isinstance(text, str) and text.strip():
                        out.append({"rule": rule, "kind": kind, "text": text})
    return out, stats


if __name__ == "__main__":
    found, counts = samples(Path(sys.argv[1]))
    print(counts, len(found), sum(s["kind"] == "tp" for s in found))
