"""Execution requests as the engine makes them, for the kubernetes substrate's tests."""

from __future__ import annotations

from typing import Any

from glimmer.api.test import BurnInTestSpec
from glimmer.engine.backend import ExecutionSpec, Seat
from glimmer.engine.keys import ATTEMPT_LABEL, NODE_LABEL, RUN_LABEL, TEST_LABEL

NAMESPACE = "default"


def node_spec(
    name: str,
    node: str,
    *,
    run: str = "run",
    run_uid: str = "uid-run",
    duration: int = 300,
    **fields: Any,
) -> ExecutionSpec:
    """A Node-scope execution request of a gpu-burn test named ``burn``."""
    test = BurnInTestSpec.model_validate({"kind": "gpu-burn", "durationSeconds": duration})
    values: dict[str, Any] = dict(
        name=name,
        namespace=NAMESPACE,
        run=run,
        run_uid=run_uid,
        test="burn",
        test_index=0,
        kind="gpu-burn",
        scope="Node",
        node=node,
        unit_nodes=(node,),
        attempt=1,
        role="",
        rank=None,
        nranks=None,
        image="ghcr.io/glimmer/runner:test",
        env=(("BURNIN_TEST", "burn"),),
        duration_seconds=duration,
        deadline_seconds=duration + 120,
        labels={RUN_LABEL: run, TEST_LABEL: "burn", NODE_LABEL: node, ATTEMPT_LABEL: "1"},
        test_spec=test,
    )
    values.update(fields)
    return ExecutionSpec(**values)


def pair_end(name: str, node: str, role: str, service: str, **fields: Any) -> ExecutionSpec:
    """One end (``server``/``client``) of a Pair attempt meeting in ``service``."""
    peer = "client" if role == "server" else "server"
    return node_spec(
        name, node, role=role, scope="Pair", seat=Seat(service, peer, "BURNIN_PEER_HOST"), **fields
    )
