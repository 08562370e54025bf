"""The exporter: fixed label sets per GPU, node, rack and NIC port, and the rendering of a
telemetry sample as one Prometheus exposition.

GPU series carry dcgm-exporter's labels (``gpu``, ``UUID``, ``pci_bus_id``, ``device``,
``modelName``, ``Hostname``) so dashboards and alerts written for a real exporter read the
simulated one unchanged; node and NIC series carry ``Hostname`` to join them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from glimmer.fleet.topology import Topology
from glimmer.sim.derive import NicTable
from glimmer.sim.device_facts import facts
from glimmer.sim.exposition import Family, MetricType, SeriesSet, label_blocks
from glimmer.sim.telemetry import SERIES, Scope, Telemetry

# A scraper (or a test) can see simulated time advance between scrapes.
SIM_TIME = SeriesSet(
    Family(
        "glimmer_simulated_time_seconds",
        "Simulated instant of this sample (Unix seconds).",
        MetricType.GAUGE,
        3,
    ),
    [""],
)


@dataclass
class Exporter:
    series: list[SeriesSet]

    @staticmethod
    def for_topology(topo: Topology, nics: NicTable) -> Exporter:
        hosts = [n.hostname for n in topo.nodes]
        slots = [str(int(s)) for s in topo.gpu_slot.tolist()]
        names = [facts(m.key).model_name for m in topo.models]
        gpu_rows = label_blocks(
            {
                "gpu": slots,
                "UUID": list(topo.gpu_uuids),
                "pci_bus_id": list(topo.gpu_pci_bus_ids),
                "device": [f"nvidia{s}" for s in slots],
                "modelName": [names[m] for m in topo.gpu_model.tolist()],
                "Hostname": [hosts[n] for n in topo.gpu_node.tolist()],
            }
        )
        rows = {
            Scope.GPU: gpu_rows,
            Scope.NODE: label_blocks({"Hostname": hosts}),
            Scope.RACK: label_blocks({"rack": [r.key.removeprefix("rack:") for r in topo.racks]}),
            Scope.NIC: label_blocks(
                {
                    "Hostname": [hosts[n] for n in nics.node.tolist()],
                    "nic": [k.rsplit("/", 1)[1] for k in nics.keys],
                }
            ),
        }
        return Exporter(
            series=[SeriesSet(s.family, rows[s.scope]) for s in SERIES],
        )

    def chunks(self, telemetry: Telemetry) -> list[str]:
        """The exposition as one string per family: the simulated time, then table order.

        A server writes these one after the other; at 100,000 GPUs one joined string would be
        a quarter of a gigabyte allocated (and page-faulted) afresh on every scrape.
        """
        out = [SIM_TIME.render(np.array([telemetry.at]))]
        for series in self.series:
            reading = telemetry.readings[series.family.name]
            out.append(series.render(reading.values, reading.present))
        return out

    def render(self, telemetry: Telemetry) -> str:
        """The whole exposition as one string."""
        return "".join(self.chunks(telemetry))
