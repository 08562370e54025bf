"""A link between two nodes as an RDMA test finds it: each end's port (rail 0 of the backend
fabric, the route to the peer), the slower end's speed, and every fault on the path.

Bandwidth factors multiply: a degraded port runs at (1 − I/2) of its rate (telemetry's rule),
a flapping port is down for I/2 of the time, and backend congestion on the fabric, either leaf
or either switch port costs (1 − congestion_loss × I) (specs/fleet.md §4.5).
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.fleet.records import NicRecord
from glimmer.sim.runners.node import NodeView


@dataclass(frozen=True)
class End:
    view: NodeView
    nic: NicRecord | None

    @property
    def host(self) -> str:
        return self.view.node.hostname

    def level(self, mode: str) -> float:
        return 0.0 if self.nic is None else self.view.nic_level(self.nic.key, mode)

    @property
    def down(self) -> bool:
        return self.level("nic_link_down") > 0

    @property
    def memlock(self) -> bool:
        return self.view.level("rdma_memlock_limit") > 0

    @property
    def speed_gbps(self) -> float:
        if self.nic is None:
            return 0.0
        cap = min(
            (d.part.nic_host_cap_gbps for d in self.view.devices if d.part and
             d.part.nic_host_cap_gbps),
            default=self.nic.speed_gbps,
        )  # fmt: skip
        return min(self.nic.speed_gbps, cap)

    def factor(self) -> float:
        return (1.0 - 0.5 * self.level("nic_degraded")) * (
            1.0 - 0.5 * self.level("nic_link_flapping")
        )


def end(view: NodeView) -> End:
    return End(view, view.rdma_nic())


def congestion(a: End, b: End) -> float:
    """The worst backend congestion on the path between two ports (0 when none)."""
    path: set[str] = set()
    for e in (a, b):
        if e.nic is not None:
            path |= {f"fabric:{e.nic.fabric}", e.nic.switch_key, e.nic.port_key}
    levels = [
        f.intensity
        for f in a.view.faults
        if f.mode == "gpu_backend_congestion" and f.target in path
    ]
    return max(levels, default=0.0)


@dataclass(frozen=True)
class Link:
    a: End
    b: End

    @property
    def speed_gbps(self) -> float:
        return min(self.a.speed_gbps, self.b.speed_gbps)

    @property
    def flapping(self) -> float:
        return max(self.a.level("nic_link_flapping"), self.b.level("nic_link_flapping"))

    def factor(self) -> float:
        loss = self.a.view.op["congestion_loss"] * congestion(self.a, self.b)
        return self.a.factor() * self.b.factor() * (1.0 - loss)
