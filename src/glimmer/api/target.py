"""TargetSelector: which nodes a run (or each run a schedule creates) puts under test.

What the user wrote is checked here, at load, with the field named: a node name that is blank,
a ``nodeSelector`` that is not a map of Kubernetes labels (an operator such as ``!=`` or ``in``
written into it would otherwise just match nothing at run time), a toleration no scheduler
would read. Whether the selector selects any node is the run's business, at start.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, field_validator

from glimmer.api.base import Wire
from glimmer.api.k8s import Toleration

# Kubernetes label syntax: an optional DNS-subdomain prefix and '/', then a name; values are
# names or empty. 63 and 253 are the API server's limits.
_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
NAME_MAX = 63
PREFIX_MAX = 253
# Selector words of kubectl's -l syntax: a sign that a set-based selector was written into the
# equality-only map.
_OPERATOR_SIGNS = ("!", "=", "(", ")", ",", " ")
TOLERATION_OPERATORS = ("Exists", "Equal")
TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _label_name_ok(name: str) -> bool:
    return len(name) <= NAME_MAX and _NAME.match(name) is not None


def label_key_problem(key: str) -> str | None:
    """Why ``key`` is not a Kubernetes label key, or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > PREFIX_MAX or not _PREFIX.match(prefix)):
        return f"label key {key!r}: the prefix before '/' must be a DNS subdomain"
    if not name or not _label_name_ok(name):
        return (
            f"label key {key!r} is not a label name (up to 63 letters, digits, '-', '_', '.', "
            "starting and ending with a letter or digit)"
        )
    return None


def label_value_problem(value: str) -> str | None:
    """Why ``value`` is not a Kubernetes label value, or None."""
    if _label_name_ok(value):
        return None
    return (
        f"label value {value!r} is not a label value (up to 63 letters, digits, '-', '_', '.', "
        "starting and ending with a letter or digit, or empty)"
    )


def _selector_problem(key: str, value: str) -> str | None:
    problem = label_key_problem(key) or label_value_problem(value)
    if problem is None:
        return None
    if any(sign in key or sign in value for sign in _OPERATOR_SIGNS):
        problem += (
            "; nodeSelector matches labels exactly, one map entry per label: operators such as "
            "!=, in and notin are not supported"
        )
    return problem


def _node_name(name: str) -> str:
    if not name.strip() or name != name.strip():
        raise ValueError(f"node name {name!r} is blank or has spaces around it")
    return name


def _toleration(toleration: Toleration) -> Toleration:
    operator, effect = toleration.operator, toleration.effect
    if operator is not None and operator not in TOLERATION_OPERATORS:
        raise ValueError(
            f"toleration operator {operator!r} is not one of {', '.join(TOLERATION_OPERATORS)}"
        )
    if effect is not None and effect != "" and effect not in TOLERATION_EFFECTS:
        raise ValueError(
            f"toleration effect {effect!r} is not one of {', '.join(TOLERATION_EFFECTS)}"
        )
    if operator == "Exists" and toleration.value:
        raise ValueError("a toleration with operator Exists takes no value")
    if not toleration.key and operator != "Exists":
        raise ValueError("a toleration without a key must have operator Exists")
    if toleration.toleration_seconds is not None and effect != "NoExecute":
        raise ValueError("tolerationSeconds applies to effect NoExecute only")
    return toleration


NodeName = Annotated[str, AfterValidator(_node_name)]
CheckedToleration = Annotated[Toleration, AfterValidator(_toleration)]


class TargetSelector(Wire):
    """Nodes by name (verbatim, in order) or by labels; tolerations go onto every runner pod.

    Selecting nothing is a resolution error of the run, not a schema error: a selector may match
    nodes tomorrow that it does not match today.
    """

    node_names: list[NodeName] | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[CheckedToleration] | None = None

    @field_validator("node_selector")
    @classmethod
    def _labels(cls, selector: dict[str, str] | None) -> dict[str, str] | None:
        for key, value in (selector or {}).items():
            problem = _selector_problem(key, value)
            if problem is not None:
                raise ValueError(problem)
        return selector
