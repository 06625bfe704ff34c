"""Names that say "the value next to me is a secret": keys, flags, XML elements and header names.

A name is split into words (snake_case, kebab-case, dotted, camelCase) and its LAST word decides:
`db_password`, `dbPassword`, `spring.datasource.password`, `X-Auth-Token`, `AWS_SECRET_ACCESS_KEY` are secret
names; `password_file`, `token_type`, `secret_name`, `max_tokens`, `secretKeyRef` are not, whatever the words
before them. `key` alone is too common (cache keys, dict keys): it counts after a qualifier (`api_key`,
`private_key`, `access_key`, ...).
"""

from __future__ import annotations

import re

from recall_agent.redact.trie import trie

# the last word of a secret name, in several spellings and languages
SECRET_WORDS: frozenset[str] = frozenset(
    {
        # English and the usual abbreviations
        "password",
        "passwd",
        "passwrd",
        "pass",
        "passphrase",
        "passcode",
        "pwd",
        "pw",
        "secret",
        "token",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "creds",
        "apikey",
        "dsn",
        "salt",
        "signature",  # `X-Amz-Signature=…`, `signature=…` of a signed URL or webhook
        # glued compounds seen in config keys and cookies
        "authtoken",
        "accesstoken",
        "refreshtoken",
        "apitoken",
        "authkey",
        "secretkey",
        "privatekey",
        "accesskey",
        "clientsecret",
        "sessionid",
        "sessiontoken",
        "storepass",
        "keypass",
        "srcstorepass",
        "deststorepass",
        "keystorepass",
        # other languages (ASCII spellings too: config keys are often written without accents)
        "passwort",  # de
        "kennwort",  # de
        "motdepasse",  # fr
        "mdp",  # fr
        "contrasena",  # es
        "contraseña",  # es
        "clave",  # es
        "senha",  # pt
        "wachtwoord",  # nl
        "losenord",  # sv
        "lösenord",  # sv
        "passord",  # no
        "adgangskode",  # da
        "salasana",  # fi
        "haslo",  # pl
        "hasło",  # pl
        "heslo",  # cs, sk
        "jelszo",  # hu
        "jelszó",  # hu
        "parola",  # it, ro, tr
        "sifre",  # tr
        "şifre",  # tr
        "lozinka",  # hr, sr
        "geslo",  # sl
        "parol",  # ru (transliterated)
        "пароль",  # ru, uk
        "密码",  # zh
        "口令",  # zh
        "パスワード",  # ja
        "비밀번호",  # ko
    }
)

# `<qualifier> key` is a secret name: api key, private key, ...
KEY_QUALIFIERS: frozenset[str] = frozenset(
    {
        "api",
        "private",
        "secret",
        "access",
        "account",
        "signing",
        "encryption",
        "master",
        "session",
        "app",
        "auth",
        "client",
        "shared",
        "consumer",
        "license",
        "service",
        "subscription",
        "device",
        "deploy",
        "webhook",
        "sas",
        "storage",
        "admin",
        "root",
        "hmac",
        "jwt",
        "crypt",
    }
)

# glued endings of one-word names: `dbpassword`, `rootpwd`, `githubtoken`
_GLUED_ENDINGS = ("password", "passwd", "passwort", "pwd", "secret", "token", "apikey", "secretkey")

# names that are secret as a whole (the key says what its base64 value holds)
WHOLE_NAMES: frozenset[str] = frozenset(
    {".dockerconfigjson", ".dockercfg", "_authtoken", "_auth", "_password"}
)

# the start of any secret name: what the scanner looks for first (a name holds one of these). A trie of
# character classes rather than a flat (?i) alternation: that was 4x slower on ordinary text
_ANCHOR_WORDS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "auth",
    "cred",
    "key",
    "dsn",
    "sessionid",
    "mdp",
    "contrase",
    "clave",
    "salt",
    "signature",
    "senha",
    "wachtwoord",
    "losenord",
    "salasana",
    "haslo",
    "heslo",
    "jelsz",
    "parol",
    "sifre",
    "lozinka",
    "geslo",
)
_ANCHOR_OTHER = ("lösenord", "hasło", "şifre", "пароль", "密码", "口令", "パスワード", "비밀번호")


def _either_case(c: str) -> str:
    return f"[{c}{c.upper()}]" if c.isalpha() else re.escape(c)


ANCHOR = re.compile(trie(list(_ANCHOR_WORDS), _either_case) + r"|[pP][wW]\b")
_OTHER_SPELLINGS = tuple(dict.fromkeys(s for w in _ANCHOR_OTHER for s in (w, w.capitalize(), w.upper())))
ANCHOR_OTHER = re.compile("|".join(_OTHER_SPELLINGS))


def anchors(text: str) -> list[re.Match[str]]:
    """Every anchor hit in text order (the non-ASCII names only where one of them is in the text)."""
    hits = list(ANCHOR.finditer(text))
    if not text.isascii() and any(s in text for s in _OTHER_SPELLINGS):
        hits.extend(ANCHOR_OTHER.finditer(text))
        hits.sort(key=lambda m: m.start())
    return hits


_CAMEL = re.compile(r"[A-Z]?[a-z\u00c0-\uffff]+|[A-Z]+(?![a-z])|\d+")
_SPLIT = re.compile(r"[^0-9A-Za-z\u00c0-\uffff]+")


def words(name: str) -> list[str]:
    """`spring.datasource.dbPassword` -> ['spring', 'datasource', 'db', 'password']."""
    out: list[str] = []
    for part in _SPLIT.split(name):
        if part:
            out.extend(w.lower() for w in _CAMEL.findall(part) or [part])
    return out


def is_secret_name(name: str) -> bool:
    """Whether a key, flag or element named `name` holds a secret (see the module docstring)."""
    if name.lower() in WHOLE_NAMES:
        return True
    parts = words(name)
    if not parts:
        return False
    last = parts[-1]
    if last in SECRET_WORDS:
        return not (last == "pass" and len(parts) > 1 and parts[-2] in _PASS_NOT_SECRET)
    if last == "key":
        return len(parts) > 1 and parts[-2] in KEY_QUALIFIERS
    if last == "pat":  # a personal access token: `GITHUB_PAT`, `ado_pat` (`pat` alone is a pattern)
        return len(parts) > 1
    glued = "".join(parts)  # `dbPassWord`, `rootpwd`, `githubtoken`
    return len(glued) > 6 and glued.endswith(_GLUED_ENDINGS)


_PASS_NOT_SECRET = frozenset({"by", "first", "second", "single", "multi", "sub", "render", "test", "tests"})


def kind_of(name: str) -> str:
    """The placeholder kind for a secret named `name`: password, token, api_key, private_key, ..."""
    parts = words(name)
    last = parts[-1] if parts else ""
    joined = "".join(parts)
    if last == "key" or joined.endswith(("apikey", "secretkey", "privatekey", "accesskey", "authkey")):
        return "private_key" if "private" in parts or joined.endswith("privatekey") else "api_key"
    if "token" in last or last == "sessionid":
        return "token"
    if last in ("auth", "authorization", "_auth"):
        return "auth"
    if last.startswith("cred"):
        return "credentials"
    if last == "dsn":
        return "dsn"
    if "secret" in last or name.lower().startswith(".docker"):
        return "secret"
    return "password"
