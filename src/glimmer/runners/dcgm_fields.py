"""DCGM field samples (``dcgmi dmon``) taken before, during and after a diagnostic, and the
deltas host counters are reported as.

A counter is reported as the growth between the first and the last sample; a counter that went
backwards (a driver reload, a DCGM restart) is ``n/a`` with ``counter_baseline_reset=true``,
never a clamped 0; fewer than two samples and the deltas are omitted. The Xid field holds the
*code* of the latest Xid, not a count, so it is reported as it was last read (subtracting two
codes once turned a GPU stuck at Xid 79 into a clean 0, §12 lesson 28).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# DCGM field ids (dcgm_fields.h) and the column names dmon prints for them.
TEMP, PCIE_REPLAY, XID = 150, 202, 230
ECC_SBE_VOL, ECC_DBE_VOL = 310, 311
ROWS_UNCORRECTABLE, ROWS_CORRECTABLE = 393, 394
FIELDS = (TEMP, PCIE_REPLAY, XID, ECC_SBE_VOL, ECC_DBE_VOL, ROWS_UNCORRECTABLE, ROWS_CORRECTABLE)
# metric key -> the fields summed into it (over every GPU)
COUNTERS: dict[str, tuple[int, ...]] = {
    "pcie_replay_count": (PCIE_REPLAY,),
    "rows_remapped": (ROWS_UNCORRECTABLE, ROWS_CORRECTABLE),
    "eccSbeTotal": (ECC_SBE_VOL,),
    "eccDbeTotal": (ECC_DBE_VOL,),
}

Sample = dict[str, list[int | None]]  # GPU id -> one value per field (None: N/A or blank)


def parse_dmon(text: str, fields: tuple[int, ...] = FIELDS) -> Sample:
    """One ``dcgmi dmon -e <fields> -c 1`` table: rows ``GPU <id> v1 v2 ...``."""
    sample: Sample = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2 + len(fields) or parts[0] != "GPU":
            continue
        values: list[int | None] = []
        for raw in parts[2 : 2 + len(fields)]:
            try:
                values.append(int(float(raw)))
            except ValueError:
                values.append(None)
        sample[parts[1]] = values
    return sample


@dataclass
class FieldReport:
    values: dict[str, int] = field(default_factory=dict)
    na: list[str] = field(default_factory=list)
    baseline_reset: bool = False


def _total(sample: Sample, ids: tuple[int, ...]) -> int | None:
    total = 0
    for values in sample.values():
        for fid in ids:
            v = values[FIELDS.index(fid)]
            if v is None:
                return None
            total += v
    return total


def fold(samples: list[Sample]) -> FieldReport:
    out = FieldReport()
    usable = [s for s in samples if s]
    temps = [v[FIELDS.index(TEMP)] for s in usable for v in s.values()]
    known = [t for t in temps if t is not None]
    if known:
        out.values["gpuTempC"] = max(known)
    if usable:
        codes = [v[FIELDS.index(XID)] for v in usable[-1].values()]
        if all(c is not None for c in codes) and codes:
            out.values["lastXidCode"] = max(c for c in codes if c is not None)
    if len(usable) < 2 or set(usable[0]) != set(usable[-1]):
        return out
    for key, ids in COUNTERS.items():
        first, last = _total(usable[0], ids), _total(usable[-1], ids)
        if first is None or last is None:
            continue
        if last < first:
            out.na.append(key)
            out.baseline_reset = True
        else:
            out.values[key] = last - first
    return out
