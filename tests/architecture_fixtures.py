"""Small real repositories for the architecture tests, written into tmp dirs."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


PY_REPO = {
    "pyproject.toml": "[project]\nname = 'shop'\n",
    "src/shop/__init__.py": '"""Shop package."""\nfrom .models import Order\n',
    "src/shop/models.py": (
        '"""Order data and pricing."""\n'
        "from decimal import Decimal\n\n\n"
        "class Order:\n"
        '    """One customer order."""\n\n'
        "    def __init__(self, items):\n"
        "        self.items = items\n\n"
        "    def total(self) -> Decimal:\n"
        '        """Sum of item prices."""\n'
        "        return sum(self.price(i) for i in self.items)\n\n"
        "    def price(self, item):\n"
        "        return Decimal(item)\n\n\n"
        "def make_order(items: list) -> Order:\n"
        "    return Order(items)\n"
    ),
    "src/shop/service.py": (
        "from .models import Order, make_order\n"
        "from . import cycle_a\n\n\n"
        "def checkout(items):\n"
        "    order = make_order(items)\n"
        "    return order.total()\n"
    ),
    "src/shop/api.py": (
        "import json\n"
        "from shop.service import checkout\n\n\n"
        "def handle(body):\n"
        "    return json.dumps(checkout(body))\n"
    ),
    "src/shop/cycle_a.py": "from shop import cycle_b\n\n\ndef a():\n    return cycle_b.b()\n",
    "src/shop/cycle_b.py": "from shop.cycle_a import a\n\n\ndef b():\n    return 1\n",
    "tests/test_service.py": "from shop.service import checkout\n\n\ndef test_checkout():\n    assert checkout([])\n",
    "tests/test_models.py": (
        "from shop.models import Order\nfrom tests.helpers import sample\n\n\n"
        "def test_order():\n    Order(sample()).total()\n"
    ),
    "tests/helpers.py": "def sample():\n    return [1, 2]\n",
}

MULTI_REPO = {
    # TypeScript / JavaScript
    "web/src/util.ts": "/** Format a price. */\nexport function fmt(n: number): string { return n.toFixed(2); }\n",
    "web/src/app.ts": (
        "import { fmt } from './util';\nexport class App {\n  render(): string { return fmt(1); }\n}\n"
    ),
    "web/src/index.js": "const { App } = require('./app');\nnew App().render();\n",
    "web/node_modules/left-pad/index.js": "module.exports = function leftPad() {}\n",
    "web/dist/bundle.min.js": "function a(){return 1}\n",
    # Go
    "go.mod": "module example.com/m\n\ngo 1.22\n",
    "util/util.go": "package util\n\n// Helper helps.\nfunc Helper() int { return 1 }\n",
    "cmd/main.go": (
        'package main\n\nimport (\n\t"fmt"\n\t"example.com/m/util"\n)\n\n'
        "func main() { fmt.Println(util.Helper()) }\n"
    ),
    # Rust
    "rs/src/lib.rs": "mod net;\nuse crate::net::Socket;\npub fn start() { Socket::open(); }\n",
    "rs/src/net.rs": "pub struct Socket;\nimpl Socket {\n    pub fn open() -> Socket { Socket }\n}\n",
    # Java
    "java/com/acme/Store.java": "package com.acme;\n\npublic class Store {\n  public int count() { return 1; }\n}\n",
    "java/com/acme/App.java": (
        "package com.acme;\n\nimport com.acme.Store;\n\n"
        "public class App {\n  void run() { new Store().count(); }\n}\n"
    ),
    # C
    "c/lib/math.h": "int add(int a, int b);\n",
    "c/lib/math.c": '#include "math.h"\nint add(int a, int b) { return a + b; }\n',
    "c/main.c": '#include <stdio.h>\n#include "lib/math.h"\nint main(void) { return add(1, 2); }\n',
    # C++ and TSX
    "cpp/net/socket.hpp": "namespace net {\nclass Socket {\n public:\n  void open();\n};\n}\n",
    "cpp/net/socket.cpp": '#include "socket.hpp"\nnamespace net {\nvoid Socket::open() { connect(); }\n}\n',
    "cpp/main.cpp": '#include "net/socket.hpp"\nint main() { net::Socket s; s.open(); return 0; }\n',
    "web/src/Button.tsx": (
        "import { fmt } from './util';\n"
        "export function Button(): JSX.Element { return <button>{fmt(2)}</button>; }\n"
    ),
    # C#
    "cs/Models/User.cs": 'namespace Acme.Models {\n  public class User { public string Name() { return ""; } }\n}\n',
    "cs/Program.cs": (
        "using Acme.Models;\n\nnamespace Acme {\n"
        "  class Program { static void Main() { new User().Name(); } }\n}\n"
    ),
    # Ruby
    "rb/lib/greeter.rb": 'class Greeter\n  def greet(name)\n    "hi #{name}"\n  end\nend\n',
    "rb/app.rb": "require_relative 'lib/greeter'\n\nGreeter.new.greet('x')\n",
    # PHP
    "php/src/Mailer.php": "<?php\nnamespace App;\nclass Mailer { public function send($to) { return true; } }\n",
    "php/index.php": "<?php\nrequire_once 'src/Mailer.php';\n$m = new Mailer();\n$m->send('a');\n",
    # Kotlin
    "kt/src/com/acme/Repo.kt": "package com.acme\n\nclass Repo {\n    fun load(): Int = 1\n}\n",
    "kt/src/com/acme/Main.kt": "package com.acme.app\n\nimport com.acme.Repo\n\nfun main() { Repo().load() }\n",
}


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def edges(conn: sqlite3.Connection) -> set[tuple[str, str]]:
    """The index's resolved import edges as (importing path, imported path)."""
    return {
        (a, b)
        for a, b in conn.execute(
            "SELECT f.path, g.path FROM edges e JOIN files f ON f.id = e.src JOIN files g ON g.id = e.dst"
        )
    }
