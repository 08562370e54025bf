"""Label and field selectors, parsed once per request and matched against each object.

Label selectors take the full grammar of ``kubectl -l``: ``k=v``, ``k==v``, ``k!=v``,
``k in (a,b)``, ``k notin (a,b)``, ``k`` and ``!k``. Field selectors take ``=``, ``==`` and
``!=`` on the fields a real API server indexes for the kind; any other field is refused with
400 ("field label not supported"), so a client relying on an unsupported field fails here as it
would on a cluster instead of silently getting every object.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_REQUIREMENT = re.compile(
    r"""\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9_./-]+)
        (?:\s*(?P<op>==|=|!=)\s*(?P<value>[A-Za-z0-9_.-]*)
          |\s+(?P<setop>in|notin)\s*\((?P<values>[^)]*)\)
        )?\s*""",
    re.VERBOSE,
)

# Beyond metadata.name and metadata.namespace, which every kind supports.
SUPPORTED_FIELDS: Mapping[str, frozenset[str]] = {
    "Pod": frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        }
    ),
    "Node": frozenset({"spec.unschedulable"}),
    "Event": frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
    "Secret": frozenset({"type"}),
    "Namespace": frozenset({"status.phase"}),
}
_COMMON_FIELDS = frozenset({"metadata.name", "metadata.namespace"})


class SelectorError(ValueError):
    """A selector the API server would answer 400 BadRequest to."""


Predicate = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Selector:
    """Both selectors of one request; ``matches`` is True for an object both accept."""

    label: tuple[Predicate, ...] = ()
    field: tuple[Predicate, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.label and not self.field

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all(p(obj) for p in self.label) and all(p(obj) for p in self.field)


def _split(text: str) -> list[str]:
    """Split on commas that are not inside a set's parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return obj.get("metadata", {}).get("labels") or {}


def _label_predicate(term: str) -> Predicate:
    m = _REQUIREMENT.fullmatch(term)
    if m is None:
        raise SelectorError(f"unable to parse requirement: {term!r}")
    key, neg, op, setop = m["key"], bool(m["neg"]), m["op"], m["setop"]
    if neg and (op or setop):
        raise SelectorError(f"unable to parse requirement: {term!r}")
    if neg:
        return lambda o: key not in _labels(o)
    if op in ("=", "=="):
        value = m["value"]
        return lambda o: _labels(o).get(key) == value
    if op == "!=":
        value = m["value"]
        return lambda o: _labels(o).get(key) != value
    if setop:
        values = frozenset(v.strip() for v in m["values"].split(",") if v.strip())
        if setop == "in":
            return lambda o: _labels(o).get(key) in values
        return lambda o: _labels(o).get(key) not in values
    return lambda o: key in _labels(o)


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def _field_predicate(term: str, kind: str) -> Predicate:
    m = re.fullmatch(r"\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*", term)
    if m is None:
        raise SelectorError(f"invalid field selector: {term!r}")
    path, op, value = m.groups()
    if path not in _COMMON_FIELDS and path not in SUPPORTED_FIELDS.get(kind, frozenset()):
        raise SelectorError(f"field label not supported: {path}")
    if op == "!=":
        return lambda o: _field_value(o, path) != value
    return lambda o: _field_value(o, path) == value


def parse(label_selector: str | None, field_selector: str | None, kind: str) -> Selector:
    labels = tuple(_label_predicate(t) for t in _split(label_selector or ""))
    fields = tuple(_field_predicate(t, kind) for t in _split(field_selector or ""))
    return Selector(label=labels, field=fields)
