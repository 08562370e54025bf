"""Where every node sits: placements expanded per node ordinal, with the rules of §1.7.2.

Works on arrays per pool so a pool of 25,000 nodes costs a few numpy passes, not a loop per node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from glimmer.api.fleet import Pool, Rack
from glimmer.fleet.context import BuildContext

NVL72_TRAYS = 18


@dataclass(frozen=True)
class PoolPlacement:
    """Per node ordinal of one pool: rack index, first slot (RU or tray) and height."""

    rack: npt.NDArray[np.int32]
    slot: npt.NDArray[np.int32]
    height: npt.NDArray[np.int32]


def _range_problem(start: int, count: int, slot: int, pool_nodes: int) -> tuple[str, str] | None:
    """The field of a placement whose range is wrong, and why; None when the range fits."""
    if start < 0:
        return "nodeStart", f"nodeStart {start} is negative"
    if count <= 0:
        return "nodeCount", f"nodeCount {count} is not positive"
    if start + count > pool_nodes:
        return "nodeCount", (
            f"nodes {start}..{start + count - 1} run past the pool's nodeCount {pool_nodes}"
        )
    if slot < 0:
        return "slotStart", f"slotStart {slot} is negative"
    return None


def place(
    ctx: BuildContext,
    pools: list[tuple[int, Pool]],
    racks: list[Rack],
    rack_index: dict[str, int],
) -> dict[str, PoolPlacement]:
    """Expand every pool's placements; raise on a rule of §1.7.2 (ranges, overlap, coverage)."""
    out: dict[str, PoolPlacement] = {}
    cells: list[tuple[npt.NDArray[np.int32], ...]] = []  # (rack, first, last, pool#, ordinal)
    for pi, pool in pools:
        n = pool.node_count
        rack_of = np.full(n, -1, dtype=np.int32)
        slot_of = np.zeros(n, dtype=np.int32)
        height_of = np.ones(n, dtype=np.int32)
        for k, pl in enumerate(pool.placements):
            path = f"spec.pools[{pi}].placements[{k}]"
            ri = rack_index.get(pl.rack)
            if ri is None:
                declared = ", ".join(sorted(rack_index)[:8]) or "none"
                more = " …" if len(rack_index) > 8 else ""
                raise ctx.error(
                    f"{path}.rack",
                    f"invalid placement/rack/range: rack {pl.rack!r} is not declared "
                    f"(declared: {declared}{more})",
                )
            if racks[ri].shape != pool.shape:
                raise ctx.error(
                    f"{path}.rack",
                    f"invalid placement/rack/range: rack {pl.rack!r} has shape "
                    f"{racks[ri].shape!r}, the pool {pool.shape!r}",
                )
            reason = _range_problem(pl.node_start, pl.node_count, pl.slot_start, n)
            if reason is not None:
                field, why = reason
                raise ctx.error(f"{path}.{field}", f"invalid placement/rack/range: {why}")
            span = slice(pl.node_start, pl.node_start + pl.node_count)
            steps = np.arange(pl.node_count, dtype=np.int32)
            if pool.shape == "nvl72":
                if pl.node_height_u:
                    raise ctx.error(f"{path}.nodeHeightU", "NVL72 nodeHeightU must be omitted")
                slots = pl.slot_start + steps
                if int(slots[-1]) > NVL72_TRAYS - 1:
                    raise ctx.error(f"{path}.slotStart", "NVL72 tray ordinal out of range")
                height = 1
            else:
                if pl.node_height_u <= 0 or pl.slot_start < 1:
                    raise ctx.error(path, "PCIe nodeHeightU and slotStart must be positive")
                height = pl.node_height_u
                slots = pl.slot_start + steps * height
                if int(slots[-1]) + height - 1 > racks[ri].height:
                    raise ctx.error(path, "rack slot out of range")
            if (rack_of[span] >= 0).any():
                ordinal = pl.node_start + int(np.argmax(rack_of[span] >= 0))
                raise ctx.error(path, f"node ordinal assigned twice (ordinal {ordinal})")
            rack_of[span], slot_of[span], height_of[span] = ri, slots, height
        if (rack_of < 0).any():
            missing = int(np.argmax(rack_of < 0))
            raise ctx.error(
                f"spec.pools[{pi}].placements", f"node ordinal is missing (ordinal {missing})"
            )
        ordinals = np.arange(n, dtype=np.int32)
        pool_no = np.full(n, pi, dtype=np.int32)
        cells.append((rack_of, slot_of, slot_of + height_of - 1, pool_no, ordinals))
        out[pool.name] = PoolPlacement(rack=rack_of, slot=slot_of, height=height_of)
    _check_overlap(ctx, cells)
    _check_nvl72_full(ctx, racks, cells)
    return out


def _check_overlap(ctx: BuildContext, cells: list[tuple[npt.NDArray[np.int32], ...]]) -> None:
    if not cells:
        return
    rack, first, last, pool_no, ordinal = (np.concatenate(c) for c in zip(*cells, strict=True))
    order = np.lexsort((first, rack))
    r, f, la = rack[order], first[order], last[order]
    # Sorted by (rack, first slot), a node overlaps when it starts at or before the furthest
    # end seen so far in its rack (a running maximum, so a tall node is not missed).
    clash = np.flatnonzero((r[1:] == r[:-1]) & (f[1:] <= _running_end(r, la)[:-1]))
    if clash.size:
        j = order[clash[0] + 1]
        raise ctx.error(
            f"spec.pools[{int(pool_no[j])}].placements",
            f"occupied rack slots overlap (node ordinal {int(ordinal[j])})",
        )


def _running_end(rack: npt.NDArray[np.int32], last: npt.NDArray[np.int32]) -> npt.NDArray[np.int64]:
    """For each position, the furthest last-slot seen so far within the same rack (rack sorted)."""
    # Racks ascend, so offsetting by rack keeps an earlier rack's maximum below any later value.
    big = np.int64(1 << 32)
    offset = rack.astype(np.int64) * big
    return np.asarray(np.maximum.accumulate(offset + last) - offset, dtype=np.int64)


def _check_nvl72_full(
    ctx: BuildContext, racks: list[Rack], cells: list[tuple[npt.NDArray[np.int32], ...]]
) -> None:
    counts = np.zeros(len(racks), dtype=np.int64)
    for rack_of, *_ in cells:
        counts += np.bincount(rack_of, minlength=len(racks))
    for i, rack in enumerate(racks):
        if rack.shape == "nvl72" and counts[i] != NVL72_TRAYS:
            raise ctx.error(
                "spec.racks", f"NVL72 requires exactly 18 compute trays × 4 GPUs ({rack.key})"
            )
