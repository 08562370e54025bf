"""The dispatcher: one simulated runner per built-in kind, chosen by the call's kind."""

from __future__ import annotations

from collections.abc import Callable

from glimmer.contract.kinds import kind_spec
from glimmer.sim.runners import gemm, gpu_load, host, memory, network
from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.node import node_level
from glimmer.sim.twin import FleetSim

Runner = Callable[[FleetSim, RunnerCall], RunnerOutput]

# What a pod that never started its command exits with (the kubelet's StartError, §3.1).
START_ERROR_EXIT = 128

_RUNNERS: dict[str, Runner] = {
    "clockprobe": gpu_load.clockprobe,
    "thermal-soak": gpu_load.thermal_soak,
    "gpu-burn": gpu_load.gpu_burn,
    "compute-smoke": gemm.compute_smoke,
    "gemm-sweep": gemm.gemm_sweep,
    "memory-bw": memory.memory_bw,
    "memory-stress": memory.memory_stress,
    "host-health": host.host_health,
    "dcgm-diag": host.dcgm_diag,
    "fingerprint-probe": host.fingerprint_probe,
    "disk-io": host.disk_io,
    "ib-write-bw": network.ib_write_bw,
    "gpudirect-rdma": network.gpudirect_rdma,
    "tcp-baseline": network.tcp_baseline,
    "fabric-soak": network.fabric_soak,
    "nccl": network.nccl,
}

SIMULATED_KINDS: frozenset[str] = frozenset(_RUNNERS)


def simulate_runner(twin: FleetSim, call: RunnerCall) -> RunnerOutput:
    """What the real runner of ``call.kind`` would print and exit with on ``call.node``.

    A kind with no simulated runner (a custom image) cannot be run by the simulator: like a
    runner that could not start, that is exit 3 (Error), never a verdict about the hardware.
    """
    runner = _RUNNERS.get(call.kind)
    if runner is None:
        message = f'SIM_RUNNER_ERROR: the simulator has no runner for kind "{call.kind}"\n'
        return RunnerOutput(message, 3, 0.0)
    if _runtime_missing(twin, call):
        return RunnerOutput("", START_ERROR_EXIT, 0.0)
    return runner(twin, call)


def _runtime_missing(twin: FleetSim, call: RunnerCall) -> bool:
    """An NVIDIA image on a node whose GPU operator operands are down cannot even start: the
    container runtime's NVIDIA hook fails before the runner runs (StartError)."""
    spec = kind_spec(call.kind)
    if spec is None or spec.image_vendor != "nvidia":
        return False
    level = node_level(twin, call.node, call.started_at, "gpu_operand_unavailable")
    return level is not None and level > 0
