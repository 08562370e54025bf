"""Helpers of the simulated-runner tests: specs, calls, fleets with faults, part overrides."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from glimmer.api.fleet import Fleet
from glimmer.api.test import BurnInTestSpec
from glimmer.contract.parse import parse
from glimmer.contract.vocab import ParsedResult
from glimmer.fleet.build import build
from glimmer.fleet.generate import generate
from glimmer.fleet.topology import Topology
from glimmer.sim.faults import Fault
from glimmer.sim.runners import RunnerCall, RunnerOutput, simulate_runner
from glimmer.sim.twin import FleetSim

HGX = "hgx-node-0001"
HGX2 = "hgx-node-0002"
NVL = "nvl-node-0000"
NVL2 = "nvl-node-0001"
PCIE = "pcie-node-0000"
PCIE2 = "pcie-node-0001"


def spec_of(kind: str, scope: str = "Node", **extra: Any) -> BurnInTestSpec:
    """A test spec with every host grant a runner may want (kmsg, sysfs, DCGM, a disk path)."""
    doc: dict[str, Any] = {
        "kind": kind,
        "scope": scope,
        "durationSeconds": 60,
        "hostNetwork": True,
        "runner": {
            "privileged": True,
            "runAsUser": 0,
            "hostPaths": [
                {"path": "/dev/kmsg", "mountPath": "/dev/kmsg", "type": "CharDevice"},
                {"path": "/sys", "mountPath": "/host/sys"},
                {"path": "/opt/dcgm-runtime", "mountPath": "/usr/local/dcgm"},
                {"path": "/mnt/scratch", "mountPath": "/mnt/scratch", "readOnly": False},
            ],
        },
    }
    doc.update(extra)
    return BurnInTestSpec.model_validate(doc)


def make_call(
    spec: BurnInTestSpec,
    node: str,
    *,
    nodes: tuple[str, ...] | None = None,
    role: str = "",
    rank: int | None = None,
    env: Mapping[str, str] | None = None,
    attempt: int = 1,
    seed: int = 7,
    started_at: float = 300.0,
) -> RunnerCall:
    full = {"BURNIN_DURATION_SECONDS": str(spec.duration_seconds)}
    if role:
        full["BURNIN_ROLE"] = role
    if rank is not None:
        full["BURNIN_RANK"] = str(rank)
        full["BURNIN_NRANKS"] = str(len(nodes or ()))
    full.update(env or {})
    return RunnerCall(
        kind=spec.kind, scope=spec.scope.value, nodes=nodes or (node,), node=node, role=role,
        rank=rank, nranks=len(nodes) if rank is not None and nodes else None, env=full,
        duration_seconds=spec.duration_seconds, attempt=attempt, spec=spec,
        started_at=started_at, seed=seed,
    )  # fmt: skip


def run(
    twin: FleetSim, spec: BurnInTestSpec, node: str, **kw: Any
) -> tuple[RunnerOutput, ParsedResult]:
    out = simulate_runner(twin, make_call(spec, node, **kw))
    return out, parse(spec.kind, out.stdout, out.exit_code)


def twin_with(topo: Topology, *faults: str) -> FleetSim:
    made = []
    for text in faults:
        mode, _, rest = text.partition("@")
        target, _, level = rest.partition("=")
        made.append(Fault(mode, target, float(level) if level else 1.0))
    return FleetSim(topo, made)


def fleet_of(model: str, shape: str, gpus: int = 16) -> Topology:
    """A small generated fleet of ``shape`` with every pool switched to ``model``."""
    doc = generate(gpus, shape, f"t-{model.replace('_', '-')}")
    for pool in doc["spec"]["pools"]:
        pool["gpuModel"] = model
    return build(Fleet.model_validate(doc), source="test")


def replace_part(monkeypatch: pytest.MonkeyPatch, sku: str, **changes: Any) -> None:
    from glimmer.sim.runners import figures

    monkeypatch.setitem(figures.PARTS, sku, dataclasses.replace(figures.PARTS[sku], **changes))
