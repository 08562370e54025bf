"""A simulated training job over a group: a Megatron-style log (the ``megatron-training``
LogProfile reads it, kubelet timestamps on), so goodput is measured by the real parser.

Step time follows the group's GPUs at their operating point under load (the slowest clock paces
every step) and, when the job crosses nodes over the fabric, its slowest NIC (the exposed share
of communication scales with it). A node carrying a fault that kills a
training process (an Xid burst, a GPU off the bus, an uncorrectable ECC error, a flapping port)
interrupts the run once; with checkpoints on, the job restarts from the last one (up to
``max_restarts``), otherwise it fails. A port that is down or a missing driver fails at start.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from glimmer.backends.sim.certify.nccl import path_of, rails_of
from glimmer.backends.sim.certify.views import NodeViews
from glimmer.certify.jobs import JobLog, TrainingJob
from glimmer.sim.runners.load import under_load
from glimmer.sim.runners.node import NodeView
from glimmer.sim.twin import FleetSim

# Achieved BF16 TFLOP/s per GPU in training: half of the maximum achievable matmul (peers.md
# §4.2 MAMF BF16: H100 794.5, B200 1 745, GB200 1 822; H200 as H100, same GH100) — half is our
# assumption for an 8B model's MFU, not a sourced figure; it only shapes the simulated log.
TRAINING_TFLOPS = {
    "h100_sxm_80gb": 397.0,
    "h200_sxm_141gb": 397.0,
    "b200_180gb": 872.0,
    "gb200_186gb": 911.0,
    "h100_pcie_80gb": 300.0,
}
DEFAULT_TFLOPS = 150.0
# 6 × 8e9 parameters × (128 sequences × 4096 tokens) per step for an 8B model.
FLOPS_PER_STEP = 6 * 8e9 * 128 * 4096
COMM_SHARE = 0.15  # exposed communication share of a step over the fabric (assumption)
CRASH_MODES = ("gpu_xid_burst", "gpu_fallen_off_bus", "gpu_ecc_uncorrectable", "nic_link_flapping")
RESCHEDULE_S = 45.0  # pod deleted, rescheduled and started again
LOAD_S = 25.0  # checkpoint load before the first step
SAVE_S = 6.0
START = datetime(2026, 1, 5, 8, 0, 0, tzinfo=UTC)


def _stamp(t: float) -> str:
    return (START + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _inner(t: float) -> str:
    return (START + timedelta(seconds=t)).strftime("%Y-%m-%d %H:%M:%S.%f")


def _net_factor(twin: FleetSim, nvs: Sequence[NodeView], nvlink: bool) -> float:
    if path_of(twin, nvs, nvlink) == "nvlink":
        return 1.0
    worst = 1.0
    for v in nvs:
        for key in rails_of(v).values():
            f = (1 - 0.5 * v.nic_level(key, "nic_degraded")) * (
                1 - 0.5 * v.nic_level(key, "nic_link_flapping")
            )
            worst = min(worst, f)
    return worst


def run_training(twin: FleetSim, job: TrainingJob, cache: NodeViews | None = None) -> JobLog:
    """Run ``job`` on the simulated fleet; the trainer's log (rank 0) and exit code. ``cache``
    as :func:`~glimmer.backends.sim.certify.nccl.run_nccl` takes them."""
    views = (cache or NodeViews(twin)).many(job.nodes)
    nvs = [v for v in views if v is not None]
    for n, v in zip(job.nodes, views, strict=True):
        if v is None or not v.visible or v.level("gpu_operand_unavailable") > 0:
            msg = f"{n}: torch.cuda.is_available() is False: no NVIDIA device in the pod"
            return JobLog(f"{_stamp(0)} {msg}\n", 1, msg, crashed_on=(n,))
        for nic in v.backend_nics:
            if len(nvs) > 1 and v.nic_level(nic.key, "nic_link_down") > 0:
                msg = f"{n}: NCCL error: NET/IB : {nic.name} port state DOWN"
                return JobLog(f"{_stamp(0)} {msg}\n", 1, msg, crashed_on=(n,))
    words = np.frombuffer(
        hashlib.sha256(f"{job.seed}|{job.name}|{job.nodes}".encode()).digest()[:16], np.uint32
    )
    rng = np.random.default_rng([int(w) for w in words])
    gpus = sum(len(v.visible) for v in nvs)
    tflops = min(TRAINING_TFLOPS.get(v.visible[0].sku.key, DEFAULT_TFLOPS) for v in nvs)
    # Synchronous data parallelism waits for the slowest GPU: its clock under full load (the
    # operating point: cooling derate, thermal slowdown, a pinned P-state) paces every step.
    tflops *= min(under_load(v, d).clock_fraction for v in nvs for d in v.visible)
    net = _net_factor(twin, nvs, job.nvlink)
    tflops_eff = tflops / ((1 - COMM_SHARE) + COMM_SHARE / max(net, 0.05))
    step_s = FLOPS_PER_STEP / (gpus * tflops_eff * 1e12)
    crashers = sorted(v.node.hostname for v in nvs if any(v.level(m) > 0 for m in CRASH_MODES))
    crash_steps = sorted(
        int(rng.integers(max(job.max_steps // 4, 3), max(job.max_steps - 2, 4))) for _ in crashers
    )
    lines: list[str] = []
    t = 0.0
    step = 0
    restarts = 0

    def app_start() -> None:
        lines.append(f"{_stamp(t)} [before the start of training step] datetime: {_inner(t)}")

    app_start()
    t += 20.0  # model build and data loader start
    last_ckpt = 0
    while step < job.max_steps:
        if crash_steps and step == crash_steps[0]:
            crash_steps.pop(0)
            who = crashers[min(restarts, len(crashers) - 1)]
            lines.append(
                f"{_stamp(t)} [rank 0] NCCL watchdog: collective timed out; peer {who} lost"
            )
            if not job.checkpoint or last_ckpt == 0 or restarts >= job.max_restarts:
                return JobLog(
                    "\n".join(lines) + "\n",
                    1,
                    f"training process on {who} died at step {step}",
                    crashed_on=tuple(crashers),
                )
            restarts += 1
            t += RESCHEDULE_S
            app_start()
            t += LOAD_S
            lines.append(
                f"{_stamp(t)}  successfully loaded checkpoint from /ckpt [ t 1/1, p 1/1 ] "
                f"at iteration {last_ckpt}"
            )
            step = last_ckpt
            continue
        step += 1
        warm = 3.0 if step == 1 else 1.0
        dt = step_s * warm * (1 + 0.01 * float(rng.standard_normal()))
        t += dt
        lines.append(
            f"{_stamp(t)} [{_inner(t)}] iteration {step:>8}/{job.max_steps:>8} | consumed samples: "
            f"{step * 128} | elapsed time per iteration (ms): {dt * 1e3:.1f} | throughput per "
            f"GPU (TFLOP/s/GPU): {tflops_eff / warm:.1f} | learning rate: 3.0E-04 | global batch "
            f"size: 128 | lm loss: {10.5 - 0.05 * step:.6E} | loss scale: 1.0 |"
        )
        if job.checkpoint and step % job.save_interval == 0:
            lines.append(
                f"{_stamp(t)} [{_inner(t)}] saving checkpoint at iteration {step:>8} to /ckpt"
            )
            t += SAVE_S
            lines.append(
                f"{_stamp(t)} [{_inner(t)}] successfully saved checkpoint from iteration "
                f"{step:>8} to /ckpt"
            )
            last_ckpt = step
    lines.append(f"{_stamp(t + 1)} [after training is done] exiting")
    return JobLog("\n".join(lines) + "\n", 0, "", crashed_on=tuple(crashers))
