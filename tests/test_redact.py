"""recall_agent.redact: a corpus of secret formats (each must vanish) and ordinary error text (must survive)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recall_agent.redact import looks_random, redact, redact_obj

# Fake credentials shaped like the real formats (none of them valid anywhere).
B62 = "Zq8vT3xLm2Pw9RkY4nHs7Jd1Fg6Cb5Ae"  # 32 chars of base62 noise
HEX64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
HEX32 = HEX64[:32]
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x9" + B62 + "\nq1w2e3r4t5y6" + B62 + "\n"
    "-----END RSA PRIVATE KEY-----"
)

# (case id, kind in the placeholder, text containing the secret, the secret itself)
SECRETS: list[tuple[str, str, str, str]] = [
    (
        "aws-akid",
        "aws_access_key",
        "botocore error for key AKIAIOSFODNN7EXAMPLE in us-east-1",
        "AKIAIOSFODNN7EXAMPLE",
    ),
    ("aws-asia", "aws_access_key", "creds: ASIAY34FZKBOKMUTVV7A expired", "ASIAY34FZKBOKMUTVV7A"),
    (
        "aws-secret",
        "secret",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("github-pat", "github_token", "remote: ghp_" + B62 + "abcd is invalid", "ghp_" + B62 + "abcd"),
    ("github-oauth", "github_token", "token gho_" + B62 + "wxyz", "gho_" + B62 + "wxyz"),
    (
        "github-fine",
        "github_token",
        "GH_TOKEN github_pat_11ABCDEFG0" + B62 + "_" + B62,
        "github_pat_11ABCDEFG0" + B62 + "_" + B62,
    ),
    ("gitlab-pat", "gitlab_token", "glpat-x7Yz9AbCdEfGhIjKlMnO rejected", "glpat-x7Yz9AbCdEfGhIjKlMnO"),
    ("gitlab-runner", "gitlab_token", "runner GR1348941" + B62, "GR1348941" + B62),
    (
        "slack-bot",
        "slack_token",
        "slack: xoxb-1234567890-0987654321-" + B62[:24],
        "xoxb-1234567890-0987654321-",
    ),
    ("slack-user", "slack_token", "xoxp-1234567890-1234567890-1234567890-" + HEX32, HEX32),
    (
        "slack-webhook",
        "slack_webhook",
        "POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX failed",
        "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    ),
    (
        "stripe-live",
        "stripe_key",
        "stripe.error.AuthenticationError: sk_live_" + B62[:24],
        "sk_live_" + B62[:24],
    ),
    ("stripe-test-rk", "stripe_key", "key rk_test_" + B62[:26], "rk_test_" + B62[:26]),
    ("stripe-webhook", "stripe_key", "whsec_" + B62, "whsec_" + B62),
    ("openai-proj", "openai_key", "Incorrect API key provided: sk-proj-" + B62 + B62, "sk-proj-" + B62),
    ("openai-legacy", "openai_key", "sk-" + B62[:20] + "T3BlbkFJ" + B62[:20], "T3BlbkFJ"),
    ("openai-plain", "openai_key", "OPENAI key sk-" + B62 + "QRST was revoked", "sk-" + B62),
    ("anthropic", "anthropic_key", "x-api-key sk-ant-api03-" + B62 + B62 + "-AA", "sk-ant-api03-" + B62),
    (
        "google-api",
        "google_api_key",
        "?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=1",
        "AIzaSyD-9tSrke72Pou",
    ),
    ("google-oauth", "google_oauth_token", "ya29.a0AfH6SMBx" + B62, "ya29.a0AfH6SMBx"),
    ("google-client-secret", "google_client_secret", "GOCSPX-" + B62[:28], "GOCSPX-" + B62[:28]),
    ("jwt", "jwt", "401 for token " + JWT, JWT),
    (
        "bearer-header",
        "bearer_token",
        "curl -H 'Authorization: Bearer abc123DEF456ghi789' x",
        "abc123DEF456ghi789",
    ),
    ("basic-header", "basic_auth", "Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
    ("auth-dict", "authorization", "headers={'Authorization': 'tok_9f8e7d6c5b4a'}", "tok_9f8e7d6c5b4a"),
    ("bearer-bare", "bearer_token", "sent Bearer " + B62 + " upstream", B62),
    ("x-api-key", "api_key", "X-Api-Key: q8Zt2Lm9Wx4R", "q8Zt2Lm9Wx4R"),
    ("private-key", "private_key", "key file:\n" + PEM + "\nend", "MIIEpAIBAAKCAQEA"),
    (
        "openssh-key",
        "private_key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA"
        + B62
        + "\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAA",
    ),
    ("pem-truncated", "private_key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI" + B62, "MHcCAQEEI"),
    (
        "postgres-url",
        "password",
        "psycopg.OperationalError: connection to postgresql://app:S3cr3t!pw@db:5432/app failed",
        "S3cr3t!pw",
    ),
    ("mongo-srv", "password", "mongodb+srv://admin:hunter2@cluster0.abc.mongodb.net/test", "hunter2"),
    ("redis-nouser", "password", "redis://:p4ssw0rd@localhost:6379/0", "p4ssw0rd"),
    ("https-basic", "password", "git clone https://bob:tok3n-value@github.com/o/r.git", "tok3n-value"),
    (
        "ado-conn",
        "password",
        "Server=db;Database=app;User Id=sa;Password=Str0ng#Pass;Encrypt=true",
        "Str0ng#Pass",
    ),
    ("jdbc-query", "password", "jdbc:mysql://db/app?user=root&password=rootpw99&ssl=1", "rootpw99"),
    ("env-password", "password", "DB_PASSWORD=correct-horse-battery", "correct-horse-battery"),
    ("env-export", "token", "export GITHUB_TOKEN='abcdefgh12345678'", "abcdefgh12345678"),
    ("env-key", "secret", "STRIPE_KEY=live_9ZxWq8Yt", "live_9ZxWq8Yt"),
    ("env-secret-key", "secret", "DJANGO_SECRET_KEY=django-insecure-s3cr3t", "django-insecure-s3cr3t"),
    ("yaml-password", "password", "database:\n  password: Tr0ub4dor&3\n  user: app", "Tr0ub4dor&3"),
    ("json-secret", "secret", '{"client_secret": "shh-its-a-secret", "id": 4}', "shh-its-a-secret"),
    ("py-kwarg", "api_key", 'Client(api_key="my-very-private-key")', "my-very-private-key"),
    ("url-query-token", "token", "GET /hook?access_token=QWERTY12345&x=1", "QWERTY12345"),
    ("azure-account-key", "api_key", "AccountName=x;AccountKey=" + B62 + "==;EndpointSuffix=core", B62),
    ("high-entropy", "high_entropy", 'SESSION_SALT = "' + B62 + '"', B62),
    ("high-entropy-cfg", "high_entropy", "signature=" + B62 + "Qw", B62),
    ("huggingface", "huggingface_token", "hf_" + B62 + "abcd", "hf_" + B62),
    ("npm", "npm_token", "//registry.npmjs.org/:_authToken=npm_" + B62 + "abcd", "npm_" + B62),
    ("pypi", "pypi_token", "pypi-AgEIcHlwaS5vcmc" + B62 + B62, "pypi-AgEIcHlwaS5vcmc"),
    ("sendgrid", "sendgrid_key", "SG." + B62[:22] + "." + B62 + B62[:11], "SG." + B62[:22]),
    ("digitalocean", "digitalocean_token", "dop_v1_" + HEX64, HEX64),
    ("shopify", "shopify_token", "shpat_" + HEX32, "shpat_" + HEX32),
    ("databricks", "databricks_token", "dapi" + HEX32, "dapi" + HEX32),
    ("docker", "docker_token", "dckr_pat_" + B62[:27], "dckr_pat_"),
    ("twilio", "twilio_key", "SK" + HEX32, "SK" + HEX32),
    ("mailgun", "mailgun_key", "key-" + HEX32, "key-" + HEX32),
    ("telegram", "telegram_bot_token", "bot 123456789:AA" + B62 + "x", "123456789:AA"),
    (
        "discord-webhook",
        "discord_webhook",
        "https://discord.com/api/webhooks/123456/" + B62 + B62,
        B62,
    ),
]


@pytest.mark.parametrize(("case", "kind", "text", "secret"), SECRETS, ids=[s[0] for s in SECRETS])
def test_secret_is_replaced_by_typed_placeholder(case: str, kind: str, text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out, out
    assert "<redacted:" in out, out


def test_corpus_covers_at_least_thirty_formats() -> None:
    assert len({kind for _, kind, _, _ in SECRETS}) >= 30
    assert len(SECRETS) >= 50


def test_surrounding_text_is_kept() -> None:
    out = redact("psycopg.OperationalError: connection to postgresql://app:S3cr3t@db:5432/app failed")
    assert out == (
        "psycopg.OperationalError: connection to postgresql://app:<redacted:password>@db:5432/app failed"
    )
    assert redact("DB_PASSWORD=hunter22\nDEBUG=1") == "DB_PASSWORD=<redacted:password>\nDEBUG=1"


# Ordinary text from errors and code: must come back byte for byte.
ORDINARY: list[str] = [
    'Traceback (most recent call last):\n  File "/home/dev/project/src/app/models.py", line 42, in <module>\n'
    "    from app.db import Session\nImportError: cannot import name 'Session' from 'app.db'",
    "fatal: bad object 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "HEAD is now at 3f2a9c1 Fix flaky test_token_refresh",
    "commit=3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 tree=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    "KeyError: UUID('550e8400-e29b-41d4-a716-446655440000')",
    "request_id=550e8400-e29b-41d4-a716-446655440000 status=500",
    "self = <tests.test_api.TestLogin object at 0x7f3b2c1d0e50>",
    "FAILED tests/test_auth.py::test_token_expiry - AssertionError: assert 401 == 200",
    "E       TypeError: login() missing 1 required positional argument: 'password'",
    "def login(username: str, password: str) -> Token:",
    "    password: str\n    token: Optional[str] = None",
    "password = os.environ['DB_PASSWORD']",
    'token = request.headers.get("Authorization")',
    "api_key = settings.api_key",
    "DATABASE_URL=postgresql://localhost:5432/app",
    "export PATH=/usr/local/bin:/usr/bin:/bin",
    "PYTHONPATH=/home/runner/work/project2/project2/src",
    "max_tokens=1024 temperature=0.2",
    "npm ERR! integrity=sha512-QbOgUp1B7bu1pcXPRzi8hDmTkx87AHKoHdcSEbG7Wkw6yNcbkszh8lr6dMa6aBUd2MHD8I0g1xH5iWOVo7Ov2w==",
    "image digest sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "error[E0425]: cannot find value `secret_key` in this scope\n --> src/main.rs:12:5",
    "src/components/UserProfileSettingsPanel.tsx:14:3 - error TS2322",
    "ModuleNotFoundError: No module named 'cryptography_backend_openssl3'",
    "module=recall_agent.hooks.handlers function=handle_post_tool_use_failure",
    "Authorization required: Bearer authentication failed",
    "ssh: connect to host github.com port 22: Connection refused\ngit@github.com:org/repo.git",
    "https://github.com/org/repo/blob/3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39/src/app.py#L10",
    "http://localhost:8000/api/v1/users?page=2&limit=50",
    "assert response.json() == {'detail': 'Invalid token'}",
    "pytest -k 'test_password_reset and not slow' tests/",
    "class PasswordResetTokenGenerator(BaseTokenGenerator):",
    "KEY_PREFIX = 'cache'",
    "secret_name = 'prod/db'",
    "test_name=test_user_registration_with_valid_email_address",
    'Cargo.lock: checksum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
    "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/pytest-of-dev/pytest-12/test_x0/data.json'",
    'mypy: src/app/service.py:88: error: Argument 1 to "get" has incompatible type "int"; expected "str"',
    '"Sid":"SecurityHubV2ServiceRoleLambdaMetricPermissions"',
    '"Sid":"AnalyzerEC2RequestSgTag"',
    'authorization = request.headers.get("Authorization")',
    "def f(authorization: Optional[str] = None, token: str = ''):",
    "Token: '#d0d0d0',",
    "pem_start = b'-----BEGIN RSA PRIVATE KEY-----'\npem_end = b'-----END RSA PRIVATE KEY-----'",
    'characters = "abcdefghijklmnopqrstuvwxyz0123456789_"',
    "if token == 0x08: secret == self.secret",
    "self.pwd = pwd; credentials=credentials",
    "license 'id': 'bsd-2-clause-pkgconf-disclaimer'",
    "",
]


@pytest.mark.parametrize("text", ORDINARY, ids=[f"ordinary-{i}" for i in range(len(ORDINARY))])
def test_ordinary_text_survives_unchanged(text: str) -> None:
    assert redact(text) == text


def test_redaction_is_idempotent() -> None:
    once = redact("\n".join(s[2] for s in SECRETS))
    assert redact(once) == once


def test_looks_random_separates_noise_from_words() -> None:
    assert looks_random(B62)
    assert not looks_random(HEX64)
    assert not looks_random("test_user_registration_with_valid_email")
    assert not looks_random("550e8400-e29b-41d4-a716-446655440000")


def test_redact_obj_walks_json() -> None:
    data = {"a": ["AKIAIOSFODNN7EXAMPLE", 3], "b": {"c": "DB_PASSWORD=x1y2z3w4"}, "d": None}
    assert redact_obj(data) == {
        "a": ["<redacted:aws_access_key>", 3],
        "b": {"c": "DB_PASSWORD=<redacted:password>"},
        "d": None,
    }


def test_large_input_is_linear_enough() -> None:
    """A 1 MB blob without separators must not trigger catastrophic backtracking (a hook has 2 s)."""
    code = (
        "import time; from recall_agent.redact import redact; t=time.perf_counter(); "
        "redact('a'*500_000 + '=' + 'b1C'*100_000 + ' x_y.z-w'*20_000); print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


# --------------------------------------------------------------------------- the corpus (bench/corpus/secrets)

CORPUS = Path(__file__).resolve().parent.parent / "bench" / "corpus" / "secrets"
KNOWN_TUNING_MISSES = {"sumologic-access-id"}  # 14 characters, no prefix, no keyword near it


def _corpus(name: str) -> list[dict]:
    return [json.loads(line) for line in (CORPUS / name).read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    "case", [c for c in _corpus("secrets.jsonl") if c["split"] == "tuning"], ids=lambda c: c["id"]
)
def test_tuning_corpus_secret_vanishes(case: dict) -> None:
    out = redact(case["text"])
    leaked = [piece for piece in case["secrets"] if piece in out]
    if leaked and case["format"] in KNOWN_TUNING_MISSES:
        pytest.xfail("documented miss (docs/benchmarks.md)")
    assert not leaked, out
    assert "<redacted:" in out


def test_tuning_corpus_ordinary_lines_survive_byte_for_byte() -> None:
    changed = [
        (row["text"], redact(row["text"]))
        for row in _corpus("ordinary.jsonl")
        if row["split"] == "tuning" and redact(row["text"]) != row["text"]
    ]
    assert changed == []


@pytest.mark.parametrize(
    "text, secret",
    [
        ("Error: password=Xk9!pLm2Qw rejected", "Xk9!pLm2Qw"),
        ("config was: PASSWORD=Xk9!pLm2Qw and it failed", "Xk9!pLm2Qw"),
        ("database: password: hunter2x9 user: app", "hunter2x9"),  # a YAML block after the hooks fold it
        ("DB_PASS=Xk9!pLm2Qw", "Xk9!pLm2Qw"),
        ("<password>Xk9!pLm2Qw</password>", "Xk9!pLm2Qw"),
        ('<add key="ApiKey" value="Xk9pLm2Qw7" />', "Xk9pLm2Qw7"),
        ("Uid=sa;Pwd={Xk9!pLm2Qw};", "Xk9!pLm2Qw"),
        ("mysqladmin --password Xk9!pLm2Qw status", "Xk9!pLm2Qw"),
        ("docker login -u me -p Xk9!pLm2Qw ghcr.io", "Xk9!pLm2Qw"),
        ("ssh deploy:Xk9!pLm2Qw@db.internal", "Xk9!pLm2Qw"),
        (
            "token hvs.CAESIJ8kq2Lm9Wx4RzT3yP0aBcDeFgHiJkLmNoPq",
            "hvs.CAESIJ8kq2Lm9Wx4RzT3yP0aBcDeFgHiJkLmNoPq",
        ),
        ("fixed after :password => 'Xk9!pLm2Qw'", "Xk9!pLm2Qw"),
    ],
)
def test_issue_15_leak_classes(text: str, secret: str) -> None:
    assert secret not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "golang.org/x/sys v0.0.0-20220614162138-6c1b26c55098 h1:PgOr27OhUx2IRqGJ2RxAWI4dJQ7bi9cSrB82uzFzfUA=",
        "pydantic/__init__.py,sha256=5iEnJ4wHv1OEzdKQPzaKaZKfO4pSQAC65ODrYI6_S8Y,15812",
        "DB_PASSWORD=${DB_PASSWORD:?must be set}",
        "Using cache key: Linux-pip-3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b",
    ],
)
def test_digests_and_templates_survive(text: str) -> None:
    assert redact(text) == text
