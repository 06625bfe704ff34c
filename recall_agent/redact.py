"""Replace secrets in free text with typed placeholders such as `<redacted:aws_access_key>` (stdlib only).

Learnings are built from error text and agent messages, so this runs before anything is stored or sent:
by the hooks' capture, by `recall learn` and by the server's POST /v1/learnings.

Two kinds of rules, applied in order:
1. Formats that identify themselves (provider prefixes, JWTs, PEM blocks): replaced wherever they appear.
2. Context rules: passwords in URLs and connection strings, Authorization headers, `NAME=value` where the
   name says secret (password, token, api_key, ...), and high-entropy literals in any assignment.

False positives matter as much as misses: error text is full of paths, git SHAs, UUIDs and code, which
must survive. Hex-only values (SHAs, UUIDs, digests, addresses) are never treated as high-entropy secrets.
`redact()` is idempotent: placeholders never match a rule.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

PLACEHOLDER = "<redacted:{}>"


def _ph(kind: str) -> str:
    return PLACEHOLDER.format(kind)


# (kind, pattern) — self-identifying formats; order matters where prefixes overlap (anthropic before openai)
_TOKEN_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:(?:\s|\\[rn])+(?:[A-Za-z-]+: [^\n\\]*|[A-Za-z0-9+/=]{16,}))+"
            r"(?:(?:\s|\\[rn])+[A-Za-z0-9+/=]+)*"
            r"(?:(?:\s|\\[rn])*-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?"
        ),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    (
        "aws_access_key",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b"),
    ),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    ("gitlab_token", re.compile(r"\b(?:glpat|glptt|gldt|glrt|glcbt|glft|glimt|glsoat)-[A-Za-z0-9_-]{20,}")),
    ("gitlab_token", re.compile(r"\bGR1348941[A-Za-z0-9_-]{20,}")),
    (
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/+-]{20,}"),
    ),
    ("slack_token", re.compile(r"\bxox[abposer]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}")),
    ("stripe_key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}")),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_-]{20,}")),
    (
        "openai_key",
        re.compile(
            r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"
            r"|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b"
            r"|\bsk-[A-Za-z0-9]{32,64}\b"
        ),
    ),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    ("google_oauth_token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    ("google_client_secret", re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{20,}")),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("pypi_token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}")),
    ("sendgrid_key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{32,64}")),
    ("digitalocean_token", re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}\b")),
    ("shopify_token", re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b")),
    ("databricks_token", re.compile(r"\bdapi[a-f0-9]{32}(?:-\d)?\b")),
    ("docker_token", re.compile(r"\bdckr_pat_[A-Za-z0-9_-]{20,}")),
    ("twilio_key", re.compile(r"\bSK[0-9a-f]{32}\b")),
    ("mailgun_key", re.compile(r"\bkey-[0-9a-f]{32}\b")),
    ("age_secret_key", re.compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b")),
    ("telegram_bot_token", re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b")),
    (
        "discord_webhook",
        re.compile(r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}"),
    ),
    ("vault_token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}")),
    ("terraform_token", re.compile(r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}")),
    ("linear_key", re.compile(r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b")),
    ("newrelic_key", re.compile(r"\bNR(?:AK|AA|II|JS|RA)-[A-Z0-9]{27}\b")),
    ("sentry_token", re.compile(r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}")),
    ("notion_token", re.compile(r"\bntn_[A-Za-z0-9]{40,}")),
    ("planetscale_token", re.compile(r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_.-]{32,}")),
    ("mailchimp_key", re.compile(r"\b[0-9a-f]{32}-us\d{1,2}\b")),
    ("alibaba_key", re.compile(r"\bLTAI[A-Za-z0-9]{20}\b")),
    ("azure_client_secret", re.compile(r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}")),
    ("nuget_key", re.compile(r"\boy2[a-z0-9]{43}\b")),
    ("readme_key", re.compile(r"\brdme_[a-z0-9]{70}\b")),
    ("onepassword_token", re.compile(r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}")),
    ("groq_key", re.compile(r"\bgsk_[A-Za-z0-9]{48,}")),
    ("langsmith_key", re.compile(r"\blsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}\b")),
    ("figma_token", re.compile(r"\bfig[dur]_[A-Za-z0-9_-]{40,}")),
    ("artifactory_key", re.compile(r"\bAKCp[A-Za-z0-9]{69}\b")),
    (
        "discord_bot_token",
        re.compile(r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b"),
    ),
]

# scheme://user:password@host — keeps the user and host, redacts the password (also `redis://:pw@host`)
_URL_PASSWORD = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}://)([^\s:/@'\"]*):([^\s@/'\"]+)@")

# Authorization / Proxy-Authorization headers (and JSON/dict forms), optional scheme word kept
_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)"
    r"(?:(bearer|basic|token|digest|bot|apikey)\s+)?"
    r"([^\s\"',;]+)"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/-]{12,}=*)")
_KEY_HEADER = re.compile(
    r"(?i)\b((?:x-)?(?:api-key|auth-token|access-token|goog-api-key|vault-token)\s*:\s*)([^\s\"',;]+)"
)

# NAME=value / NAME: value / "name": "value" where the name says secret. The regex finds any assignment;
# the callback checks the name (a keyword alternation at every position was 10x slower).
_SECRET_NAME_END = re.compile(
    r"(?i)(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key(?:[_-]?id)?|secret[_-]?key|private[_-]?key|client[_-]?secret|credentials?|"
    r"account[_-]?key|auth[_-]?key|signing[_-]?key|encryption[_-]?key|session[_-]?key|dsn|"
    r"pass|app[_-]?key|master[_-]?key|session[_-]?id|sessionid)$"
)
_SECRET_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,60})"
    r"([\"']?(?:[ \t]*(?::=|=>|=(?!=))|:)[ \t]*)"
    r"(?![A-Za-z0-9_.-]{1,60}(?:[\"']?[ \t]*:(?:[ \t]|$)|=[^\s=]))"  # not a value: the next `name:`/`name=`
    r"(?:([\"'])((?:(?!\3).){1,500}?)\3|([^\s\"',;&)(\[\]{}<>]{1,500}))"
)
# uppercase env names ending in _KEY (STRIPE_KEY=..., SECRET_KEY=...) at the start of a line
_ENV_KEY_LINE = re.compile(
    r"(?m)^([ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]{0,60}_KEY=)([\"']?)([^\s\"'#]{4,})\2"
)
# any assignment of a long base64/base62-looking literal: judged by entropy
_ASSIGNED_LITERAL = re.compile(
    r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_.-]{0,63}[\"']?[ \t]*(?::=|=(?!=)|:)[ \t]*)([\"']?)"
    r"([A-Za-z0-9+/_-]{20,}={0,2})(?=[\"'\s,;)&}\]]|$)"
)

# <password>…</password> and friends in XML
_XML_SECRET = re.compile(
    r"(?i)<((?:[\w.-]{0,30}[_.-])?(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|client[_-]?secret|"
    r"access[_-]?key|private[_-]?key))>([^<]{1,500})</\1>"
)
# .NET appSettings: <add key="ApiKey" value="…"/>
_KEY_VALUE_ATTR = re.compile(r"(?i)\bkey\s*=\s*\"([^\"]{1,60})\"(\s+value\s*=\s*\")([^\"]{1,500})\"")
# ODBC braces: Pwd={…}
_BRACED_PASSWORD = re.compile(r"(?i)\b((?:pwd|password)\s*=\s*)\{([^}]{1,500})\}")
# command-line flags: --password X, --token=X, -p X after `login`, htpasswd's positional password
_CLI_FLAG = re.compile(
    r"(?i)(?<![\w-])(--?(?:password|passwd|pass|pwd|token|secret|api-key|apikey|auth-token|access-token|"
    r"client-secret)(?:=|[ \t]+))([\"']?)([^\s\"']{1,500})"
)
_LOGIN_P = re.compile(r"\blogin\b[^\n]{0,200}?[ \t]-p[ \t]+([^\s\"']{1,500})")
_HTPASSWD = re.compile(r"\bhtpasswd[ \t]+-\w*b\w*[ \t]+\S+[ \t]+\S+[ \t]+([^\s\"']{1,500})")
# "credential X" / "token X": a secret word, a space, then a value with letters and digits
_WORD_THEN_VALUE = re.compile(
    r"(?i)\b(credentials?|token|password|passwd|secret|api[ _-]?key)([ \t]+)([A-Za-z0-9_+/=.~$!@#%^&*-]{8,500})"
)
# user:password@host without a scheme (ssh, scp, plain text)
_USERINFO = re.compile(r"(?<![\w.+/:-])([\w.+-]{1,64}):([^\s@/:'\"<>]{3,200})@(?=[\w-]+(?:\.[\w-]+)+)")
# any long run of token characters, judged by looks_random (the catch-all for formats no rule names)
_BARE_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/.~$-])[A-Za-z0-9][A-Za-z0-9_+/.~$-]{19,}={0,3}")
# labels that make the next value a digest or a public key, not a secret
_DIGEST_LABEL = re.compile(
    r"(?i)(?:\b(?:sha1|sha224|sha256|sha384|sha512|md5|h1|integrity|checksum|digest|hash|fingerprint|"
    r"etag|commit|revision|rev)[\"']?\s*[:=]?\s*[\"']?|\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+)\s+)$"
)

# unquoted values that are code or types, not secrets (type hints, references, booleans)
_NOT_A_VALUE = re.compile(
    r"(?i)^(?:str|bytes|int|none|null|nil|true|false|optional|any|string|secretstr|undefined|"
    r"required|\*+|x+|\.\.\.|redacted|changeme|placeholder|example|dummy)$"
)
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_ASCENDING_RUN = re.compile(r"abcde|bcdef|ABCDE|BCDEF|01234|12345|23456|34567|45678|56789")
_LOWER_RUN5 = re.compile(r"[a-z]{5,}")
_CASE_RUN = re.compile(r"[a-z]{3,}|[A-Z]{3,}")
_HEX_LIKE = re.compile(r"^[0-9a-fA-F-]+$")
_SEPARATORS = re.compile(r"[-_.]")
_DIGEST_PREFIX = re.compile(r"^(?:sha1|sha256|sha384|sha512|md5|h1)[-_:=]", re.IGNORECASE)


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    if not value:
        return 0.0
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str) -> bool:
    """A credential-like literal: long, mixed classes, high entropy, not hex (SHAs, UUIDs) nor a path."""
    token = value.rstrip("=")
    if len(token) < 20 or _HEX_LIKE.match(token) or _DIGEST_PREFIX.match(token):
        return False
    if token.startswith(("/", "./", "~")) or token.count("/") >= 3:
        return False
    if _ASCENDING_RUN.search(token):  # alphabets like "abcdefghijklmnopqrstuvwxyz0123456789"
        return False
    parts = _SEPARATORS.split(token)
    if len(parts) >= 3 and all(p.isalpha() or p.isdigit() or not p for p in parts):
        return False  # words joined by separators: "bsd-2-clause-pkgconf-disclaimer"
    if (
        len(parts) >= 2
        and any(len(p) >= 16 and _HEX_LIKE.match(p) for p in parts)
        and all(p.isalpha() or p.isdigit() or _HEX_LIKE.match(p) or not p for p in parts)
    ):
        return False  # a name carrying a digest: "Linux-pip-3a7bd3e2…", "layer-9f86d08…"
    has_digit = any(c.isdigit() for c in token)
    has_lower = any(c.islower() for c in token)
    has_upper = any(c.isupper() for c in token)
    coverage = _word_coverage(token) if has_lower and has_upper else 0.0
    if coverage >= 0.75 or (coverage >= 0.5 and _LOWER_RUN5.search(token)):
        return False  # CamelCase words: "SecurityHubV2ServiceRolePermissions" (random base62: ~0.35)
    if not (has_digit and (has_lower or has_upper)):
        return False
    if not (has_lower and has_upper) and len(token) < 32:
        return False
    # random base62 of length n scores close to log2(min(n, 62)); words and identifiers score well below
    threshold = min(4.0, math.log2(len(token)) - 0.8)
    return shannon_entropy(token) >= threshold


def _word_coverage(token: str) -> float:
    """Share of letters inside runs of 3+ letters of one case; words score high, noise low."""
    letters = sum(c.isalpha() for c in token)
    return sum(len(run) for run in _CASE_RUN.findall(token)) / max(letters, 1)


def _is_placeholder(value: str) -> bool:
    return value.startswith("<redacted:") or "<redacted:" in value


def _secret_assign(match: re.Match[str]) -> str:
    name, sep, quote, quoted, bare = match.groups()
    if match.string[max(0, match.start() - 2) : match.start()] == "${":  # ${DB_PASSWORD:?unset}: a template
        return match.group(0)
    if not _SECRET_NAME_END.search(name):
        # `Error: password=…`: the value of a harmless name may hold the assignment that matters
        inner = quoted if quote else bare
        if inner and ("=" in inner or ":" in inner):
            return f"{name}{sep}{quote or ''}{_SECRET_ASSIGN.sub(_secret_assign, inner)}{quote or ''}"
        return match.group(0)
    value = quoted if quote else bare
    if value is None or _is_placeholder(value) or _looks_like_code(value, bool(quote), name):
        return match.group(0)
    if not quote:
        if _NOT_A_VALUE.match(value) or (value.isdigit() and len(value) < 6):
            return match.group(0)
        if _DOTTED_NAME.match(value) or match.string[match.end() : match.end() + 1] in ("(", "["):
            return match.group(0)  # a reference or a call in code: `token = request.headers.get(...)`
        # a bare word is a variable in code (`self.token = token`, `password: str`); only an
        # UPPER_CASE env-style name (`DB_PASSWORD=hunter`) makes it a literal
        if value.isidentifier() and not any(c.isdigit() for c in value) and not name.isupper():
            return match.group(0)
    kind = _kind_for_name(name)
    replaced = f"{quote or ''}{_ph(kind)}{quote or ''}"
    return f"{name}{sep}{replaced}"


def _looks_like_code(value: str, quoted: bool, name: str) -> bool:
    """Templates, references and messages rather than a credential."""
    if len(value.strip()) < 4 or value.startswith(
        ("$", "{{", "os.", "process.env", "env.", "getenv", "<", "#")
    ):
        return True
    if "%(" in value or "${" in value or (quoted and value.startswith("{") and value.endswith("}")):
        return True
    if not quoted:
        return False
    # "NextToken", "pagination_token": an identifier naming something, not a credential
    if (
        value.isidentifier()
        and not any(c.isdigit() for c in value)
        and ("_" in value or (any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)))
    ):
        return True
    # "invalid token" / "Bearer " — prose, not a secret; passphrases may have spaces
    return any(c.isspace() for c in value) and "pass" not in name.lower()


def _kind_for_name(name: str) -> str:
    lowered = name.lower()
    for word, kind in (
        ("pass", "password"),
        ("pwd", "password"),
        ("token", "token"),
        ("dsn", "dsn"),
        ("credential", "credentials"),
    ):
        if word in lowered:
            return kind
    return "secret" if "secret" in lowered else "api_key" if "key" in lowered else "secret"


def _url_password(match: re.Match[str]) -> str:
    scheme, user, password = match.groups()
    if _is_placeholder(password) or password.isdigit():  # host:port@ never has a numeric password here
        return match.group(0)
    return f"{scheme}{user}:{_ph('password')}@"


def _auth_header(match: re.Match[str]) -> str:
    prefix, scheme, value = match.groups()
    if _is_placeholder(value) or _looks_like_code(value, False, ""):
        return match.group(0)
    if not scheme:  # `authorization=authorization`, `authorization: Optional[str]`: code, not a header
        after = match.string[match.end() : match.end() + 1]
        code_like = value.isidentifier() and not any(c.isdigit() for c in value)
        if code_like or _DOTTED_NAME.match(value) or after in ("(", "[") or len(value) < 8:
            return match.group(0)
        if "(" in value or "[" in value:
            return match.group(0)
    kind = {"basic": "basic_auth", "bearer": "bearer_token"}.get((scheme or "").lower(), "authorization")
    return f"{prefix}{scheme + ' ' if scheme else ''}{_ph(kind)}"


def _bearer(match: re.Match[str]) -> str:
    prefix, value = match.groups()
    if not any(c.isdigit() for c in value) and len(value) < 24:  # "Bearer authentication required"
        return match.group(0)
    return f"{prefix}{_ph('bearer_token')}"


def _key_header(match: re.Match[str]) -> str:
    prefix, value = match.groups()
    return match.group(0) if _is_placeholder(value) or len(value) < 8 else f"{prefix}{_ph('api_key')}"


def _env_key_line(match: re.Match[str]) -> str:
    prefix, quote, value = match.groups()
    if _is_placeholder(value) or _looks_like_code(value, bool(quote), prefix) or _NOT_A_VALUE.match(value):
        return match.group(0)
    if not any(c.isdigit() for c in value) and not looks_random(value):  # CACHE_KEY=users, not a secret
        return match.group(0)
    return f"{prefix}{quote}{_ph('secret')}{quote}"


def _assigned_literal(match: re.Match[str]) -> str:
    prefix, quote, value = match.groups()
    if not looks_random(value) or _DIGEST_LABEL.search(prefix.rstrip()):
        return match.group(0)
    return f"{prefix}{quote}{_ph('high_entropy')}"


def _group_replacer(
    group: int, kind: str, check: Callable[[str], bool] | None = None
) -> Callable[[re.Match[str]], str]:
    """Replace match group `group` by a placeholder (when `check(value)` agrees), keep the rest."""

    def replace(match: re.Match[str]) -> str:
        value = match.group(group)
        if _is_placeholder(value) or (check is not None and not check(value)):
            return match.group(0)
        start, end = match.start(group) - match.start(), match.end(group) - match.start()
        whole = match.group(0)
        return whole[:start] + _ph(kind) + whole[end:]

    return replace


def _literal_value(value: str) -> bool:
    """A value worth hiding after a flag: not a variable, template or placeholder word."""
    return not (_looks_like_code(value, False, "") or _NOT_A_VALUE.match(value))


def _key_value_attr(match: re.Match[str]) -> str:
    if not _SECRET_NAME_END.search(match.group(1)) or _is_placeholder(match.group(3)):
        return match.group(0)
    return _group_replacer(3, _kind_for_name(match.group(1)))(match)


def _mixed_value(value: str) -> bool:
    """After `token `/`credential `: letters and digits together (a word or a number alone is prose)."""
    value = value.rstrip(".,;:)")
    has_alpha = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    return has_alpha and has_digit and len(value) >= 8 and (not value.isalnum() or not value.islower())


def _word_then_value(match: re.Match[str]) -> str:
    value = match.group(3)
    core = value.rstrip(".,;:)")
    if not _mixed_value(core) or _is_placeholder(core):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}{_ph(_kind_for_name(match.group(1)))}{value[len(core) :]}"


def _userinfo(match: re.Match[str]) -> str:
    user, password = match.groups()
    if _is_placeholder(password) or password.isdigit():
        return match.group(0)
    return f"{user}:{_ph('password')}@"


def _bare_token(match: re.Match[str]) -> str:
    token = match.group(0)
    core = token.rstrip(".")
    if "<redacted:" in match.string[max(0, match.start() - 10) : match.start()] or not looks_random(core):
        return token
    if _DIGEST_LABEL.search(match.string, max(0, match.start() - 40), match.start()):
        return token
    return _ph("high_entropy") + token[len(core) :]


_CONTEXT_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (_URL_PASSWORD, _url_password),
    (_AUTH_HEADER, _auth_header),
    (_BEARER, _bearer),
    (_KEY_HEADER, _key_header),
    (_XML_SECRET, _group_replacer(2, "secret", _literal_value)),
    (_KEY_VALUE_ATTR, _key_value_attr),
    (_BRACED_PASSWORD, _group_replacer(2, "password")),
    (_CLI_FLAG, _group_replacer(3, "secret", _literal_value)),
    (_LOGIN_P, _group_replacer(1, "password", _literal_value)),
    (_HTPASSWD, _group_replacer(1, "password", _literal_value)),
    (_SECRET_ASSIGN, _secret_assign),
    (_ENV_KEY_LINE, _env_key_line),
    (_ASSIGNED_LITERAL, _assigned_literal),
    (_WORD_THEN_VALUE, _word_then_value),
    (_USERINFO, _userinfo),
    (_BARE_TOKEN, _bare_token),
]


def redact(text: str) -> str:
    """`text` with every secret recall recognises replaced by `<redacted:kind>`."""
    if not text:
        return text
    for kind, pattern in _TOKEN_RULES:
        text = pattern.sub(_ph(kind), text)
    for pattern, replace in _CONTEXT_RULES:
        text = pattern.sub(replace, text)
    return text


def redact_obj(value: object) -> object:
    """Redact every string inside nested lists/dicts (for JSON payloads); other values unchanged."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_obj(v) for k, v in value.items()}
    return value


def redact_learning(learning: Any) -> Any:
    """A `recall_agent.models.Learning` with every free-text field redacted: error signatures, resolution, file
    paths, ticket id, session id and the fix evidence (the one rule for every path that stores a learning)."""
    fix = learning.fix
    if fix is not None:
        fix = type(fix).model_validate(redact_obj(fix.model_dump(mode="json")))
    return learning.model_copy(
        update={
            "resolution_summary": redact(learning.resolution_summary),
            "error_signatures": [redact(s) for s in learning.error_signatures],
            "file_paths_touched": [redact(p) for p in learning.file_paths_touched],
            "ticket_id": redact(learning.ticket_id) if learning.ticket_id else learning.ticket_id,
            "session_id": redact(learning.session_id) if learning.session_id else learning.session_id,
            "fix": fix,
        }
    )
