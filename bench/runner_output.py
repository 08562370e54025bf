"""Parsing hostile runner output: time and peak memory at 1, 10 and 100 MB of it.

For each size and shape (blank lines; one line with no newline; ``key=value`` reprints; a single
huge value; plain text lines) it builds the log, then parses it with
``glimmer.contract.parse.parse`` and prints the wall time, the peak memory tracemalloc saw
during the parse (the log itself, built before, is not counted), the bytes kept (metric values
plus message) and the ratio of the largest size to the smallest for time and memory: flat
memory reads ~1x however large the log. Issue 10 measured 2.5 GB and 27 s for 100 MB of blank
lines before the contract's bounds (docs/runner-contract.md, "Bounds").

It prints; it never asserts on time. ``--sizes`` (MB, comma-separated) makes a small run.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence

from glimmer.contract.parse import parse

MB = 1024 * 1024
SIZES_MB = (1, 10, 100)


def _blank(size: int) -> str:
    return "\n" * size


def _one_line(size: int) -> str:
    return "x" * size


def _reprints(size: int) -> str:
    block = "".join(f"metric{i}Pct={i}.5\n" for i in range(40))
    return block * (size // len(block) + 1)


def _huge_value(size: int) -> str:
    return "miscompares=" + "0" * size + "\nPASS\n"


def _text_lines(size: int) -> str:
    return "progress: still burning\n" * (size // 24 + 1)


SHAPES: dict[str, Callable[[int], str]] = {
    "blank lines": _blank,
    "one line": _one_line,
    "key=value reprints": _reprints,
    "one huge value": _huge_value,
    "text lines": _text_lines,
}


def measure(log: str) -> tuple[float, int, int]:
    """(seconds, peak bytes traced during the parse, bytes kept in the result)."""
    tracemalloc.start()
    start = time.perf_counter()
    parsed = parse("custom", log, 0)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    kept = sum(len(v) for v in parsed.metrics.values()) + len(parsed.message)
    return seconds, peak, kept


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES_MB)), help="MB, e.g. 1,10")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(f"{'shape':<20} {'MB':>5} {'seconds':>8} {'peak MiB':>9} {'kept B':>7}")
    for shape, build in SHAPES.items():
        rows = []
        for mb in sizes:
            log = build(mb * MB)
            seconds, peak, kept = measure(log)
            del log
            rows.append((seconds, peak))
            print(f"{shape:<20} {mb:>5} {seconds:>8.2f} {peak / MB:>9.1f} {kept:>7}")
        # Smallest to largest, and the two largest (both past the 4 MiB read bound by default).
        for a, b in sorted({(0, len(rows) - 1), (max(len(rows) - 2, 0), len(rows) - 1)}):
            (ta, ma), (tb, mb_) = rows[a], rows[b]
            print(
                f"{shape:<20} ratio {sizes[b]}/{sizes[a]} MB: time {tb / max(ta, 1e-6):.1f}x, "
                f"peak memory {mb_ / max(ma, 1):.1f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
