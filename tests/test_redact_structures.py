"""Redaction by structure (issue 27): the key, flag or syntax decides, whatever the value looks like; known
formats come from gitleaks' rules shipped as data; ordinary paths and names are left alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recall_agent.redact import find_secrets, formats, redact

ROOT = Path(__file__).resolve().parent.parent

# the "done means", and the other shapes it lists (fake values)
STRUCTURES = [
    ('POST /api/login 401 body={"username":"ops","password":"Hd7!qL2p"}', "Hd7!qL2p"),
    ("mysql -u root -pHq7!vT2z app < schema.sql", "Hq7!vT2z"),
    ("database:\n  user: app\n  password: >-\n    Vz8qLm3Tk2\n  host: db", "Vz8qLm3Tk2"),
    ("mount error(13): Permission denied for //svc:Pz9k!Lm4@fs01/share", "Pz9k!Lm4"),
    ("{'db_passwd': 'Rq8zT2vLx', 'port': 5432}", "Rq8zT2vLx"),
    ("host=db port=5432 dbname=app user=app password=Nq7wT3vK sslmode=require", "Nq7wT3vK"),
    ("sshpass -p Jq4vT8zM ssh deploy@10.0.0.5", "Jq4vT8zM"),
    ("curl --user api:Yt7qL2vNx8Rm https://api.example.com/v3", "Yt7qL2vNx8Rm"),
    ('{"auths": {"ghcr.io": {"auth": "ZGV2ZWxvcGVyOk5xN3ZMcDJ4"}}}', "ZGV2ZWxvcGVyOk5xN3ZMcDJ4"),
    ("apiVersion: v1\nkind: Secret\ndata:\n  tls.key: LS0tLS1CRUdJTiBQUklW\n", "LS0tLS1CRUdJTiBQUklW"),
    (
        "error: PULUMI_ACCESS_TOKEN pul-3f9a2c7e1b4d8f6a0c5e9b2d7f1a4c8e6b0d3f9a invalid",
        "pul-3f9a2c7e1b4d8f6a0c5e9b2d7f1a4c8e6b0d3f9a",
    ),
    (
        "RefreshError while refreshing 1//0gTq8vLm2xPw9RkY4nHs7Jd1Fg6Cb5Ae3Zq8vT",
        "1//0gTq8vLm2xPw9RkY4nHs7Jd1Fg6Cb5Ae3Zq8vT",
    ),
    ("<server><id>nexus</id><password>Hq7vT2zL</password></server>", "Hq7vT2zL"),
    ('env:\n  - name: DB_PASSWORD\n    value: "Lq7vT2zX"\n', "Lq7vT2zX"),
    ("smbclient //fs01/share -U svc%Kt8qV2zL -c 'ls'", "Kt8qV2zL"),
    ("redis-cli -h cache -a Nq8vT3zL ping", "Nq8vT3zL"),
    ("Fehler: Anmeldung fehlgeschlagen (Benutzer=admin Passwort=Zq7vT2Lm)", "Zq7vT2Lm"),
    ("smtp:\n  password:\n    Wq8zT3vLm\n  port: 587", "Wq8zT3vLm"),
]

ORDINARY = [
    "output/scikit-learn__scikit-learn-15512_preds.json",
    "/work/swebench_9_15/testbed/sklearn/cluster/_affinity_propagation.py",
    "Successfully installed pytest-5.4.1.dev522+g7b77fc086",
    "platform darwin -- Python 3.8.8, pytest-6.3.0.dev457+g4964b468c, py-1.10.0, pluggy-0.13.1",
    "test_app_testmodel_field1_field2_f0eaf8ac_idx: unique=False, index=True",
    "PASS: Values match",
    "mysql: [Warning] Using a password on the command line interface can be insecure.",
    "Refer to the mount.cifs(8) manual page (e.g. man mount.cifs)",
    'psycopg2.OperationalError: FATAL:  password authentication failed for user "nfldb"',
    "ID: YE47:FSWB:BQ6C:XWIG:UAMF:AUTH:7G6W:UF7K:G5DV:3ZPK:S7LS:NQVY",
    "password = os.environ['DB_PASSWORD']",
    "if not password:\n    raise ValueError('password required')",
    "PWD=/home/dev/project",
    "private_key: ~/.ssh/id_ed25519",
]


@pytest.mark.parametrize(("text", "secret"), STRUCTURES, ids=[s[1][:12] for s in STRUCTURES])
def test_structure_decides_whatever_the_value_looks_like(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out, out
    assert "<redacted:" in out
    assert redact(out) == out  # idempotent


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_paths_and_names_come_out_as_they_went_in(text: str) -> None:
    assert redact(text) == text


def test_the_user_and_host_of_a_userinfo_path_are_kept() -> None:
    assert redact("//svc:Pz9k!Lm4@fs01/share") == "//svc:<redacted:password>@fs01/share"
    assert redact("mysql -u root -pHq7!vT2z app") == "mysql -u root -p<redacted:password> app"


def test_find_secrets_names_the_rule_and_the_span() -> None:
    text = 'token ghp_Zq8vT3xLm2Pw9RkY4nHs7Jd1Fg6Cb5AeQwEr and {"password": "Hd7!qL2p"}'
    found = find_secrets(text)
    assert [text[f.start : f.end] for f in found] == ["ghp_Zq8vT3xLm2Pw9RkY4nHs7Jd1Fg6Cb5AeQwEr", "Hd7!qL2p"]
    assert found[0].rule.startswith("format:") and found[1].rule == "key-value"


def test_gitleaks_rules_ship_with_their_version_and_license() -> None:
    data = json.loads(formats.DATA.read_text())
    assert data["version"] == "v8.30.1" and len(data["commit"]) == 40
    assert "MIT License" in data["license"] and "Zachary Rice" in data["license"]
    assert len(data["rules"]) + len(data["dropped"]) == 222
    assert {d["id"] for d in data["dropped"]} >= {"generic-api-key", "pkcs12-file"}
    for rule in formats.rules():
        formats.compiled(rule.regex)  # every shipped rule compiles under Python's re


def test_importing_redaction_compiles_no_rule() -> None:
    """The hook imports recall_agent.redact on every failure: the rules load on the first vendor keyword."""
    code = (
        "from recall_agent.redact import formats, redact; "
        "assert formats.compiled.cache_info().currsize == 0; "
        "assert formats._loaded.cache_info().currsize == 0; "
        "redact('plain text, no vendor here'); "
        "print(formats.compiled.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) < 10


def test_recall_learn_stores_none_of_them(tmp_path: Path) -> None:
    """A real `recall learn` process into a real store: no piece of any secret in any stored byte."""
    src = tmp_path / "learnings.jsonl"
    src.write_text(
        "".join(
            json.dumps(
                {
                    "repo": "t",
                    "error_signatures": [text],
                    "resolution_summary": f"fixed after {text}",
                    "file_paths_touched": ["output/scikit-learn__scikit-learn-15512_preds.json"],
                }
            )
            + "\n"
            for text, _ in STRUCTURES
        )
    )
    home = tmp_path / "home"
    env = {**os.environ, "RECALL_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("RECALL_DATABASE_URL", None)
    proc = subprocess.run(
        [sys.executable, "-m", "recall_agent", "learn", "--from-jsonl", str(src)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    blob = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert [s for _, s in STRUCTURES if s.encode() in blob] == []
    assert b"output/scikit-learn__scikit-learn-15512_preds.json" in blob
