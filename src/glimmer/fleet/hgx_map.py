"""The HGX H100 NVLink endpoint map (specs/fleet.md §3.3, Appendix B), parsed and audited.

The map is a data file (``hgx_h100_links.csv``). Parsing checks its structure *and* the hash of
its canonical projection: a swap of two ports on one switch keeps every count right, so only the
hash catches it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np
import numpy.typing as npt

from glimmer.errors import InputError, Location

HEADER = "node,gpu_physical_id,gpu_link_index,switch_physical_id,switch_port,far_node,connect_type"
AUDITED_SHA256 = "3ec71bc45a3689d0e6144801b1fbb6aee9c4b09265e60613e4dbf06edd33a302"
MODULES, LINKS, SWITCHES, PORTS = 8, 18, 4, 64
PORTS_PER_SWITCH = (32, 40, 40, 32)
ACCESS_GPU_CONNECT = 2


@dataclass(frozen=True)
class HgxMap:
    """``switch[module, link]`` and ``port[module, link]``: where each GPU link lands."""

    switch: npt.NDArray[np.int16]
    port: npt.NDArray[np.int16]

    def connected_ports(self, switch: int) -> list[int]:
        """Sorted ports of ``switch`` that carry a link."""
        return sorted(int(p) for p in self.port[self.switch == switch])


def parse(text: str, where: str = "hgx map") -> HgxMap:
    """Parse and audit an endpoint table; :class:`InputError` names what is wrong."""

    def fail(reason: str) -> InputError:
        return InputError(reason, Location(file=where))

    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    if not lines or lines[0] != HEADER:
        raise fail("incomplete endpoint map (header)")
    rows: list[tuple[int, ...]] = []
    for ln in lines[1:]:
        cells = ln.split(",")
        if len(cells) != 7:
            raise fail("incomplete endpoint map")
        try:
            rows.append(tuple(int(c) for c in cells))
        except ValueError:
            raise fail("invalid endpoint integer") from None
    if len(rows) != MODULES * LINKS:
        raise fail("incomplete endpoint map")
    switch = np.full((MODULES, LINKS), -1, dtype=np.int16)
    port = np.full((MODULES, LINKS), -1, dtype=np.int16)
    used: set[tuple[int, int]] = set()
    for node, module, link, sw, p, far, connect in rows:
        in_range = 0 <= module < MODULES and 0 <= link < LINKS and 0 <= sw < SWITCHES
        if (
            node != 0
            or far != 0
            or connect != ACCESS_GPU_CONNECT
            or not in_range
            or not (0 <= p < PORTS)
        ):
            raise fail("nonlocal/invalid endpoint map")
        if switch[module, link] >= 0 or (sw, p) in used:
            raise fail("duplicate endpoint map")
        switch[module, link], port[module, link] = sw, p
        used.add((sw, p))
    counts = tuple(int((switch == s).sum()) for s in range(SWITCHES))
    if counts != PORTS_PER_SWITCH:
        raise fail(f"incomplete switch ports {counts}")
    body = "".join(f"{','.join(map(str, r))}\n" for r in sorted(rows, key=lambda r: (r[1], r[2])))
    if hashlib.sha256(f"{HEADER}\n{body}".encode()).hexdigest() != AUDITED_SHA256:
        raise fail("endpoint map differs from audited source projection")
    return HgxMap(switch=switch, port=port)


@cache
def h100() -> HgxMap:
    """The shipped, audited HGX H100 map."""
    text = resources.files("glimmer.fleet").joinpath("hgx_h100_links.csv").read_text()
    return parse(text, "glimmer/fleet/hgx_h100_links.csv")
