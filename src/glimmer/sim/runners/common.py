"""What every simulated runner does before and around its measurement: the duration it runs
for, the device budget, the host grants it has, and the refusals every runner shares."""

from __future__ import annotations

from glimmer.api.test import BurnInTestSpec
from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.emit import Stdout
from glimmer.sim.runners.node import NodeView

GPU_RESOURCES = ("nvidia.com/gpu",)
GPU_RESOURCE_PREFIXES = ("nvidia.com/mig-",)
VENDOR_PREFIXES = ("nvidia.com/", "amd.com/")


def duration(call: RunnerCall, default: int, floor: int = 1) -> int:
    """Seconds the runner will run: BURNIN_DURATION_SECONDS, else the call's, else the kind's
    default; a figure below the runner's floor is raised to it."""
    raw = call.env.get("BURNIN_DURATION_SECONDS", "")
    try:
        seconds = int(raw) if raw else call.duration_seconds
    except ValueError:
        seconds = call.duration_seconds
    if seconds <= 0:
        seconds = default
    return max(seconds, floor)


def device_budget(call: RunnerCall) -> int | str | None:
    """Devices the runner may load: the sum of NVIDIA count resources in
    BURNIN_RESOURCE_LIMITS; None when the variable is absent (iterate every visible device);
    a string naming the problem when it is malformed (§3.5: exit 3)."""
    if "BURNIN_RESOURCE_LIMITS" not in call.env:
        return None
    text = call.env["BURNIN_RESOURCE_LIMITS"].strip()
    if not text:
        return "BURNIN_RESOURCE_LIMITS is set but empty"
    total = 0
    for entry in text.split(","):
        name, sep, qty = entry.partition("=")
        if not sep or not name:
            return f"malformed BURNIN_RESOURCE_LIMITS entry {entry!r}"
        if name in GPU_RESOURCES or name.startswith(GPU_RESOURCE_PREFIXES):
            try:
                total += int(qty)
            except ValueError:
                return f"BURNIN_RESOURCE_LIMITS {name} is not a whole count: {qty!r}"
        elif name.startswith(VENDOR_PREFIXES):
            return f"unrecognised vendor resource {name} in BURNIN_RESOURCE_LIMITS"
    return total


def has_kmsg(spec: BurnInTestSpec) -> bool:
    """The test mounts /dev/kmsg and runs privileged as uid 0: the only way to read Xids on a
    dmesg_restrict=1 host (§3.5)."""
    runner = spec.runner
    if runner is None or not runner.privileged or runner.run_as_user != 0:
        return False
    return any(m.mount_path == "/dev/kmsg" for m in runner.host_paths or ())


def has_mount(spec: BurnInTestSpec, mount_path: str) -> bool:
    runner = spec.runner
    return runner is not None and any(m.mount_path == mount_path for m in runner.host_paths or ())


def group_refusal(call: RunnerCall, out: Stdout) -> RunnerOutput | None:
    """A Pair-only runner started as a Group rank exits 3 before touching hardware (§3.5;
    Appendix C: tcp-baseline and fabric-soak too, as the rebuild should)."""
    in_group = call.rank is not None or ("BURNIN_RANK" in call.env or "BURNIN_NRANKS" in call.env)
    if in_group and not call.role and "BURNIN_ROLE" not in call.env:
        return out.errored(
            f"{call.kind} measures a link between two nodes and cannot run as a Group rank "
            "(BURNIN_RANK is set, BURNIN_ROLE is not)",
            0.2,
        )
    return None


def role_of(call: RunnerCall) -> str:
    return call.role or call.env.get("BURNIN_ROLE", "")


def driver_refusal(view: NodeView, out: Stdout) -> RunnerOutput | None:
    """Without GPU operator operands (driver, container toolkit) no CUDA runner can start."""
    if view.level("gpu_operand_unavailable") > 0.0:
        return out.errored("CUDA driver unusable: no NVIDIA driver is exposed to the pod", 1.0)
    return None


def peer_of(call: RunnerCall) -> str:
    """The other node of a Pair (the server for the client and vice versa)."""
    others = [n for n in call.nodes if n != call.node]
    return others[0] if others else call.node
