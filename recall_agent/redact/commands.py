"""Command lines whose tools take a password in a short flag or a positional argument.

Long flags named like a secret (`--password X`) are found by recall_agent.redact.structure; this table is
for the conventions each tool has of its own: `mysql -pVALUE` (glued: `-p VALUE` would name a database),
`sshpass -p VALUE`, `curl -u user:VALUE`, `smbclient -U user%VALUE`, `redis-cli -a VALUE`, `htpasswd -b
file user VALUE`, `aws configure set aws_secret_access_key VALUE`, ...

A tool's words are searched first; its flags only in the rest of that command (to the end of the line or
the next `|`, `;`, `&`), so every scan stays linear.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from recall_agent.redact.finding import Finding
from recall_agent.redact.values import PLACEHOLDER_MARK
from recall_agent.redact.vocabulary import is_secret_name, kind_of

_SEGMENT_MAX = 2000


@dataclass(frozen=True)
class Convention:
    tools: tuple[str, ...]
    flags: tuple[str, ...]  # short flags that take the password
    glued: bool = True  # `-pVALUE`
    spaced: bool = True  # `-p VALUE`
    after: str = ""  # the subcommand that must come first (`login`)
    split: str = ""  # the value is `user<split>password`: only what follows the split is secret


CONVENTIONS: tuple[Convention, ...] = (
    Convention(
        (
            "mysql",
            "mysqldump",
            "mysqladmin",
            "mysqlimport",
            "mysqlshow",
            "mysqlcheck",
            "mysqlslap",
            "mariadb",
            "mariadb-dump",
            "mariadb-admin",
            "mysqlpump",
            "mysqlsh",
        ),
        ("-p",),
        spaced=False,
    ),
    Convention(("sshpass",), ("-p",)),
    Convention(("redis-cli", "keydb-cli", "valkey-cli"), ("-a",)),
    Convention(("sqlcmd", "bcp", "osql", "isql"), ("-P",)),
    Convention(
        (
            "mongo",
            "mongosh",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
            "mongostat",
            "mongotop",
        ),
        ("-p",),
    ),
    Convention(("zip", "zipcloak"), ("-P",), glued=False),
    Convention(("7z", "7za", "7zr", "unrar", "rar"), ("-p",), spaced=False),
    Convention(
        (
            "ldapsearch",
            "ldapadd",
            "ldapmodify",
            "ldapdelete",
            "ldapwhoami",
            "ldappasswd",
            "ldapcompare",
            "ldapmodrdn",
            "ldapexop",
        ),
        ("-w",),
    ),
    Convention(("ssh-keygen",), ("-N", "-P"), glued=False),
    Convention(
        (
            "docker",
            "podman",
            "buildah",
            "skopeo",
            "helm",
            "nerdctl",
            "oras",
            "crane",
            "az",
            "cf",
            "oc",
            "argocd",
            "regctl",
            "finch",
            "singularity",
            "apptainer",
            "twine",
            "heroku",
        ),
        ("-p",),
        after="login",
    ),
    Convention(("helm",), ("-p",), after="add"),
    Convention(("curl",), ("-u", "--user", "-U", "--proxy-user"), split=":"),
    Convention(("wget",), ("--user",), split=":"),
    Convention(
        ("smbclient", "rpcclient", "smbmap", "smbcacls", "mount.cifs", "net"), ("-U", "--user"), split="%"
    ),
    Convention(("openssl",), ("-k", "-pass", "-passin", "-passout"), glued=False),
    Convention(
        ("keytool", "jarsigner"), ("-storepass", "-keypass", "-srcstorepass", "-deststorepass"), glued=False
    ),
    Convention(("pg_dump", "pg_restore", "psql", "pgbench"), ("--password",), glued=False),
)

_SEGMENT_END = re.compile(r"[\n|;&]")
_VALUE = re.compile(r"(\"[^\"\n]{1,500}\"|'[^'\n]{1,500}'|[^\s\"'|;&<>]{1,500})")
_TOOLS: dict[str, list[Convention]] = {}
for _c in CONVENTIONS:
    for _tool in _c.tools:
        _TOOLS.setdefault(_tool, []).append(_c)
_HTPASSWD = re.compile(r"\bhtpasswd[ \t]+-\w*b\w*[ \t]+(?:-\S+[ \t]+)*\S+[ \t]+\S+[ \t]+([^\s\"']{1,500})")
_CONFIG_SET = re.compile(r"\b(?:configure|config)[ \t]+set[ \t]+(?:--\S+[ \t]+)*([\w.:/@-]{1,120})[ \t]+")
_RABBIT = re.compile(r"\brabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+\S+[ \t]+([^\s\"']{1,500})")
_OPENSSL_PASS = re.compile(r"(?<![\w-])pass:([^\s\"']{1,500})")
_VAULT_LOGIN = re.compile(r"\bvault[ \t]+login[ \t]+(?!-)([^\s=\"']{8,500})(?=\s|$)")


@functools.cache
def _tool_words(present: frozenset[str]) -> re.Pattern[str]:
    """The tool-word regex for the tools whose names are in the text (most texts name none or one)."""
    names = sorted((re.escape(t) for t in present), key=len, reverse=True)
    return re.compile(r"(?<![\w.-])(" + "|".join(names) + r")(?![\w.-])")


def find(text: str) -> Iterator[Finding]:
    present = frozenset(t for t in _TOOLS if t in text)
    for m in _tool_words(present).finditer(text) if present else ():
        end = _SEGMENT_END.search(text, m.end(), m.end() + _SEGMENT_MAX)
        segment_end = end.start() if end else min(len(text), m.end() + _SEGMENT_MAX)
        for convention in _TOOLS[m.group(1)]:
            yield from _flags(text, m.end(), segment_end, convention, m.group(1))
    for rule, pattern in (("command:htpasswd", _HTPASSWD), ("command:rabbitmqctl", _RABBIT)):
        if rule.split(":")[1] not in text:
            continue
        for m in pattern.finditer(text):
            if _literal(m.group(1)):
                yield Finding(m.start(1), m.end(1), "password", rule)
    for m in _OPENSSL_PASS.finditer(text) if "pass:" in text else ():
        if _literal(m.group(1)):
            yield Finding(m.start(1), m.end(1), "password", "command:openssl")
    for m in _VAULT_LOGIN.finditer(text) if "vault" in text else ():
        if _literal(m.group(1)):
            yield Finding(m.start(1), m.end(1), "token", "command:vault")
    yield from _config_set(text)


def _literal(value: str) -> bool:
    value = value.strip("\"'")
    return len(value) >= 3 and PLACEHOLDER_MARK not in value and not value.startswith(("$", "<", "{{", "%"))


def _flags(text: str, start: int, end: int, c: Convention, tool: str) -> Iterator[Finding]:
    if c.after:
        sub = re.search(rf"(?<![\w-]){re.escape(c.after)}(?![\w-])", text[start:end])
        if not sub:
            return
        start += sub.end()
    pos = start
    while pos < end:
        space = text.find(" ", pos, end)
        tab = text.find("\t", pos, end)
        gaps = [g for g in (space, tab) if g != -1]
        if not gaps:
            return
        pos = min(gaps) + 1
        for flag in c.flags:
            if not text.startswith(flag, pos):
                continue
            after = pos + len(flag)
            nxt = text[after : after + 1]
            if nxt in (" ", "\t") and c.spaced:
                value_at = after + 1
                while value_at < end and text[value_at] in " \t":
                    value_at += 1
            elif nxt == "=" and flag.startswith("--"):
                value_at = after + 1
            elif nxt and nxt not in " \t=" and c.glued and len(flag) == 2:
                value_at = after
            else:
                continue
            yield from _value(text, value_at, end, c, tool)
            break


def _value(text: str, at: int, end: int, c: Convention, tool: str) -> Iterator[Finding]:
    m = _VALUE.match(text, at, end)
    if not m or m.group(1).startswith("-"):
        return
    vstart, vend = m.start(1), m.end(1)
    if text[vstart] in "\"'":
        vstart, vend = vstart + 1, vend - 1
    if c.split:
        cut = text.find(c.split, vstart, vend)
        if cut == -1:
            return  # `curl -u user`: the tool asks for the password
        vstart = cut + 1
    if vend > vstart and _literal(text[vstart:vend]):
        yield Finding(vstart, vend, "password", f"command:{tool}")


def _config_set(text: str) -> Iterator[Finding]:
    """`aws configure set aws_secret_access_key VALUE`, `npm config set _authToken VALUE`."""
    if "config" not in text:
        return
    for m in _CONFIG_SET.finditer(text):
        key = m.group(1).rsplit(":", 1)[-1]
        if not is_secret_name(key):
            continue
        value = _VALUE.match(text, m.end())
        if value and _literal(value.group(1)):
            s, e = value.start(1), value.end(1)
            if text[s] in "\"'":
                s, e = s + 1, e - 1
            yield Finding(s, e, kind_of(key), "command:config-set")
