"""Reading a node-health expression (specs/certify.md §7.1) into a tree, and checking its types.

The expressions are CEL over one variable, ``node``. We read the part of CEL that health checks
use — literals, ``node`` and macro variables, field selection, indexing, list literals,
``!``, ``&&``, ``||``, the comparisons, ``in``, the ``exists``/``all`` macros, ``has()``,
``size()`` and the string tests ``startsWith``/``endsWith``/``contains`` — and refuse the rest
by name, rather than pull in a CEL engine for one variable. The two Python CEL engines were
weighed against this subset for issue 17 (bench/cel_eval.py; docs/dependencies.md, "CEL"):
neither has CEL's checker, so both agree with cel-go less often, and both are slower.

Like CEL's checker, an expression is refused before it ever sees a node when it does not
statically return a bool (``node.spec.unschedulable`` alone is ``dyn`` and is refused; write
``== true``) or names a variable that is not declared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from glimmer.errors import InputError, Location

EXPRESSION_FIELD = "spec.nodeHealthMonitor.cel.expression"
MAX_LENGTH = 2048  # §2.4: 1..2048 characters
# Checking and evaluating recurse over the tree; a bound keeps a hostile 2048 characters
# ("((((…" or ".a.a.a…") a refusal instead of a RecursionError.
MAX_DEPTH = 100
ROOT = "node"
MACROS = ("exists", "all")
STRING_TESTS = ("startsWith", "endsWith", "contains")
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=", "in")

# Operators CEL has and this subset does not; named in the refusal so the author knows why.
_UNSUPPORTED = {
    "?": "the conditional operator '? :'",
    ":": "the conditional operator '? :'",
    "+": "arithmetic",
    "*": "arithmetic",
    "/": "arithmetic",
    "%": "arithmetic",
    "{": "map literals",
    "}": "map literals",
}

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
    | (?P<num>\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)
    | (?P<name>[A-Za-z_]\w*)
    | (?P<op>\|\||&&|==|!=|<=|>=|[<>!\-()\[\].,?:+*/%{}])
    )""",
    re.VERBOSE,
)
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"}


class HealthExpressionError(InputError):
    """A health expression we refuse (§7.1: compile or type error → invalid)."""


def _refuse(message: str) -> HealthExpressionError:
    return HealthExpressionError(message, Location(field=EXPRESSION_FIELD))


# ---- the tree ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lit:
    value: object


@dataclass(frozen=True)
class Ident:
    name: str


@dataclass(frozen=True)
class Select:
    operand: Expr
    field: str


@dataclass(frozen=True)
class Index:
    operand: Expr
    key: Expr


@dataclass(frozen=True)
class ListLit:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Unary:
    op: str  # "!" or "-"
    operand: Expr


@dataclass(frozen=True)
class Logic:
    """A flat chain of ``||`` or ``&&``: flat, so fifty alternatives are one level, not fifty."""

    op: str  # "||" or "&&"
    terms: tuple[Expr, ...]


@dataclass(frozen=True)
class Binary:
    op: str  # one of COMPARISONS
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Macro:
    name: str  # exists | all
    target: Expr
    var: str
    predicate: Expr


@dataclass(frozen=True)
class Call:
    name: str  # has | size | startsWith | endsWith | contains
    target: Expr | None
    args: tuple[Expr, ...]


Expr = Lit | Ident | Select | Index | ListLit | Unary | Logic | Binary | Macro | Call


# ---- tokens and parsing -----------------------------------------------------------------------


def _unquote(text: str) -> str:
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), body)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos, end = 0, len(text.rstrip())
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _refuse(f"syntax error: unexpected text at {text[pos:end]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    """Recursive descent in CEL's precedence: || below && below comparisons below unary."""

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, ahead: int = 0) -> str | None:
        at = self.i + ahead
        return self.toks[at][1] if at < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise _refuse("syntax error: the expression ends too early")
        self.i += 1
        return self.toks[self.i - 1]

    def expect(self, op: str) -> None:
        kind, tok = self.take()
        if kind != "op" or tok != op:
            raise _refuse(f"syntax error: expected {op!r}, found {tok!r}")

    def parse(self) -> Expr:
        if not self.toks:
            raise _refuse("syntax error: the expression is empty")
        tree = self.or_()
        if self.i < len(self.toks):
            raise self.unexpected(self.toks[self.i][1])
        return tree

    def unexpected(self, tok: str) -> HealthExpressionError:
        if tok in _UNSUPPORTED:
            return _refuse(f"unsupported: {_UNSUPPORTED[tok]} is not in the supported CEL subset")
        return _refuse(f"syntax error: unexpected {tok!r}")

    def or_(self) -> Expr:
        terms = [self.and_()]
        while self.peek() == "||":
            self.take()
            terms.append(self.and_())
        return terms[0] if len(terms) == 1 else Logic("||", tuple(terms))

    def and_(self) -> Expr:
        terms = [self.relation()]
        while self.peek() == "&&":
            self.take()
            terms.append(self.relation())
        return terms[0] if len(terms) == 1 else Logic("&&", tuple(terms))

    def relation(self) -> Expr:
        left = self.unary()
        while self.peek() in COMPARISONS:
            op = self.take()[1]
            left = Binary(op, left, self.unary())
        return left

    def unary(self) -> Expr:
        if self.peek() in ("!", "-"):
            op = self.take()[1]
            return Unary(op, self.unary())
        return self.member()

    def member(self) -> Expr:
        node = self.primary()
        while self.peek() in (".", "["):
            if self.peek(1) == "?":
                # CEL's optional types (.?field, [?key]): the §7.1 defaults make them needless.
                raise _refuse(
                    "unsupported: optional selection ('.?' / '[?') is not in the supported CEL "
                    "subset; the node defaults of labels, annotations, taints and conditions "
                    "are always present, and has() tests any other field"
                )
            if self.take()[1] == "[":
                key = self.or_()
                self.expect("]")
                node = Index(node, key)
                continue
            kind, name = self.take()
            if kind != "name":
                raise _refuse(f"syntax error: a field name must follow '.', found {name!r}")
            node = self.method(node, name) if self.peek() == "(" else Select(node, name)
        return node

    def args(self) -> tuple[Expr, ...]:
        self.expect("(")
        out: list[Expr] = []
        while self.peek() != ")":
            out.append(self.or_())
            if self.peek() != ",":
                break
            self.take()
        self.expect(")")
        return tuple(out)

    def method(self, target: Expr, name: str) -> Expr:
        args = self.args()
        if name in MACROS:
            if len(args) != 2 or not isinstance(args[0], Ident):
                raise _refuse(f"syntax error: {name}() takes a variable name and a predicate")
            return Macro(name, target, args[0].name, args[1])
        if name in STRING_TESTS and len(args) == 1:
            return Call(name, target, args)
        if name == "size" and not args:
            return Call("size", target, ())
        raise _refuse(
            f"unsupported function {name!r}; supported: exists, all, has, size, "
            "startsWith, endsWith, contains"
        )

    def primary(self) -> Expr:
        kind, tok = self.take()
        if kind == "str":
            return Lit(_unquote(tok))
        if kind == "num":
            return Lit(float(tok) if any(c in tok for c in ".eE") else int(tok))
        if kind == "name":
            if tok in ("true", "false"):
                return Lit(tok == "true")
            if tok == "null":
                return Lit(None)
            if self.peek() == "(":
                return self.function(tok)
            return Ident(tok)
        if tok == "(":
            inner = self.or_()
            self.expect(")")
            return inner
        if tok == "[":
            items: list[Expr] = []
            while self.peek() != "]":
                items.append(self.or_())
                if self.peek() != ",":
                    break
                self.take()
            self.expect("]")
            return ListLit(tuple(items))
        raise self.unexpected(tok)

    def function(self, name: str) -> Expr:
        args = self.args()
        if name == "has":
            if len(args) != 1 or not isinstance(args[0], Select):
                raise _refuse("has() takes one field selection, as in has(node.spec.taints)")
            return Call("has", None, args)
        if name == "size" and len(args) == 1:
            return Call("size", None, args)
        raise _refuse(
            f"unsupported function {name!r}; supported: exists, all, has, size, "
            "startsWith, endsWith, contains"
        )


# ---- static types -----------------------------------------------------------------------------

_NUMBERS = ("int", "double")


def _lit_type(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    return "string" if isinstance(value, str) else "null"


def _want(got: str, allowed: tuple[str, ...], what: str) -> None:
    if got != "dyn" and got not in allowed:
        raise _refuse(f"type error: {what} needs {' or '.join(allowed)}, got {got}")


def type_of(e: Expr, scope: frozenset[str]) -> str:
    """The static type of ``e`` ("dyn" where only a node can tell); refuses what CEL's checker
    refuses: undeclared names and operands no overload accepts."""
    if isinstance(e, Lit):
        return _lit_type(e.value)
    if isinstance(e, Ident):
        if e.name == ROOT:
            return "map"
        if e.name in scope:
            return "dyn"
        raise _refuse(f"undeclared reference to {e.name!r} (the only variable is 'node')")
    if isinstance(e, Select):
        _want(type_of(e.operand, scope), ("map",), f"selecting .{e.field}")
        return "dyn"
    if isinstance(e, Index):
        _want(type_of(e.operand, scope), ("map", "list"), "indexing")
        type_of(e.key, scope)
        return "dyn"
    if isinstance(e, ListLit):
        for item in e.items:
            type_of(item, scope)
        return "list"
    if isinstance(e, Unary):
        got = type_of(e.operand, scope)
        if e.op == "!":
            _want(got, ("bool",), "'!'")
            return "bool"
        _want(got, _NUMBERS, "'-'")
        return got
    if isinstance(e, Logic):
        for term in e.terms:
            _want(type_of(term, scope), ("bool",), f"'{e.op}'")
        return "bool"
    if isinstance(e, Binary):
        return _binary_type(e, scope)
    if isinstance(e, Macro):
        _want(type_of(e.target, scope), ("list", "map"), f"{e.name}()")
        _want(type_of(e.predicate, scope | {e.var}), ("bool",), f"the {e.name}() predicate")
        return "bool"
    if e.name == "has":
        type_of(e.args[0], scope)
        return "bool"
    if e.name == "size":
        _want(type_of(e.target or e.args[0], scope), ("string", "list", "map"), "size()")
        return "int"
    assert e.target is not None  # the string tests are always methods
    _want(type_of(e.target, scope), ("string",), f"{e.name}()")
    _want(type_of(e.args[0], scope), ("string",), f"the argument of {e.name}()")
    return "bool"


def _binary_type(e: Binary, scope: frozenset[str]) -> str:
    left, right = type_of(e.left, scope), type_of(e.right, scope)
    if e.op == "in":
        _want(right, ("list", "map"), "the right side of 'in'")
    elif e.op in ("<", "<=", ">", ">=") and "dyn" not in (left, right):
        same = left == right or (left in _NUMBERS and right in _NUMBERS)
        if not same or left in ("list", "map", "null"):
            raise _refuse(f"type error: no overload of '{e.op}' for ({left}, {right})")
    return "bool"


def _children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Select | Unary):
        return (e.operand,)
    if isinstance(e, Index):
        return (e.operand, e.key)
    if isinstance(e, ListLit):
        return e.items
    if isinstance(e, Logic):
        return e.terms
    if isinstance(e, Binary):
        return (e.left, e.right)
    if isinstance(e, Macro):
        return (e.target, e.predicate)
    if isinstance(e, Call):
        return (*([e.target] if e.target is not None else []), *e.args)
    return ()


def _depth(tree: Expr) -> int:
    """The tree's depth, counted without recursion (the point is to bound recursion)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        e, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in _children(e))
    return deepest


def parse(text: str) -> Expr:
    """The checked tree of a health expression; HealthExpressionError when it is not a valid
    expression of the supported subset returning bool."""
    if len(text) > MAX_LENGTH:
        raise _refuse(f"the expression is {len(text)} characters, the limit is {MAX_LENGTH}")
    try:
        tree = _Parser(text).parse()
    except RecursionError:
        raise _refuse(f"the expression nests deeper than {MAX_DEPTH} levels") from None
    if _depth(tree) > MAX_DEPTH:
        raise _refuse(f"the expression nests deeper than {MAX_DEPTH} levels")
    got = type_of(tree, frozenset())
    if got != "bool":
        raise _refuse(f"the expression must return bool, it returns {got}")
    return tree
