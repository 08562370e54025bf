"""The simulated fleet behind a stand-in cluster with the Trainer stand-in: its nodes become the
cluster's Nodes, and a TrainJob's log is what the fleet simulator prints for the job it runs.

The Nodes are the fleet's hosts, labelled as the simulator's certification substrate lists them
(``fleet_nodes``: product, rack, NVLink clique, leaf) plus ``nvidia.com/gpu.present``, with the
node's GPUs as allocatable ``nvidia.com/gpu`` and, when ``provider`` is set, a providerID of
``<provider><hostname>`` (platform detection reads it). A job's log comes from the very
functions the simulator's substrate calls (``run_nccl``, ``dcgm_log``, ``run_training``) over
one twin, so a planted fault shows on the cluster as it does in ``certify run`` on the
simulator. A label value the API would refuse (the simulator's leaf names hold a ``/``) is made
legal as a cluster's labeller would have to: every other character becomes ``.``.
``oom_nodes`` is a test knob: the simulator has no fault that kills by memory, so a job
holding one of these nodes ends its lead container OOMKilled.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.backends.sim.certify.dcgm import dcgm_log
from glimmer.backends.sim.certify.nccl import run_nccl
from glimmer.backends.sim.certify.nodes import fleet_nodes
from glimmer.backends.sim.certify.training import run_training
from glimmer.backends.sim.certify.views import NodeViews
from glimmer.certify.jobs import DcgmJob, Job, JobLog, NcclJob
from glimmer.fleet.faultspec import FaultSpec
from glimmer.fleet.topology import Topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim, from_spec

GPU_RESOURCE = "nvidia.com/gpu"
GPU_PRESENT = "nvidia.com/gpu.present"
_ILLEGAL = re.compile(r"[^A-Za-z0-9_.-]")


def label_value(text: str) -> str:
    """``text`` as a legal label value: other characters as ``.``, alphanumeric ends, 63 long."""
    return _ILLEGAL.sub(".", text)[:63].strip("-_.")


@dataclass(frozen=True)
class TrainerFleet:
    """What the Trainer stand-in simulates: the fleet, its planted faults, the seed of the
    jobs' noise, and how many real seconds a job's pods take to print their log."""

    topology: Topology
    faults: Sequence[FaultSpec | Fault] = ()
    seed: int = 0
    seconds_per_job: float = 0.5
    provider: str = ""
    oom_nodes: frozenset[str] = frozenset()
    twin: FleetSim = field(init=False, repr=False, compare=False)
    views: NodeViews = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        planted = [f if isinstance(f, Fault) else from_spec(f) for f in self.faults]
        twin = FleetSim(self.topology, planted)
        object.__setattr__(self, "twin", twin)
        object.__setattr__(self, "views", NodeViews(twin))

    @property
    def hostnames(self) -> tuple[str, ...]:
        return tuple(n.hostname for n in self.topology.nodes)

    def labels(self) -> dict[str, dict[str, str]]:
        """Each node's labels as GPU feature discovery and the platform would write them."""
        gpus = {n.hostname: n.gpu_count for n in self.topology.nodes}
        out: dict[str, dict[str, str]] = {}
        for info in fleet_nodes(self.topology):
            labels = {k: label_value(v) for k, v in info.labels.items()}
            if gpus.get(info.name):
                labels[GPU_PRESENT] = "true"
            out[info.name] = labels
        return out

    def shape(self, node: Mapping[str, Any]) -> dict[str, Any]:
        """A Node the kubelet stand-in registers, as this fleet's host of that name."""
        name = str(node["metadata"]["name"])
        host = next((n for n in self.topology.nodes if n.hostname == name), None)
        out = dict(node)
        if host is None:
            return out
        meta = dict(node["metadata"])
        meta["labels"] = {**(meta.get("labels") or {}), **self.labels().get(name, {})}
        out["metadata"] = meta
        status = dict(node.get("status") or {})
        for part in ("capacity", "allocatable"):
            status[part] = {**(status.get(part) or {}), GPU_RESOURCE: str(host.gpu_count)}
        out["status"] = status
        if self.provider:
            out["spec"] = {**(node.get("spec") or {}), "providerID": f"{self.provider}{name}"}
        return out

    def run(self, job: Job) -> JobLog:
        """The job's log, exactly as the simulator's certification substrate prints it."""
        if isinstance(job, NcclJob):
            return run_nccl(self.twin, job, self.views)
        if isinstance(job, DcgmJob):
            return dcgm_log(self.twin, job)
        return run_training(self.twin, job, self.views)
