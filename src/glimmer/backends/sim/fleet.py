"""The simulator backend over a fleet: its nodes are the fleet's nodes (hostname, GPU product,
pool and rack labels), and its runner is the simulated runner over the fleet's state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.run_store import StoredRuns
from glimmer.backends.sim.backend import Runner, RunnerReply, RunnerRequest, SimBackend
from glimmer.backends.sim.faults import ExecutionFault
from glimmer.engine.backend import NodeView
from glimmer.fleet.topology import Topology
from glimmer.sim.device_facts import facts
from glimmer.sim.runners import RunnerCall, simulate_runner
from glimmer.sim.twin import FleetSim
from glimmer.sinks.sinkset import SinkSet

PRODUCT_LABEL = "nvidia.com/gpu.product"
MODEL_LABEL = "glimmer.ai/gpu-model"
POOL_LABEL = "glimmer.ai/pool"
RACK_LABEL = "glimmer.ai/rack"
HOSTNAME_LABEL = "kubernetes.io/hostname"
SIM_KERNEL = "6.8.0-glimmer-sim"
SIM_OS = "Ubuntu 24.04 LTS (simulated)"


def fleet_nodes(topo: Topology) -> list[NodeView]:
    """One node per fleet node, schedulable, unannotated."""
    # GPU Feature Discovery's spelling of the driver-reported name (spaces become dashes).
    products = {sku.key: facts(sku.key).model_name.replace(" ", "-") for sku in topo.models}
    out = []
    for node in topo.nodes:
        labels = {
            HOSTNAME_LABEL: node.hostname,
            MODEL_LABEL: node.model,
            POOL_LABEL: node.pool,
            RACK_LABEL: topo.racks[node.rack].name,
        }
        if node.gpu_count and node.model in products:
            labels[PRODUCT_LABEL] = products[node.model]
        out.append(
            NodeView(
                name=node.hostname,
                labels=labels,
                kernel=SIM_KERNEL,
                os_image=SIM_OS,
                arch=node.arch,
            )
        )
    return out


def fleet_runner(twin: FleetSim) -> Runner:
    """The simulated runners over ``twin``: each finished execution's stdout and exit code come
    from the fleet's state when it started (faults, load, noise)."""
    epoch = twin.epoch

    def run(request: RunnerRequest) -> RunnerReply:
        spec = request.spec
        call = RunnerCall(
            kind=spec.kind,
            scope=spec.scope,
            nodes=spec.unit_nodes,
            node=spec.node,
            role=spec.role if spec.role in ("server", "client") else "",
            rank=spec.rank,
            nranks=spec.nranks,
            env=dict(spec.env),
            duration_seconds=spec.duration_seconds,
            attempt=spec.attempt,
            spec=spec.test_spec,
            started_at=request.started.timestamp() - epoch,
            seed=request.seed,
        )
        out = simulate_runner(twin, call)
        return RunnerReply(out.stdout, out.exit_code)

    return run


def fleet_backend(
    twin: FleetSim,
    *,
    seed: int = 0,
    faults: Sequence[ExecutionFault] = (),
    profiles: Mapping[str, BurnInProfile] | None = None,
    tests: Mapping[str, BurnInTestSpec] | None = None,
    sinks: SinkSet | None = None,
    store: StoredRuns | None = None,
) -> SimBackend:
    """A simulator backend whose nodes are ``twin``'s fleet and whose clock starts at the
    twin's epoch; hardware faults live in the twin, machinery faults in ``faults``; runs in
    ``store`` (default: in memory)."""
    return SimBackend(
        fleet_nodes(twin.topo),
        runner=fleet_runner(twin),
        seed=seed,
        start=datetime.fromtimestamp(twin.epoch, tz=UTC),
        faults=faults,
        profiles=profiles,
        tests=tests,
        sinks=sinks,
        store=store,
    )
