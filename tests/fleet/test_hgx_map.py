"""The HGX H100 endpoint map: 144 audited edges, and every way a tampered table is refused."""

from __future__ import annotations

from importlib import resources

import pytest

from glimmer.errors import InputError
from glimmer.fleet.hgx_map import h100, parse

TEXT = resources.files("glimmer.fleet").joinpath("hgx_h100_links.csv").read_text()


def rows() -> list[str]:
    return [ln for ln in TEXT.splitlines() if ln and not ln.startswith("#")]


def test_map_has_144_edges_with_32_40_40_32_ports() -> None:
    m = h100()
    assert m.switch.shape == (8, 18)
    assert [int((m.switch == s).sum()) for s in range(4)] == [32, 40, 40, 32]
    assert (m.switch[:, :].min(), m.switch.max()) == (0, 3)


def test_every_gpu_has_4_5_5_4_links_per_switch() -> None:
    m = h100()
    for module in range(8):
        assert [int((m.switch[module] == s).sum()) for s in range(4)] == [4, 5, 5, 4]


def test_links_pair_up_on_adjacent_ports_except_10_and_11() -> None:
    m = h100()
    for module in range(8):
        for k in range(0, 18, 2):
            same = m.switch[module, k] == m.switch[module, k + 1]
            adjacent = abs(int(m.port[module, k]) - int(m.port[module, k + 1])) == 1
            assert (same and adjacent) == (k != 10), (module, k)


def test_port_ranges_per_switch() -> None:
    m = h100()
    assert set(m.connected_ports(0)) == set(range(32, 64))
    assert set(m.connected_ports(3)) == set(range(32, 64))
    assert set(m.connected_ports(1)) == set(range(8)) | set(range(32, 64))
    assert set(m.connected_ports(2)) == set(range(4)) | set(range(16, 20)) | set(range(32, 64))


def test_module_0_link_2_lands_on_switch_0_port_40() -> None:
    m = h100()
    assert (m.switch[0, 2], m.port[0, 2]) == (0, 40)


def _swap_ports_on_one_switch(lines: list[str]) -> list[str]:
    # module 0 links 0 and 1 sit on switch 1 ports 36 and 37: swapping keeps every count.
    out = list(lines)
    a = out.index("0,0,0,1,36,0,2")
    b = out.index("0,0,1,1,37,0,2")
    out[a], out[b] = "0,0,0,1,37,0,2", "0,0,1,1,36,0,2"
    return out


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (_swap_ports_on_one_switch, "endpoint map differs from audited source projection"),
        (lambda r: r[:-1], "incomplete endpoint map"),
        (lambda r: [*r[:-1], r[1]], "duplicate endpoint map"),
        (lambda r: [*r[:-1], r[-1].replace("0,2", "1,2")], "nonlocal/invalid endpoint map"),
        (lambda r: [r[0], r[1].replace(",0,2", ",0,3"), *r[2:]], "nonlocal/invalid endpoint map"),
        (lambda r: [r[0], r[1].replace("0,0,0", "0,0,x"), *r[2:]], "invalid endpoint integer"),
        (lambda r: ["node,module", *r[1:]], "incomplete endpoint map"),
    ],
    ids=["same-switch swap", "deleted row", "duplicated row", "far node", "connect type",
         "not an integer", "header"],
)  # fmt: skip
def test_tampered_map_is_refused(tamper: object, reason: str) -> None:
    assert callable(tamper)
    with pytest.raises(InputError) as e:
        parse("\n".join(tamper(rows())) + "\n")
    assert reason in e.value.message
