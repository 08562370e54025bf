"""``valueFrom`` for batch jobs (specs/burnin.md §8.2; backends/slurm/job_env.py): a job's runner
is given ``fieldRef spec.nodeName`` as its node and ``fieldRef status.hostIP`` as the address
Slurm knows the node by (``NodeAddr``), on the real cluster; every other source stays unset; a
node whose address does not resolve makes the execution an Error attempt naming the variable,
and nothing is submitted."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.clock import HostClock
from glimmer.backends.slurm.commands import Slurm, records
from glimmer.backends.slurm.jobs import SlurmJobs
from glimmer.engine.backend import ExecPhase, ExecutionSpec
from tests.backends.slurm.slurm_job_specs import NAMESPACE, RUN, UID, n, spec
from tests.slurm_cluster import SlurmCluster

HOST_IP = {"fieldRef": {"fieldPath": "status.hostIP"}}
NODE_NAME = {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}
SECRET = {"secretKeyRef": {"name": "s", "key": "k"}}
SCRIPT = 'echo "$NODE_NAME $HOST_ADDR ${FROM_SECRET-unset}"'
WAIT = 30.0


def _asking(name: str, node: str) -> ExecutionSpec:
    """An execution of ``SCRIPT`` whose test asks for the node name, the host address and a
    Secret through ``valueFrom`` (left out of the spec's env, as the engine leaves them)."""
    asked = spec(name, node, SCRIPT)
    runner = {
        "command": ["/bin/sh", "-c", SCRIPT],
        "env": [
            {"name": "NODE_NAME", "valueFrom": NODE_NAME},
            {"name": "HOST_ADDR", "valueFrom": HOST_IP},
            {"name": "FROM_SECRET", "valueFrom": SECRET},
        ],
    }
    test = BurnInTestSpec.model_validate({"kind": "host-health", "runner": runner})
    return dataclasses.replace(asked, test_spec=test)


def _jobs(slurm: Slurm, state: Path) -> SlurmJobs:
    return SlurmJobs(state, slurm, HostClock(), runner_command=("/bin/false",), partition=None)


def test_a_job_is_given_its_node_name_and_its_node_address_and_nothing_else(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    node = slurm_cluster.nodes[1]
    out = slurm_cluster.slurm.run("scontrol", "show", "node", "-o", node)
    address = records(out)[0]["NodeAddr"]
    jobs = _jobs(slurm_cluster.slurm, tmp_path / "state")
    try:
        asked = _asking("fields", node)
        jobs.create_execution(asked)
        deadline = time.monotonic() + WAIT
        while True:
            seen = jobs.executions(NAMESPACE, RUN, UID).get(n("fields"))
            if seen is not None and seen.phase.terminated:
                break
            assert time.monotonic() < deadline, seen
            time.sleep(0.2)
        assert seen.phase is ExecPhase.SUCCEEDED
        assert jobs.read_log(NAMESPACE, n("fields")).split() == [node, address, "unset"]
        assert seen.spec == asked  # the record keeps the spec as the engine asked it
    finally:
        jobs.delete_owned(NAMESPACE, RUN, UID)


@dataclasses.dataclass(frozen=True)
class UnresolvableNode(Slurm):
    """A Slurm whose every node has an address no resolver knows; it submits nothing."""

    asked: list[tuple[str, ...]] = dataclasses.field(default_factory=list)

    def run(self, *argv: str, input: str | None = None, check: bool = True) -> str:
        self.asked.append(argv)
        if argv[:3] == ("scontrol", "show", "node"):
            return "NodeName=n9 NodeAddr=n9.glimmer-test.invalid NodeHostName=n9 State=IDLE\n"
        raise AssertionError(f"not asked of Slurm here: {argv}")

    def call(self, *argv: str, input: str | None = None, check: bool = True) -> Any:
        raise AssertionError(f"not asked of Slurm here: {argv}")


def test_a_node_address_that_does_not_resolve_is_an_error_attempt_naming_the_variable(
    tmp_path: Path,
) -> None:
    slurm = UnresolvableNode()
    jobs = _jobs(slurm, tmp_path / "state")
    jobs.create_execution(_asking("unresolved", "n9"))
    [seen] = list(jobs.executions(NAMESPACE, RUN, UID))  # ended: no squeue either
    assert seen.phase is ExecPhase.FAILED and seen.exit_code == -1
    assert seen.container_reason == "FieldRefUnresolved"
    assert "runner.env HOST_ADDR: valueFrom fieldRef status.hostIP" in seen.container_message
    assert "NodeAddr" in seen.container_message
    assert [a[:3] for a in slurm.asked] == [("scontrol", "show", "node")]  # no sbatch
