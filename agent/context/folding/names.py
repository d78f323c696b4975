"""Name extraction: a source file → its classes, interfaces and functions (seed 001 §3.1 step 1).

Folding keeps names only — no signatures, no bodies — so the model still knows what a file
it once read contains at a tiny fraction of its tokens. Parsing is tree-sitter through
tree-sitter-language-pack; both are imported inside functions because the grammars are
heavy and must stay off the path to the first screen (AGENTS.md).

The walk is table driven: per language, the node types that define a container (class,
interface, struct, trait, …) or a function. Containers are descended into, so methods are
found as functions one level deeper; function bodies are not, so closures and local helpers
stay out of the fold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

FUNCTION = "function"
# The label is the keyword token inside the node (Kotlin and Swift use one node type for
# class, interface, struct, enum, …).
KEYWORD = "<keyword>"
# Go: the label depends on the spec's type (struct, interface); other type aliases are skipped.
GO_TYPE = "<go-type>"
KEYWORD_LABELS = ("class", "interface", "struct", "enum", "protocol", "extension", "actor", "object")

# One table: file suffix → pack language name. Anything not here is "unknown language".
EXTENSION_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".lua": "lua",
    ".sh": "bash",
    ".bash": "bash",
}

_F = FUNCTION
_JS = {
    "class_declaration": "class",
    "class": "class",
    "function_declaration": _F,
    "generator_function_declaration": _F,
    "method_definition": _F,
    "variable_declarator": _F,
}
_TS = {
    **_JS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "method_signature": _F,
    "abstract_method_signature": _F,
    "function_signature": _F,
}
_C = {"struct_specifier": "struct", "union_specifier": "union", "function_definition": _F}
DEFINITION_NODES: dict[str, dict[str, str]] = {
    "python": {"class_definition": "class", "function_definition": _F},
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "go": {"type_spec": GO_TYPE, "function_declaration": _F, "method_declaration": _F},
    "rust": {
        "struct_item": "struct",
        "enum_item": "enum",
        "trait_item": "trait",
        "impl_item": "impl",
        "union_item": "union",
        "function_item": _F,
        "function_signature_item": _F,
    },
    "java": {
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "record",
        "annotation_type_declaration": "interface",
        "method_declaration": _F,
        "constructor_declaration": _F,
    },
    "c": _C,
    "cpp": {**_C, "class_specifier": "class"},
    "csharp": {
        "class_declaration": "class",
        "interface_declaration": "interface",
        "struct_declaration": "struct",
        "record_declaration": "record",
        "enum_declaration": "enum",
        "method_declaration": _F,
        "constructor_declaration": _F,
        "local_function_statement": _F,
    },
    "ruby": {"class": "class", "module": "module", "method": _F, "singleton_method": _F},
    "php": {
        "class_declaration": "class",
        "interface_declaration": "interface",
        "trait_declaration": "trait",
        "enum_declaration": "enum",
        "function_definition": _F,
        "method_declaration": _F,
    },
    "kotlin": {"class_declaration": KEYWORD, "object_declaration": "object", "function_declaration": _F},
    "swift": {
        "class_declaration": KEYWORD,
        "protocol_declaration": "protocol",
        "function_declaration": _F,
        "protocol_function_declaration": _F,
        "init_declaration": _F,
    },
    "scala": {
        "class_definition": "class",
        "object_definition": "object",
        "trait_definition": "trait",
        "function_definition": _F,
        "function_declaration": _F,
    },
    "lua": {"function_declaration": _F},
    "bash": {"function_definition": _F},
}
# Specifiers like `struct buffer b;` merely use a type: only those with a body define one.
NEEDS_BODY = {"struct_specifier", "union_specifier", "class_specifier"}
FIXED_NAMES = {"init_declaration": "init"}
IDENTIFIER_TYPES = {
    "identifier",
    "type_identifier",
    "simple_identifier",
    "constant",
    "name",
    "field_identifier",
    "property_identifier",
    "word",
}
# Grammars lag the languages (C macros, new syntax) and files are read mid-edit: a few bad
# bytes should not hide a whole file, but a file that is mostly errors has no reliable names.
MAX_ERROR_SHARE = 0.1
JS_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
MAX_NAME_CHARS = 80


@dataclass(frozen=True)
class Definition:
    """One named definition. `scope` is the index of the enclosing container (-1: top level)."""

    kind: str  # FUNCTION or a container label such as "class", "interface", "struct"
    name: str
    start_line: int  # 1-based, inclusive
    end_line: int
    depth: int = 0
    scope: int = -1

    @property
    def is_function(self) -> bool:
        return self.kind == FUNCTION


class FoldSkip(Exception):
    """This file cannot be folded; the message is the reason reported to the caller."""


def language_for(path_name: str) -> str | None:
    """Pack language for a file name, by suffix (lower-cased), or None when unknown."""
    dot = path_name.rfind(".")
    return EXTENSION_LANGUAGES.get(path_name[dot:].lower()) if dot >= 0 else None


@cache
def _parser(language: str):
    from tree_sitter_language_pack import get_parser  # heavy: grammars load here, not at import

    return get_parser(language)  # type: ignore[arg-type]


def extract_definitions(source: bytes, language: str) -> list[Definition]:
    """Definitions in source order. Raises FoldSkip for unknown languages or syntax errors."""
    table = DEFINITION_NODES.get(language)
    if table is None:
        raise FoldSkip(f"unknown language {language}")
    try:
        tree = _parser(language).parse(source)
    except Exception as exc:  # a grammar missing from the pack, a parser failure
        raise FoldSkip(f"unparsable: {exc}") from exc
    found: list[Definition] = []
    try:
        if tree.root_node.has_error and _error_bytes(tree.root_node) > MAX_ERROR_SHARE * max(1, len(source)):
            raise FoldSkip("unparsable: syntax errors")
        _walk(tree.root_node, table, found, depth=0, scope=-1)
    except RecursionError as exc:  # pathological nesting (generated code): not worth a deeper walk
        raise FoldSkip("unparsable: nested too deeply") from exc
    return found


def _error_bytes(node) -> int:
    """Bytes under ERROR nodes (MISSING nodes are zero-width: the parser recovered)."""
    if node.type == "ERROR":
        return node.end_byte - node.start_byte
    return sum(_error_bytes(c) for c in node.children if c.has_error) if node.has_error else 0


def _walk(node, table: dict[str, str], found: list[Definition], depth: int, scope: int) -> None:
    for child in node.named_children:
        if child.type == "ERROR":  # names recovered from broken code are guesses
            continue
        label = _label(child, table.get(child.type))
        name = _name(child) if label else None
        if not label or not name:
            _walk(child, table, found, depth, scope)
            continue
        found.append(Definition(label, name, child.start_point[0] + 1, child.end_point[0] + 1, depth, scope))
        if label != FUNCTION:  # methods live inside containers; function bodies are not folded
            _walk(child, table, found, depth + 1, len(found) - 1)


def _label(node, label: str | None) -> str | None:
    if label is None:
        return None
    if node.type in NEEDS_BODY and node.child_by_field_name("body") is None:
        return None
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        return label if value is not None and value.type in JS_FUNCTION_VALUES else None
    if label == GO_TYPE:
        kind = node.child_by_field_name("type")
        kind_type = kind.type if kind is not None else ""
        return {"struct_type": "struct", "interface_type": "interface"}.get(kind_type)
    if label == KEYWORD:
        keywords = [c.type for c in node.children if not c.is_named and c.type in KEYWORD_LABELS]
        return keywords[0] if keywords else "class"
    return label


def _name(node) -> str | None:
    if node.type in FIXED_NAMES:
        return FIXED_NAMES[node.type]
    target = node.child_by_field_name("name")
    if target is None:
        target = node.child_by_field_name("declarator")  # C/C++: name hides in declarators
        while target is not None and target.type.endswith("declarator"):
            inner = target.child_by_field_name("declarator")
            target = inner if inner is not None else (target.named_children or [None])[-1]
    if target is None:
        target = node.child_by_field_name("type")  # Rust `impl Foo`
    if target is None:
        target = next((c for c in node.named_children if c.type in IDENTIFIER_TYPES), None)
    if target is None or not target.text:
        return None
    text = re.sub(r"\s+", " ", target.text.decode("utf-8", "replace")).strip()
    return text[:MAX_NAME_CHARS] or None
