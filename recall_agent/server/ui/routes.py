"""The review page at /ui/ of `recall serve`: browse, search and filter the team's learnings, open one, edit
its resolution, forget it, merge duplicates, see the stats, export the change record.

Read scope browses, write scope changes; a token sees only its repositories (a learning of another one is
"not found"). Sign-in, cookies and CSRF: session.py. Pages are server-rendered (views.py, templates/),
without JavaScript and without external assets; every response forbids framing, sniffing, caching and any
script (Content-Security-Policy).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response, StreamingResponse

from recall_agent.server.answers import Settings
from recall_agent.server.scope import repo_name
from recall_agent.server.ui import session, views
from recall_agent.server.ui.session import COOKIE, LOGIN_COOKIE, OPEN, Visitor
from recall_agent.server.ui.views import Refusal

UI = "/ui"
STATIC = Path(__file__).with_name("static")
FORM_MAX = 64 * 1024
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self';"
    " frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # no-referrer would make browsers post `Origin: null`
    "Cache-Control": "no-store",
}


def install(app: FastAPI, settings: Settings) -> None:
    """Add the /ui/ routes to the app."""
    backend = settings.backend
    roots = {repo_name(path): Path(path) for path in settings.repos}

    def visitor_of(request: Request, scope: str) -> Visitor:
        """The signed-in visitor with `scope`, or Refusal (401: sign in; 403: not allowed here)."""
        if not settings.require_auth:
            if not session.loopback_host(request.headers.get("host")):
                raise Refusal(403, "Forbidden", "without tokens this page answers only on a loopback address")
            return Visitor(OPEN, "open")
        header = request.headers.get("authorization")
        if header:
            principal = session.bearer(header, settings.principals)
            if principal is None:
                raise Refusal(401, "Not signed in", "invalid bearer token")
            visitor = Visitor(principal, "bearer")
        else:
            cookie = request.cookies.get(COOKIE)
            principal = session.from_cookie(cookie, session.server_secret(), settings.principals)
            if principal is None:
                raise Refusal(401, "Not signed in", "sign in with your token")
            visitor = Visitor(principal, "cookie", cookie)
        if not visitor.principal.may(scope):
            raise Refusal(403, "Forbidden", f"token '{visitor.principal.name}' lacks the '{scope}' scope")
        return visitor

    def page_of(visitor: Visitor, notice: str = "") -> views.Page:
        return views.Page(
            who=visitor.principal.name,
            csrf=session.csrf_token(session.server_secret(), visitor.principal, visitor.cookie),
            can_write=visitor.principal.may("write"),
            via=visitor.via,
            notice=notice,
            repos=visitor.repos(),
            roots={k: v for k, v in roots.items() if visitor.principal.may_see_repo(k)},
        )

    async def form_of(request: Request, visitor: Visitor) -> dict[str, list[str]]:
        """The posted form, once its origin and CSRF token are right (a Bearer request needs no token)."""
        if not session.origin_ok(request.headers.get("origin"), request.headers.get("host")):
            raise Refusal(403, "Forbidden", "this form was not posted from this server's pages")
        body = await request.body()
        if len(body) > FORM_MAX:
            raise Refusal(413, "Too large", f"a form is at most {FORM_MAX} bytes")
        try:
            form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=400)
        except ValueError as exc:
            raise Refusal(413, "Too large", "too many form fields") from exc
        if visitor.via != "bearer":
            expected = session.csrf_token(session.server_secret(), visitor.principal, visitor.cookie)
            if not session.same((form.get("csrf") or [""])[0], expected):
                raise Refusal(403, "Forbidden", "missing or wrong CSRF token: reload the page and try again")
        return form

    async def html(func: Any, *args: Any) -> HTMLResponse:
        return HTMLResponse(await backend.run(func, *args), headers=HEADERS)

    def done(path: str, notice: str) -> RedirectResponse:
        return RedirectResponse(f"{path}?done={quote(notice)}", status_code=303, headers=HEADERS)

    @app.exception_handler(Refusal)
    async def refused(request: Request, exc: Refusal) -> Response:
        if exc.status == 401 and request.method == "GET" and "authorization" not in request.headers:
            return RedirectResponse(f"{UI}/login", status_code=303, headers=HEADERS)
        headers = HEADERS | ({"WWW-Authenticate": "Bearer"} if exc.status == 401 else {})
        return HTMLResponse(views.message_page(None, exc.title, exc.text), exc.status, headers=headers)

    @app.get(UI, include_in_schema=False)
    async def ui_root() -> RedirectResponse:
        return RedirectResponse(f"{UI}/", status_code=307)

    @app.get(f"{UI}/", include_in_schema=False)
    async def ui_list(request: Request) -> Response:
        visitor = visitor_of(request, "read")
        try:
            query = views.ListQuery.of(dict(request.query_params))
        except ValueError as exc:
            raise Refusal(422, "Bad filter", str(exc)) from exc
        return await html(views.list_page, page_of(visitor, request.query_params.get("done", "")), query)

    @app.get(f"{UI}/stats", include_in_schema=False)
    async def ui_stats(request: Request) -> Response:
        return await html(views.stats_page, page_of(visitor_of(request, "read")))

    @app.get(f"{UI}/learnings/{{learning_id}}", include_in_schema=False)
    async def ui_learning(request: Request, learning_id: str) -> Response:
        page = page_of(visitor_of(request, "read"), request.query_params.get("done", ""))
        return await html(views.learning_page, page, learning_id)

    @app.post(f"{UI}/learnings/{{learning_id}}/edit", include_in_schema=False)
    async def ui_edit(request: Request, learning_id: str) -> Response:
        visitor = visitor_of(request, "write")
        form = await form_of(request, visitor)
        text = (form.get("resolution") or [""])[0]
        lid = await backend.run(_edit, learning_id, text, visitor, write=True)
        return done(f"{UI}/learnings/{lid}", "Resolution saved.")

    @app.get(f"{UI}/learnings/{{learning_id}}/approve", include_in_schema=False)
    async def ui_approve_confirm(request: Request, learning_id: str) -> Response:
        return await html(views.approve_page, page_of(visitor_of(request, "write")), learning_id)

    @app.post(f"{UI}/learnings/{{learning_id}}/approve", include_in_schema=False)
    async def ui_approve(request: Request, learning_id: str) -> Response:
        visitor = visitor_of(request, "write")
        await form_of(request, visitor)
        lid = await backend.run(_approve, learning_id, visitor, write=True)
        return done(f"{UI}/learnings/{lid}", "Approved: the hooks inject it from now on.")

    @app.get(f"{UI}/learnings/{{learning_id}}/forget", include_in_schema=False)
    async def ui_forget_confirm(request: Request, learning_id: str) -> Response:
        return await html(views.forget_page, page_of(visitor_of(request, "write")), learning_id)

    @app.post(f"{UI}/learnings/{{learning_id}}/forget", include_in_schema=False)
    async def ui_forget(request: Request, learning_id: str) -> Response:
        visitor = visitor_of(request, "write")
        await form_of(request, visitor)
        lid = await backend.run(_forget, learning_id, visitor, write=True)
        return done(f"{UI}/", f"Forgot learning {lid}.")

    @app.get(f"{UI}/merge", include_in_schema=False)
    async def ui_merge_confirm(request: Request) -> Response:
        visitor = visitor_of(request, "write")
        ids = request.query_params.getlist("id")
        return await html(views.merge_page, page_of(visitor), ids)

    @app.post(f"{UI}/merge", include_in_schema=False)
    async def ui_merge(request: Request) -> Response:
        visitor = visitor_of(request, "write")
        form = await form_of(request, visitor)
        keep = (form.get("keep") or [""])[0]
        others = [i for i in form.get("id") or [] if i != keep]
        lid = await backend.run(_merge, keep, others, visitor, write=True)
        return done(f"{UI}/learnings/{lid}", f"Merged {len(others)} learning(s) into this one.")

    @app.get(f"{UI}/history.jsonl", include_in_schema=False)
    async def ui_history(request: Request) -> Response:
        visitor = visitor_of(request, "read")
        lines = await backend.run(_history_lines, visitor.repos())
        return StreamingResponse(
            iter(lines),
            media_type="application/x-ndjson",
            headers=HEADERS | {"Content-Disposition": 'attachment; filename="recall-changes.jsonl"'},
        )

    @app.get(f"{UI}/static/style.css", include_in_schema=False)
    async def ui_style() -> Response:
        return FileResponse(
            STATIC / "style.css", media_type="text/css", headers={"Cache-Control": "max-age=3600"}
        )

    @app.get(f"{UI}/login", include_in_schema=False)
    async def ui_login_form() -> Response:
        nonce = secrets.token_urlsafe(24)
        csrf = session.login_csrf(session.server_secret(), nonce)
        response = HTMLResponse(views.login_page(csrf), headers=HEADERS)
        response.set_cookie(LOGIN_COOKIE, nonce, max_age=600, path=UI, httponly=True, samesite="strict")
        return response

    @app.post(f"{UI}/login", include_in_schema=False)
    async def ui_login(request: Request) -> Response:
        body = await request.body()
        try:
            form = parse_qs(body[:FORM_MAX].decode("utf-8", "replace"), max_num_fields=10)
        except ValueError:
            form = {}
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        expected = session.login_csrf(session.server_secret(), nonce) if nonce else ""
        fresh = session.login_csrf(session.server_secret(), new_nonce := secrets.token_urlsafe(24))

        def again(status: int, error: str) -> Response:
            response = HTMLResponse(views.login_page(fresh, error), status, headers=HEADERS)
            response.set_cookie(
                LOGIN_COOKIE, new_nonce, max_age=600, path=UI, httponly=True, samesite="strict"
            )
            return response

        if not session.origin_ok(request.headers.get("origin"), request.headers.get("host")):
            return again(403, "This form was not posted from this server's page.")
        if not session.same((form.get("csrf") or [""])[0], expected):
            return again(403, "The sign-in form expired; try again.")
        if not settings.require_auth:
            return RedirectResponse(f"{UI}/", status_code=303, headers=HEADERS)
        token = (form.get("token") or [""])[0].strip()
        principal = session.bearer(f"Bearer {token}", settings.principals) if token else None
        if principal is None:
            return again(401, "That token is not known here.")
        if not principal.may("read"):
            return again(403, f"Token '{principal.name}' lacks the 'read' scope.")
        response = RedirectResponse(f"{UI}/", status_code=303, headers=HEADERS)
        response.set_cookie(
            COOKIE,
            session.session_cookie(session.server_secret(), principal),
            max_age=session.SESSION_HOURS * 3600,
            path=UI,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        response.delete_cookie(LOGIN_COOKIE, path=UI)
        return response

    @app.post(f"{UI}/logout", include_in_schema=False)
    async def ui_logout(request: Request) -> Response:
        visitor = visitor_of(request, "read")
        await form_of(request, visitor)
        response = RedirectResponse(f"{UI}/login", status_code=303, headers=HEADERS)
        response.delete_cookie(COOKIE, path=UI)
        return response

    @app.exception_handler(views.NotFound)
    async def not_found(_: Request, exc: views.NotFound) -> Response:
        return HTMLResponse(
            views.message_page(None, "Not found", f"No learning {exc} that this token may see."),
            404,
            headers=HEADERS,
        )


# ---------------------------------------------------------------------- the writes (worker threads)


def _actor(visitor: Visitor) -> str:
    return f"{visitor.principal.name} (web)"


def _edit(store: Any, learning_id: str, text: str, visitor: Visitor) -> str:
    from recall_agent.learnings.records import clean_resolution
    from recall_agent.redact import redact

    row = views.visible(store, learning_id, visitor.repos())
    try:
        clean = redact(clean_resolution(text))
    except ValueError as exc:
        raise Refusal(422, "Not saved", str(exc)) from exc
    store.edit_resolution(row.id, clean, _actor(visitor))
    return str(row.id)


def _approve(store: Any, learning_id: str, visitor: Visitor) -> str:
    row = views.visible(store, learning_id, visitor.repos())
    store.approve(row.id, _actor(visitor))
    return str(row.id)


def _forget(store: Any, learning_id: str, visitor: Visitor) -> str:
    row = views.visible(store, learning_id, visitor.repos())
    store.forget(row.id, _actor(visitor))
    return str(row.id)


def _merge(store: Any, keep: str, others: list[str], visitor: Visitor) -> str:
    kept = views.visible(store, keep, visitor.repos())
    rows = [views.visible(store, o, visitor.repos()) for o in others]
    try:
        store.merge(kept.id, [r.id for r in rows], _actor(visitor))
    except ValueError as exc:
        raise Refusal(422, "Not merged", str(exc)) from exc
    return str(kept.id)


def _history_lines(store: Any, repos: frozenset[str] | None) -> list[str]:
    return [json.dumps(e, ensure_ascii=False) + "\n" for e in store.iter_events(repos)]
