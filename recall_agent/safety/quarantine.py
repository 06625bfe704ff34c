"""Is a learning's text instruction-like or dangerous? The quarantine decision.

A learning is advice about code. Text that addresses the agent ("ignore previous instructions", "do not tell
the user", "you must now") or whose fix pipes a download into a shell, disables checks, writes credential
files or sends the environment to a URL is kept out of automatic injection until a person approves it
(`recall review --quarantined`, the review page). `/recall` still shows it, marked.

The decision is a logistic model over the features below (each a linear-time pattern with the phrase a
person reads as the reason), fitted by `bench/fit_quarantine.py` on public prompt-injection corpora and the
learnings recall captured from real sessions (split by project; `bench/bench_injection.py` reports the held-out
half). Its weights are data: `quarantine_weights.json`. Standard library only; the weights are read on the
first call (the hook reaches this only when it is about to inject something).
"""

from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

WEIGHTS = Path(__file__).with_name("quarantine_weights.json")
TEXT_MAX = 8000  # characters looked at (a stored resolution is at most 2000, a fix command 1000)

_DOWNLOAD = r"(?:\bcurl\b|\bwget\b|\bfetch\b|\biwr\b|Invoke-WebRequest|Invoke-RestMethod|\birm\b)"
_SHELL = r"(?:sudo\s{1,5}(?:-\S{1,10}\s{1,5}){0,3})?(?:ba|z|k|da|c|tc|fi)?sh\b|\bpython[0-9.]{0,4}\b|\bperl\b|\bruby\b|\bnode\b|\biex\b|Invoke-Expression"

# name -> (pattern, the reason a person reads). Every pattern is bounded (linear time: tests/test_regex_safety).
FEATURES: dict[str, tuple[re.Pattern[str], str]] = {
    "override": (
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|"
            r"preceding|former|original|system|all|any|your|the)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules|"
            r"directions|guidelines|directives|policies|guardrails|context|messages|commands|restrictions)\b",
            re.IGNORECASE,
        ),
        "tells the agent to ignore its instructions",
    ),
    "conceal": (
        re.compile(
            r"\b(?:do\s{1,3}not|don'?t|never|without)\s{1,3}(?:tell|telling|mention|mentioning|inform|informing|"
            r"reveal|revealing|alert|alerting|notify|notifying|say|saying|report|reporting|show|showing|ask|"
            r"asking|disclose|disclosing)\b[^.\n]{0,40}?\b(?:user|human|anyone|operator|developer|them|"
            r"anybody|owner)\b",
            re.IGNORECASE,
        ),
        "tells the agent to hide something from the user",
    ),
    "new_orders": (
        re.compile(
            r"\byou\s{1,3}(?:must|should|will|shall|need\s{1,3}to|have\s{1,3}to|are\s{1,3}to|are\s{1,3}required\s{1,3}to)"
            r"\s{1,3}(?:now|immediately|always|first|instead|from\s{1,3}now)\b|\bfrom\s{1,3}now\s{1,3}on\b|"
            r"\bnew\s{1,3}(?:instructions?|task|role|goal|directive|rules)\b|"
            r"\byour\s{1,3}(?:new\s{1,3})?(?:task|role|goal|job|purpose|instructions)\s{1,3}(?:is|are|now)\b",
            re.IGNORECASE,
        ),
        "gives the agent new orders",
    ),
    "persona": (
        re.compile(
            r"\byou\s{1,3}are\s{1,3}(?:now|going\s{1,3}to\s{1,3}(?:act|pretend)|no\s{1,3}longer|free|DAN|an?\s{1,3}"
            r"(?:AI|assistant|language\s{1,3}model|unrestricted|unfiltered|evil|hacker))\b|\bact\s{1,3}as\b|"
            r"\bpretend\s{1,3}(?:to\s{1,3}be|you|that)\b|\brole-?\s?play|\bdeveloper\s{1,3}mode\b|\bjailbr[eo]ak|"
            r"\bDAN\b|\bAIM\b|\bunfiltered\b|\bno\s{1,3}(?:ethical|moral)\b|\bstay\s{1,3}in\s{1,3}character\b",
            re.IGNORECASE,
        ),
        "tells the agent to take another role",
    ),
    "authority": (
        re.compile(
            r"\b(?:IMPORTANT|URGENT|ATTENTION|WARNING|NOTICE|CRITICAL)\b\s{0,3}[:!]|\bSYSTEM\s{1,3}(?:NOTICE|MESSAGE|"
            r"OVERRIDE|PROMPT|UPDATE|ALERT)\b|\bsystem\s{1,3}(?:prompt|message|instructions?)\b|\bADMIN(?:ISTRATOR)?\b"
            r"\s{0,3}[:!]|\bbefore\s{1,3}(?:anything|doing\s{1,3}anything)\s{1,3}else\b|\bfirst\s{1,3}of\s{1,3}all\b",
            re.IGNORECASE,
        ),
        "claims authority over the agent",
    ),
    "prompt_leak": (
        re.compile(
            r"\b(?:print|reveal|show|repeat|output|display|tell\s{1,3}me|what\s{1,3}(?:is|are|were))\b[^.\n]{0,30}?"
            r"\b(?:your|the|initial|hidden)\s{1,3}(?:system\s{1,3})?(?:prompt|instructions|rules|guidelines)\b",
            re.IGNORECASE,
        ),
        "asks for the agent's instructions",
    ),
    "addressing": (
        re.compile(r"\b(?:you|your|yourself)\b", re.IGNORECASE),
        "speaks to the agent",
    ),
    "response_talk": (
        re.compile(
            r"\b(?:your|the|my)\s{1,3}(?:response|reply|answer|output|answers|responses|replies)\b|\bin\s{1,3}your"
            r"\s{1,3}(?:response|reply|answer|code|implementation|script|message)\b",
            re.IGNORECASE,
        ),
        "tells the agent what to answer",
    ),
    "insert_directive": (
        re.compile(
            r"\b(?:include|add|insert|mention|integrate|incorporate|append|embed|introduce|ensure|employ|use|put)\b"
            r"[^.\n]{0,80}?\b(?:in|into|to|within)\s{1,3}(?:your|the)\s{1,3}(?:response|reply|answer|output|"
            r"implementation|message|algorithm|solution)\b",
            re.IGNORECASE,
        ),
        "tells the agent to slip something into its work",
    ),
    "model_talk": (
        re.compile(
            r"\b(?:ChatGPT|GPT-?\d|OpenAI|chatbot|LLM|language\s{1,3}model|AI\s{1,3}(?:model|assistant|system)|"
            r"as\s{1,3}an\s{1,3}AI|artificial\s{1,3}intelligence)\b",
            re.IGNORECASE,
        ),
        "talks about the model itself",
    ),
    "rules_talk": (
        re.compile(
            r"\b(?:content\s{1,3}polic\w{0,3}|restrictions?|censor\w{0,6}|moral\w{0,4}|ethic\w{0,4}|offensive|"
            r"illegal|unethical|explicit|harmful|inappropriate|profanity|swear\w{0,3})\b",
            re.IGNORECASE,
        ),
        "talks about rules and limits",
    ),
    "fiction": (
        re.compile(
            r"\b(?:character|persona|fictional|hypothetical\w{0,3}|story|scenario|role|imagine|simulat\w{1,5}|"
            r"game)\b",
            re.IGNORECASE,
        ),
        "sets up a role-play",
    ),
    "respond_verbs": (
        re.compile(
            r"\b(?:respond|reply|answer)\s{1,3}(?:as|with|in|only|to\s{1,3}(?:me|every|all|my))\b|\b(?:always|never)"
            r"\s{1,3}(?:respond|reply|answer|refuse|say|include|mention)\b|\b(?:what|who|how)\s{1,3}(?:are|were|do|did)"
            r"\s{1,3}you\b|\bcan\s{1,3}you\b|\bI\s{1,3}want\s{1,3}you\b",
            re.IGNORECASE,
        ),
        "asks the agent to answer in some way",
    ),
    "tag": (
        re.compile(
            r"</?(?:system|user|assistant|human|instructions?|system-reminder|im_start|im_end|s|context|tool)\b|"
            r"<\|[a-z_]{1,20}\|>|\[/?INST\]|<<SYS>>",
            re.IGNORECASE,
        ),
        "holds chat framing tags",
    ),
    "role_marker": (
        re.compile(r"(?:^|\n|\s{2})(?:Human|Assistant|System|User|AI|ChatGPT|GPT)\s{0,3}:", re.IGNORECASE),
        "holds chat role markers",
    ),
    "pipe_to_shell": (
        re.compile(
            _DOWNLOAD
            + r"[^|\n;&]{0,300}\|\s{0,5}(?:"
            + _SHELL
            + r")|(?:"
            + _SHELL
            + r")\s{0,5}(?:-c\s{0,5})?"
            r"[\"']?\s{0,3}(?:<\(|\$\()\s{0,3}"
            + _DOWNLOAD
            + r"|\beval\b[^\n]{0,10}\$\(\s{0,3}"
            + _DOWNLOAD
            + r"|\biex\b\s{0,3}\(\s{0,3}(?:iwr|irm|New-Object)",
            re.IGNORECASE,
        ),
        "pipes a download into a shell",
    ),
    "encoded_exec": (
        re.compile(
            r"base64\s{1,3}(?:-d|--decode|-D)\b[^\n]{0,80}\|\s{0,5}(?:"
            + _SHELL
            + r")|\b(?:exec|eval)\s{0,3}\("
            r"[^\n]{0,40}(?:b64decode|base64|decode\(|fromCharCode|compile\()|\batob\s{0,3}\(",
            re.IGNORECASE,
        ),
        "runs encoded code",
    ),
    "no_verify": (
        re.compile(
            r"--no-verify\b|--no-gpg-sign\b|core\.hooksPath\s{0,3}=?\s{0,3}/dev/null|GIT_SSL_NO_VERIFY|"
            r"--insecure\b|--trusted-host\b|\bverify\s{0,3}=\s{0,3}False\b|NODE_TLS_REJECT_UNAUTHORIZED\s{0,3}=\s{0,3}"
            r"['\"]?0|\bsslVerify\s{0,3}(?:=\s{0,3})?false\b|--disable-(?:security|checks?|verification)\b|"
            r"\bset\s{1,3}\+e\b[^\n]{0,40}--force|--force-with-lease\s{1,3}origin\s{1,3}(?:main|master)|"
            r"push\s{1,3}(?:-f|--force)\s{1,3}\S{1,40}\s{1,3}(?:main|master)\b",
            re.IGNORECASE,
        ),
        "disables a check",
    ),
    "credential_file": (
        re.compile(
            r"(?:>>?|\btee\b|\bcp\b|\bmv\b|\bwrite_text\b|\bopen\s{0,3}\()[^\n]{0,120}?(?:~|\$HOME|/root|/home/\w{1,32})?/?"
            r"(?:\.ssh/(?:authorized_keys|id_[a-z0-9]{1,10}|config)|\.aws/credentials|\.netrc|\.npmrc|\.pypirc|"
            r"\.git-credentials|\.docker/config\.json|\.kube/config|\.gnupg)|/etc/(?:passwd|shadow|sudoers|hosts)\b|"
            r"\bcrontab\s{1,3}-|\.(?:bashrc|zshrc|profile|bash_profile)\b",
            re.IGNORECASE,
        ),
        "writes a credential or system file",
    ),
    "secret_read": (
        re.compile(
            r"(?:\.ssh/id_[a-z0-9]{1,10}|\.aws/credentials|/etc/shadow|/etc/passwd|\.git-credentials|\.netrc|"
            r"private[_ ]key|keychain|wallet\.dat|cookies?\.sqlite|Login\s{1,3}Data|browser\s{1,3}(?:history|cookies)|"
            r"keylog|keystroke|screenshot|clipboard)",
            re.IGNORECASE,
        ),
        "reads secrets or watches the user",
    ),
    "env_exfil": (
        re.compile(
            r"(?:\benv\b|\bprintenv\b|\$\(env\)|os\.environ|process\.env|getenv|\$\{?[A-Z_]{0,30}(?:TOKEN|KEY|SECRET|"
            r"PASSWORD|PASS|CREDENTIALS?)\b)[^\n]{0,160}?(?:\bcurl\b|\bwget\b|https?://|\bnc\b|requests\.(?:post|get)|"
            r"urlopen|fetch\s{0,3}\()|(?:\bcurl\b|\bwget\b|requests\.post)[^\n]{0,160}?(?:\$\(env\)|printenv|"
            r"os\.environ|process\.env|\$\{?[A-Z_]{0,30}(?:TOKEN|KEY|SECRET|PASSWORD)\b)",
            re.IGNORECASE,
        ),
        "sends the environment or a secret to a URL",
    ),
    "upload": (
        re.compile(
            r"\b(?:requests\.post|urlopen|curl\s{1,3}[^\n]{0,60}(?:-d|--data|-F|--upload-file|-T)\b|sendall|send\(|"
            r"smtplib|socket\.socket|socket\.connect|\.connect\(\s{0,3}\()|\b(?:exfiltrat|upload(?:ing|s)?\s{1,3}"
            r"(?:it|them|the\s{1,3}(?:file|data|keys?|secrets?|contents?))|send(?:ing)?\s{1,3}(?:it|them|the\s{1,3}"
            r"(?:file|data|keys?|secrets?|contents?))\s{1,3}to)",
            re.IGNORECASE,
        ),
        "sends data somewhere",
    ),
    "remote_shell": (
        re.compile(
            r"/dev/tcp/|\bnc\s{1,3}(?:-\w{1,4}\s{1,3}){0,3}-e\b|\bncat\b|\bsocat\b|\bbash\s{1,3}-i\b|reverse\s{1,3}shell|"
            r"\bmkfifo\b|\bmeterpreter\b|\bbackdoor\b|\brootkit\b|\bbotnet\b|\bmalware\b|\bransom|\bminer\b|"
            r"\bcryptojack|\bxmrig\b|\bpersistence\b",
            re.IGNORECASE,
        ),
        "opens a remote shell or plants malware",
    ),
    "destructive": (
        re.compile(
            r"\brm\s{1,3}-[rfRF]{1,3}\s{1,3}(?:--no-preserve-root\s{1,3})?(?:/(?:\s|$|\*)|~|\$HOME|/\*|\*)|\bmkfs\b|"
            r"\bdd\s{1,3}if=|\bchmod\s{1,3}-R\s{1,3}777\s{1,3}/|:\(\)\s{0,3}\{\s{0,3}:\|:&\s{0,3}\};:|"
            r"\bshutdown\b|\breboot\b|\bkillall\b|\biptables\s{1,3}-F|\bformat\s{1,3}c:|\bshred\b|\bdel\s{1,3}/[sfq]|"
            r"\bencrypt(?:s|ing)?\s{1,3}(?:all|every|the\s{1,3}user)|\bdisable\s{1,3}(?:the\s{1,3})?(?:firewall|antivirus|"
            r"defender|network|internet)",
            re.IGNORECASE,
        ),
        "destroys data or the system",
    ),
    "raw_ip_url": (
        re.compile(
            r"(?:https?|ftp)://(?:\d{1,3}\.){3}\d{1,3}|https?://[^\s/]{1,80}\.(?:example|ngrok|tk|xyz|top|ru|"
            r"onion)\b|\battacker\b|\bevil\b|\bvictim\b",
            re.IGNORECASE,
        ),
        "names an attacker's or a bare-address URL",
    ),
}

# The fixes the issue names as dangerous whatever the text around them (a download piped into a shell, checks
# disabled, credential files written, the environment sent to a URL, a reverse shell): public corpora hold
# too few of them to fit a weight, so they are policy: any one quarantines. Their share of real learnings
# is measured (bench/bench_injection.py) like the model's.
POLICY = ("pipe_to_shell", "no_verify", "credential_file", "env_exfil", "remote_shell")

# what the feature vector holds per name: 1/0, except `addressing` (how much of the text speaks to the agent)
_DENSITY = {"addressing"}


# the words of the text, hashed into BUCKETS (unigrams and bigrams, lower case): the vocabulary of text that
# speaks to a model ("in your response", "stay in character") beside the patterns above
BUCKETS = 1024
_WORD = re.compile(r"[a-z][a-z']{0,30}")


def words(text: str) -> set[int]:
    """The hashed unigrams and bigrams of `text` (bucket numbers)."""
    tokens = _WORD.findall(text[:TEXT_MAX].lower())
    grams = tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]
    return {zlib.crc32(g.encode()) % BUCKETS for g in grams}


@dataclass(frozen=True)
class Verdict:
    quarantined: bool
    score: float  # the model's probability that the text is an attack
    reasons: tuple[str, ...]  # readable, strongest first (empty when not quarantined)


CLEAN = Verdict(False, 0.0, ())


def features(text: str) -> dict[str, float]:
    """The feature vector of `text` (names as in FEATURES)."""
    text = text[:TEXT_MAX]
    words = max(8, len(text.split()))
    out: dict[str, float] = {}
    for name, (pattern, _) in FEATURES.items():
        if name in _DENSITY:
            out[name] = min(1.0, 8 * len(pattern.findall(text)) / words)
        else:
            out[name] = 1.0 if pattern.search(text) else 0.0
    return out


@cache
def model() -> dict:
    """The fitted weights (quarantine_weights.json): names, weights, bias, threshold."""
    return json.loads(WEIGHTS.read_text(encoding="utf-8"))


def score(values: dict[str, float], buckets: set[int] | None = None) -> float:
    m = model()
    z = m["bias"] + sum(w * values.get(n, 0.0) for n, w in zip(m["features"], m["weights"], strict=True))
    table = m.get("words") or {}
    if buckets:  # a bag of words counts as much for a line as for a page: scaled by 1/sqrt(its size)
        z += sum(table.get(str(b), 0.0) for b in buckets) / math.sqrt(len(buckets))
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, z))))


def assess(*texts: str | None) -> Verdict:
    """The decision over the texts of one learning (its resolution, its fix's commands and changes)."""
    text = "\n".join(t for t in texts if t)
    if not text.strip():
        return CLEAN
    values = features(text)
    p = score(values, words(text))
    m = model()
    policy = [FEATURES[n][1] for n in POLICY if values[n]]
    if p < m["threshold"] and not policy:
        return Verdict(False, p, ())
    weights = dict(zip(m["features"], m["weights"], strict=True))
    fired = sorted(
        (n for n, v in values.items() if v > 0 and weights.get(n, 0) > 0 and n not in POLICY),
        key=lambda n: -weights[n] * values[n],
    )
    reasons = policy + ([FEATURES[n][1] for n in fired] if p >= m["threshold"] else [])
    return Verdict(True, p, tuple(reasons[:3]) or ("reads like instructions",))


def texts_of(resolution: str, fix: dict | None) -> list[str]:
    """What of a learning is judged: its resolution and what its fix evidence would have someone run or write."""
    out = [resolution]
    if isinstance(fix, dict):
        command = fix.get("command")
        if isinstance(command, dict):
            out.append(str(command.get("after") or ""))
        out += [str(f.get("change") or "") for f in fix.get("files") or [] if isinstance(f, dict)]
    return out
