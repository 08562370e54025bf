"""Evaluating a checked health expression against one node map (specs/certify.md §7.1).

CEL's runtime rules, as far as the subset of :mod:`health_parse` reaches: selecting a key a map
lacks is an error, not null; ``==`` across types is false (numbers compare by value); ``&&``,
``||``, ``exists`` and ``all`` absorb an error when the other side already decides the result;
ordering needs two numbers or two values of the same type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glimmer.certify.health_parse import (
    Binary,
    Call,
    Expr,
    Ident,
    Index,
    ListLit,
    Lit,
    Logic,
    Macro,
    Select,
    Unary,
)
from glimmer.errors import GlimmerError


class HealthEvalError(GlimmerError):
    """An expression that failed on one node (§7.1: logged, never fatal)."""


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def equal(a: object, b: object) -> bool:
    """CEL heterogeneous equality: numbers by value, everything else only within its type
    (Python's ``True == 1`` must not leak in)."""
    if _number(a) and _number(b):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return a == b


def _order(op: str, a: Any, b: Any) -> bool:
    comparable = (_number(a) and _number(b)) or (type(a) is type(b) and isinstance(a, str | bool))
    if not comparable:
        raise HealthEvalError(f"no such overload: {type(a).__name__} {op} {type(b).__name__}")
    result: bool = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    return result


def _bool(v: object, what: str) -> bool:
    if not isinstance(v, bool):
        raise HealthEvalError(f"{what} needs a bool, got {type(v).__name__}")
    return v


def _try_bool(e: Expr, env: Mapping[str, Any], what: str) -> bool | HealthEvalError:
    try:
        return _bool(evaluate(e, env), what)
    except HealthEvalError as err:
        return err


def _logic(e: Logic, env: Mapping[str, Any]) -> bool:
    # CEL's commutative && and ||: a deciding term wins even when another term errs.
    decides = e.op == "||"
    error: HealthEvalError | None = None
    for term in e.terms:
        got = _try_bool(term, env, f"'{e.op}'")
        if got is decides:
            return decides
        if isinstance(got, HealthEvalError):
            error = error or got
    if error is not None:
        raise error
    return not decides


def _macro(e: Macro, env: Mapping[str, Any]) -> bool:
    target = evaluate(e.target, env)
    if not isinstance(target, list | dict):
        raise HealthEvalError(f"{e.name}() needs a list or map, got {type(target).__name__}")
    decides = e.name == "exists"  # exists stops at a true, all at a false
    error: HealthEvalError | None = None
    for item in target:
        got = _try_bool(e.predicate, {**env, e.var: item}, f"the {e.name}() predicate")
        if got is decides:
            return decides
        if isinstance(got, HealthEvalError):
            error = error or got
    if error is not None:
        raise error
    return not decides


def _select(operand: object, key: object) -> object:
    if isinstance(operand, dict):
        if key not in operand:
            raise HealthEvalError(f"no such key: {key!r}")
        return operand[key]
    if isinstance(operand, list) and isinstance(key, int) and not isinstance(key, bool):
        i = key
        if not 0 <= i < len(operand):
            raise HealthEvalError(f"index {i} out of range of a list of {len(operand)}")
        return operand[i]
    raise HealthEvalError(f"cannot index {type(operand).__name__} with {type(key).__name__}")


def _call(e: Call, env: Mapping[str, Any]) -> object:
    if e.name == "has":
        sel = e.args[0]
        assert isinstance(sel, Select)
        operand = evaluate(sel.operand, env)
        if not isinstance(operand, dict):
            raise HealthEvalError(f"has() needs a map, got {type(operand).__name__}")
        return sel.field in operand
    target = evaluate(e.target if e.target is not None else e.args[0], env)
    if e.name == "size":
        if not isinstance(target, str | list | dict):
            raise HealthEvalError(f"size() of {type(target).__name__}")
        return len(target)
    arg = evaluate(e.args[0], env)
    if not isinstance(target, str) or not isinstance(arg, str):
        raise HealthEvalError(f"{e.name}() needs strings")
    if e.name == "startsWith":
        return target.startswith(arg)
    return target.endswith(arg) if e.name == "endsWith" else arg in target


def _binary(e: Binary, env: Mapping[str, Any]) -> bool:
    left, right = evaluate(e.left, env), evaluate(e.right, env)
    if e.op == "==":
        return equal(left, right)
    if e.op == "!=":
        return not equal(left, right)
    if e.op == "in":
        if isinstance(right, dict):
            return left in right if isinstance(left, str | int | bool) else False
        if isinstance(right, list):
            return any(equal(left, item) for item in right)
        raise HealthEvalError(f"'in' needs a list or map, got {type(right).__name__}")
    return _order(e.op, left, right)


def evaluate(e: Expr, env: Mapping[str, Any]) -> Any:
    """The value of ``e`` with ``env`` binding ``node`` and macro variables."""
    if isinstance(e, Lit):
        return e.value
    if isinstance(e, Ident):
        return env[e.name]  # the checker proved every name is bound
    if isinstance(e, Select):
        return _select(evaluate(e.operand, env), e.field)
    if isinstance(e, Index):
        return _select(evaluate(e.operand, env), evaluate(e.key, env))
    if isinstance(e, ListLit):
        return [evaluate(item, env) for item in e.items]
    if isinstance(e, Unary):
        value = evaluate(e.operand, env)
        if e.op == "!":
            return not _bool(value, "'!'")
        if not _number(value):
            raise HealthEvalError(f"'-' needs a number, got {type(value).__name__}")
        return -value
    if isinstance(e, Logic):
        return _logic(e, env)
    if isinstance(e, Binary):
        return _binary(e, env)
    if isinstance(e, Macro):
        return _macro(e, env)
    return _call(e, env)
