"""Override matching (``when``): every criterion present must match; an empty ``when`` always
matches. Criteria are plain mappings shaped like the WhenSpec of specs/certify.md §2.1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from glimmer.certify.platform.errors import PlatformError
from glimmer.errors import Location


@dataclass(frozen=True)
class MatchContext:
    """What an override can be matched against: the detected platform and GPU architecture,
    the workload kind, the topology mode and domain count, and the performance config."""

    platform: str = ""
    gpu_architecture: str = ""
    workload_kind: str = "TrainJob"
    topology_mode: str = "simple"
    domain_count: int = 1
    config: Mapping[str, Any] = field(default_factory=dict)


def string_matches(spec: Mapping[str, Any], value: str) -> bool:
    """A StringMatchSpec: ``equals``, ``in``, ``notIn``; all given must hold."""
    if "equals" in spec and value != spec["equals"]:
        return False
    if "in" in spec and value not in (spec["in"] or []):
        return False
    return not ("notIn" in spec and value in (spec["notIn"] or []))


def int_matches(spec: Mapping[str, Any], value: int) -> bool:
    """An IntMatchSpec: ``equals``, ``greaterThan``, ``lessThan``; all given must hold."""
    if "equals" in spec and value != spec["equals"]:
        return False
    if "greaterThan" in spec and not value > spec["greaterThan"]:
        return False
    return not ("lessThan" in spec and not value < spec["lessThan"])


def subset_matches(want: Any, have: Any) -> bool:
    """``want`` is a subset of ``have``: recursive for maps, deep equality for leaves."""
    if isinstance(want, Mapping):
        return isinstance(have, Mapping) and all(
            k in have and subset_matches(v, have[k]) for k, v in want.items()
        )
    return bool(want == have)


def matches_when(when: Mapping[str, Any] | None, ctx: MatchContext) -> bool:
    """Whether an override's ``when`` matches the context (AND of every criterion given)."""
    when = when or {}
    if "expression" in when:
        # CEL is not available to glimmer's renderer; refusing beats silently ignoring a guard.
        raise PlatformError(
            "CEL is not supported by glimmer's renderer", Location(field="when.expression")
        )
    checks = (
        ("gpuArchitecture", lambda s: string_matches(s, ctx.gpu_architecture)),
        ("platform", lambda s: string_matches(s, ctx.platform)),
        ("workloadKind", lambda s: s == ctx.workload_kind),
        ("config", lambda s: subset_matches(s, ctx.config)),
    )
    for key, check in checks:
        if key in when and not check(when[key]):
            return False
    topology = when.get("topology") or {}
    if "mode" in topology and topology["mode"] != ctx.topology_mode:
        return False
    return not (
        "domainCount" in topology and not int_matches(topology["domainCount"], ctx.domain_count)
    )
