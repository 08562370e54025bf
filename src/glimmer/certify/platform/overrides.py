"""Applying overrides to a Workflow spec (specs/certify.md §5.4), and the platform's own overrides.

An override is a mapping: ``when`` (see :mod:`~glimmer.certify.platform.when`), then any of
``jobTemplate`` (strategic merge), ``jobTemplatePatch`` (RFC 6902, after the merge; a JSON string
or a list), ``dependencies`` (merge-or-append), ``orchestration`` (each non-null part replaces)
and ``env`` (written like the owner's env, so MPI entries get ``-x`` pairs). Every matching
override applies, in list order.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml

from glimmer.certify.platform.env_write import apply_env_to_job_template
from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.merge import apply_dependency_patches, json_patch, strategic_merge
from glimmer.certify.platform.when import MatchContext, matches_when
from glimmer.errors import Location

Obj = dict[str, Any]
ORCHESTRATION_PARTS = ("target", "topology", "execution", "iterations")


@dataclass(frozen=True)
class Applied:
    """One override that matched: its index, a summary of its guard and of what it patches,
    and whether it changed nothing (a guard that matched but a patch that missed its paths)."""

    index: int
    when: str
    patches: str
    no_op: bool


def summarise_when(when: Mapping[str, Any] | None) -> str:
    """``gpuArchitecture=h100, platform in [aws,gcp]``: a guard in one line."""
    parts: list[str] = []
    for key, spec in (when or {}).items():
        if isinstance(spec, Mapping) and key != "topology":
            for op, value in spec.items():
                shown = f"[{','.join(map(str, value))}]" if isinstance(value, list) else value
                word = {"equals": "=", "in": " in ", "notIn": " not in "}.get(op, f" {op} ")
                parts.append(f"{key}{word}{shown}")
        else:
            parts.append(f"{key}={json.dumps(spec, sort_keys=True)}")
    return ", ".join(parts) or "always"


def _summarise_patches(override: Mapping[str, Any]) -> str:
    parts = [
        k for k in ("jobTemplate", "jobTemplatePatch", "env", "orchestration") if override.get(k)
    ]
    deps = override.get("dependencies") or []
    if deps:
        parts.append(f"{len(deps)} dependenc{'y' if len(deps) == 1 else 'ies'}")
    return ", ".join(parts)


def _patch_ops(raw: Any) -> list[Obj]:
    where = Location(field="jobTemplatePatch")
    try:
        ops = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as e:
        raise PlatformError(f"not JSON: {e}", where) from None
    if not isinstance(ops, list) or not all(isinstance(op, Mapping) for op in ops):
        raise PlatformError("a JSON patch array (or a string holding one) is expected", where)
    return ops


def apply_override(spec: Mapping[str, Any], override: Mapping[str, Any]) -> Obj:
    """``spec`` with one override's patches applied (its guard is not consulted here)."""
    out: Obj = copy.deepcopy(dict(spec))
    if override.get("jobTemplate"):
        out["jobTemplate"] = strategic_merge(out.get("jobTemplate") or {}, override["jobTemplate"])
    if override.get("jobTemplatePatch"):
        out["jobTemplate"] = json_patch(
            out.get("jobTemplate") or {}, _patch_ops(override["jobTemplatePatch"])
        )
    if override.get("dependencies"):
        out["dependencies"] = apply_dependency_patches(
            out.get("dependencies") or [], override["dependencies"]
        )
    for part in ORCHESTRATION_PARTS:
        value = (override.get("orchestration") or {}).get(part)
        if value is not None:
            out.setdefault("orchestration", {})[part] = copy.deepcopy(value)
    if override.get("env"):
        out["jobTemplate"] = apply_env_to_job_template(
            out.get("jobTemplate") or {}, out.get("dependencies") or [], override["env"]
        )
    return out


def apply_overrides(
    spec: Mapping[str, Any],
    overrides: Sequence[Mapping[str, Any]],
    ctx: MatchContext,
    fields: Sequence[str | None] = (),
) -> tuple[Obj, list[Applied]]:
    """``spec`` with every matching override applied in order, and what was applied.

    ``fields`` names, by position, where each override sits in its owner's file (for example
    ``spec.overrides[0]`` of a WorkloadRun; None or missing for the platform's and the catalog's
    own): an error in an override the owner wrote carries that field, extended by the part of
    the override at fault; any other names its override by index in the message.
    """
    out: Obj = copy.deepcopy(dict(spec))
    applied: list[Applied] = []
    for index, override in enumerate(overrides):
        owner = fields[index] if index < len(fields) else None
        try:
            if not matches_when(override.get("when"), ctx):
                continue
            after = apply_override(out, override)
        except PlatformError as e:
            part = e.location.field
            if owner:
                e.location.field = f"{owner}.{part}" if part else owner
            else:
                e.message = f"override {index}: {f'{part}: ' if part else ''}{e.message}"
                e.location.field = None
            raise
        applied.append(
            Applied(
                index,
                summarise_when(override.get("when")),
                _summarise_patches(override),
                after == out,
            )
        )
        out = after
    return out, applied


def overrides_fs() -> Traversable:
    """The platform's own override files (WorkloadRun's platform overrides), which declare
    dependencies of their own. Exported so that tooling derives, for example, the dependency
    kinds a controller role must be granted, rather than restating them."""
    return resources.files("glimmer.certify.platform").joinpath("overrides")


def load_overrides(name: str) -> list[Obj]:
    """One override file of :func:`overrides_fs` as a list of overrides."""
    data = yaml.safe_load(overrides_fs().joinpath(name).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise PlatformError(f"platform overrides {name}: a list of overrides is expected")
    return data


def dependency_kinds() -> set[str]:
    """Every dependency kind the platform's override files can add."""
    kinds: set[str] = set()
    for entry in overrides_fs().iterdir():
        if entry.name.endswith(".yaml"):
            for override in load_overrides(entry.name):
                kinds |= {
                    d.get("kind") for d in override.get("dependencies") or [] if d.get("kind")
                }
    return kinds
