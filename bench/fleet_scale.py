"""Fleet simulator at scale: build, 1,000 active faults, one tick, one full exposition.

Prints each figure for 10,000 and 100,000 GPUs, then the 100k/10k ratios, against the targets
of issue 3 (at 100,000 GPUs: build ≤ 10 s, tick ≤ 250 ms, exposition ≤ 1 s; cost linear, ratio
≤ 12) and issue 12 item 6 (the topology build's own ratio ≤ 12; its time is the median of three
builds). It only prints: a slow machine is a finding, not a crash, so nothing here asserts on time.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from glimmer.fleet.build import build
from glimmer.fleet.generate import generate_fleet
from glimmer.fleet.topology import Topology
from glimmer.sim.clock import EPOCH
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

SIZES = (10_000, 100_000)
FAULTS = 1_000
TARGETS = {"build": 10.0, "tick": 0.25, "exposition": 1.0}
RATIO_TARGET = 12.0

T = TypeVar("T")

# Modes spread over the targets they accept; one in ten faults is node-wide.
GPU_MODES = (
    "gpu_low_pstate", "gpu_silent_data_corruption", "gpu_ecc_correctable",
    "gpu_ecc_uncorrectable", "gpu_row_remap", "gpu_pcie_downtrained",
    "gpu_thermal_paste_degraded", "gpu_xid_burst", "gpu_nvlink_error_burst",
    "gpu_fallen_off_bus",
)  # fmt: skip
NODE_MODES = ("gpu_xid_burst", "gpu_node_drain", "nic_link_flapping", "rdma_memlock_limit")


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def faults_for(topo: Topology, count: int) -> list[Fault]:
    """``count`` distinct faults, deterministic for the fleet, active from the epoch on."""
    rng = random.Random(f"{topo.seed}:bench")
    out: list[Fault] = []
    seen: set[tuple[str, str]] = set()
    while len(out) < count:
        if rng.random() < 0.1:
            mode = rng.choice(NODE_MODES)
            target = topo.nodes[rng.randrange(len(topo.nodes))].key
        else:
            mode = rng.choice(GPU_MODES)
            target = topo.gpu_keys[rng.randrange(topo.gpu_count)]
        if (mode, target) in seen:
            continue
        seen.add((mode, target))
        out.append(Fault(mode, target, round(rng.uniform(0.2, 1.0), 2)))
    return out


@dataclass
class Figures:
    gpus: int
    build: float
    topology: float  # of which: the fleet's topology (fleet/build)
    first_tick: float
    tick: float
    exposition: float
    first_exposition: float
    lines: int


def median_time(fn: Callable[[int], object], runs: int) -> float:
    """Median seconds of ``fn(1) … fn(runs)`` (a shared machine is noisy)."""
    times = []
    for k in range(1, runs + 1):
        start = time.perf_counter()
        fn(k)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(gpus: int) -> Figures:
    fleet = generate_fleet(gpus, "hgx")
    topo, t_first_topo = timed(lambda: build(fleet))
    # The median of three builds: one build is a few seconds of a shared machine's noise.
    t_topo = statistics.median([t_first_topo, *(timed(lambda: build(fleet))[1] for _ in range(2))])
    faults = faults_for(topo, FAULTS)
    sim, t_sim = timed(lambda: FleetSim(topo, faults))
    t = EPOCH + 3600.0
    # One tick: capture the active faults, allocate, fold, operating points, telemetry sample.
    # The first one also fills the per-target reach caches.
    _, t_first_tick = timed(lambda: sim.telemetry_at(t))
    assert len(sim.active_faults(t)) == FAULTS
    t_tick = median_time(lambda k: sim.telemetry_at(t + 60 * k), 5)
    # The exposition as a server writes it: one string per family (see Exporter.chunks). The
    # first render also builds the cached label prefixes.
    chunks, t_first = timed(lambda: sim.exposition_chunks(t))
    t_expo = median_time(lambda k: sim.exposition_chunks(t + 60 * k), 3)
    lines = sum(c.count("\n") for c in chunks)
    return Figures(
        topo.gpu_count, t_topo + t_sim, t_topo, t_first_tick, t_tick, t_expo, t_first, lines
    )


def mark(value: float, target: float) -> str:
    return "ok" if value <= target else "OVER"


def main() -> int:
    results = []
    for size in SIZES:
        f = measure(size)
        results.append(f)
        print(
            f"{f.gpus:>7} GPUs  build {f.build:6.3f} s (topology {f.topology:6.3f} s)  "
            f"tick {f.tick * 1000:6.1f} ms (first {f.first_tick * 1000:6.1f} ms)  "
            f"exposition {f.exposition:6.3f} s (first {f.first_exposition:6.3f} s, "
            f"{f.lines:,} lines)   {FAULTS} faults"
        )
    small, big = results
    print(
        f"targets at {big.gpus} GPUs: build {big.build:.2f} s <= {TARGETS['build']:.0f} s "
        f"[{mark(big.build, TARGETS['build'])}], tick {big.tick * 1000:.0f} ms <= "
        f"{TARGETS['tick'] * 1000:.0f} ms [{mark(big.tick, TARGETS['tick'])}], exposition "
        f"{big.exposition:.2f} s <= {TARGETS['exposition']:.0f} s "
        f"[{mark(big.exposition, TARGETS['exposition'])}]"
    )
    for name in ("build", "topology", "tick", "exposition"):
        ratio = getattr(big, name) / getattr(small, name)
        print(f"ratio 100k/10k {name:<10} {ratio:5.1f} (<= {RATIO_TARGET:.0f}) "
              f"[{mark(ratio, RATIO_TARGET)}]")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
