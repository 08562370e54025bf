"""The subset of CEL the glimmer CRDs' ``x-kubernetes-validations`` rules are written in.

Grammar: ``||``, ``&&``, ``!``, ``==``, ``!=``, parentheses, ``has(self.a.b)``, ``size(x)``,
field access from ``self`` and from ``oldSelf`` (the stored value: a transition rule, checked
on updates only, as the API server does), string/int/bool literals, and the string methods
``startsWith``, ``endsWith`` and ``contains``. A rule outside the subset is not enforced; it
is reported by ``unsupported``, so a test keeps the subset covering every rule the CRDs hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")|(?P<num>\d+)"
    r"|(?P<op>\|\||&&|==|!=|[!().,])|(?P<id>[A-Za-z_][A-Za-z0-9_]*))"
)
_ABSENT = object()


class Unsupported(ValueError):
    pass


@dataclass(frozen=True)
class Rule:
    path: tuple[str, ...]  # schema path: property names, "[]" for list items
    rule: str
    message: str
    tree: Any  # the parsed expression, or None when outside the subset


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
        if self.peek() in ("==", "!="):
            op = self.take()[1]
            left = (op, left, self.unary())
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return ("not", self.unary())
        return self.postfix()

    def postfix(self) -> Any:
        node = self.atom()
        while self.peek() == ".":
            self.take()
            name = self.take()[1]
            if self.peek() == "(":
                self.take("(")
                arg = self.or_()
                self.take(")")
                if name not in ("startsWith", "endsWith", "contains"):
                    raise Unsupported(name)
                node = ("call", name, node, arg)
            else:
                node = ("get", node, name)
        return node

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
        if text in ("true", "false"):
            return ("lit", text == "true")
        if text == "self":
            return ("self",)
        if text == "oldSelf":
            return ("old",)
        if text in ("has", "size") and self.peek() == "(":
            self.take("(")
            arg = self.or_()
            self.take(")")
            if text == "has" and arg[0] != "get":
                raise Unsupported("has() needs a field")
            return (text, arg)
        raise Unsupported(text)


def _uses_old(node: Any) -> bool:
    return isinstance(node, tuple) and (node == ("old",) or any(_uses_old(n) for n in node))


def _eval(node: Any, value: Any, old: Any = _ABSENT) -> Any:
    op = node[0]
    if op == "lit":
        return node[1]
    if op == "self":
        return value
    if op == "old":
        return old
    if op == "get":
        base = _eval(node[1], value, old)
        if not isinstance(base, Mapping) or node[2] not in base:
            return _ABSENT
        return base[node[2]]
    if op == "has":
        return _eval(node[1], value, old) is not _ABSENT
    if op == "size":
        inner = _eval(node[1], value, old)
        return len(inner) if isinstance(inner, (str, list, Mapping)) else 0
    if op == "not":
        return not _eval(node[1], value, old)
    if op == "and":
        return bool(_eval(node[1], value, old)) and bool(_eval(node[2], value, old))
    if op == "or":
        return bool(_eval(node[1], value, old)) or bool(_eval(node[2], value, old))
    if op in ("==", "!="):
        equal = _eval(node[1], value, old) == _eval(node[2], value, old)
        return equal if op == "==" else not equal
    if op == "call":
        target, arg = _eval(node[2], value, old), _eval(node[3], value, old)
        if not isinstance(target, str) or not isinstance(arg, str):
            return False
        return {
            "startsWith": target.startswith,
            "endsWith": target.endswith,
            "contains": target.__contains__,
        }[node[1]](arg)
    raise Unsupported(op)


def rules_of(schema: Mapping[str, Any], path: tuple[str, ...] = ()) -> list[Rule]:
    out: list[Rule] = []
    for entry in schema.get("x-kubernetes-validations") or ():
        text = entry.get("rule", "")
        try:
            tree = _Parser(text).parse()
        except Unsupported:
            tree = None
        out.append(Rule(path, text, entry.get("message") or f"failed rule: {text}", tree))
    for name, sub in (schema.get("properties") or {}).items():
        out += rules_of(sub, (*path, name))
    if isinstance(schema.get("items"), Mapping):
        out += rules_of(schema["items"], (*path, "[]"))
    return out


def unsupported(schema: Mapping[str, Any]) -> list[str]:
    return [r.rule for r in rules_of(schema) if r.tree is None]


def _nodes(value: Any, path: tuple[str, ...], shown: str = "") -> Iterator[tuple[str, Any]]:
    if not path:
        yield shown, value
        return
    head, rest = path[0], path[1:]
    if head == "[]":
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from _nodes(item, rest, f"{shown}[{i}]")
    elif isinstance(value, Mapping) and head in value:
        yield from _nodes(value[head], rest, f"{shown}.{head}" if shown else head)


def check(rules: list[Rule], obj: Any, old: Any = None) -> list[tuple[str, str]]:
    """(field path, message) for each rule a node of ``obj`` breaks; a transition rule (one
    naming ``oldSelf``) only where ``old`` has the node too."""
    failed = []
    for rule in rules:
        if rule.tree is None:
            continue
        transition = _uses_old(rule.tree)
        before = dict(_nodes(old, rule.path)) if transition and old is not None else {}
        for shown, node in _nodes(obj, rule.path):
            if transition and shown not in before:
                continue
            if not _eval(rule.tree, node, before.get(shown, _ABSENT)):
                failed.append((shown, f'Invalid value: "object": {rule.message}'))
    return failed
