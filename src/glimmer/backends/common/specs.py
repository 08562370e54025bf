"""An :class:`~glimmer.engine.backend.ExecutionSpec` to and from the JSON of an execution's
record, so a later process reads back exactly the request the engine made (equal, field for
field). Shared by the substrates that keep records on disk: the local processes' and the Slurm
jobs'."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glimmer.api.test import BurnInTestSpec
from glimmer.engine.backend import ExecutionSpec, Mount, Privileges, Resources, Seat


def spec_to_json(spec: ExecutionSpec) -> dict[str, Any]:
    """The spec as plain JSON values."""
    return {
        "name": spec.name,
        "namespace": spec.namespace,
        "run": spec.run,
        "run_uid": spec.run_uid,
        "test": spec.test,
        "test_index": spec.test_index,
        "kind": spec.kind,
        "scope": spec.scope,
        "node": spec.node,
        "unit_nodes": list(spec.unit_nodes),
        "attempt": spec.attempt,
        "role": spec.role,
        "rank": spec.rank,
        "nranks": spec.nranks,
        "image": spec.image,
        "env": [list(pair) for pair in spec.env],
        "duration_seconds": spec.duration_seconds,
        "deadline_seconds": spec.deadline_seconds,
        "labels": dict(spec.labels),
        "test_spec": spec.test_spec.model_dump(mode="json", by_alias=True, exclude_unset=True),
        "command": list(spec.command),
        "args": list(spec.args),
        "mounts": [[m.host_path, m.path, m.read_only, m.host_type] for m in spec.mounts],
        "resources": {
            "limits": [list(p) for p in spec.resources.limits],
            "requests": [list(p) for p in spec.resources.requests],
        },
        "privileges": {
            "privileged": spec.privileges.privileged,
            "run_as_user": spec.privileges.run_as_user,
            "host_network": spec.privileges.host_network,
        },
        "seat": (
            None
            if spec.seat is None
            else [spec.seat.rendezvous, spec.seat.peer_role, spec.seat.address_env]
        ),
    }


def _pairs(value: Any) -> tuple[tuple[str, str], ...]:
    return tuple((str(k), str(v)) for k, v in value)


def spec_from_json(value: dict[str, Any]) -> ExecutionSpec:
    """The spec :func:`spec_to_json` wrote."""
    seat = value.get("seat")
    privileges = value.get("privileges") or {}
    resources = value.get("resources") or {}
    return ExecutionSpec(
        name=value["name"],
        namespace=value["namespace"],
        run=value["run"],
        run_uid=value["run_uid"],
        test=value["test"],
        test_index=int(value["test_index"]),
        kind=value["kind"],
        scope=value["scope"],
        node=value["node"],
        unit_nodes=tuple(value["unit_nodes"]),
        attempt=int(value["attempt"]),
        role=value["role"],
        rank=value.get("rank"),
        nranks=value.get("nranks"),
        image=value["image"],
        env=_pairs(value["env"]),
        duration_seconds=int(value["duration_seconds"]),
        deadline_seconds=int(value["deadline_seconds"]),
        labels=dict(value["labels"]),
        test_spec=BurnInTestSpec.model_validate(value["test_spec"]),
        command=tuple(value.get("command") or ()),
        args=tuple(value.get("args") or ()),
        mounts=tuple(Mount(h, p, bool(ro), t) for h, p, ro, t in value.get("mounts") or ()),
        resources=Resources(
            _pairs(resources.get("limits") or ()), _pairs(resources.get("requests") or ())
        ),
        privileges=Privileges(
            privileged=bool(privileges.get("privileged")),
            run_as_user=privileges.get("run_as_user"),
            host_network=bool(privileges.get("host_network")),
        ),
        seat=Seat(seat[0], seat[1], seat[2]) if seat else None,
    )


class RecordSpecs:
    """The spec of each execution record, parsed once: a record's spec never changes once
    written, and a substrate re-reads its records every pass. Keyed by namespace, name and
    creation time, so a record re-created under the same name is parsed afresh."""

    def __init__(self) -> None:
        self._parsed: dict[tuple[str, str, str], ExecutionSpec] = {}

    def of(self, record: Mapping[str, Any]) -> ExecutionSpec:
        """The spec ``record`` holds (its ``spec`` and ``created_at`` fields)."""
        written = record["spec"]
        key = (written["namespace"], written["name"], str(record["created_at"]))
        spec = self._parsed.get(key)
        if spec is None:
            spec = self._parsed[key] = spec_from_json(written)
        return spec
