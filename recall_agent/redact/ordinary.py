"""Shapes of ordinary data that no guess about randomness may touch: file paths, package and module names,
test ids, versions, digests that name commits or content, UUIDs, snake/kebab/camel-case identifiers.

A structural rule or a known token format may still redact such a value (`password: src/app.py` is a
password); only the last-resort entropy judge (recall_agent.redact.entropy) is bound by these shapes.
"""

from __future__ import annotations

import re

_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DIGEST_PREFIX = re.compile(r"(?i)(?:sha1|sha224|sha256|sha384|sha512|md5|h1|blake2b?|xxh\d*)[-_:=~]")
_VERSION = re.compile(r"(?<![\dv.])v?\d++(?:\.\d++)+(?:[-+._~][0-9A-Za-z]++)*+")
_DESCRIBED = re.compile(r"(?:g|dev\d*g?)[0-9a-f]{7,40}")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}")
# one piece of a name: a word in one case (or Capitalized), or a number
_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+|\d+")
_PIECE_SPLIT = re.compile(r"[-_.+~@=,]+")
# the file name or path segment's pieces: "scikit-learn__scikit-learn-15512_preds.json"
_NAME_CHARS = re.compile(r"[\w.+~@=,-]+")


def is_hex_like(token: str) -> bool:
    """SHAs, digests, UUIDs, addresses: hex digits (and dashes) only, or a labelled digest."""
    core = token.replace("-", "")
    return bool(_HEX.fullmatch(core)) or bool(_UUID.search(token)) or bool(_DIGEST_PREFIX.match(token))


def is_wordy(segment: str) -> bool:
    """A name made of words and numbers: `scikit-learn__scikit-learn-15512_preds.json`,
    `test_user_registration`, `UserProfileSettingsPanel`, `v0.0.0-20220729232143-a41b82acbcb1`.
    Random text fails: a run of mixed case (`wJalrXUtnFEMI`) is not a word."""
    if not segment or not _NAME_CHARS.fullmatch(segment):
        return False
    for part in _PIECE_SPLIT.split(segment):
        if not part:
            continue
        if (is_hex_like(part) and (len(part) >= 7 or part.isdigit())) or _DESCRIBED.fullmatch(part):
            continue  # a short SHA, a digest, a date stamp, `g7b77fc086` of `git describe` inside a name
        pieces = _PIECE.findall(part)
        if "".join(pieces) != part:
            return False
        # camelCase words are 3+ letters each ("UserProfile"); random mixed case breaks into 1-2 letter runs
        letters = [p for p in pieces if not p.isdigit()]
        short = sum(len(p) <= 2 for p in letters)
        if letters and short * 2 > len(letters) and len(letters) > 2:
            return False
    return True


def is_path(token: str) -> bool:
    """A file path or a path-like name: segments of words joined by `/` (or `\\`), or a file name with an
    extension. `output/scikit-learn__scikit-learn-15512_preds.json`, `/usr/lib/python3/dist-packages`,
    `src/app.py:42`, `C:\\Users\\dev\\app.py`."""
    core = token.rstrip(":0123456789") or token
    if "/" not in core and "\\" not in core:
        return bool(_EXTENSION.search(core)) and is_wordy(core) and "." in core
    segments = [s for s in re.split(r"[/\\]+", core) if s and s not in (".", "..", "~")]
    if not segments:
        return True
    drive = re.fullmatch(r"[A-Za-z]:", segments[0])
    return all(is_wordy(s) for s in segments[1 if drive else 0 :])


def is_version(token: str) -> bool:
    return bool(_VERSION.fullmatch(token))


def is_dotted_name(token: str) -> bool:
    """`recall_agent.hooks.handlers`, `org.apache.kafka.common.KafkaException`, `tests/test_x.py::test_y`."""
    if "::" in token:
        return all(is_path(p) or is_wordy(p) for p in token.split("::") if p)
    parts = token.split(".")
    return len(parts) >= 2 and all(p.isidentifier() and is_wordy(p) for p in parts)


def is_ordinary(token: str) -> bool:
    """Whether `token` has the shape of ordinary data (the module docstring lists them)."""
    token = token.strip("'\"`()[]{}<>,;")
    if not token:
        return True
    return (
        is_hex_like(token) or is_version(token) or is_path(token) or is_dotted_name(token) or is_wordy(token)
    )
