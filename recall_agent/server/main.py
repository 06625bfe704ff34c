"""`recall serve`: one HTTP server a whole team shares (docs/server.md).

    recall serve [--host 127.0.0.1] [--port 8085] [--repo PATH]... [--token-file FILE]

Serves the learnings and federation nodes over the wire protocol, plus POST /v1/learnings, GET /health and
the MCP tools at /mcp (streamable HTTP, docs/mcp.md).
Learnings live in the embedded SQLite store, or in PostgreSQL when RECALL_DATABASE_URL is set. Bound to
anything but loopback, it refuses to start without a token (RECALL_TOKEN or --token-file). SIGINT/SIGTERM
stop it gracefully: in-flight requests finish (up to --shutdown-timeout), then the store is closed.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import logging
import os
import signal
import socket
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from recall_agent import federation
from recall_agent.config import ENV_DATABASE_URL, ENV_TOKEN

log = logging.getLogger("recall_agent.server")

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="recall serve",
        description="Serve recall's learnings and federation nodes over HTTP (one server for a team).",
        epilog=(
            f"Environment: {ENV_DATABASE_URL} (PostgreSQL for learnings; default: SQLite under RECALL_HOME), "
            f"{ENV_TOKEN} (a bearer token with read+write on every repository), "
            f"{federation.ENV_REPOS} (repositories, {os.pathsep}-separated, when no --repo is given)."
        ),
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; others need a token)"
    )
    p.add_argument("--port", type=int, default=8085, help="port (default 8085; 0 picks a free one)")
    p.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="PATH",
        help="a repository the federation node answers for (repeatable); default: RECALL_REPOS, else the cwd's",
    )
    p.add_argument(
        "--token-file", type=Path, help="TOML file of bearer tokens with scopes and repos (docs/server.md)"
    )
    p.add_argument(
        "--max-body", type=int, default=1024 * 1024, help="largest request body in bytes (default 1 MiB)"
    )
    p.add_argument(
        "--body-timeout", type=float, default=10.0, help="seconds a client has to send its body (default 10)"
    )
    p.add_argument(
        "--shutdown-timeout", type=float, default=10.0, help="seconds to finish in-flight requests"
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the port (default 1; ranking is CPU-bound: use one per core)",
    )
    p.add_argument(
        "--review-posted",
        action="store_true",
        help="a learning posted with a token is injected nowhere until a person approves it (/ui/, "
        "recall review approve); /recall still lists it, marked",
    )
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return p


def _setup_logging(level: str) -> None:
    from recall_agent.server.http import JsonLogFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    for name in ("recall_agent.server", "recall_agent.server.access", "uvicorn.error", "psycopg.pool", "mcp"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False
    # the MCP SDK logs every stateless exchange at info ("Terminating session: None"), the pool every
    # connection checkout: warnings only
    for noisy in ("mcp", "psycopg.pool"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level.upper())))


def _repo_args(given: list[str]) -> list[str]:
    """--repo, else RECALL_REPOS, else the git repository of the working folder, else none."""
    from recall_agent import repo

    if given:
        return given
    env = [p for p in os.environ.get(federation.ENV_REPOS, "").split(os.pathsep) if p.strip()]
    if env:
        return env
    top = repo.toplevel(repo.current_dir())
    return [str(top)] if top else []


def _fail(message: str) -> int:
    print(f"recall serve: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        return _fail(f"--port must be 0–65535, got {args.port}")
    if args.max_body < 1024:
        return _fail("--max-body must be at least 1024 bytes")
    if not 1 <= args.workers <= 64:
        return _fail(f"--workers must be 1–64, got {args.workers}")
    from recall_agent.server.scope import checked_repos

    try:
        args.repo = checked_repos(_repo_args(args.repo))
    except ValueError as exc:
        return _fail(str(exc))

    from recall_agent.server.auth import TokenConfigError, load_principals

    try:
        principals = load_principals(args.token_file)
    except TokenConfigError as exc:
        return _fail(str(exc))
    if not principals and not is_loopback(args.host):
        return _fail(
            f"refusing to listen on {args.host} without a token: set {ENV_TOKEN} or pass --token-file"
            " (only loopback addresses may serve without authentication)"
        )
    _setup_logging(args.log_level)
    # FastAPI + pydantic 2.12 warn about their own body-field alias; it is noise in a JSON log
    warnings.filterwarnings("ignore", message=".*'alias' attribute.*", category=Warning)
    _file_under_identities(args.repo)
    if args.workers > 1:
        return _serve_workers(args, principals)
    return _serve(args, principals)


def _file_under_identities(repos: list[str]) -> None:
    """Migration "repo identity" (learnings/reidentify.py) at the start, with the configured repositories as
    the folders that name their identity; a store that cannot be reached now is left for the next start."""
    from recall_agent.learnings import reidentify
    from recall_agent.learnings.types import StoreError

    url = os.environ.get(ENV_DATABASE_URL, "").strip()
    folders = [Path(r) for r in repos]
    try:
        if url:
            from recall_agent.learnings.pg_store import PgStore

            with PgStore(url, max_size=1) as store:
                moved = reidentify.run(store, reidentify.Resolver(None, folders))
        else:
            from recall_agent.config import learnings_db, recall_home
            from recall_agent.learnings.store import open_store

            if not learnings_db().exists():
                return
            with open_store() as store:
                moved = reidentify.run(store, reidentify.Resolver(recall_home(), folders))
    except (StoreError, OSError) as exc:
        # unreachable is worth a line; anything else (a newer schema, a damaged file) the store's start says
        if isinstance(exc, OSError) or type(exc).__name__ in ("DatabaseUnavailable", "PoolExhausted"):
            log.warning("repo identity migration skipped", extra={"fields": {"error": str(exc)}})
        return
    if moved:
        log.info("learnings filed under their repository identity", extra={"fields": {"moved": moved}})


ENV_WORKER_CONFIG = "RECALL_SERVE_WORKER_CONFIG"  # main process → worker processes (no secrets in it)


def _uvicorn_config(app: Any, args: argparse.Namespace, **extra: Any) -> Any:
    """uvicorn settings shared by the single-process and the --workers server (recall logs access itself)."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_config=None,
        access_log=False,
        server_header=False,
        timeout_graceful_shutdown=args.shutdown_timeout,
        timeout_keep_alive=5,
        lifespan="on",
        **extra,
    )


def _serve_workers(args: argparse.Namespace, principals: list) -> int:
    """N processes on one socket (uvicorn's supervisor); each builds its own app and store connection."""

    os.environ[ENV_WORKER_CONFIG] = json.dumps(
        {
            "repos": args.repo,
            "token_file": str(args.token_file) if args.token_file else None,
            "max_body": args.max_body,
            "body_timeout": args.body_timeout,
            "log_level": args.log_level,
            "host": args.host,
            "review_posted": args.review_posted,
        }
    )
    log.info("starting", extra={"fields": {**_start_fields(args, principals), "workers": args.workers}})
    from uvicorn.supervisors import Multiprocess

    config = _uvicorn_config("recall_agent.server.main:worker_app", args, factory=True, workers=args.workers)
    sock = config.bind_socket()
    # the workers' copies of this socket lose asyncio's TCP_NODELAY; accepted sockets inherit it from the
    # listener, and without it every response waits ~40 ms for a delayed ACK (measured)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    Multiprocess(config, sockets=[sock]).run()
    log.info("stopped")
    return 0


def worker_app() -> Any:
    """The app of one worker process (uvicorn factory); the store is closed when the process exits."""
    import atexit

    from recall_agent.server.answers import Settings
    from recall_agent.server.app import create_app
    from recall_agent.server.auth import load_principals
    from recall_agent.server.collector import Collector
    from recall_agent.server.store import backend_from_env

    config = json.loads(os.environ[ENV_WORKER_CONFIG])
    _setup_logging(config["log_level"])
    warnings.filterwarnings("ignore", message=".*'alias' attribute.*", category=Warning)
    repos: list[str] = config["repos"]  # checked by the main process
    principals = load_principals(Path(config["token_file"]) if config["token_file"] else None)
    backend = backend_from_env()
    atexit.register(backend.close)  # the app's lifespan closes it on shutdown; this covers a failed start
    settings = Settings(
        backend=backend,
        repos=repos,
        principals=principals,
        require_auth=bool(principals),
        max_body=config["max_body"],
        body_timeout=config["body_timeout"],
        host=config["host"],
        review_posted=bool(config.get("review_posted")),
        collector=Collector(),
    )
    return create_app(settings)


def _start_fields(args: argparse.Namespace, principals: list, store: str | None = None) -> dict[str, Any]:
    return {
        "host": args.host,
        "port": args.port,
        "store": store or ("postgresql" if os.environ.get(ENV_DATABASE_URL) else "sqlite"),
        "auth": "bearer" if principals else "none (loopback)",
        "tokens": [p.name for p in principals],
        "repos": args.repo,
        "review_posted": args.review_posted,
    }


@contextlib.contextmanager
def _capture_signals(server: Any) -> Iterator[None]:
    """uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, killing the process before the store is
    closed (pending access counts flushed); here a signal only asks the server to stop (a second one forces
    it) and the process then exits normally."""
    previous = {sig: signal.signal(sig, server.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serve(args: argparse.Namespace, principals: list) -> int:
    import uvicorn

    class _GracefulServer(uvicorn.Server):
        capture_signals = _capture_signals

    from recall_agent.server.answers import Settings
    from recall_agent.server.app import create_app
    from recall_agent.server.collector import Collector
    from recall_agent.server.store import StoreUnavailable, backend_from_env

    try:
        backend = backend_from_env()
    except StoreUnavailable as exc:
        return _fail(str(exc))
    settings = Settings(
        backend=backend,
        repos=args.repo,
        principals=principals,
        require_auth=bool(principals),
        max_body=args.max_body,
        body_timeout=args.body_timeout,
        host=args.host,
        review_posted=args.review_posted,
        collector=Collector(),
    )
    config = _uvicorn_config(create_app(settings), args)
    server = _GracefulServer(config)
    log.info("starting", extra={"fields": _start_fields(args, principals, backend.name)})
    try:
        server.run()
    finally:
        backend.close()
        log.info("stopped")
    return 0 if server.started else 1
