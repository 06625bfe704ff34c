"""Structural rules: the name next to a value says it is secret, whatever the value looks like.

One scan finds every secret-looking name (recall_agent.redact.vocabulary.anchors: `pass`, `token`, `auth`,
`key`, `пароль`, ...); each hit is widened to the whole name and judged by the structure around it:

- key-value pairs: `KEY=v`, `key: v`, `"key": "v"`, `'key': 'v'` (Python reprs), `:key => 'v'` (Ruby),
  `key := "v"` (Go), `key = "v"` (TOML/INI/.properties), `define('KEY', 'v')`, libpq `password=v`, ODBC and
  JDBC `Pwd={v};`, query strings `&token=v`, JSON inside JSON strings (`\\"key\\": \\"v\\"`);
- YAML values on the next line and block scalars (`password: >-` with the value on the lines below);
- name/value pairs: `- name: DB_PASSWORD` + `value: v`, `<add key="ApiKey" value="v"/>`;
- XML elements `<password>v</password>` (also spread over lines);
- command-line flags `--db-password v`, `--token=v`, `-storepass v`;
- HTTP headers (`Authorization: Bearer v`, `X-Api-Key: v`, cookies) are key-value pairs too.
Every scan is a linear regex or a bounded walk; a value is kept only when its own syntax says it is not a
literal (recall_agent.redact.values).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from recall_agent.redact.finding import Finding
from recall_agent.redact.values import PLACEHOLDER_MARK, is_literal_secret
from recall_agent.redact.vocabulary import anchors, is_secret_name, kind_of

_NAME_MAX = 80
_VALUE_MAX = 2000
_BLOCK_LINES_MAX = 200

# the separator after a name (the closing quote or `]` of the name is matched before it)
_SEP = re.compile(r"(?<![ \t])[ \t]*+(?:=>|:::=|::=|:=|\?=|\+=|={2,3}|!==?|=|:(?![:/])|,)[ \t]*+")
_AFTER_NAME = re.compile(r"(?:\\?[\"'`])?\]?")
_QUOTED = {
    '"': re.compile(r'"((?:[^"\\\n]|\\.){0,2000})"'),
    "'": re.compile(r"'((?:[^'\\\n]|\\.){0,2000})'"),
    "`": re.compile(r"`([^`\n]{0,2000})`"),
    '\\"': re.compile(r'\\"((?:[^"\\\n]|\\(?!")[^\n]){0,2000})\\"'),
    "\\'": re.compile(r"\\'((?:[^'\\\n]|\\(?!')[^\n]){0,2000})\\'"),
}
_BARE = re.compile(r"(?:[^\s\"'`,;&<>()\[\]{}\\]|\\(?![nrt\"'\\])){1,500}")
_BRACED = re.compile(r"(?<![^ \t=:>,])\{([^}\n]{1,500})\}")
_REST_OF_LINE = re.compile(r"[^\n]{1,500}")
_YAML_KEY_LINE = re.compile(
    r"(?<![ \t])[ \t]*+(?:-[ \t]++)?[\"']?$"
)  # what may stand before a YAML key on its line
_BLOCK_HEADER = re.compile(r"[|>][+-]?\d?[+-]?[ \t]*(?:#[^\n]*)?(?=\n)")
_FOLDED_BLOCK = re.compile(r"[|>][+-]?\d?[ \t]+([^\s]{1,500})")
_MAPPING_LINE = re.compile(
    r"(?<![ \t])[ \t]*+(?:-[ \t]|[\"']?(?<![\w.-])[\w.-]++[\"']?[ \t]*+:(?:[ \t]|$)|#)"
)
_NAME_LABEL = re.compile(r"(?i)\b(?:name|key|id|variable)[\"']?[ \t]*[:=][ \t]*\\?[\"']?$")
_VALUE_LABEL = re.compile(r"(?i)\bvalue\\?[\"']?[ \t]*[:=][ \t]*")
_AUTH_SCHEME = re.compile(
    r"([A-Za-z][\w-]{1,24})[ \t]+(?=[^\s\"',;])"
)  # Bearer, Basic, SSWS, AWS4-HMAC-SHA256
_XML_OPEN_REST = re.compile(r"(?<![\s<>])(?:[ \t][^<>\n]{0,300})?>")
_XML_CONTENT = re.compile(r"[^<]{1,2000}")
_PROSE_IS = re.compile(
    r"(?<![ \t])(?:[ \t]++(?:for|of)[ \t]+[^\n\"']{0,40}?[\"']?[\w.@-]{1,64}[\"']?)?[ \t]+(?:is|was|to)[ \t]+"
    r"([\"'])([^\"'\n]{3,200})\1"
)
_WORD_VALUE = re.compile(r"(?<![ \t])[ \t]++([A-Za-z0-9_+/=.~$!@#%^&*-]{8,500})")
_BEARER = re.compile(r"(?i)\bbearer[ \t]+([A-Za-z0-9._~+/-]{12,}=*)")
_DOTTED_CODE = re.compile(r"(?<![\w.])[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)+")
_FLAG_NAME = re.compile(r"[A-Za-z][A-Za-z_.-]{1,60}[A-Za-z]")  # `-pS3cr3t` is a glued value, not a flag
_PREV_PAIR = re.compile(r"(?<![\w.-])[A-Za-z_][\w.-]{0,40}[ \t]?=[ \t]?[^\s=;&]{1,80}[ \t]+$")
_NEXT_PAIR = re.compile(r"(?<![ \t])[ \t]++[A-Za-z_][\w.-]{0,40}=[^=\s]")
_SPACES = re.compile(r"[ \t]+")
_PARAMS_TO_EOL = re.compile(r"[^\n\"']{0,2000}")
_FLAG_VALUE = re.compile(r"[^\s\"'`;&|<>]{1,500}")
_KUBE_SECRET = re.compile(r"\bkind[\"']?[ \t]*:[ \t]*[\"']?Secret\b")
_KUBE_DATA = re.compile(
    r"(?m)^([ \t]*)(?:data|stringData)[ \t]*:[ \t]*(?:#[^\n]*)?$|\"(?:data|stringData)\"[ \t]*:[ \t]*\{"
)
_YAML_CHILD = re.compile(r"(?<![ \t])([ \t]++)[\"']?[^\s:\"']{1,253}[\"']?[ \t]*:[ \t]+([^\s#][^\n]*)")
_JSON_PAIR = re.compile(r"\"[^\"\n]{1,253}\"[ \t]*:[ \t]*\"([^\"\n]{1,20000})\"")


def _key_char(c: str) -> bool:
    return c.isalnum() or c in "_.-$"


def _name_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole name around an anchor hit: letters, digits and `_.-$` (80 characters at most)."""
    lo = start
    while lo > 0 and start - lo < _NAME_MAX and _key_char(text[lo - 1]):
        lo -= 1
    hi = end
    while hi < len(text) and hi - end < _NAME_MAX and _key_char(text[hi]):
        hi += 1
    while hi > lo and text[hi - 1] in ".-":  # `token.` at the end of a sentence
        hi -= 1
    return lo, hi


def find(text: str) -> Iterator[Finding]:
    """Every secret the structure of `text` shows (see the module docstring)."""
    done = 0
    for hit in anchors(text):
        if hit.start() < done:
            continue
        lo, hi = _name_span(text, hit.start(), hit.end())
        done = hi
        name = text[lo:hi]
        if name.startswith("-"):
            yield from _flag(text, lo, hi, name)
        elif lo > 0 and text[lo - 1] == "<":
            yield from _xml_element(text, hi, name)
        else:
            yield from _key_value(text, lo, hi, name)
    if "earer" in text or "EARER" in text:
        yield from _bearer(text)
    yield from _kube_secret_data(text)


# --------------------------------------------------------------------------- key-value pairs


def _key_value(text: str, lo: int, hi: int, name: str) -> Iterator[Finding]:
    bare_name = name.strip("$.")
    if text[max(0, lo - 2) : lo] == "${":  # `${DB_PASSWORD:?unset}`: a template, not a pair
        return
    if _NAME_LABEL.search(text, max(0, lo - 24), lo):  # `name: DB_PASSWORD`: the name is itself a value
        if is_secret_name(bare_name) or _env_key(bare_name):
            yield from _named_pair(text, hi, bare_name)
        return
    env_key = _env_key(bare_name)
    if not is_secret_name(bare_name) and not env_key:
        return
    after = _AFTER_NAME.match(text, hi)
    pos = after.end() if after else hi
    sep = _SEP.match(text, pos)
    if not sep:
        yield from _word_then_value(text, hi, bare_name)
        return
    quoted_name = lo > 0 and text[lo - 1] in "\"'`" and pos > hi
    op = sep.group().strip()
    value_quoted = text[sep.end() : sep.end() + 1] in ("'", '"', "`")
    if op == "," and not (quoted_name and value_quoted):
        return  # `define('DB_PASSWORD', '…')`, `setProperty("X_TOKEN", "…")`; not an argument list
    if op in ("==", "===", "!=", "!==") and not value_quoted:
        return  # `password == "team10"`: a hard-coded credential; `token == other`: code
    if op == ":" and lo > 0 and text[lo - 1] == ":":
        return  # `UAMF:AUTH:7G6W`: a segment of a colon-joined id, not a key
    if op == ":" and text.startswith("//", sep.end()):
        return  # a URL: `auth://`
    if bare_name.lower() == "pass" and op not in ("=", ":=") and not quoted_name:
        return  # `PASS: values match`: a test's verdict, not a key
    if env_key:  # `STRIPE_KEY=…`: a literal with a digit in it (`CACHE_KEY=users` is a name)
        bare = _BARE.match(text, sep.end())
        if sep.group().strip() != "=" or not bare or not any(c.isdigit() for c in bare.group()):
            return
    yield from _value_at(
        text, sep.end(), bare_name, sep.group().strip(), line_start=_line_start(text, lo), lo=lo
    )


def _env_key(name: str) -> bool:
    """An upper-case environment name ending in `_KEY` (STRIPE_KEY, SSH_KEY) that no qualifier explains."""
    return name.isupper() and name.endswith("_KEY") and not is_secret_name(name)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _value_at(text: str, v: int, name: str, sep: str, *, line_start: int, lo: int) -> Iterator[Finding]:
    """The value that starts at `v`, after the secret name `name` and its separator `sep`."""
    kind = kind_of(name)
    rule = "key-value"
    if v >= len(text) or text[v] == "\n" or (text[v] == "\r" and text[v + 1 : v + 2] == "\n"):
        if sep == ":" and _YAML_KEY_LINE.match(text[line_start:lo]):
            yield from _yaml_next_line(text, v, line_start, name, kind)
        return
    c = text[v]
    if c in "|>" and sep == ":" and _BLOCK_HEADER.match(text, v):
        yield from _yaml_block(text, v, line_start, kind)
        return
    folded = _FOLDED_BLOCK.match(text, v) if c in "|>" and sep == ":" else None
    if folded:  # `password: >- value` once a capture folded the lines into one
        yield from _emit(folded.start(1), folded.end(1), folded.group(1), True, name, kind, "", "yaml-block")
        return
    if words_are_auth_header(name):
        yield from _authorization(text, v, kind)
        return
    for quote in ('\\"', "\\'"):
        if text.startswith(quote, v):
            yield from _quoted(text, v, quote, name, kind, rule)
            return
    if c in "\"'`":
        yield from _quoted(text, v, c, name, kind, rule)
        return
    if c in "bfru" and text[v + 1 : v + 2] in ("'", '"') and text[v + 1] != c:  # b'...', f"...", r'...'
        yield from _quoted(text, v + 1, text[v + 1], name, kind, rule)
        return
    if c == "{":
        braced = _BRACED.match(text, v)
        if braced and sep == "=":  # ODBC: Pwd={p;w}
            yield from _emit(braced.start(1), braced.end(1), braced.group(1), False, name, kind, "", rule)
        return  # `"auth": {...}`: an object, its own keys are judged one by one
    if c in "[(":
        return
    bare = _BARE.match(text, v)
    if bare:
        follow = text[bare.end() : bare.end() + 1]
        config = _in_config(text, lo, bare.end(), line_start)
        if is_literal_secret(bare.group(), quoted=False, name=name, followed_by=follow, in_config=config):
            yield Finding(v, bare.end(), kind, rule)


def _in_config(text: str, lo: int, end: int, line_start: int) -> bool:
    """A pair in a config line or a list of pairs: alone on its line (INI, .env, .properties), or beside
    `;`/`&` or another `key=value` (connection strings, query strings, libpq)."""
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    if not text[line_start:lo].strip() and not text[end:line_end].strip():
        return True
    before = text[max(line_start, lo - 2) : lo].strip()
    after = text[end : end + 1]
    if after in (";", "&") or before.endswith((";", "&", "?")) or _NEXT_PAIR.match(text, end):
        return True
    return bool(_PREV_PAIR.search(text, max(line_start, lo - 120), lo))  # `user=app password=…` folded


def words_are_auth_header(name: str) -> bool:
    return name.lower().endswith("authorization")


def _quoted(text: str, v: int, quote: str, name: str, kind: str, rule: str) -> Iterator[Finding]:
    m = _QUOTED[quote].match(text, v)
    if m:
        yield from _emit(m.start(1), m.end(1), m.group(1), True, name, kind, "", rule)
        return
    rest = _REST_OF_LINE.match(text, v + len(quote))  # no closing quote on the line: a cut message
    if rest:
        yield from _emit(rest.start(), rest.end(), rest.group(), True, name, kind, "", rule)


def _emit(
    start: int, end: int, value: str, quoted: bool, name: str, kind: str, follow: str, rule: str
) -> Iterator[Finding]:
    if is_literal_secret(value, quoted=quoted, name=name, followed_by=follow):
        yield Finding(start, end, kind, rule)


def _authorization(text: str, v: int, kind: str) -> Iterator[Finding]:
    quote = text[v] if text[v] in "\"'" else ""
    pos = v + len(quote)
    scheme = _AUTH_SCHEME.match(text, pos)
    if scheme:
        pos = scheme.end()
    value = _BARE.match(text, pos)
    if not value:
        return
    raw = value.group()
    follow = text[value.end() : value.end() + 1]
    if not scheme and (
        len(raw) < 8
        or (raw.isidentifier() and not any(ch.isdigit() for ch in raw))
        or _DOTTED_CODE.fullmatch(raw)
        or follow in ("(", "[")
    ):
        return  # `authorization: Optional[str]`, `authorization = request.headers.get(…)`: code
    if PLACEHOLDER_MARK in raw or raw.startswith(("$", "{{", "<")):
        return
    end = value.end()
    if scheme and scheme.group(1).lower() in ("digest", "aws4-hmac-sha256", "hmac", "signature"):
        rest = _PARAMS_TO_EOL.match(text, pos)  # the parameters run to the line's end
        end = rest.end() if rest else end
    label = {"basic": "basic_auth", "bearer": "bearer_token"}.get(
        scheme.group(1).lower() if scheme else "", kind
    )
    yield Finding(pos, end, label if scheme else "authorization", "http-header")


def _word_then_value(text: str, hi: int, name: str) -> Iterator[Finding]:
    """`credential AKIA…`, `token abc123XYZ` in prose: letters and digits together after the word; and
    `the password is "centipede"`, `password for user 'postgres' is 'admin'`: a quoted word after `is`."""
    said = _PROSE_IS.match(text, hi)
    if said and name.lower() in _PROSE_WORDS:
        yield from _emit(said.start(2), said.end(2), said.group(2), True, name, kind_of(name), "", "prose")
        return
    m = _WORD_VALUE.match(text, hi)
    if not m:
        return
    value = m.group(1).rstrip(".,;:)")
    has_alpha = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    mixed = has_alpha and has_digit and len(value) >= 8 and (not value.isalnum() or not value.islower())
    if mixed and PLACEHOLDER_MARK not in value and name.lower() in _PROSE_WORDS:
        yield Finding(m.start(1), m.start(1) + len(value), kind_of(name), "prose")


_PROSE_WORDS = frozenset(
    {"credential", "credentials", "token", "password", "passwd", "secret", "apikey", "api-key", "api_key"}
)


def _named_pair(text: str, hi: int, name: str) -> Iterator[Finding]:
    """`name: DB_PASSWORD` then `value: …` within the next 300 characters (k8s env, .NET appSettings)."""
    label = _VALUE_LABEL.search(text, hi, min(len(text), hi + 300))
    if not label or "\n\n" in text[hi : label.start()]:
        return
    yield from _value_at(
        text, label.end(), name, "=", line_start=_line_start(text, label.start()), lo=label.start()
    )


# --------------------------------------------------------------------------- YAML


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _lines_after(text: str, v: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each line after the one holding `v`."""
    pos = text.find("\n", v)
    count = 0
    while pos != -1 and pos + 1 <= len(text) and count < _BLOCK_LINES_MAX:
        start = pos + 1
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        yield start, end
        pos = end if end < len(text) else -1
        count += 1


def _key_indent(text: str, line_start: int) -> int:
    line = text[line_start : text.find("\n", line_start) if "\n" in text[line_start:] else len(text)]
    indent = _indent(line)
    if line[indent : indent + 2] == "- ":
        indent += 2
    return indent


def _yaml_next_line(text: str, v: int, line_start: int, name: str, kind: str) -> Iterator[Finding]:
    """`password:` with its plain value on the next, more indented line."""
    key_indent = _key_indent(text, line_start)
    for start, end in _lines_after(text, v):
        line = text[start:end].rstrip("\r")
        if not line.strip():
            continue
        if _indent(line) <= key_indent or _MAPPING_LINE.match(line):
            return
        value = line.strip()
        first = start + _indent(line)
        quoted = value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2
        if quoted:
            first, value = first + 1, value[1:-1]
        yield from _emit(first, first + len(value), value, quoted, name, kind, "", "yaml-next-line")
        return


def _yaml_block(text: str, v: int, line_start: int, kind: str) -> Iterator[Finding]:
    """`password: |` or `>-`: every more indented line below is the value."""
    key_indent = _key_indent(text, line_start)
    for start, end in _lines_after(text, v):
        line = text[start:end].rstrip("\r")
        if not line.strip():
            continue
        if _indent(line) <= key_indent:
            return
        first = start + _indent(line)
        if PLACEHOLDER_MARK not in line:
            yield Finding(first, first + len(line.strip()), kind, "yaml-block")


def _kube_secret_data(text: str) -> Iterator[Finding]:
    """Every value under `data:`/`stringData:` of a Kubernetes Secret (the keys are free names; the kind
    says what the base64 values hold)."""
    if "Secret" not in text or not _KUBE_SECRET.search(text):
        return
    for header in _KUBE_DATA.finditer(text):
        if header.group(0).startswith('"'):
            close = text.find("}", header.end())
            close = len(text) if close == -1 else close
            for pair in _JSON_PAIR.finditer(text, header.end(), close):
                if PLACEHOLDER_MARK not in pair.group(1):
                    yield Finding(pair.start(1), pair.end(1), "secret", "kubernetes-secret")
            continue
        key_indent = len(header.group(1))
        for start, end in _lines_after(text, header.start()):
            child = _YAML_CHILD.match(text, start, end)
            if not child or len(child.group(1)) <= key_indent:
                if text[start:end].strip():
                    break
                continue
            value = child.group(2).rstrip()
            if PLACEHOLDER_MARK not in value and value not in ("|", ">", "|-", ">-"):
                yield Finding(child.start(2), child.start(2) + len(value), "secret", "kubernetes-secret")


# --------------------------------------------------------------------------- XML, flags, bearer


def _xml_element(text: str, hi: int, name: str) -> Iterator[Finding]:
    if not is_secret_name(name):
        return
    opened = _XML_OPEN_REST.match(text, hi)
    if not opened or text[opened.end() - 2 : opened.end()] == "/>":
        return
    content = _XML_CONTENT.match(text, opened.end())
    if not content or not text.startswith("</", content.end()):
        return
    raw = content.group()
    value = raw.strip()
    start = content.start() + (len(raw) - len(raw.lstrip()))
    yield from _emit(start, start + len(value), value, True, name, kind_of(name), "", "xml-element")


def _flag(text: str, lo: int, hi: int, name: str) -> Iterator[Finding]:
    """`--password X`, `--db-password=X`, `-storepass X` (a flag named like a secret takes one)."""
    if lo > 0 and not (text[lo - 1].isspace() or text[lo - 1] in "\"'([="):
        return
    flag = name.lstrip("-")
    if not _FLAG_NAME.fullmatch(flag) or flag.lower().startswith("no-") or not is_secret_name(flag):
        return
    pos = hi
    if text.startswith("=", pos):
        pos += 1
    else:
        spaces = _SPACES.match(text, pos)
        if not spaces:
            return
        pos = spaces.end()
    if pos >= len(text) or text[pos] == "-":
        return  # a switch followed by the next flag: `--password-stdin`, `--no-password -h db`
    kind = kind_of(flag)
    if text[pos] in "\"'":
        yield from _quoted(text, pos, text[pos], flag, kind, "command-flag")
        return
    bare = _FLAG_VALUE.match(text, pos)
    if bare:
        value = bare.group()
        literal = is_literal_secret(value, quoted=True, name=flag) or (
            value.isidentifier() and len(value) >= 4
        )
        if literal and PLACEHOLDER_MARK not in value and not value.startswith(("$", "<", "{{")):
            yield Finding(pos, bare.end(), kind, "command-flag")


def _bearer(text: str) -> Iterator[Finding]:
    """`Bearer <token>` anywhere (not only after an Authorization name)."""
    for m in _BEARER.finditer(text):
        value = m.group(1)
        if PLACEHOLDER_MARK in text[max(0, m.start() - 12) : m.end()]:
            continue
        if any(c.isdigit() for c in value) or len(value) >= 24:
            yield Finding(m.start(1), m.end(1), "bearer_token", "http-header")
