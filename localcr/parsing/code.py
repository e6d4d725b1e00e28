"""Source code through tree-sitter: definitions (module, class/impl/trait, function/method) with their names,
signatures, doc comments and nesting, and the syntax tree as units that chunk boundaries follow.

Grammars come compiled in tree-sitter-language-pack (0.x: its 1.x releases fetch grammars from GitHub at run
time, which an offline tool cannot do). A file's language is its suffix's; an imported document comes without
a name, so its language is the grammar, among the common ones, that parses it with the fewest errors. A
document with no grammar, or whose tree is mostly errors, has no `Syntax`: callers fall back to their
line-based rules (`structure` to its regular expressions) and `stats` names the document.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import re
import warnings
from bisect import bisect_right
from dataclasses import dataclass, field

# localcr's code suffixes (readers.CODE_SUFFIXES) -> the grammar that parses them.
GRAMMARS = {
    "py": "python", "pyi": "python", "rs": "rust", "c": "c", "h": "cpp", "cc": "cpp", "cpp": "cpp", "hpp": "cpp",
    "cxx": "cpp", "go": "go", "java": "java", "kt": "kotlin", "scala": "scala", "js": "javascript",
    "jsx": "javascript", "mjs": "javascript", "ts": "typescript", "tsx": "tsx", "cs": "csharp", "rb": "ruby",
    "php": "php", "swift": "swift", "m": "objc", "sh": "bash", "bash": "bash", "zsh": "bash", "lua": "lua",
    "r": "r", "jl": "julia", "sql": "sql", "toml": "toml", "yaml": "yaml", "yml": "yaml", "ini": "ini",
    "cfg": "ini", "json": "json", "css": "css", "scss": "scss", "proto": "proto", "cmake": "cmake",
    "el": "elisp", "clj": "clojure", "ex": "elixir", "exs": "elixir", "erl": "erlang", "hs": "haskell",
    "ml": "ocaml", "dart": "dart", "zig": "zig", "nim": "nim", "v": "verilog",
}
# Tried, in this order (the first wins a tie), on code that comes without a file name. PHP is left out: its
# grammar reads any text without `<?php` as inline HTML, error-free.
GUESSED = ("python", "rust", "go", "java", "c", "cpp", "csharp", "typescript", "javascript", "kotlin", "swift",
           "scala", "ruby", "bash")
# How much of a file the guess parses. Not a short prefix: a prefix cut inside a block (a C++ namespace holds the
# whole file) reads as one long error in the right grammar, and the guess went to C# or none on the code set.
GUESS_BYTES = 1 << 18
MAX_ERROR_SHARE = 0.2  # a tree with more of its bytes in ERROR nodes is the wrong grammar or not code

# Node types that define something, across the pack's grammars: "type" for containers (their members nest),
# "function" for callables.
DEFINITIONS = {
    **dict.fromkeys((
        "class_definition", "class_declaration", "abstract_class_declaration", "class_specifier", "struct_specifier",
        "union_specifier", "enum_specifier", "struct_item", "enum_item", "union_item", "trait_item", "impl_item",
        "mod_item", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration",
        "struct_declaration", "namespace_definition", "namespace_declaration", "file_scoped_namespace_declaration",
        "internal_module", "module", "class", "type_declaration", "object_definition",
        "trait_definition", "protocol_declaration", "trait_declaration", "macro_definition", "type_alias_declaration",
        "type_item", "extension_declaration", "mixin_declaration",
    ), "type"),
    **dict.fromkeys((
        "function_definition", "function_declaration", "function_item", "function_signature_item",
        "method_definition", "method_declaration", "constructor_declaration", "method", "singleton_method",
        "generator_function_declaration", "method_signature", "abstract_method_signature", "function_signature",
    ), "function"),
}
# Node types that define something in one grammar only (elsewhere the same name means something else).
LANGUAGE_DEFINITIONS = {
    "julia": {"module_definition": "type", "struct_definition": "type", "abstract_definition": "type",
              "macro_definition": "function"},
    "ocaml": {"module_definition": "type", "class_definition": "type"},
    "proto": {"message": "type", "service": "type", "enum": "type", "rpc": "function"},
    "haskell": {"data_type": "type", "newtype": "type", "class": "type", "instance": "type", "function": "function"},
    "erlang": {"fun_decl": "function"},
    "nim": {"proc_declaration": "function", "func_declaration": "function", "iterator_declaration": "function",
            "template_declaration": "function", "macro_declaration": "function"},
    "verilog": {"module_declaration": "type", "function_declaration": "function", "task_declaration": "function"},
    "cmake": {"function_def": "function", "macro_def": "function"},
    "kotlin": {"object_declaration": "type"},
    "sql": {"create_table": "type", "create_view": "type", "create_type": "type", "create_function": "function"},
    "toml": {"table": "type", "table_array_element": "type"},
}
# Languages that define by calling a form (Elixir's `def`, Clojure's `defn`): the form's name -> role.
DEFINING_FORMS = {
    "elixir": {**dict.fromkeys(("defmodule", "defprotocol", "defimpl"), "type"),
               **dict.fromkeys(("def", "defp", "defmacro", "defmacrop", "defguard", "defdelegate"), "function")},
    "clojure": {**dict.fromkeys(("ns", "defprotocol", "defrecord", "deftype"), "type"),
                **dict.fromkeys(("defn", "defn-", "defmacro", "defmulti", "defmethod"), "function")},
}
# Definitions that only group a file's members (namespaces, Rust's mod, TypeScript's namespace, Ruby's module).
CONTAINERS = {"namespace_definition", "namespace_declaration", "file_scoped_namespace_declaration", "mod_item", "module",
              "internal_module"}
# Nodes whose definition sits inside (decorators, export, template<>): the definition's unit is the wrapper.
WRAPPERS = {"decorated_definition", "export_statement", "template_declaration", "ambient_declaration"}
# Nodes that belong to the node after them (doc comments, attributes, annotations): never a cut between them.
_LEADING = re.compile(r"comment|attribute_item|decorator|annotation|^attribute$")
_DECLARATIONS = {"lexical_declaration", "variable_declaration"}  # JavaScript's `const f = function () {}`
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
_BODIES = re.compile(r"body$|^block$|^do_block$|^Block$|^compound_statement$|^declaration_list$|^statement_block$|^field_declaration_list$")
_RECEIVER = re.compile(r"func \(\s*(?:\w+\s+)?\*?(\w+)")  # Go: the type a method is declared on
_NAME_TYPES = re.compile(r"identifier|^name$|^constant$|^word$|^atom$|^variable$|^unquoted_argument$|_name$|_key$")
_SKIPPED_FOR_NAME = re.compile(r"parameter|body|^block$|^statement|^type_parameters$|modifier|annotation|decorator")
_ASSIGNMENTS = {"binary_operator", "assignment", "left_assignment", "equals_assignment"}
_COMMENT_MARKS = re.compile(r"^\s*(?:/\*\*?|\*/|\*(?!/)|///?!?|#+!?|--|;+|\"\"\"|''')\s?|\s*\*/\s*$|\"\"\"\s*$|'''\s*$", re.MULTILINE)


@dataclass
class Definition:
    """One definition: where it is (character offsets of its own node), what it is, and what it holds."""

    start: int
    end: int
    role: str  # "type" or "function"
    kind: str  # the grammar's node type (class_definition, impl_item, function_declaration ...)
    name: str
    signature: str  # its header up to its body, whitespace collapsed, at most 80 characters
    doc: str  # its doc comment or docstring, whitespace collapsed ("" when it has none)
    children: list[Definition] = field(default_factory=list)


@dataclass
class Unit:
    """A span of the text that chunking keeps whole when it fits: a syntax node with the doc comments and
    attributes before it, and the whitespace that leads into it."""

    start: int
    end: int
    definition: bool  # a definition (or a wrapper of one): a place chunks prefer to begin
    _node: object = field(repr=False, default=None)
    _syntax: Syntax | None = field(repr=False, default=None)

    lead: int = -1  # where its node begins, when doc comments or attributes come first (else -1)

    def inner(self) -> list[Unit]:
        """The units this one is made of, covering exactly its span: its leading comments, then its node; or
        its node's children. Empty for a leaf."""
        if self.lead > self.start:
            return [Unit(self.start, self.lead, False), Unit(self.lead, self.end, self.definition, self._node, self._syntax)]
        node = self._node
        if node is None:
            return []
        while node.type in WRAPPERS and node.named_child_count:  # a wrapper's content is its definition's
            node = node.named_children[-1]
        return self._syntax.units(node.children, self.start, self.end) if node.child_count else []


class Syntax:
    """A parsed source file: its definitions and the units of its tree, in character offsets of `text`."""

    def __init__(self, text: str, language: str, tree):
        self.text, self.language, self.tree = text, language, tree
        data = text.encode("utf-8", "surrogatepass")
        self._bytes = data
        # tree-sitter speaks UTF-8 byte offsets; Python strings index characters
        self._char_at = None if len(data) == len(text) else list(itertools.accumulate(len(c.encode("utf-8", "surrogatepass")) for c in text))

    def char(self, byte: int) -> int:
        return byte if self._char_at is None else bisect_right(self._char_at, byte)

    def slice(self, node) -> str:
        return self._bytes[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def top(self) -> list[Unit]:
        root = self.tree.root_node
        return self.units(root.children, 0, len(self.text))

    def units(self, children, start: int, end: int) -> list[Unit]:
        """Children as consecutive units covering [start, end): a comment or attribute joins the node after it
        unless a blank line parts them, and each unit begins at the start of its first line when only
        indentation precedes it there."""
        groups: list[list] = []
        for child in children:
            glued = groups and _LEADING.search(groups[-1][-1].type) and not _blank_between(self._bytes, groups[-1][-1], child)
            if glued:
                groups[-1].append(child)
            else:
                groups.append([child])
        cuts = [start]
        for group in groups[1:]:
            cut = self._line_start(self.char(group[0].start_byte))
            cuts.append(max(cut, cuts[-1]))
        cuts.append(end)
        units = []
        for group, a, b in zip(groups, cuts, cuts[1:]):
            if b > a:
                main = group[-1]
                lead = self._line_start(self.char(main.start_byte)) if len(group) > 1 else -1
                units.append(Unit(a, b, _is_definition(main, self.language), main, self, lead if a < lead < b else -1))
        return units

    def _line_start(self, pos: int) -> int:
        line = self.text.rfind("\n", 0, pos) + 1
        return line if not self.text[line:pos].strip() else pos

    @functools.cached_property
    def definitions(self) -> list[Definition]:
        """The file's definitions, outermost first, each with the ones nested in it (a Go method under the
        type it is declared on, as Go nests them by receiver, not by position)."""
        found = self._definitions(self.tree.root_node)
        if self.language == "go":
            types = {d.name: d for d in found if d.role == "type"}
            owned = {id(d): types[r.group(1)] for d in found if (r := _RECEIVER.match(d.signature)) and r.group(1) in types}
            for d in found:
                if id(d) in owned:
                    owned[id(d)].children.append(d)
            found = [d for d in found if id(d) not in owned]
        return found

    def _definitions(self, root) -> list[Definition]:
        """Definitions under a node, each holding those under it; walked with a stack, not recursion, so a
        deeply nested tree (generated code, long expression chains) costs no Python stack."""
        top: list[Definition] = []
        stack = [(child, top) for child in reversed(root.named_children)]
        while stack:
            node, siblings = stack.pop()
            inside = siblings
            if (role := _role(node, self.language)) and (name := self._name(node)):
                definition = Definition(
                    start=self.char(node.start_byte), end=self.char(node.end_byte), role=role, kind=node.type,
                    name=name, signature=self._signature(node), doc=self._doc(node))
                siblings.append(definition)
                inside = definition.children
            stack.extend((child, inside) for child in reversed(node.named_children))
        return top

    def _name(self, node) -> str:
        if node.type == "impl_item":
            kind, trait = node.child_by_field_name("type"), node.child_by_field_name("trait")
            return (f"{self.slice(trait)} for " if trait else "") + (self.slice(kind) if kind else "")
        named = node.child_by_field_name("name")
        if node.type in ("call", "list_lit"):  # a defining form: its first argument names what it defines
            rest = node.named_children[1:] if node.type == "list_lit" else (
                node.named_children[1].named_children[:1] if node.named_child_count > 1 else [])
            named = rest[0] if rest else None
            if named is not None and named.type == "call":  # Elixir: def f(x) names f
                named = named.child_by_field_name("target") or named
        elif node.type == "Decl":  # Zig: fn f() ..., or const S = struct {...}
            head = node.named_children[0]
            named = head.child_by_field_name("function") or head.child_by_field_name("variable_type_function")
        elif named is not None and node.parent is not None and node.parent.type in _ASSIGNMENTS \
                and named.type == "function":
            named = None  # R: `function` is the keyword; the name is what it is assigned to
        if named is None and (declarator := node.child_by_field_name("declarator")) is not None:
            while (inner := declarator.child_by_field_name("declarator")) is not None:  # C: pointers, functions
                declarator = inner
            named = declarator
        if named is None:
            spec = next((c for c in node.named_children if c.type == "type_spec"), None)  # Go: type X struct
            named = spec.child_by_field_name("name") if spec is not None else None
        if named is None and node.parent is not None and node.parent.type in _ASSIGNMENTS:  # R: f <- function(x)
            target = node.parent.child_by_field_name("lhs") or node.parent.child_by_field_name("left")
            named = target if target is not None and target != node else None
        if named is None:
            named = _first_name(node)
        if node.type in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier") \
                and node.child_by_field_name("body") is None:
            return ""  # a use of the type (`struct s x;`), not its definition
        return " ".join(self.slice(named).split()) if named is not None else ""

    def _signature(self, node) -> str:
        body = _body(node)
        end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
        head = self._bytes[node.start_byte:end].decode("utf-8", "replace")
        if body is None:
            head = head.split("\n")[0]
        sig = " ".join(head.split()).rstrip("{:=").strip()
        return sig if len(sig) <= 80 else sig[:77] + "..."

    def _doc(self, node) -> str:
        """The comments right above the definition (or its wrapper), else a docstring opening its body."""
        outer = node
        while outer.parent is not None and outer.parent.type in WRAPPERS:
            outer = outer.parent
        comments = []
        sibling = outer.prev_named_sibling
        after = outer
        while sibling is not None and _LEADING.search(sibling.type) and not _blank_between(self._bytes, sibling, after):
            if "comment" in sibling.type:
                comments.insert(0, self.slice(sibling))
            after, sibling = sibling, sibling.prev_named_sibling
        if not comments:
            body = _body(node)
            first = body.named_children[0] if body is not None and body.named_child_count else None
            if first is not None and first.type == "expression_statement" and first.named_child_count:
                first = first.named_children[0]
            if first is not None and first.type == "string":
                comments = [self.slice(first)]
        return comment_text("\n".join(comments))

    def leading_comments(self) -> list[str]:
        """Comment blocks and docstrings before the file's first definition (licence headers, module docs), inside
        namespaces too: their members are the file's top level."""
        blocks, current, previous = [], [], None
        for child in _top_level(self.tree.root_node):
            if _is_definition(child, self.language) and not (child.type in WRAPPERS and not child.named_child_count):
                break
            is_doc = "comment" in child.type or child.type == "string" or (
                child.type == "expression_statement" and child.named_child_count and child.named_children[0].type == "string")
            if is_doc and current and not _blank_between(self._bytes, previous, child):
                current.append(self.slice(child))
            else:  # a new block: this comment's, or none after code (a package line, imports)
                if current:
                    blocks.append(comment_text("\n".join(current)))
                current = [self.slice(child)] if is_doc else []
            previous = child
        if current:
            blocks.append(comment_text("\n".join(current)))
        return [b for b in blocks if b]

    def error_share(self) -> float:
        """The share of the file's bytes inside ERROR nodes (missing tokens count one byte each)."""
        return _error_bytes(self.tree.root_node) / max(1, len(self._bytes))


def label(text: str, kind: str) -> str:
    """How a code document's structure is read, for `stats`: "tree-sitter:<grammar>", or "regex" (the fallback)."""
    syntax = parse(text, kind)
    return f"tree-sitter:{syntax.language}" if syntax is not None else "regex"


def comment_text(raw: str) -> str:
    """A comment or docstring as words: markers (//, ///, /*, *, #, triple quotes) and attribute lines out."""
    lines = [line for line in _COMMENT_MARKS.sub("", raw).split("\n") if not line.strip().startswith("@")]
    return " ".join(" ".join(lines).split())


def _top_level(node):
    """The named nodes at a file's top level, in order, with a namespace's members in its place."""
    for child in node.named_children:
        if child.type in CONTAINERS and (body := _body(child)) is not None:
            yield from _top_level(body)
        else:
            yield child


def _role(node, language: str) -> str | None:
    """"type" or "function" for a node that defines one (`const f = () => ...` too), else None."""
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        return "function" if value is not None and value.type in _FUNCTION_VALUES else None
    if language in DEFINING_FORMS:
        return DEFINING_FORMS[language].get(_form(node).decode()) if node.type in ("call", "list_lit") else None
    if language == "zig" and node.type == "Decl":
        if any(c.type == "FnProto" for c in node.named_children):
            return "function"
        return "type" if b"struct" in (node.text or b"")[:200] and node.named_child_count and node.named_children[0].type == "VarDecl" else None
    if node.type == "function" and node.child_by_field_name("name") is None:
        return None  # Haskell's `a -> b` in a type
    return LANGUAGE_DEFINITIONS.get(language, {}).get(node.type) or DEFINITIONS.get(node.type)


def _form(node) -> bytes:
    """The name a call or list form starts with: `def` of Elixir's `def f(x)`, `defn` of Clojure's `(defn f ...)`."""
    head = node.child_by_field_name("target") if node.type == "call" else (node.named_children[0] if node.named_child_count else None)
    return (head.text or b"") if head is not None and head.type in ("identifier", "sym_lit") else b""


def _is_definition(node, language: str) -> bool:
    """A definition, or a node that only wraps or declares one (decorators, export, `const f = ...`)."""
    if node.type in WRAPPERS or node.type in _DECLARATIONS:
        return any(_is_definition(c, language) for c in node.named_children)
    return _role(node, language) is not None


def _first_name(node, depth: int = 4):
    """The first identifier in a definition's header (not in its parameters or body), breadth first."""
    level = [node]
    for _ in range(depth):
        level = [c for n in level for c in n.named_children if not _SKIPPED_FOR_NAME.search(c.type)]
        for child in level:
            if _NAME_TYPES.search(child.type):
                return child
    return None


def _body(node):
    """The block a definition's members or statements are in (a `body` field, or a child named like one)."""
    body = node.child_by_field_name("body")
    if body is None:
        body = next((c for c in node.named_children if _BODIES.search(c.type)), None)
    return body


def _blank_between(data: bytes, first, second) -> bool:
    return data.count(b"\n", first.end_byte, second.start_byte) > 1


def _error_bytes(root) -> int:
    total, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            total += node.end_byte - node.start_byte
        elif node.is_missing:
            total += 1
        elif node.has_error:
            stack.extend(node.children)
    return total


@functools.cache
def _parser(language: str):
    from tree_sitter_language_pack import get_parser

    with warnings.catch_warnings():  # the pack's bindings warn about deprecated constructors
        warnings.simplefilter("ignore")
        return get_parser(language)


def language_of(kind: str, text: str) -> str | None:
    """The grammar for a document of this kind ("code:rs", or "code" for one without a file name)."""
    suffix = kind.partition(":")[2]
    if suffix:
        return GRAMMARS.get(suffix.lower())
    return guess_language(text)


_guesses: dict[bytes, str | None] = {}  # by the sample's hash: chunking and contexts ask for the same document


def guess_language(text: str) -> str | None:
    """The grammar that parses the text (its first GUESS_BYTES) with the fewest errors (the first of GUESSED on a
    tie), None when every one finds more than MAX_ERROR_SHARE of it wrong."""
    data = text[:GUESS_BYTES].encode("utf-8", "surrogatepass")
    key = hashlib.sha256(data).digest()
    if key not in _guesses:
        if len(_guesses) > 4096:
            _guesses.clear()
        _guesses[key] = "php" if data.lstrip().startswith(b"<?php") else _least_errors(data)
    return _guesses[key]


STRICT = ("python", "rust", "go", "java", "c", "cpp", "csharp", "typescript")  # grammars prose never satisfies


def parses_cleanly(text: str) -> bool:
    """Whether one of the STRICT grammars reads the text (its first GUESS_BYTES) without any error: code, then."""
    data = text[:GUESS_BYTES].encode("utf-8", "surrogatepass")
    return any(not _parser(language).parse(data).root_node.has_error for language in STRICT)


def _least_errors(data: bytes) -> str | None:
    best, best_share = None, MAX_ERROR_SHARE
    for language in GUESSED:
        share = _error_bytes(_parser(language).parse(data).root_node) / max(1, len(data))
        if share < best_share:
            best, best_share = language, share
            if share == 0:
                break
    return best


@functools.lru_cache(maxsize=8)  # chunking, then a document's contexts and summary, ask for the same tree
def parse(text: str, kind: str) -> Syntax | None:
    """The document's syntax, or None when no grammar reads it (no grammar for its language, or a tree that
    is mostly errors)."""
    language = language_of(kind, text)
    if language is None:
        return None
    syntax = Syntax(text, language, _parser(language).parse(text.encode("utf-8", "surrogatepass")))
    return syntax if syntax.error_share() <= MAX_ERROR_SHARE else None
