"""Per-language import resolution (issue 17): each language's files linked the way its build tool links
them, on small real repositories written to disk and indexed for real."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from architecture_fixtures import edges as _edges
from architecture_fixtures import write

from recall_agent.architecture import query
from recall_agent.architecture.indexer import open_index
from recall_agent.architecture.lang.rust import use_paths


def test_php_classes_resolve_through_use_aliases_groups_and_the_namespace(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "php",
        {
            "composer.json": '{"autoload": {"psr-4": {"Acme\\\\": "src/"}}}',
            "src/Mail/Mailer.php": "<?php\nnamespace Acme\\Mail;\nclass Mailer { function send() {} }\n",
            "src/Mail/Queue.php": "<?php\nnamespace Acme\\Mail;\nclass Queue { function push(Mailer $m) {} }\n",
            "src/Mail/Unused.php": "<?php\nnamespace Acme\\Mail;\nclass Unused {}\n",
            "src/Render/Html.php": "<?php\nnamespace Acme\\Render;\nclass Html {}\n",
            "src/Render/Text.php": "<?php\nnamespace Acme\\Render;\nclass Text {}\n",
            "src/App.php": (
                "<?php\nnamespace Acme;\n"
                "use Acme\\Mail\\{Mailer, Queue as Q};\n"
                "use Acme\\Render as R;\n"
                "class App {\n  function run() { new Mailer(); new R\\Html(); Q::make(); }\n}\n"
            ),
        },
    )
    conn, _ = open_index(repo)
    edges = _edges(conn)
    assert ("src/App.php", "src/Mail/Mailer.php") in edges  # group use
    assert ("src/App.php", "src/Mail/Queue.php") in edges  # group use with an alias
    assert ("src/App.php", "src/Render/Html.php") in edges  # R\Html through the namespace alias
    assert ("src/App.php", "src/Render/Text.php") not in edges
    assert ("src/Mail/Queue.php", "src/Mail/Mailer.php") in edges  # same namespace, no use needed
    assert ("src/Mail/Queue.php", "src/Mail/Unused.php") not in edges
    assert ("src/Mail/Mailer.php", "src/Mail/Queue.php") not in edges


def test_java_same_package_is_visible_and_single_imports_shadow_it(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "j",
        {
            "src/main/java/com/acme/Store.java": "package com.acme;\npublic class Store {}\n",
            "src/main/java/com/acme/Trace.java": "package com.acme;\npublic class Trace {}\n",
            "src/main/java/com/acme/util/Trace.java": "package com.acme.util;\npublic class Trace {}\n",
            "src/main/java/com/acme/App.java": (
                "package com.acme;\nimport com.acme.util.Trace;\n"
                "public class App {\n  Store s = new Store();\n  void run() { Trace.begin(); }\n}\n"
            ),
            "src/main/java/com/acme/common/build/Config.java": (
                "package com.acme.common.build;\npublic class Config {}\n"
            ),
            "src/test/java/com/acme/StoreTest.java": (
                "package com.acme;\nclass StoreTest {\n  void t() { new Store(); }\n}\n"
            ),
        },
    )
    conn, _ = open_index(repo)
    edges = _edges(conn)
    assert ("src/main/java/com/acme/App.java", "src/main/java/com/acme/Store.java") in edges
    assert ("src/main/java/com/acme/App.java", "src/main/java/com/acme/util/Trace.java") in edges
    assert ("src/main/java/com/acme/App.java", "src/main/java/com/acme/Trace.java") not in edges
    # a test in the same package under src/test/java: a test of Store with no import
    assert ("src/test/java/com/acme/StoreTest.java", "src/main/java/com/acme/Store.java") in edges
    assert "StoreTest.java" in _answer("tests for src/main/java/com/acme/Store.java", repo)
    # a Java package named `build` is source, not build output
    paths = {r[0] for r in conn.execute("SELECT path FROM files")}
    assert "src/main/java/com/acme/common/build/Config.java" in paths


def test_java_names_read_once_and_same_class_calls_are_callers(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "j",
        {
            "src/org/acme/TypeManager.java": (
                "package org.acme;\npublic class TypeManager {\n"
                "  public Object createClass() { return null; }\n"
                "  public void init() { createClass(); }\n"
                "  public static TypeManager getInstance() { return null; }\n}\n"
            ),
        },
    )
    card = _answer("org.acme.TypeManager.getInstance", repo)
    assert "org.acme.TypeManager.getInstance" in card
    assert "TypeManager.TypeManager" not in card
    callers = _answer("who calls TypeManager.createClass", repo)
    assert "TypeManager.init" in callers


def test_rust_crates_tests_and_use_trees(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "rs",
        {
            "Cargo.toml": '[workspace]\nmembers = ["core-lib", "app"]\n',
            "core-lib/Cargo.toml": '[package]\nname = "core-lib"\nversion = "0.1.0"\n',
            "core-lib/src/lib.rs": "pub mod iter;\nmod util;\npub use iter::Iter;\n",
            "core-lib/src/iter/mod.rs": "mod plumbing;\npub struct Iter;\n",
            "core-lib/src/iter/plumbing.rs": (
                "use super::Iter;\nuse crate::{util::helper, iter};\n"
                "#[cfg(test)]\nmod tests {\n    use super::feed;\n}\npub fn feed() {}\n"
            ),
            "core-lib/src/util.rs": "pub fn helper() {}\n",
            "core-lib/tests/smoke.rs": "mod common;\nuse core_lib::iter::Iter;\n#[test]\nfn t() {}\n",
            "core-lib/tests/common/mod.rs": "pub fn setup() {}\n",
            "app/Cargo.toml": '[package]\nname = "app"\nversion = "0.1.0"\n',
            "app/src/main.rs": "use core_lib::Iter;\nfn main() {}\n",
        },
    )
    conn, _ = open_index(repo)
    edges = _edges(conn)
    assert ("core-lib/src/lib.rs", "core-lib/src/iter/mod.rs") in edges  # mod iter;
    assert ("core-lib/src/iter/mod.rs", "core-lib/src/iter/plumbing.rs") in edges  # mod in mod.rs
    assert ("core-lib/src/iter/plumbing.rs", "core-lib/src/iter/mod.rs") in edges  # super::
    assert ("core-lib/src/iter/plumbing.rs", "core-lib/src/util.rs") in edges  # crate::{util::…}
    assert ("core-lib/tests/smoke.rs", "core-lib/tests/common/mod.rs") in edges  # mod in tests/
    assert ("core-lib/tests/smoke.rs", "core-lib/src/iter/mod.rs") in edges  # use <crate>::…
    assert ("core-lib/tests/smoke.rs", "core-lib/src/lib.rs") in edges
    assert ("app/src/main.rs", "core-lib/src/lib.rs") in edges  # a workspace member by crate name
    # `use super::feed` inside an inline `mod tests` is the file's own module: no edge upwards
    lines = {
        r[0]
        for r in conn.execute(
            "SELECT line FROM edges e JOIN files f ON f.id = e.src"
            " WHERE f.path = 'core-lib/src/iter/plumbing.rs'"
        )
    }
    assert 5 not in lines
    assert "core-lib/tests/smoke.rs" in _answer("tests for core-lib/src/iter/mod.rs", repo)


def test_rust_use_tree_expansion() -> None:
    assert use_paths("crate::{a::X, b::{self, Y as Z}, c::*}") == [
        ["crate", "a", "X"],
        ["crate", "b"],
        ["crate", "b", "Y"],
        ["crate", "c"],
    ]
    assert use_paths("{") == [] and use_paths("") == []


def test_c_and_cpp_include_paths_angle_includes_and_cpp_headers(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "cc",
        {
            "include/acme/jp_class.h": (
                "#pragma once\n#include <vector>\nnamespace acme {\nclass JPClass {\n public:\n"
                "  int getTypeManager();\n};\n}\n"
            ),
            "include/acme/config.h": "#define ACME 1\n",
            "src/jp_class.cpp": (
                '#include <acme/jp_class.h>\n#include "local.h"\n'
                "int acme::JPClass::getTypeManager() { return helper(); }\n"
            ),
            "src/local.h": "int helper(void);\n",
            "src/main.c": "#include <acme/config.h>\n#include <stdio.h>\nint main(void) { return 0; }\n",
            "tools/local.h": "int other(void);\n",
        },
    )
    conn, _ = open_index(repo)
    edges = _edges(conn)
    assert ("src/jp_class.cpp", "include/acme/jp_class.h") in edges  # <…> along include/
    assert ("src/jp_class.cpp", "src/local.h") in edges  # "…" from the file's folder first
    assert ("src/main.c", "include/acme/config.h") in edges
    langs = dict(conn.execute("SELECT path, lang FROM files"))
    assert langs["include/acme/jp_class.h"] == "cpp" and langs["src/local.h"] == "c"
    symbols = {r[0] for r in conn.execute("SELECT qualname FROM symbols")}
    assert "acme.JPClass" in symbols
    assert "include/acme/jp_class.h" in _answer("acme::JPClass", repo)


def test_cpp_include_dirs_from_compile_commands(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "db",
        {
            "compile_commands.json": (
                '[{"directory": "%s/build", "file": "../lib/a.cpp",'
                ' "command": "c++ -I../third/api -c ../lib/a.cpp"}]' % (tmp_path / "db")
            ),
            "third/api/api.hpp": "int api();\n",
            "lib/a.cpp": "#include <api.hpp>\nint f() { return api(); }\n",
        },
    )
    conn, _ = open_index(repo)
    assert ("lib/a.cpp", "third/api/api.hpp") in _edges(conn)


def test_ruby_autoload_and_load_path_without_shadowing_the_standard_library(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "rb",
        {
            "lib/acme.rb": "require 'date'\nmodule Acme\n  autoload :Cache, 'acme/cache'\nend\n",
            "lib/acme/cache.rb": "require_relative 'store'\nmodule Acme\n  class Cache\n  end\nend\n",
            "lib/acme/store.rb": "module Acme\n  class Store\n  end\nend\n",
            "lib/acme/core_ext/date.rb": "class Date\nend\n",
            "test/cache_test.rb": "require 'acme/cache'\n",
        },
    )
    conn, _ = open_index(repo)
    edges = _edges(conn)
    assert ("lib/acme.rb", "lib/acme/cache.rb") in edges  # autoload
    assert ("lib/acme/cache.rb", "lib/acme/store.rb") in edges  # require_relative
    assert ("test/cache_test.rb", "lib/acme/cache.rb") in edges  # require along lib/
    assert ("lib/acme.rb", "lib/acme/core_ext/date.rb") not in edges  # `date` is the standard library


def test_ruby_paths_built_from_the_files_own_place(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "gem",
        {
            "lib/acme.rb": "module Acme\nend\nif $0 == __FILE__\n  require 'acme/cli'\nend\n",
            "lib/acme/cli.rb": "module Acme\n  class Cli\n  end\nend\n",
            "lib/acme/util.rb": "module Acme\n  module Util\n  end\nend\n",
            "spec/spec_helper.rb": "require File.expand_path('../../lib/acme', __FILE__)\n",
            "spec/util_spec.rb": "require_relative File.join(__dir__, 'spec_helper')\nrequire 'acme/util'\n",
            "spec/cli_spec.rb": 'require "#{__dir__}/spec_helper"\nrequire File.expand_path("../lib/acme/cli", __dir__)\n',
            "bin/acme.rb": "require File.join(File.dirname(__FILE__), '..', 'lib', 'acme')\n",
        },
    )
    conn, _ = open_index(repo)
    edges = _edges(conn)
    assert ("spec/spec_helper.rb", "lib/acme.rb") in edges  # File.expand_path("../x", __FILE__)
    assert ("spec/util_spec.rb", "spec/spec_helper.rb") in edges  # File.join(__dir__, ...)
    assert ("spec/util_spec.rb", "lib/acme/util.rb") in edges  # lib/ from spec/
    assert ("spec/cli_spec.rb", "spec/spec_helper.rb") in edges  # "#{__dir__}/x"
    assert ("spec/cli_spec.rb", "lib/acme/cli.rb") in edges  # File.expand_path("x", __dir__)
    assert ("bin/acme.rb", "lib/acme.rb") in edges  # File.join(File.dirname(__FILE__), ...)
    assert ("lib/acme.rb", "lib/acme/cli.rb") not in edges  # only when run as the program


def test_csharp_namespaces_and_kotlin_objects(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "cs",
        {
            "Runtime/Converter.cs": "namespace Py.Runtime {\n  internal class Converter {}\n}\n",
            "Runtime/Unused.cs": "namespace Py.Runtime {\n  internal class Unused {}\n}\n",
            "Runtime/Codecs/Tuple.cs": (
                "namespace Py.Runtime.Codecs {\n  class Tuple { object c = new Converter(); }\n}\n"
            ),
            "kt/sys/Trace.kt": "package acme.sys\n\ninternal object Trace {\n  fun begin() {}\n}\n",
            "kt/sys/Message.kt": "package acme.sys\n\nclass Message {\n  fun go() { Trace.begin() }\n}\n",
        },
    )
    conn, _ = open_index(repo)
    edges = _edges(conn)
    assert ("Runtime/Codecs/Tuple.cs", "Runtime/Converter.cs") in edges  # the enclosing namespace
    assert ("Runtime/Codecs/Tuple.cs", "Runtime/Unused.cs") not in edges
    assert ("kt/sys/Message.kt", "kt/sys/Trace.kt") in edges  # an `object` in the same package


def _answer(text: str, repo: Path) -> str:
    results = query(text, str(repo))
    assert results, f"no answer for {text!r}"
    return results[0].content


def test_files_that_fail_to_parse_are_counted_and_said_in_answers(tmp_path: Path, recall_cmd) -> None:
    repo = write(
        tmp_path / "bad",
        {
            "lib/core.py": "def core():\n    return 1\n",
            "lib/broken.py": "from lib.core import core\ndef broken(:\n    core()\n",
            "lib/fine.py": "from lib.core import core\n",
        },
    )
    proc = subprocess.run(
        [*recall_cmd, "index", str(repo), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(proc.stdout)
    assert summary["syntax_errors"] == 1
    assert summary["lines"] == 9 and 1 <= summary["unread_lines"] <= 2  # `def broken(:` and what it breaks
    text = subprocess.run(
        [*recall_cmd, "index", str(repo)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "1 file(s) with syntax errors were indexed partially (python 1)" in text
    answer = _answer("what imports lib/core.py", repo)
    assert "1 other python file has lines the grammar could not read (" in answer
    assert "lines, " in answer and "so a dependency or call written there is not counted" in answer
    assert "lib/broken.py has syntax errors: " in _answer("lib/broken.py", repo)
    assert "syntax errors" not in _answer("lib/fine.py", repo)


def test_go_package_by_folder_and_calls_by_receiver_type(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "go",
        {
            "go.mod": "module example.com/m\n\ngo 1.22\n",
            "internal/tracker/tracker.go": "package tracker\n\ntype Tracker struct{}\n\nfunc New() *Tracker { return nil }\n",
            "internal/tracker/parser.go": (
                "package tracker\n\ntype parser struct{}\n\nfunc (p *parser) Reset() {}\n\n"
                "func (p *parser) run() { p.Reset() }\n"
            ),
            "internal/build/builder.go": (
                "package build\n\ntype builder struct{}\n\nfunc (b *builder) Reset() {}\n\n"
                "func use(b *builder) { b.Reset() }\n"
            ),
            "cmd/main.go": 'package main\n\nimport "example.com/m/internal/tracker"\n\nfunc main() { tracker.New() }\n',
        },
    )
    assert "cmd/main.go" in _answer("what imports internal/tracker", repo)
    callers = _answer("who calls parser.Reset", repo)
    assert "internal/tracker/parser.go" in callers and "internal/build/builder.go" not in callers
