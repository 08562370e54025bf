"""A Fleet error about something undeclared names it, at the field that names it (camelCase)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.api.fleet_load import load_fleet_text
from glimmer.errors import InputError
from glimmer.fleet.load import topology_of

FIXTURE = Path(__file__).resolve().parents[2] / "src/glimmer/data/fleets/ai-factory-fixture.yaml"
Doc = dict[str, Any]


def _set(path: list[str | int], value: object) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("change", "field", "named"),
    [
        (_set(["spec", "storageClusters", 0, "fabric"], "frontend-z"),
         "spec.storageClusters[0].fabric", "fabric 'frontend-z' is not declared"),
        (_set(["spec", "storageClusters", 0, "fabric"], "backend-a"),
         "spec.storageClusters[0].fabric", "fabric 'backend-a' is a backend fabric"),
        (_set(["spec", "fabrics", 1, "links", 0, "bDevice"], "backend-spine-z"),
         "spec.fabrics[1].links[0].bDevice",
         "device 'backend-spine-z' is not declared in fabric 'backend-a'"),
        (_set(["spec", "fabrics", 1, "links", 0, "aPort"], "swp99"),
         "spec.fabrics[1].links[0].aPort", "device 'backend-leaf-0' has no port 'swp99'"),
        (_set(["spec", "pools", 0, "nics", 0, "fabric"], "frontend-z"),
         "spec.pools[0].nics[0].fabric", "fabric 'frontend-z' is not declared"),
        (_set(["spec", "pools", 0, "nics", 0, "switch"], "frontend-leaf-z"),
         "spec.pools[0].nics[0].switch",
         "switch 'frontend-leaf-z' is not declared in fabric 'frontend-a'"),
        (_set(["spec", "pools", 0, "placements", 0, "rack"], "rack:site-a/pcie-z"),
         "spec.pools[0].placements[0].rack", "rack 'rack:site-a/pcie-z' is not declared"),
        (_set(["spec", "pools", 0, "gpuModel"], "h100_pcie_81gb"),
         "spec.pools[0].gpuModel", "unknown gpuModel 'h100_pcie_81gb' (known: "),
    ],
    ids=["storage-fabric", "storage-backend", "link-device", "link-port", "nic-fabric",
         "nic-switch", "placement-rack", "gpu-model"],
)  # fmt: skip
def test_an_undeclared_reference_is_named_at_its_field(
    change: Callable[[Doc], None], field: str, named: str
) -> None:
    doc = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    change(doc)
    with pytest.raises(InputError) as caught:
        topology_of(load_fleet_text(yaml.safe_dump(doc, sort_keys=False), "f.yaml"))
    error = caught.value
    assert error.location.field == field and named in error.message
    assert error.location.line is not None
    assert "_" not in field, "field paths are camelCase as the file writes them"
