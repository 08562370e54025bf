"""Prometheus text exposition (format 0.0.4), written fast for very many series.

A fleet of 100,000 GPUs has over a million samples per scrape, so nothing here formats one
sample at a time in Python where it can be avoided: the label block of every series is built
once (the identities never change) and cached as the line prefix ``name{labels} ``; a scrape
only turns a numpy array of values into strings (integers through numpy, decimals through one
``str.format`` map) and joins prefix and value in one pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class MetricType(StrEnum):
    GAUGE = "gauge"
    COUNTER = "counter"


@dataclass(frozen=True)
class Family:
    """A metric family: its name, help text, type and how its values are printed.

    ``decimals`` None prints integers (values are rounded half to even first); otherwise that
    many digits after the point, as dcgm-exporter prints power.
    """

    name: str
    help: str
    type: MetricType
    decimals: int | None = None

    def header(self) -> str:
        return f"# HELP {self.name} {escape_help(self.help)}\n# TYPE {self.name} {self.type}\n"


def escape_help(text: str) -> str:
    """HELP text escapes backslash and newline (not the double quote)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def escape_label_value(text: str) -> str:
    """Label values escape backslash, double quote and newline."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def label_block(labels: Mapping[str, str]) -> str:
    """``{a="x",b="y"}`` in the given order; the empty string when there are no labels."""
    if not labels:
        return ""
    inner = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels.items())
    return "{" + inner + "}"


def label_blocks(columns: Mapping[str, Sequence[str]]) -> list[str]:
    """The label block of every row of a table of label columns (all columns equally long).

    Escaping runs once per distinct value, which keeps this cheap for repeated values (model
    names, slot numbers) across a large fleet.
    """
    names = list(columns)
    if not names:
        return []
    escaped: list[list[str]] = []
    for name in names:
        cache: dict[str, str] = {}
        col = []
        for value in columns[name]:
            text = cache.get(value)
            if text is None:
                text = cache[value] = f'{name}="{escape_label_value(value)}"'
            col.append(text)
        escaped.append(col)
    return ["{" + ",".join(row) + "}" for row in zip(*escaped, strict=True)]


def format_values(values: FloatArray, decimals: int | None) -> list[str]:
    """Each value as exposition text. Non-finite values print as NaN, +Inf or -Inf."""
    finite = np.isfinite(values)
    if decimals is None:
        ints = np.rint(np.where(finite, values, 0.0)).astype(np.int64)
        if ints.size and ints.min() == ints.max():
            out = [str(int(ints[0]))] * ints.size  # idle counters: one string, shared
        else:
            out = list(map(str, ints.tolist()))
    else:
        out = list(map(f"{{:.{decimals}f}}".format, values.tolist()))
    if not finite.all():
        for i in np.flatnonzero(~finite).tolist():
            v = float(values[i])
            out[i] = "NaN" if np.isnan(v) else ("+Inf" if v > 0 else "-Inf")
    return out


@dataclass
class SeriesSet:
    """The series of one family over a fixed table of rows (GPUs, nodes, racks).

    The line prefixes ``\nname{labels} `` are built once and cached; a render emits the rows in
    ``present`` only (absent rows — a GPU the exporter cannot see — emit nothing). Rendering
    appends pieces to a list so a whole exposition is joined once: at 100,000 GPUs the text is
    hundreds of megabytes, and every extra copy costs as much as the formatting.
    """

    family: Family
    label_rows: Sequence[str]
    _prefixes: list[str] = field(default_factory=list, repr=False)
    _template: list[str] = field(default_factory=list, repr=False)  # prefix, value, prefix, …
    _mask: BoolArray | None = field(default=None, repr=False)  # rows the template holds

    def prefixes(self) -> list[str]:
        if not self._prefixes and self.label_rows:
            head = "\n" + self.family.name
            self._prefixes = [f"{head}{labels} " for labels in self.label_rows]
        return self._prefixes

    def pieces(
        self, values: FloatArray, present: BoolArray | None = None, out: list[str] | None = None
    ) -> list[str]:
        """Append the family's header and lines to ``out`` (a new list when None)."""
        out = [] if out is None else out
        prefixes = self.prefixes()
        if len(values) != len(prefixes):
            raise ValueError(f"{self.family.name}: {len(values)} values for {len(prefixes)} series")
        out.append(self.family.header()[:-1])  # each line brings its own leading newline
        if present is not None and not present.all():
            values = values[present]
            if self._mask is None or not np.array_equal(present, self._mask):
                # The set of present rows changes only when faults start or end: rebuild the
                # template then, not on every scrape.
                self._mask = present.copy()
                self._template = [""] * (2 * int(present.sum()))
                self._template[0::2] = [prefixes[i] for i in np.flatnonzero(present).tolist()]
        elif self._mask is not None or not self._template:
            self._mask = None
            self._template = [""] * (2 * len(prefixes))
            self._template[0::2] = prefixes
        # Drop the values into the cached prefix/value template (a C-level slice assignment)
        # instead of building millions of (prefix, value) pairs.
        self._template[1::2] = format_values(values, self.family.decimals)
        out.extend(self._template)
        out.append("\n")
        return out

    def render(self, values: FloatArray, present: BoolArray | None = None) -> str:
        """The family's HELP/TYPE header and one line per present row."""
        return "".join(self.pieces(values, present))
