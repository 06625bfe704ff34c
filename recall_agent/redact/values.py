"""Is the value next to a secret name a literal secret, or code, a template, a type or a path?

The name decides that a value is secret; these checks only keep what is plainly not a value: references
and calls in code (`token = request.headers.get(...)`), types (`password: str`), templates (`${DB_PASSWORD}`,
`{{ .Values.token }}`, `%(pw)s`), placeholders (`***`, `<your-token>`, `changeme`), booleans and null, file
paths (`private_key: ~/.ssh/id_rsa`, `PWD=/home/dev`), URLs without a password, and prose in quotes
(`"invalid token"`), except after a password-like name, where a passphrase may hold spaces.
"""

from __future__ import annotations

import keyword
import re

from recall_agent.redact.ordinary import is_path

PLACEHOLDER_MARK = "<redacted:"

_NOT_A_VALUE = re.compile(
    r"(?i)(?:str|bytes|int|none|null|nil|true|false|yes|no|on|off|optional|any|string|secretstr|undefined|"
    r"required|redacted|changeme|placeholder|example|dummy|hidden|masked|unset|empty|"
    r"\*+|x+|\.\.\.|…|-+|_+|\?+)"
)
_TEMPLATE = re.compile(r"\$\{|\{\{|%\(\w+\)|\$\(|<%|\{%|#\{|\$[A-Za-z_]|%[A-Za-z_][\w]*%")
_PY_FORMAT = re.compile(r"%\(\w{1,40}\)[-#0 +]?\d*[sdrfixX]")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)+")
_TYPE = re.compile(r"(?:Optional|Union|List|Dict|Literal|Annotated|SecretStr)\[|(?<!\w)\w++\s*+\|\s*+None")
_URL = re.compile(r"[a-z][a-z0-9+.-]{1,20}://[^\s@]*")
_PASSWORDISH = ("pass", "pwd", "pw", "mdp", "senha", "clave", "kennwort", "parol", "heslo", "haslo")


def is_literal_secret(
    value: str, *, quoted: bool, name: str, followed_by: str = "", in_config: bool = False
) -> bool:
    """Whether `value`, written after the secret name `name`, is a secret to redact."""
    stripped = value.strip()
    if len(stripped) < 3 or PLACEHOLDER_MARK in value:
        return False
    if _NOT_A_VALUE.fullmatch(stripped) or _TEMPLATE.match(stripped) or stripped.startswith(("<", "#")):
        return False
    if _PY_FORMAT.search(stripped) or "${" in stripped or "{{" in stripped or _TYPE.match(stripped):
        return False
    if stripped.isdigit() and len(stripped) < 6:
        return False  # `token: 0`, `pass: 3` (counts, flags, ports)
    if _URL.fullmatch(stripped) or (is_path(stripped) and stripped.startswith(("/", "~", "./", "../"))):
        return False
    if quoted:
        return _quoted_literal(stripped, name)
    return _bare_literal(stripped, name, followed_by, in_config)


def _quoted_literal(value: str, name: str) -> bool:
    if value.startswith("{") and value.endswith("}"):
        return False  # a format string: "{token}"
    # "NextToken", "pagination_token", "access_token": an identifier naming something, not a credential
    camel = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    if value.isidentifier() and not any(c.isdigit() for c in value) and ("_" in value or camel):
        return False
    if any(c.isspace() for c in value):  # "invalid token" is prose; a passphrase may hold spaces
        return any(w in name.lower() for w in _PASSWORDISH) and len(value) <= 200
    return True


def _bare_literal(value: str, name: str, followed_by: str, in_config: bool) -> bool:
    if followed_by[:1] in ("(", "[", "."):
        return False  # a call or subscript in code: `token = get_token()`, `pw = env["PW"]`
    if _DOTTED.fullmatch(value):
        return False  # a reference: `api_key = settings.api_key`
    # a bare word in code is a variable (`self.token = token`); an UPPER_CASE env-style name
    # (`DB_PASSWORD=hunter`) or a word with digits is a literal
    if value.isidentifier() and not any(c.isdigit() for c in value) and not name.isupper():
        # ... unless the pair stands in a config line or a connection string (`Password=secret;`,
        # `password = open_sesame` alone on its line), where nothing is a variable
        return in_config and value.lower() not in name.lower() and not keyword.iskeyword(value)
    return True
