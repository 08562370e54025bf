"""Generated fleets of any size load back and have the declared shape."""

from __future__ import annotations

import pytest
from fleet_docs import build_doc

from glimmer.api.budget import budget
from glimmer.api.fleet_load import load_fleet_text
from glimmer.errors import InputError
from glimmer.fleet.build import build
from glimmer.fleet.generate import MAX_GPUS, generate, generate_fleet, to_yaml
from glimmer.fleet.load import load_topology


@pytest.mark.parametrize(
    ("shape", "gpus", "expected"),
    [("hgx", 64, 64), ("hgx", 70, 72), ("pcie", 40, 40), ("nvl72", 100, 144)],
)
def test_generated_fleet_loads_back(shape: str, gpus: int, expected: int) -> None:
    text = to_yaml(generate(gpus, shape))
    loaded = load_fleet_text(text, "gen.yaml")
    topo = build(loaded.fleet, loaded.source, loaded.lines)
    assert topo.gpu_count == expected
    assert {n.shape for n in topo.nodes} == {shape}
    assert "&id" not in text and "*id" not in text  # no YAML aliases in a generated file


def test_generated_hgx_is_rail_optimised() -> None:
    topo = build(generate_fleet(8 * 64, "hgx"))  # two scalable units of 32 nodes
    assert len(topo.nodes) == 64 and topo.edge_count == 64 * 144
    for node in topo.nodes:
        backend = [c for c in node.nics if c.role == "backend"]
        assert [c.rail for c in backend] == list(range(8))
        su = node.pool.rsplit("-", 1)[1]
        assert all(c.switch_key == f"switch:backend/be-{su}-rail{c.rail}" for c in backend)
    spine = topo.fabric_switches[
        [s.key for s in topo.fabric_switches].index("switch:backend/spine-rail0")
    ]
    assert spine.kind == "spine"
    backend = next(f for f in topo.fabrics if f.role == "backend")
    assert len(backend.links) == 2 * 8 * 2  # SUs × rails × uplinks


def test_generate_refuses_nonsense() -> None:
    with pytest.raises(InputError):
        generate(0, "hgx")
    with pytest.raises(InputError):
        generate(8, "dgx")


def test_hgx_1k_builtin() -> None:
    topo = load_topology("hgx-1k")
    assert len(topo.nodes) == 1024 and topo.gpu_count == 8192
    assert {n.model for n in topo.nodes} == {"h100_sxm_80gb"}
    assert topo.edge_count == 1024 * 144
    assert len({c.rail for n in topo.nodes for c in n.nics if c.role == "backend"}) == 8


def test_generated_document_matches_the_builtin_hgx_1k() -> None:
    ours = build_doc(generate(8192, "hgx", "hgx-1k"))
    assert ours.gpu_uuids == load_topology("hgx-1k").gpu_uuids


def test_generate_refuses_more_gpus_than_a_fleet_file_can_hold() -> None:
    with pytest.raises(InputError) as caught:
        generate(MAX_GPUS + 1, "hgx", None)
    assert caught.value.message.startswith(f"--gpus must be at most {MAX_GPUS}: ")
    assert "16 MiB budget" in caught.value.message


@pytest.mark.parametrize("shape", ["pcie", "hgx", "nvl72"])
def test_the_largest_fleet_generate_writes_fits_the_fleet_budget(shape: str) -> None:
    # The file grows linearly with the GPUs: the size of a 16,384-GPU file scaled up to the
    # largest one generate writes must stay inside the budget glimmer reads Fleets within.
    sample = 16_384
    size = len(to_yaml(generate(sample, shape, None), "").encode("utf-8"))
    assert size * (MAX_GPUS / sample) < budget("fleet").max_bytes * 0.95
