"""Build the redaction corpus: fake secrets in many formats (each must vanish) and ordinary lines (each must
survive byte for byte).

    python bench/corpus/secrets/make_corpus.py     # writes secrets.jsonl and ordinary.jsonl beside it

Secrets: every value is random (seeded) in the alphabet and length of its format; none is valid anywhere.
Formats come from public detector rule sets (gitleaks config/gitleaks.toml, detect-secrets plugins,
trufflehog detectors; URLs in `source`) and from config syntaxes as their own docs write them.
Ordinary lines: real lines read from files installed on this machine from package registries (Debian's
golang and ruby packages: go.sum, package-lock.json; pip's dist-info RECORD files) and error texts of the
learnings corpus (bench/corpus/errors.jsonl), plus hand-written lines of the shapes a redactor confuses
(UUIDs, SHAs, digests, versions, code that names secrets without holding one).

Split (fixed before any tuning): secrets by the sha256 of their format, so held-out formats are unseen ones;
ordinary lines by the sha256 of their id.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
GITLEAKS = "https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml"
DETECT_SECRETS = "https://github.com/Yelp/detect-secrets/tree/master/detect_secrets/plugins"
TRUFFLEHOG = "https://github.com/trufflesecurity/trufflehog/tree/main/pkg/detectors"

rng = random.Random(15)
UP, LO, DIG = string.ascii_uppercase, string.ascii_lowercase, string.digits
B62 = UP + LO + DIG
HEX = "0123456789abcdef"
B64 = B62 + "+/"
B64URL = B62 + "-_"


def r(alphabet: str, n: int) -> str:
    while True:  # a fake secret has both letters and digits where its alphabet allows
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if n < 8 or not (set(alphabet) & set(DIG)) or any(c.isdigit() for c in value):
            return value


def pw(n: int = 14) -> str:
    return r(LO, 4) + r(DIG, 2) + r(UP, 2) + "!" + r(B62, n - 9)


def split(case_id: str) -> str:
    return "tuning" if int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % 2 == 0 else "heldout"


CASES: list[dict] = []


def add(fmt: str, text: str, secrets: list[str] | str, source: str = "", n: int | None = None) -> None:
    case_id = f"{fmt}-{n if n is not None else sum(c['format'] == fmt for c in CASES)}"
    pieces = [secrets] if isinstance(secrets, str) else secrets
    for piece in pieces:
        assert piece in text, (fmt, piece)
    CASES.append(
        {"id": case_id, "format": fmt, "text": text, "secrets": pieces, "source": source, "split": split(fmt)}
    )


def vendor_tokens() -> None:
    """Tokens that identify themselves by a prefix (two per format, in two kinds of context)."""
    formats = {
        "aws-access-key-id": lambda: "AKIA" + r(UP + "234567", 16),
        "aws-sts-key-id": lambda: "ASIA" + r(UP + "234567", 16),
        "github-pat-classic": lambda: "ghp_" + r(B62, 36),
        "github-oauth": lambda: "gho_" + r(B62, 36),
        "github-app-server": lambda: "ghs_" + r(B62, 36),
        "github-app-user": lambda: "ghu_" + r(B62, 36),
        "github-refresh": lambda: "ghr_" + r(B62, 36),
        "github-fine-grained": lambda: "github_pat_" + r(B62, 22) + "_" + r(B62, 59),
        "gitlab-pat": lambda: "glpat-" + r(B62 + "_-", 20),
        "gitlab-pipeline-trigger": lambda: "glptt-" + r(HEX, 40),
        "gitlab-runner-registration": lambda: "GR1348941" + r(B62 + "_-", 20),
        "gitlab-runner-auth": lambda: "glrt-" + r(B62 + "_-", 20),
        "slack-bot": lambda: f"xoxb-{r(DIG, 11)}-{r(DIG, 13)}-{r(B62, 24)}",
        "slack-user": lambda: f"xoxp-{r(DIG, 11)}-{r(DIG, 11)}-{r(DIG, 13)}-{r(HEX, 32)}",
        "slack-app": lambda: f"xapp-1-A{r(UP + DIG, 10)}-{r(DIG, 13)}-{r(HEX, 64)}",
        "stripe-secret-live": lambda: "sk_live_" + r(B62, 99),
        "stripe-restricted": lambda: "rk_live_" + r(B62, 99),
        "stripe-webhook-secret": lambda: "whsec_" + r(B62, 32),
        "openai-project": lambda: "sk-proj-" + r(B64URL, 156),
        "openai-service-account": lambda: "sk-svcacct-" + r(B64URL, 74),
        "anthropic-api": lambda: "sk-ant-api03-" + r(B64URL, 93) + "AA",
        "anthropic-admin": lambda: "sk-ant-admin01-" + r(B64URL, 93) + "AA",
        "google-api-key": lambda: "AIza" + r(B64URL, 35),
        "google-oauth-access": lambda: "ya29." + r(B64URL, 120),
        "google-oauth-client-secret": lambda: "GOCSPX-" + r(B64URL, 28),
        "huggingface": lambda: "hf_" + r(B62, 34),
        "npm-access-token": lambda: "npm_" + r(B62, 36),
        "pypi-upload-token": lambda: "pypi-AgEIcHlwaS5vcmc" + r(B64URL, 70),
        "sendgrid": lambda: "SG." + r(B64URL, 22) + "." + r(B64URL, 43),
        "digitalocean-pat": lambda: "dop_v1_" + r(HEX, 64),
        "shopify-access": lambda: "shpat_" + r(HEX, 32),
        "databricks": lambda: "dapi" + r(HEX, 32),
        "docker-hub-pat": lambda: "dckr_pat_" + r(B64URL, 27),
        "twilio-api-key": lambda: "SK" + r(HEX, 32),
        "mailgun-private": lambda: "key-" + r(HEX, 32),
        "age-secret-key": lambda: "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".upper(), 58),
        "telegram-bot": lambda: r(DIG, 10) + ":AA" + r(B64URL, 33),
        "vault-service-token": lambda: "hvs." + r(B64URL, 90),
        "vault-batch-token": lambda: "hvb." + r(B64URL, 138),
        "terraform-cloud": lambda: r(B62, 14) + ".atlasv1." + r(B64URL, 67),
        "doppler-service": lambda: "dp.st.prd." + r(B62, 43),
        "pulumi-access": lambda: "pul-" + r(HEX, 40),
        "linear-api": lambda: "lin_api_" + r(B62, 40),
        "postman-api": lambda: f"PMAK-{r(HEX, 24)}-{r(HEX, 34)}",
        "newrelic-user-api": lambda: "NRAK-" + r(UP + DIG, 27),
        "grafana-cloud": lambda: "glc_" + r(B64, 60) + "==",
        "grafana-service-account": lambda: "glsa_" + r(B62, 32) + "_" + r(HEX, 8),
        "sentry-user-token": lambda: "sntryu_" + r(HEX, 64),
        "atlassian-api": lambda: "ATATT3" + r(B64URL, 186),
        "notion-integration": lambda: "ntn_" + r(B62, 46),
        "airtable-pat": lambda: "pat" + r(B62, 14) + "." + r(HEX, 64),
        "heroku-api": lambda: "HRKU-" + r(B64URL, 60),
        "planetscale-token": lambda: "pscale_tkn_" + r(B64URL, 43),
        "supabase-service": lambda: "sbp_" + r(HEX, 40),
        "flyio-token": lambda: "fo1_" + r(B64URL, 43),
        "sendinblue": lambda: f"xkeysib-{r(HEX, 64)}-{r(B62, 16)}",
        "mailchimp": lambda: r(HEX, 32) + "-us" + r(DIG, 2),
        "square-access": lambda: "EAAA" + r(B64URL, 60),
        "braintree-access": lambda: f"access_token$production${r(LO + DIG, 16)}${r(HEX, 32)}",
        "shopify-shared-secret": lambda: "shpss_" + r(HEX, 32),
        "dynatrace": lambda: f"dt0c01.{r(UP + DIG, 24)}.{r(UP + DIG, 64)}",
        "alibaba-access-key": lambda: "LTAI" + r(B62, 20),
        "azure-ad-client-secret": lambda: r(B62, 3) + r(DIG, 1) + "Q~" + r(B62 + "_~.-", 34),
        "frameio": lambda: "fio-u-" + r(B64URL, 64),
        "rubygems": lambda: "rubygems_" + r(HEX, 48),
        "nuget": lambda: "oy2" + r(LO + DIG, 43),
        "clojars": lambda: "CLOJARS_" + r(LO + DIG, 60),
        "prefect": lambda: "pnu_" + r(B62, 36),
        "readme": lambda: "rdme_" + r(LO + DIG, 70),
        "onepassword-service": lambda: "ops_eyJ" + r(B64, 260),
        "groq": lambda: "gsk_" + r(B62, 52),
        "replicate": lambda: "r8_" + r(B62, 37),
        "langsmith": lambda: "lsv2_pt_" + r(HEX, 32) + "_" + r(HEX, 10),
        "figma": lambda: "figd_" + r(B64URL, 40),
        "artifactory": lambda: "AKCp" + r(B62, 69),
        "clickhouse-cloud": lambda: "4b1d" + r(B62, 38),
        "adobe-client-secret": lambda: "p8e-" + r(B62, 32),
        "gitlab-deploy-token": lambda: "gldt-" + r(B62 + "_-", 20),
        "discord-bot": lambda: f"M{r(B62, 23)}.G{r(B64URL, 5)}.{r(B64URL, 38)}",
        "sumologic-access-id": lambda: "su" + r(B62, 12),
    }
    contexts = [
        "Error: request failed: 401 Unauthorized (credential {s})",
        '  File "/app/deploy.py", line 12, in <module>\n    client = Client("{s}")\nAuthError: token rejected',
    ]
    for fmt, make in formats.items():
        for i, ctx in enumerate(contexts):
            secret = make()
            add(fmt, ctx.format(s=secret), secret, GITLEAKS, i)


def assignments() -> None:
    """key = value in config syntaxes, code and shells (names a detector must read as 'secret')."""
    rows = [
        ("dotenv", "DB_PASSWORD={v}\nDB_HOST=db.internal"),
        ("dotenv-unusual-name", "DB_PASS={v}"),
        ("dotenv-app-key", "APP_KEY=base64:{b64}"),
        ("export-quoted", "export API_TOKEN='{v}'"),
        ("yaml", "database:\n  password: {v}\n  user: app"),
        ("yaml-quoted", 'smtp:\n  secret: "{v}"'),
        ("yaml-app-key", "app_key: {v}"),
        ("json", '{{"client_secret": "{v}", "client_id": "web"}}'),
        ("json-nested", '{{"auth": {{"apiKey": "{v}"}}}}'),
        ("toml", '[database]\npassword = "{v}"'),
        ("ini", "[smtp]\nsmtp_password = {v}"),
        ("properties", "spring.datasource.password={v}"),
        ("xml-element", "<configuration><password>{v}</password></configuration>"),
        ("dotnet-appsettings-xml", '<add key="ApiKey" value="{v}" />'),
        ("odbc", "Driver={{ODBC Driver 18}};Server=db;Uid=sa;Pwd={{{v}}};"),
        ("ado-net", "Server=tcp:db,1433;User ID=app;Password={v};Encrypt=True"),
        ("jdbc", "jdbc:postgresql://db:5432/app?user=app&password={v}"),
        ("php-define", "define('DB_PASSWORD', '{v}');"),
        ("python-kwarg", 'psycopg.connect(host="db", password="{v}")'),
        ("js-object", "const cfg = {{ user: 'app', password: '{v}' }};"),
        ("ruby-hash", "Redis.new(password: '{v}', host: 'cache')"),
        ("ruby-hashrocket", ":password => '{v}'"),
        ("go-struct", 'cfg := Config{{User: "app", Password: "{v}"}}'),
        ("hcl", 'resource "db" {{\n  password = "{v}"\n}}'),
        ("dockerfile-env", "ENV ADMIN_PASSWORD={v}"),
        ("k8s-secret-stringdata", "stringData:\n  password: {v}"),
        ("error-prefix", "Error: password={v} rejected by server"),
        ("folded-newline", "config was: PASSWORD={v} and retry failed"),
        ("log-kv", 'level=error msg="login failed" user=app passwd={v}'),
        ("url-query-token", "GET /callback?code=abc&access_token={v}&state=1"),
        ("header-x-api-key", "X-API-Key: {v}"),
        ("header-authorization-bearer", "Authorization: Bearer {v}"),
        ("header-private-token", "PRIVATE-TOKEN: {v}"),
        ("cookie-session", "Cookie: sessionid={v}; csrftoken=abc"),
        ("aws-secret-access-key", "aws_secret_access_key = {aws}"),
        ("aws-credentials-env", "AWS_SECRET_ACCESS_KEY={aws}"),
        (
            "azure-storage-connection",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={b64}==;EndpointSuffix=core.windows.net",
        ),
        ("letters-only-password", "DB_PASSWORD={letters}"),
        ("short-password", "password: {short}"),
        ("npmrc-auth", "//registry.npmjs.org/:_auth={b64}="),
        ("pypirc", "[pypi]\nusername = __token__\npassword = {v}"),
        ("netrc", "machine api.example.com login app password {v}"),
        ("git-credential", "protocol=https\nhost=github.com\nusername=app\npassword={v}"),
    ]
    for fmt, template in rows:
        for i in range(2):
            values = {
                "v": pw(16 + i),
                "b64": r(B64, 40),
                "aws": r(B62 + "/+", 40),
                "letters": r(LO, 12),
                "short": r(LO, 3) + r(DIG, 2),
            }
            text = template.format(**values)
            used = [v for k, v in values.items() if "{" + k + "}" in template]
            add(fmt, text, used, "config syntax (docs of each tool); " + DETECT_SECRETS, i)


def cli_and_urls() -> None:
    rows = [
        ("cli-long-flag", "$ mysqladmin --user=root --password {p} status"),
        ("cli-long-flag-eq", "pg_dump --dbname=app --password={p} > dump.sql"),
        ("cli-mysql-short", "mysql -uroot -p{p} -h db app"),
        ("cli-docker-login", "docker login -u deploy -p {p} registry.example.com"),
        ("cli-curl-user", "curl -u deploy:{t} https://api.example.com/v1"),
        ("cli-sshpass", "sshpass -p '{p}' ssh app@host uptime"),
        ("cli-pgpassword-env", "PGPASSWORD={p} psql -h db -U app"),
        ("cli-htpasswd", "htpasswd -b /etc/nginx/.htpasswd deploy {p}"),
        ("url-credentials", "fatal: unable to access 'https://deploy:{t}@git.example.com/o/r.git/'"),
        ("url-postgres", "could not connect to postgresql://app:{p}@db:5432/app"),
        ("url-redis-no-user", "redis://:{p}@cache:6379/0"),
        ("url-amqp", "amqp://guest:{p}@rabbit:5672/vhost"),
        ("userinfo-no-scheme", "ssh: connect to deploy:{p}@db.internal port 22: refused"),
        ("url-mongodb-srv", "mongodb+srv://admin:{p}@cluster0.ab1cd.mongodb.net/test"),
    ]
    for i in range(2):
        for fmt, template in rows:
            value = pw() if "{p}" in template else r(B62, 32)  # one fresh value per case
            add(fmt, template.format(p=value, t=value), value, "", i)


def keys_and_blobs() -> None:
    for i in range(2):
        body = [r(B64, 64) for _ in range(6)] + [r(B64, 20) + "=="]
        pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----"
        add("pem-rsa-raw", "key file contents:\n" + pem, body, DETECT_SECRETS, i)
        add("pem-escaped", "ValueError('" + pem.replace("\n", "\\n") + "')", body, DETECT_SECRETS, i)
        add(
            "pem-json",
            json.dumps({"type": "service_account", "private_key": pem.replace("RSA ", "")}),
            body,
            "",
            i,
        )
        ec = [r(B64, 64) for _ in range(3)]
        add(
            "pem-ec",
            "-----BEGIN EC PRIVATE KEY-----\n" + "\n".join(ec) + "\n-----END EC PRIVATE KEY-----",
            ec,
            "",
            i,
        )
        ssh = [r(B64, 70) for _ in range(5)]
        add(
            "openssh",
            "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(ssh) + "\n-----END OPENSSH PRIVATE KEY-----",
            ssh,
            "",
            i,
        )
        pkcs8 = [r(B64, 64) for _ in range(4)]
        add(
            "pem-encrypted-pkcs8",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
            + "\n".join(pkcs8)
            + "\n-----END ENCRYPTED PRIVATE KEY-----",
            pkcs8,
            "",
            i,
        )
        pgp = [r(B64, 64) for _ in range(4)]
        add(
            "pgp-private",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
            + "\n".join(pgp)
            + "\n-----END PGP PRIVATE KEY BLOCK-----",
            pgp,
            "",
            i,
        )
        putty_pub, putty_priv = [r(B64, 64) for _ in range(2)], [r(B64, 64) for _ in range(3)]
        putty = (
            "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
            + "\n".join(putty_pub)
            + "\nPrivate-Lines: 3\n"
            + "\n".join(putty_priv)
            + f"\nPrivate-MAC: {r(HEX, 64)}"
        )
        add(
            "putty-ppk",
            putty,
            putty_priv,
            "https://the.earth.li/~sgtatham/putty/0.78/htmldoc/AppendixC.html",
            i,
        )
        header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        claims = (
            base64.urlsafe_b64encode(json.dumps({"sub": r(DIG, 8), "exp": 1767225600}).encode())
            .decode()
            .rstrip("=")
        )
        jwt = f"{header}.{claims}.{r(B64URL, 43)}"
        add("jwt", f"jwt.exceptions.ExpiredSignatureError for {jwt}", jwt, GITLEAKS, i)
        blob = base64.b64encode(json.dumps({"user": "app", "password": pw()}).encode()).decode()
        add("base64-config-blob", f"data:\n  config.json: {blob}", blob, TRUFFLEHOG, i)
        k8s = base64.b64encode(pw().encode()).decode()
        add("k8s-secret-data", f"apiVersion: v1\nkind: Secret\ndata:\n  DB_PASSWORD: {k8s}", k8s, "", i)
        tok = "ghp_" + r(B62, 36)
        add(
            "token-wrapped",
            f"remote: Invalid token {tok[:20]}\nremote: {tok[20:]} was revoked",
            [tok[:20], tok[20:]],
            "",
            i,
        )
        key = "AKIA" + r(UP + "234567", 16)
        secret = r(B62 + "/+", 40)
        add(
            "aws-profile",
            f"[default]\naws_access_key_id = {key}\naws_secret_access_key = {secret}",
            [key, secret],
            "",
            i,
        )
        repr_key = (
            "-----BEGIN PRIVATE KEY-----\\n"
            + "\\n".join(r(B64, 64) for _ in range(3))
            + "\\n-----END PRIVATE KEY-----"
        )
        parts = repr_key.split("\\n")[1:-1]
        add("repr-private-key", f"Settings(private_key='{repr_key}')", parts, "", i)
        sentry = f"https://{r(HEX, 32)}@o{r(DIG, 6)}.ingest.sentry.io/{r(DIG, 7)}"
        add("sentry-dsn", f"SENTRY_DSN={sentry}", sentry.split("//")[1].split("@")[0], "", i)
        hook = f"https://hooks.slack.com/services/T{r(UP + DIG, 8)}/B{r(UP + DIG, 10)}/{r(B62, 24)}"
        add("slack-webhook", f"POST {hook} returned 404", hook.rsplit("/", 1)[1], GITLEAKS, i)
        discord = f"https://discord.com/api/webhooks/{r(DIG, 18)}/{r(B64URL, 68)}"
        add("discord-webhook", f"webhook {discord} failed", discord.rsplit("/", 1)[1], GITLEAKS, i)


def harvest_ordinary() -> list[dict]:
    rows: list[dict] = []

    def take(path: Path, source: str, keep, limit: int) -> None:
        if not path.is_file():
            print(f"missing {path}: skipped", file=sys.stderr)
            return
        n = 0
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.rstrip()
            if line and keep(line) and n < limit:
                rows.append({"text": line, "source": f"{source} ({path})"})
                n += 1

    take(
        Path("/usr/share/go-1.19/src/cmd/go.sum"), "Debian golang-1.19-src: go.sum", lambda s: " h1:" in s, 20
    )
    take(
        Path("/usr/lib/ruby/gems/3.1.0/gems/typeprof-0.21.2/vscode/package-lock.json"),
        "Debian ruby-typeprof: package-lock.json",
        lambda s: '"integrity"' in s or '"resolved"' in s,
        20,
    )
    import fastapi
    import pydantic

    for module in (fastapi, pydantic):
        dist = next(Path(module.__file__).parent.parent.glob(f"{module.__name__}-*.dist-info"))
        take(dist / "RECORD", f"PyPI {module.__name__}: RECORD", lambda s: "sha256=" in s, 10)
    errors = [json.loads(line) for line in (ROOT / "bench/corpus/errors.jsonl").read_text().splitlines()]
    seen = 0
    for err in errors[::9]:
        for line in err["text"].splitlines()[:3]:
            if line.strip() and seen < 25:
                rows.append(
                    {
                        "text": line,
                        "source": "bench/corpus/errors.jsonl (learnings corpus, public error shapes)",
                    }
                )
                seen += 1
    return rows


HANDWRITTEN_ORDINARY = [
    "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b (HEAD -> main)",
    "request_id=3f2b8c1e-5a4d-4e7f-9b6a-2c1d0e9f8a7b status=500",
    "image: ghcr.io/acme/api@sha256:4bf2a1c9e3d8b7f6a5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190817",
    "Successfully installed fastapi-0.115.6 pydantic-2.10.4 starlette-0.41.3",
    "numpy 2.1.3 requires python>=3.10,<3.14",
    '  File "/home/dev/src/shop/app/services/payment_service.py", line 88, in charge',
    "KeyError: 'password'",
    "TypeError: __init__() missing 1 required positional argument: 'token'",
    "def login(username: str, password: str) -> Token:",
    '    token = request.headers.get("Authorization")',
    "    self.api_key = api_key",
    "password: Optional[str] = None",
    "Error: invalid token",
    "401 Unauthorized: Bearer token missing or expired",
    "AuthenticationError: No API key provided.",
    "export GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
    "DB_PASSWORD=${DB_PASSWORD:?must be set}",
    'password = os.environ["DB_PASSWORD"]',
    "api_key = settings.OPENAI_API_KEY",
    "secret_name: prod/db/password",
    "aws secretsmanager get-secret-value --secret-id prod/db",
    "kubectl get secret db-credentials -o yaml",
    "pod/api-7d9f8c6b5-x2kqz   0/1   CrashLoopBackOff   5   3m",
    "node_modules/.pnpm/@babel+core@7.26.0/node_modules/@babel/core/lib/index.js",
    "go: downloading golang.org/x/net v0.33.0",
    "github.com/stretchr/testify v1.9.0 h1:HtqpIVDClZ4nwg75+f6Lvsy/wHu+3BoSGCbBAcpTsTg=",
    "sha512-Jn0eLQ8cC0vA0PmG4Y0FoWn2i4Bq7RkVJr4n6r4bQ6Lk8D9cPz2J0nQq5H7o8y1VfW3x2Zc4b5N6m7K8l9j0hA==",
    "--hash=sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    'checksum = "d3c3a2bb6e0b0f1e7f6a4c0a9d2b8e1f3c5a7b9d0e2f4a6c8e0b2d4f6a8c0e2f4"',
    "Digest: sha256:4bf2a1c9e3d8b7f6a5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190817",
    '  version "1.22.22"\n  resolved "https://registry.yarnpkg.com/yarn/-/yarn-1.22.22.tgz#ac34549e6aa8e7ead463a7407e1c7390f61a6610"',
    "Listening on http://0.0.0.0:8000 (Press CTRL+C to quit)",
    "GET https://api.github.com/repos/acme/shop/pulls?state=open&per_page=100 200",
    "fe80::1ff:fe23:4567:890a%eth0",
    "ether 02:42:ac:11:00:02  txqueuelen 0  (Ethernet)",
    "2024-11-03T14:22:05.123456Z ERROR worker-3 job=9812 failed after 3 retries",
    "color: #1f6feb; background: rgba(13, 17, 23, 0.9);",
    "at Object.<anonymous> (/workspace/web/src/components/Checkout.tsx:42:17)",
    'java.lang.NullPointerException: Cannot invoke "String.length()" because "token" is null',
    "panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a5b6c]",
    "error[E0382]: borrow of moved value: `secret_store`",
    "ModuleNotFoundError: No module named 'jwt'",
    "The `password` field is required.",
    "CSRF token missing or incorrect.",
    "SSL: CERTIFICATE_VERIFY_FAILED certificate verify failed: unable to get local issuer certificate",
    "RSA key fingerprint is SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8.",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl deploy@ci",
    "The key's randomart image is:",
    "Using cache key: Linux-pip-3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b",
    "cache-key: node-modules-a1b2c3d4e5f6",
    "TOKEN_EXPIRY_SECONDS=3600",
    "MAX_PASSWORD_LENGTH = 128",
    "password_reset_token_ttl: 900",
    "secret-scanning: 0 alerts",
    "token_type: bearer, expires_in: 3599",
    "ERROR: Could not find a version that satisfies the requirement tensorflow==2.19.0",
    "warning: LF will be replaced by CRLF in src/api/auth_token.py.",
    "error TS2339: Property 'accessToken' does not exist on type 'Session'.",
    'psycopg.OperationalError: connection to server at "db" (10.0.0.5), port 5432 failed: FATAL:  password authentication failed for user "app"',
    "redis.exceptions.AuthenticationError: invalid username-password pair or user is disabled.",
    "Base64-encoded: SGVsbG8sIHdvcmxk",
    "uuid4: 0b9c3f9e-8a37-4c41-9d6e-6f0a7a2b8c11",
    "v2.31.0-rc.1+build.20241103",
    "pytest tests/test_auth.py::test_refresh_token_rotation -x -q",
    "docker run --rm -e POSTGRES_PASSWORD -p 5432:5432 postgres:16",
    "mysql -u root -p",
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    "git clone https://github.com/acme/shop.git",
    "postgresql://app@db:5432/app",
    "redis://cache:6379/0",
    "Password:",
    "Enter passphrase for key '/home/dev/.ssh/id_ed25519':",
]


def main() -> None:
    vendor_tokens()
    assignments()
    cli_and_urls()
    keys_and_blobs()
    ordinary = harvest_ordinary() + [
        {"text": t, "source": "hand-written (shapes redactors confuse)"} for t in HANDWRITTEN_ORDINARY
    ]
    for i, row in enumerate(ordinary):
        row["id"] = f"ordinary-{i}"
        row["split"] = split(row["id"])
    with (HERE / "secrets.jsonl").open("w") as out:
        for case in CASES:
            out.write(json.dumps(case) + "\n")
    with (HERE / "ordinary.jsonl").open("w") as out:
        for row in ordinary:
            out.write(json.dumps({k: row[k] for k in ("id", "text", "source", "split")}) + "\n")
    formats = {c["format"] for c in CASES}
    print(f"{len(CASES)} secret cases in {len(formats)} formats; {len(ordinary)} ordinary lines")


if __name__ == "__main__":
    main()
