"""Per-GPU identities and sparse GPU overrides (§1.7.5, §2.2, §2.3), as flat arrays.

GPUs follow the node order (nodes sorted by key), slots ascending within a node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from glimmer.fleet import identity as ids
from glimmer.fleet.context import BuildContext, Claims
from glimmer.fleet.drafts import NodeDraft

_UUID = re.compile(
    r"^GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
_PCI = re.compile(r"^([0-9a-fA-F]{1,8}):([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$")


def normalise_pci(text: str) -> str | None:
    """Canonical ``dddddddd:bb:dd.f`` form of a PCI address, or None when it is not one."""
    m = _PCI.match(text)
    if m is None:
        return None
    domain, bus, dev, fn = (int(m.group(i), 16) for i in range(1, 5))
    if domain > 0xFFFF or bus > 0xFF or dev > 31 or fn > 7:
        return None
    return f"{domain:08x}:{bus:02x}:{dev:02x}.{fn}"


@dataclass(frozen=True)
class GpuTable:
    keys: tuple[str, ...]
    uuids: tuple[str, ...]
    board_serials: tuple[str, ...]
    pci_bus_ids: tuple[str, ...]
    node: npt.NDArray[np.int32]
    slot: npt.NDArray[np.int16]
    usable_memory: npt.NDArray[np.int64]
    modules: dict[tuple[int, int], int]  # (node index, slot) -> declared hgx module id


def build_gpus(ctx: BuildContext, claims: Claims, nodes: list[NodeDraft]) -> GpuTable:
    """GPU identities for every node (``nodes`` already sorted, with ``gpu_start`` set)."""
    seed = ctx.seed
    keys: list[str] = []
    uuids: list[str] = []
    boards: list[str] = []
    pcis: list[str] = []
    node_of: list[int] = []
    slot_of: list[int] = []
    board_first: list[bool] = []  # first GPU of its board: the one that claims the serial
    pci_default = [ids.pci_bus_id(s) for s in range(8)]
    for d in nodes:
        n = d.pool.gpus_per_node
        per_board = 2 if d.pool.shape == "nvl72" else 1
        name, ordinal, host = d.pool.name, d.ordinal, d.hostname
        keys.extend(f"gpu:{host}/{s}" for s in range(n))
        uuids.extend(ids.gpu_uuid(seed, name, ordinal, s) for s in range(n))
        board_serials = [ids.board_serial(seed, name, ordinal, b) for b in range(n // per_board)]
        boards.extend(board_serials[s // per_board] for s in range(n))
        pcis.extend(pci_default[:n])
        node_of.extend([d.index] * n)
        slot_of.extend(range(n))
        board_first.extend(s % per_board == 0 for s in range(n))
    usable = np.zeros(len(keys), dtype=np.int64)
    modules: dict[tuple[int, int], int] = {}
    _apply_overrides(ctx, nodes, uuids, boards, pcis, usable, modules)
    _claim(claims, keys, uuids, boards, pcis, board_first)
    return GpuTable(
        keys=tuple(keys),
        uuids=tuple(uuids),
        board_serials=tuple(boards),
        pci_bus_ids=tuple(pcis),
        node=np.array(node_of, dtype=np.int32),
        slot=np.array(slot_of, dtype=np.int16),
        usable_memory=usable,
        modules=modules,
    )


def _apply_overrides(
    ctx: BuildContext,
    nodes: list[NodeDraft],
    uuids: list[str],
    boards: list[str],
    pcis: list[str],
    usable: npt.NDArray[np.int64],
    modules: dict[tuple[int, int], int],
) -> None:
    by_pool: dict[str, dict[int, NodeDraft]] = {}
    for d in nodes:
        by_pool.setdefault(d.pool.name, {})[d.ordinal] = d
    done: set[str] = set()
    for d in nodes:
        pool = d.pool
        if pool.name in done or not pool.gpus:
            continue
        done.add(pool.name)
        seen: set[tuple[int, int]] = set()
        board_declared: dict[tuple[int, int], str] = {}
        for gi, g in enumerate(pool.gpus):
            path = f"spec.pools[{d.pool_pos}].gpus[{gi}]"
            if not (0 <= g.node_ordinal < pool.node_count and 0 <= g.slot < pool.gpus_per_node):
                raise ctx.error(path, "GPU override out of range")
            if (g.node_ordinal, g.slot) in seen:
                raise ctx.error(path, "duplicate GPU override")
            seen.add((g.node_ordinal, g.slot))
            node = by_pool[pool.name][g.node_ordinal]
            i = node.gpu_start + g.slot
            if g.uuid:
                if not _UUID.match(g.uuid):
                    raise ctx.error(f"{path}.uuid", "invalid GPU UUID")
                uuids[i] = g.uuid
            if g.pci_bus_id:
                pci = normalise_pci(g.pci_bus_id)
                if pci is None:
                    raise ctx.error(f"{path}.pciBusId", "invalid PCI address")
                pcis[i] = pci
            if g.board_serial:
                board = (g.node_ordinal, g.slot // (2 if pool.shape == "nvl72" else 1))
                if board_declared.setdefault(board, g.board_serial) != g.board_serial:
                    raise ctx.error(f"{path}.boardSerial", "board serial mismatch within board")
                boards[i] = g.board_serial
            if g.usable_memory is not None:
                usable[i] = g.usable_memory.bytes
            if g.hgx_module_id is not None:
                modules[(node.index, g.slot)] = g.hgx_module_id
        # A board's serial is shared: an override on one GPU of an NVL72 board applies to both.
        for (ordinal, board_no), serial in board_declared.items():
            owner = by_pool[pool.name][ordinal]
            if pool.shape == "nvl72":
                for s in (2 * board_no, 2 * board_no + 1):
                    boards[owner.gpu_start + s] = serial


def _claim(
    claims: Claims,
    keys: list[str],
    uuids: list[str],
    boards: list[str],
    pcis: list[str],
    board_first: list[bool],
) -> None:
    # Generated identities have no field of their own: the GPU key says which one clashed.
    paths = keys
    claims.claim_many("UUID", uuids, paths)
    # Two GPUs of one NVL72 board legitimately share the serial: claim each board once.
    claims.claim_many(
        "serial",
        [b for b, f in zip(boards, board_first, strict=True) if f],
        [p for p, f in zip(paths, board_first, strict=True) if f],
    )
    hosts = [k.removeprefix("gpu:").rpartition("/")[0] for k in keys]
    claims.claim_many("PCI address", [f"{h}/{p}" for h, p in zip(hosts, pcis, strict=True)], paths)
