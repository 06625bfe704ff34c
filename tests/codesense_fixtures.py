"""Repositories shaped like real ones for the code-sense tests (concepts, value-following calls, choice)."""

from __future__ import annotations

# A cut-down flask: the files and names a developer meets when asking where session cookies are signed.
FLASK_LIKE = {
    "pyproject.toml": "[project]\nname = 'flask'\n",
    "src/flask/__init__.py": "from .app import Flask as Flask\nfrom .globals import session as session\n",
    "src/flask/globals.py": '"""Context-local proxies."""\nsession = None\nrequest = None\n',
    "src/flask/app.py": (
        "from .sessions import SecureCookieSessionInterface\n"
        "from .wrappers import Response\n\n\n"
        "class Flask:\n"
        '    """The flask object implements a WSGI application."""\n\n'
        "    session_interface = SecureCookieSessionInterface()\n"
        "    secret_key = None\n\n"
        "    def process_response(self, response: Response) -> Response:\n"
        "        if not self.session_interface.is_null_session(None):\n"
        "            self.session_interface.save_session(self, None, response)\n"
        "        return response\n"
    ),
    "src/flask/sessions.py": (
        "import hashlib\n"
        "from itsdangerous import BadSignature, URLSafeTimedSerializer\n"
        "from .json.tag import TaggedJSONSerializer\n\n\n"
        "class SessionMixin:\n"
        '    """Expands a basic dictionary with session attributes."""\n\n\n'
        "class SecureCookieSession(dict, SessionMixin):\n"
        '    """Base class for sessions based on signed cookies."""\n\n\n'
        "class SessionInterface:\n"
        '    """The basic interface you have to implement in order to replace the default session interface."""\n\n'
        "    def get_cookie_name(self, app):\n"
        "        return app.config['SESSION_COOKIE_NAME']\n\n"
        "    def is_null_session(self, obj):\n"
        "        return False\n\n\n"
        "session_json_serializer = TaggedJSONSerializer()\n\n\n"
        "class SecureCookieSessionInterface(SessionInterface):\n"
        '    """The default session interface that stores sessions in signed cookies through itsdangerous."""\n\n'
        "    salt = 'cookie-session'\n"
        "    digest_method = staticmethod(hashlib.sha1)\n\n"
        "    def get_signing_serializer(self, app):\n"
        "        if not app.secret_key:\n"
        "            return None\n"
        "        return URLSafeTimedSerializer(app.secret_key, salt=self.salt)\n\n"
        "    def open_session(self, app, request):\n"
        "        s = self.get_signing_serializer(app)\n"
        "        val = request.cookies.get(self.get_cookie_name(app))\n"
        "        try:\n"
        "            return SecureCookieSession(s.loads(val))\n"
        "        except BadSignature:\n"
        "            return SecureCookieSession()\n\n"
        "    def save_session(self, app, session, response):\n"
        "        val = self.get_signing_serializer(app).dumps(dict(session))\n"
        "        response.set_cookie(self.get_cookie_name(app), val)\n"
    ),
    "src/flask/json/__init__.py": "",
    "src/flask/json/tag.py": (
        '"""Tagged JSON: a compact representation for lossless serialization of non-standard JSON types."""\n\n\n'
        "class TaggedJSONSerializer:\n"
        '    """Serializer that uses a tag system to compactly represent objects that are not JSON types."""\n\n'
        "    def dumps(self, value):\n"
        "        return str(value)\n"
    ),
    "src/flask/wrappers.py": (
        "class Response:\n"
        '    """The response object that is used by default in Flask."""\n\n'
        "    max_cookie_size = 4093\n\n"
        "    def set_cookie(self, key, value):\n"
        "        self.headers = [(key, value)]\n"
    ),
    "src/flask/testing.py": (
        "from .sessions import SessionInterface\n\n\n"
        "class FlaskClient:\n"
        '    """Works like a regular test client but keeps track of the context; cookies are kept."""\n\n'
        "    def session_transaction(self):\n"
        "        # open the session through the app's interface, as a request would\n"
        "        return SessionInterface().is_null_session(None)\n"
    ),
    "src/flask/templating.py": (
        "def render_template(name, **context):\n"
        '    """Render a template by name with the given context."""\n'
        "    return name\n"
    ),
    "tests/test_session_interface.py": (
        "from flask.sessions import SessionInterface\n\n\n"
        "def test_open_session_with_cookie_signed():\n"
        "    class MySessionInterface(SessionInterface):\n"
        "        def open_session(self, app, request):\n"
        "            return None\n"
        "    assert MySessionInterface().get_cookie_name\n"
    ),
    "examples/tutorial/flaskr/auth.py": (
        "# login stores the user id in the session cookie, which flask signs\n"
        "def login(session):\n"
        "    session['user_id'] = 1\n"
    ),
}

# Calls whose receiver only the values around them tell apart.
VALUES_REPO = {
    "pkg/__init__.py": "",
    "pkg/sessions.py": (
        "class Session:\n"
        "    def send(self, request):\n"
        "        return request\n\n"
        "    def close(self):\n"
        "        self.send(None)\n\n\n"
        "class RetrySession(Session):\n"
        "    def retry(self):\n"
        "        return self.send(1)\n"
    ),
    "pkg/adapters.py": (
        "class Adapter:\n"
        "    def send(self, request):\n"
        "        return request\n\n\n"
        "def make_adapter() -> 'Adapter':\n"
        "    return Adapter()\n"
    ),
    "pkg/wsgi.py": "def get_host(environ):\n    return environ['HTTP_HOST']\n",
    "pkg/sansio/__init__.py": "",
    "pkg/sansio/utils.py": "def get_host(scheme, host):\n    return host\n",
    "pkg/client.py": (
        "from typing import Optional\n"
        "from . import wsgi\n"
        "from .sansio import utils as _sansio_utils\n"
        "from .adapters import Adapter, make_adapter\n"
        "from .sessions import RetrySession, Session\n\n\n"
        "class Client:\n"
        "    def __init__(self):\n"
        "        self.session = Session()\n"
        "        self.adapter: Adapter = make_adapter()\n\n"
        "    def go(self, environ):\n"
        "        self.session.send(1)\n"
        "        self.adapter.send(2)\n"
        "        return wsgi.get_host(environ)\n\n\n"
        "def top(environ, adapter: Optional[Adapter] = None):\n"
        "    s = Session()\n"
        "    s.send(3)\n"
        "    a = make_adapter()\n"
        "    a.send(4)\n"
        "    RetrySession().send(5)\n"
        "    if adapter:\n"
        "        adapter.send(6)\n"
        "    return _sansio_utils.get_host('http', 'x')\n"
    ),
    "tests/conftest.py": (
        "import pytest\nfrom pkg.sessions import Session\n\n\n"
        "@pytest.fixture\ndef session():\n    s = Session()\n    yield s\n"
    ),
    "tests/test_client.py": (
        "def test_send(session):\n    session.send(1)\n\n\n"
        "def test_local():\n    from pkg.sansio import utils as wsgi\n    return wsgi.get_host('http', 'x')\n\n\n"
        "def test_adapter(adapter):\n    adapter.send(2)\n"
    ),
}

JS_CALLS = {
    "lib/runnable.js": (
        "function Runnable(title, fn) { this.title = title; this.fn = fn; }\n"
        "Runnable.prototype.run = function (fn) { return fn(); };\n"
        "Runnable.prototype.resetTimeout = function () { this.timer = null; };\n"
        "module.exports = Runnable;\n"
    ),
    "lib/hook.js": (
        "var Runnable = require('./runnable');\n"
        "function Hook(title, fn) { Runnable.call(this, title, fn); }\n"
        "Hook.prototype.run = function (fn) { return Runnable.prototype.run.apply(this, arguments); };\n"
        "module.exports = Hook;\n"
    ),
    "lib/runner.js": (
        "var Hook = require('./hook');\n"
        "function Runner() { this.hook = new Hook('h', null); }\n"
        "Runner.prototype.hooks = function () { this.hook.run(function () {}); };\n"
        "module.exports = Runner;\n"
    ),
    "lib/env/data.js": "// environment data\nexports.detect = function () { return process.env; };\n",
}
