"""One secret found in a text: where it is, what kind it is, and which rule found it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    start: int
    end: int
    kind: str  # the placeholder's kind: password, token, api_key, aws_access_key, ...
    rule: (
        str  # the rule that found it: "key-value", "yaml-block", "command:mysql", "gitleaks:github-pat", ...
    )
