"""Which grammar parses which file, and the tree-sitter queries that pull definitions, calls and imports.

Every language is one `LanguageSpec`: file suffixes, the grammar package (imported only when a file of that
language is parsed) and one query. Capture names are the extractor's vocabulary:

- `@def.<kind>` wraps a definition, `@name` is its name; `@recv` names the type a Go method or Rust `impl`
  block belongs to.
- `@call` wraps a call, `@call.name` is the called name (the last component), `@call.recv` the receiver.
- `@import` wraps an import, `@import.source` is the imported path/module when the grammar exposes it as
  one node (otherwise the extractor reads the `@import` node itself).
- `@package` is a file's package / namespace declaration (Java, Kotlin, C#, PHP, Go).
- `@var` / `@type`: a variable, field or parameter and the type the source gives it (Go, Java, C#,
  Kotlin); a call on that variable is then a call on that type (`p.Reset()` with `p *Parser`).
- `@embed.owner` / `@embed.type`: a Go struct embedding another type (its methods are promoted).
- `@ref` is a type-like name the file mentions (Java, Kotlin, C#, PHP): a class of the same package or
  namespace needs no import, so these names decide which of its neighbours a file depends on.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Language, Query


@dataclass(frozen=True)
class LanguageSpec:
    name: str
    suffixes: tuple[str, ...]
    module: str  # grammar package
    function: str  # function in that package returning the language pointer
    query: str
    # node types whose child holds a definition's body (signature = text before it)
    body_types: frozenset[str] = field(default_factory=frozenset)


_COMMON_BODIES = frozenset(
    {
        "block",
        "body",
        "class_body",
        "function_body",
        "declaration_list",
        "field_declaration_list",
        "compound_statement",
        "body_statement",
        "statement_block",
        "interface_body",
        "enum_body",
        "enum_class_body",
    }
)

PYTHON = """
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(call function: (identifier) @call.name) @call
(call function: (attribute object: (_) @call.recv attribute: (identifier) @call.name)) @call
(import_statement) @import
(import_from_statement) @import
"""

_JS_COMMON = """
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(method_definition name: (property_identifier) @name) @def.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.function
(assignment_expression
  left: (member_expression object: (member_expression object: (identifier) @recv property: (property_identifier) @_p)
                           property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)] (#eq? @_p "prototype")) @def.method
(assignment_expression
  left: (member_expression object: (identifier) @recv property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)] (#not-match? @recv "^(exports|module)$")) @def.method
(assignment_expression
  left: (member_expression object: [(identifier) (member_expression)] @_e property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)] (#match? @_e "^(module\\.)?exports$")) @def.function
(call_expression function: (identifier) @call.name) @call
(call_expression function: (member_expression object: (_) @call.recv property: (property_identifier) @call.name)) @call
(new_expression constructor: (identifier) @call.name) @call
(import_statement source: (string (string_fragment) @import.source)) @import
(export_statement source: (string (string_fragment) @import.source)) @import
(call_expression function: (identifier) @_req arguments: (arguments . (string (string_fragment) @import.source))
  (#eq? @_req "require")) @import
(call_expression function: (import) arguments: (arguments . (string (string_fragment) @import.source))) @import
"""

JAVASCRIPT = (
    _JS_COMMON
    + """
(class_declaration name: (identifier) @name) @def.class
"""
)

TYPESCRIPT = (
    _JS_COMMON
    + """
(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.type
(enum_declaration name: (identifier) @name) @def.enum
(method_signature name: (property_identifier) @name) @def.method
"""
)

GO = """
(package_clause (package_identifier) @package)
(function_declaration name: (identifier) @name) @def.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [(type_identifier) @recv
                                                         (pointer_type (type_identifier) @recv)
                                                         (generic_type type: (type_identifier) @recv)
                                                         (pointer_type (generic_type type: (type_identifier) @recv))]))
  name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(call_expression function: (identifier) @call.name) @call
(call_expression function: (selector_expression operand: (_) @call.recv field: (field_identifier) @call.name)) @call
(import_spec path: (interpreted_string_literal) @import.source) @import
(parameter_declaration name: (identifier) @var
  type: [(type_identifier) @type (pointer_type (type_identifier) @type)
         (generic_type type: (type_identifier) @type) (pointer_type (generic_type type: (type_identifier) @type))])
(var_spec name: (identifier) @var type: [(type_identifier) @type (pointer_type (type_identifier) @type)])
(short_var_declaration left: (expression_list . (identifier) @var)
  right: (expression_list . (call_expression function: (identifier) @type) .) (#match? @type "^[Nn]ew[A-Z]"))
(type_spec name: (type_identifier) @embed.owner
  type: (struct_type (field_declaration_list (field_declaration !name
    type: [(type_identifier) @embed.type (pointer_type (type_identifier) @embed.type)]))))
(short_var_declaration left: (expression_list . (identifier) @var .)
  right: (expression_list . [(composite_literal type: (type_identifier) @type)
                             (unary_expression operand: (composite_literal type: (type_identifier) @type))] .))
"""

RUST = """
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(trait_item name: (type_identifier) @name) @def.trait
(mod_item name: (identifier) @name body: (_)) @def.module
(impl_item type: [(type_identifier) @recv (generic_type type: (type_identifier) @recv)]) @def.impl
(call_expression function: (identifier) @call.name) @call
(call_expression function: (field_expression value: (_) @call.recv field: (field_identifier) @call.name)) @call
(call_expression function: (scoped_identifier path: (_) @call.recv name: (identifier) @call.name)) @call
(use_declaration argument: (_) @import.source) @import
(mod_item name: (identifier) @import.source !body) @import
"""

JAVA = """
(package_declaration [(scoped_identifier) (identifier)] @package)
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(method_invocation object: (_) @call.recv name: (identifier) @call.name) @call
(method_invocation !object name: (identifier) @call.name) @call
(object_creation_expression type: (type_identifier) @call.name) @call
(import_declaration) @import
(type_identifier) @ref
(method_invocation object: (identifier) @ref)
(field_access object: (identifier) @ref)
(marker_annotation name: (identifier) @ref)
(annotation name: (identifier) @ref)
(local_variable_declaration type: [(type_identifier) @type (generic_type (type_identifier) @type)]
  declarator: (variable_declarator name: (identifier) @var) (#not-eq? @type "var"))
(local_variable_declaration type: (type_identifier) @_var_kw
  declarator: (variable_declarator name: (identifier) @var value: (object_creation_expression type: (type_identifier) @type))
  (#eq? @_var_kw "var"))
(field_declaration type: [(type_identifier) @type (generic_type (type_identifier) @type)]
  declarator: (variable_declarator name: (identifier) @var))
(formal_parameter type: [(type_identifier) @type (generic_type (type_identifier) @type)] name: (identifier) @var)
"""

C = """
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.function
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(call_expression function: (identifier) @call.name) @call
(call_expression function: (field_expression argument: (_) @call.recv field: (field_identifier) @call.name)) @call
(preproc_include path: (string_literal (string_content) @import.source)) @import
(preproc_include path: (system_lib_string) @import.source) @import
"""

CPP = """
(function_definition declarator: (function_declarator
   declarator: [(identifier) (field_identifier) (qualified_identifier) (destructor_name) (operator_name)] @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator
   declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @def.function
(function_definition declarator: (reference_declarator (function_declarator
   declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @def.function
(class_specifier name: (type_identifier) @name body: (_)) @def.class
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(namespace_definition name: (namespace_identifier) @name) @def.namespace
(call_expression function: (identifier) @call.name) @call
(call_expression function: (field_expression argument: (_) @call.recv field: (field_identifier) @call.name)) @call
(call_expression function: (qualified_identifier scope: (_) @call.recv name: (identifier) @call.name)) @call
(preproc_include path: (string_literal (string_content) @import.source)) @import
(preproc_include path: (system_lib_string) @import.source) @import
"""

CSHARP = """
(namespace_declaration name: (_) @name) @def.namespace
(file_scoped_namespace_declaration name: (_) @package)
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(struct_declaration name: (identifier) @name) @def.struct
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(invocation_expression function: (identifier) @call.name) @call
(invocation_expression function: (member_access_expression expression: (_) @call.recv name: (identifier) @call.name)) @call
(object_creation_expression type: (identifier) @call.name) @call
(using_directive [(qualified_name) (identifier)] @import.source) @import
((identifier) @ref (#match? @ref "^[A-Z]"))
(variable_declaration type: [(identifier) @type (generic_name (identifier) @type)]
  (variable_declarator name: (identifier) @var))
(variable_declaration type: (implicit_type)
  (variable_declarator name: (identifier) @var (object_creation_expression type: (identifier) @type)))
(parameter type: [(identifier) @type (generic_name (identifier) @type)] name: (identifier) @var)
"""

RUBY = """
(class name: [(constant) (scope_resolution)] @name) @def.class
(module name: [(constant) (scope_resolution)] @name) @def.module
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method
(call receiver: (_) @call.recv method: (identifier) @call.name) @call
(call !receiver method: (identifier) @call.name) @call
(body_statement (identifier) @call.name @call)
(call method: (identifier) @_m arguments: (argument_list . (string (string_content) @import.source))
  (#match? @_m "^require(_relative)?$")) @import
(call !receiver method: (identifier) @_m arguments: (argument_list . (simple_symbol) . (string (string_content) @import.source))
  (#eq? @_m "autoload")) @import
(call method: (identifier) @_m arguments: (argument_list . [(call) (string (interpolation))] @import.source)
  (#match? @_m "^require(_relative)?$")) @import
"""

PHP = """
(namespace_definition name: (namespace_name) @package)
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(function_definition name: (name) @name) @def.function
(method_declaration name: (name) @name) @def.method
(function_call_expression function: (name) @call.name) @call
(member_call_expression object: (_) @call.recv name: (name) @call.name) @call
(scoped_call_expression scope: (_) @call.recv name: (name) @call.name) @call
(object_creation_expression (name) @call.name) @call
(namespace_use_clause . [(qualified_name) (name)] @import.source) @import
(require_expression (string (string_content) @import.source)) @import
(require_once_expression (string (string_content) @import.source)) @import
(include_expression (string (string_content) @import.source)) @import
(include_once_expression (string (string_content) @import.source)) @import
((name) @ref (#match? @ref "^[A-Z]"))
(qualified_name) @ref
"""

KOTLIN = """
(package_header (qualified_identifier) @package)
(class_declaration name: (identifier) @name) @def.class
(object_declaration name: (identifier) @name) @def.class
(function_declaration name: (identifier) @name) @def.function
(call_expression . (identifier) @call.name) @call
(call_expression . (navigation_expression (_) @call.recv . (identifier) @call.name .)) @call
(import (qualified_identifier) @import.source) @import
((identifier) @ref (#match? @ref "^[A-Z]"))
(variable_declaration . (identifier) @var . (user_type . (identifier) @type))
(class_parameter (identifier) @var . (user_type . (identifier) @type))
(parameter (identifier) @var . (user_type . (identifier) @type))
(property_declaration (variable_declaration . (identifier) @var .) . (call_expression . (identifier) @type)
  (#match? @type "^[A-Z]"))
"""

SPECS: tuple[LanguageSpec, ...] = (
    LanguageSpec("python", (".py", ".pyi"), "tree_sitter_python", "language", PYTHON, _COMMON_BODIES),
    LanguageSpec(
        "javascript", (".js", ".jsx", ".mjs", ".cjs"), "tree_sitter_javascript", "language", JAVASCRIPT
    ),
    LanguageSpec(
        "typescript", (".ts", ".mts", ".cts"), "tree_sitter_typescript", "language_typescript", TYPESCRIPT
    ),
    LanguageSpec("tsx", (".tsx",), "tree_sitter_typescript", "language_tsx", TYPESCRIPT),
    LanguageSpec("go", (".go",), "tree_sitter_go", "language", GO),
    LanguageSpec("rust", (".rs",), "tree_sitter_rust", "language", RUST),
    LanguageSpec("java", (".java",), "tree_sitter_java", "language", JAVA),
    LanguageSpec("c", (".c", ".h"), "tree_sitter_c", "language", C),
    LanguageSpec(
        "cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++"),
        "tree_sitter_cpp",
        "language",
        CPP,
    ),
    LanguageSpec("csharp", (".cs",), "tree_sitter_c_sharp", "language", CSHARP),
    LanguageSpec("ruby", (".rb", ".rake"), "tree_sitter_ruby", "language", RUBY),
    LanguageSpec("php", (".php",), "tree_sitter_php", "language_php", PHP),
    LanguageSpec("kotlin", (".kt", ".kts"), "tree_sitter_kotlin", "language", KOTLIN),
)

BY_NAME: dict[str, LanguageSpec] = {s.name: s for s in SPECS}
BY_SUFFIX: dict[str, LanguageSpec] = {suffix: s for s in SPECS for suffix in s.suffixes}


def language_for(path: str) -> LanguageSpec | None:
    """The spec parsing `path`, by suffix (case-insensitive); None for files recall does not parse."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return BY_SUFFIX.get(path[dot:].lower())


def spec_body_types(spec: LanguageSpec) -> frozenset[str]:
    return spec.body_types or _COMMON_BODIES


@cache
def grammar(name: str) -> Language:
    from tree_sitter import Language

    spec = BY_NAME[name]
    module = importlib.import_module(spec.module)
    return Language(getattr(module, spec.function)())


@cache
def query(name: str) -> Query:
    from tree_sitter import Query

    return Query(grammar(name), BY_NAME[name].query)
