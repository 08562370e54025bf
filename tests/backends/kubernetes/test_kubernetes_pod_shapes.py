"""Every pod shape the engine asks for is a Pod the API server accepts (the stand-in validates
each Pod against the Pod schema, as a real one does): host paths, privileges, resources, a
readiness probe, a priority class, a Pair's two ends on the host network and a Group's ranks,
with the run's tolerations — each created over HTTP through the kubernetes substrate."""

from __future__ import annotations

from typing import Any

from engine_world import ScriptedRunner, run_object, spec_of, world
from lightkube import Client

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.resources import PODS, as_dict
from glimmer.engine.backend import ExecutionSpec

SHAPES: dict[str, Any] = {
    "node": spec_of(
        "gpu-burn",
        hostNetwork=True,
        resources={"limits": {"nvidia.com/gpu": 8, "memory": "16Gi"}},
        runner={
            "hostPaths": [
                {"path": "/dev/infiniband", "mountPath": "/dev/infiniband", "readOnly": False},
                {"path": "/dev/kmsg", "mountPath": "/dev/kmsg", "type": "CharDevice"},
            ],
            "command": ["/bin/burn"],
            "args": ["--all"],
            "privileged": True,
            "runAsUser": 0,
            "priorityClassName": "burnin",
            "readinessProbe": {"exec": {"command": ["true"]}},
            "env": [{"name": "EXTRA", "value": "1"}],
        },
    ),
    "pair": spec_of("ib-write-bw", scope="Pair", hostNetwork=True),
    "group": spec_of("nccl", scope="Group"),
}


def _specs(name: str, targets: list[str]) -> list[ExecutionSpec]:
    w = world(
        len(targets),
        {name: SHAPES[name]},
        [{"testRef": name}],
        runner=ScriptedRunner(default="ok"),
    )
    tolerations = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    w.submit(
        run_object(
            targets=targets,
            maxConcurrentNodes=len(targets),
            target={"nodeNames": targets, "tolerations": tolerations},
        )
    )
    w.drive()
    return [e.spec for e in w.backend.executions("default", "run", w.run().metadata.uid)]


def test_every_pod_shape_the_engine_makes_is_accepted_by_the_api(
    backend: KubernetesBackend, client: Client
) -> None:
    specs = [
        *_specs("node", ["node-000"]),
        *_specs("pair", ["node-000", "node-001"]),
        *_specs("group", ["node-000", "node-001", "node-002"]),
    ]
    assert len(specs) == 1 + 2 + 3
    for spec in specs:
        backend.create_execution(spec)  # a Pod the API refused would raise here (422)
    stored = {as_dict(p)["metadata"]["name"]: as_dict(p) for p in client.list(PODS)}
    assert sorted(stored) == sorted(s.name for s in specs)
    node_pod = stored[specs[0].name]
    assert [v["name"] for v in node_pod["spec"]["volumes"]] == [
        "host-0-dev-infiniband",
        "host-1-dev-kmsg",
    ]
    ranks = [stored[s.name]["spec"].get("hostname") for s in specs[3:]]
    assert ranks == ["rank-0", "rank-1", "rank-2"]
