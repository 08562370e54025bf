"""The subset of CEL the ``x-kubernetes-validations`` rules of glimmer's and Trainer's CRDs are
written in, evaluated as the API server evaluates them.

Grammar: ``||``, ``&&``, ``!``, the relations ``== != < <= > >= in``, parentheses, list
literals ``[a, b]``, field access from ``self`` and from ``oldSelf`` (the stored value: a
transition rule, checked on updates only), string/int/bool literals, ``has(x.f)``,
``size(x)`` and ``x.size()``, the string methods ``startsWith``, ``endsWith``, ``contains``
and ``matches`` (RE2's unanchored search; the patterns the CRDs hold read the same in
Python's ``re``), and the macros ``all``, ``exists``, ``exists_one``, ``filter`` and ``map``
over a list (or a map's keys). A rule outside the subset is not enforced; it is reported by
``unsupported``, so a test keeps the subset covering every rule the CRDs hold.

What the API server does around the expression, done here too: a root rule's
``self.metadata`` holds only ``name`` and ``generateName``; reading a field the object does
not have is an evaluation error (``no such key: f``), which refuses the write as a false rule
does, except where ``&&``/``||`` are decided by their other side (CEL's commutative
short-circuit); and a refusal reads ``<path>: Invalid value: "<schema type>": <message>``,
the path ``<nil>`` for a root rule. A transition rule compares a node with the stored one at
the same place, a map list's item with the stored item of the same keys; below any other list
it is not evaluated (the API server cannot correlate such items).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")|(?P<num>\d+)"
    r"|(?P<op>\|\||&&|==|!=|<=|>=|[!<>().,\[\]])|(?P<id>[A-Za-z_][A-Za-z0-9_]*))"
)
_ABSENT = object()
_RELATIONS = ("==", "!=", "<", "<=", ">", ">=", "in")
_STRING_METHODS = ("startsWith", "endsWith", "contains", "matches")
_MACROS = ("all", "exists", "exists_one", "filter", "map")
ROOT = "<nil>"  # how the API server names the path of a root rule's failure


class Unsupported(ValueError):
    pass


class EvalError(Exception):
    """What cel-go reports when an expression cannot be evaluated (``no such key: f``)."""


@dataclass(frozen=True)
class Rule:
    # schema path: property names, "[]" for a list's items, "[k1,k2]" for a map list's (keys)
    path: tuple[str, ...]
    rule: str
    message: str
    tree: Any  # the parsed expression, or None when outside the subset
    kind: str = "object"  # the schema type at ``path``, which a refusal shows as its value


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise Unsupported(text[pos:])
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.bound: list[str] = []  # the macro variables in scope

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks) or (want is not None and self.toks[self.i][1] != want):
            raise Unsupported(f"expected {want!r}")
        self.i += 1
        return self.toks[self.i - 1]

    def parse(self) -> Any:
        tree = self.or_()
        if self.i != len(self.toks):
            raise Unsupported("trailing input")
        return tree

    def or_(self) -> Any:
        left = self.and_()
        while self.peek() == "||":
            self.take()
            left = ("or", left, self.and_())
        return left

    def and_(self) -> Any:
        left = self.cmp()
        while self.peek() == "&&":
            self.take()
            left = ("and", left, self.cmp())
        return left

    def cmp(self) -> Any:
        left = self.unary()
        if self.peek() in _RELATIONS:
            op = self.take()[1]
            left = (op, left, self.unary())
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return ("not", self.unary())
        return self.postfix()

    def items(self, close: str) -> list[Any]:
        """Comma-separated expressions up to ``close`` (the opening token already taken)."""
        out = []
        while self.peek() != close:
            out.append(self.or_())
            if self.peek() != close:
                self.take(",")
        self.take(close)
        return out

    def args(self) -> list[Any]:
        self.take("(")
        return self.items(")")

    def postfix(self) -> Any:
        node = self.atom()
        while self.peek() == ".":
            self.take()
            name = self.take()[1]
            if self.peek() != "(":
                node = ("get", node, name)
            elif name in _MACROS:
                node = self.macro(name, node)
            else:
                args = self.args()
                if name == "size" and not args:
                    node = ("size", node)
                elif name in _STRING_METHODS and len(args) == 1:
                    node = ("call", name, node, args[0])
                else:
                    raise Unsupported(name)
        return node

    def macro(self, name: str, target: Any) -> Any:
        self.take("(")
        kind, var = self.take()
        if kind != "id":
            raise Unsupported(f"{name}() needs a variable")
        self.take(",")
        self.bound.append(var)
        body = self.or_()
        self.bound.pop()
        self.take(")")
        return ("macro", name, target, var, body)

    def atom(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return ("lit", bytes(text[1:-1], "utf-8").decode("unicode_escape"))
        if kind == "num":
            return ("lit", int(text))
        if text == "(":
            node = self.or_()
            self.take(")")
            return node
        if text == "[":
            return ("list", *self.items("]"))
        if text in ("true", "false"):
            return ("lit", text == "true")
        if text in ("self", "oldSelf") or text in self.bound:
            return ("var", text)
        if text in ("has", "size") and self.peek() == "(":
            args = self.args()
            if len(args) != 1:
                raise Unsupported(f"{text}() takes one argument")
            if text == "has" and args[0][0] != "get":
                raise Unsupported("has() needs a field")
            return (text, args[0])
        raise Unsupported(text)


def _uses_old(node: Any) -> bool:
    return isinstance(node, tuple) and (
        node == ("var", "oldSelf") or any(_uses_old(n) for n in node)
    )


def _truth(value: Any) -> bool:
    if not isinstance(value, bool):
        raise EvalError("no such overload")
    return value


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _ordered(op: str, left: Any, right: Any) -> bool:
    if not (
        (_number(left) and _number(right)) or (isinstance(left, str) and isinstance(right, str))
    ):
        raise EvalError("no such overload")
    return bool(
        {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
    )


def _items(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, Mapping):
        return list(value)
    raise EvalError("no such overload")


def _macro(name: str, items: list[Any], var: str, body: Any, env: Mapping[str, Any]) -> Any:
    def test(item: Any) -> Any:
        return _eval(body, {**env, var: item})

    if name == "map":
        return [test(i) for i in items]
    if name == "filter":
        return [i for i in items if _truth(test(i))]
    if name == "exists_one":
        return sum(1 for i in items if _truth(test(i))) == 1
    # all/exists: decided by one element whatever the others' errors (cel-go's folding).
    decisive = name == "exists"
    error: EvalError | None = None
    for item in items:
        try:
            if _truth(test(item)) is decisive:
                return decisive
        except EvalError as e:
            error = error or e
    if error is not None:
        raise error
    return not decisive


def _logic(op: str, left: Any, right: Any, env: Mapping[str, Any]) -> bool:
    decisive = op == "or"  # the value of one side that decides the whole
    error: EvalError | None = None
    for side in (left, right):
        try:
            if _truth(_eval(side, env)) is decisive:
                return decisive
        except EvalError as e:
            error = error or e
    if error is not None:
        raise error
    return not decisive


def _eval(node: Any, env: Mapping[str, Any]) -> Any:
    op = node[0]
    if op == "lit":
        return node[1]
    if op == "var":
        return env[node[1]]
    if op == "list":
        return [_eval(n, env) for n in node[1:]]
    if op == "get":
        base = _eval(node[1], env)
        if not isinstance(base, Mapping) or node[2] not in base:
            raise EvalError(f"no such key: {node[2]}")
        return base[node[2]]
    if op == "has":
        base = _eval(node[1][1], env)
        if not isinstance(base, Mapping):
            raise EvalError("invalid type for field selection.")
        return node[1][2] in base
    if op == "size":
        inner = _eval(node[1], env)
        if not isinstance(inner, (str, list, Mapping)):
            raise EvalError("no such overload")
        return len(inner)
    if op == "not":
        return not _truth(_eval(node[1], env))
    if op in ("and", "or"):
        return _logic(op, node[1], node[2], env)
    if op == "macro":
        return _macro(node[1], _items(_eval(node[2], env)), node[3], node[4], env)
    if op == "call":
        target, arg = _eval(node[2], env), _eval(node[3], env)
        if not isinstance(target, str) or not isinstance(arg, str):
            raise EvalError("no such overload")
        if node[1] == "matches":
            return re.search(arg, target) is not None
        return {
            "startsWith": target.startswith,
            "endsWith": target.endswith,
            "contains": target.__contains__,
        }[node[1]](arg)
    left, right = _eval(node[1], env), _eval(node[2], env)
    if op in ("==", "!="):
        equal = left == right and isinstance(left, bool) == isinstance(right, bool)
        return equal if op == "==" else not equal
    if op == "in":
        return left in _items(right)
    if op in _RELATIONS:
        return _ordered(op, left, right)
    raise Unsupported(op)


def rules_of(schema: Mapping[str, Any], path: tuple[str, ...] = ()) -> list[Rule]:
    out: list[Rule] = []
    kind = str(schema.get("type") or "object")
    for entry in schema.get("x-kubernetes-validations") or ():
        text = entry.get("rule", "")
        try:
            tree = _Parser(text).parse()
        except Unsupported:
            tree = None
        out.append(Rule(path, text, entry.get("message") or f"failed rule: {text}", tree, kind))
    for name, sub in (schema.get("properties") or {}).items():
        out += rules_of(sub, (*path, name))
    if isinstance(schema.get("items"), Mapping):
        # A map list's items are told apart by their keys (what an update's item is compared
        # with); any other list's are not, and no transition rule below one is evaluated.
        keys = schema.get("x-kubernetes-list-map-keys") or ()
        item = f"[{','.join(keys)}]" if schema.get("x-kubernetes-list-type") == "map" else "[]"
        out += rules_of(schema["items"], (*path, item))
    return out


def unsupported(schema: Mapping[str, Any]) -> list[str]:
    return [r.rule for r in rules_of(schema) if r.tree is None]


def _nodes(
    value: Any, path: tuple[str, ...], shown: str = "", same: str | None = ""
) -> Iterator[tuple[str, str | None, Any]]:
    """(path shown, the identity an update's node is matched by, value) of each node at
    ``path``; the identity None below a list whose items have none."""
    if not path:
        yield shown, same, value
        return
    head, rest = path[0], path[1:]
    if head.startswith("["):
        keys = head[1:-1].split(",") if head != "[]" else []
        if isinstance(value, list):
            for i, item in enumerate(value):
                ident = None
                if keys and same is not None and isinstance(item, Mapping):
                    ident = same + repr([item.get(k) for k in keys])
                yield from _nodes(item, rest, f"{shown}[{i}]", ident)
    elif isinstance(value, Mapping) and head in value:
        at = f"{shown}.{head}" if shown else head
        yield from _nodes(value[head], rest, at, None if same is None else f"{same}.{head}")


def _as_root(obj: Any) -> Any:
    """The object a root rule sees: its ``metadata`` cut to ``name`` and ``generateName``."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("metadata"), Mapping):
        return obj
    md = {k: v for k, v in obj["metadata"].items() if k in ("name", "generateName")}
    return {**obj, "metadata": md}


def check(rules: list[Rule], obj: Any, old: Any = None) -> list[tuple[str, str]]:
    """(field path, message) for each rule a node of ``obj`` breaks or cannot be evaluated on;
    a transition rule (one naming ``oldSelf``) only where ``old`` has the same node too."""
    failed = []
    for rule in rules:
        if rule.tree is None:
            continue
        transition = _uses_old(rule.tree)
        root = rule.path == ()
        before: dict[str | None, Any] = {}
        if transition and old is not None:
            before = {same: v for _, same, v in _nodes(old, rule.path) if same is not None}
        for shown, same, node in _nodes(_as_root(obj) if root else obj, rule.path):
            if transition and (same is None or same not in before):
                continue
            env = {"self": node, "oldSelf": before.get(same, _ABSENT)}
            if root and transition:
                env["oldSelf"] = _as_root(env["oldSelf"])
            try:
                why = None if _truth(_eval(rule.tree, env)) else rule.message
            except EvalError as e:
                why = f"{e} evaluating rule: {rule.message}"
            if why is not None:
                failed.append((shown or ROOT, f'Invalid value: "{rule.kind}": {why}'))
    return failed
