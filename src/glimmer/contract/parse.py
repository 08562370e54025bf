"""``parse``: one runner execution's exit code and stdout, turned into what it declared.

The parser is total: whatever bytes a runner (or a crash, or a truncated log) produced, it
returns a :class:`ParsedResult` and never raises. Values stay strings; numbers are read only when
a gate is evaluated, so a malformed value fails that gate instead of breaking the harvest.
"""

from __future__ import annotations

from glimmer.contract.artifacts import extract_artifacts
from glimmer.contract.exitcode import classify_exit
from glimmer.contract.names import canonical_name, validate_metric_name
from glimmer.contract.text import trim_space
from glimmer.contract.vocab import ParsedResult

UNMEASURABLE = "n/a"  # the only sentinel; "unknown", "none" and "" are ordinary values


def parse(kind: str, stdout: str | bytes, exit_code: int) -> ParsedResult:
    """Parse a runner's stdout (the pod log) under the contract's rules.

    Artifacts are fenced off first. Every other non-blank line is either a ``key=value`` metric
    (split at the first ``=``; the key canonicalised for ``kind`` and checked against the
    grammar) or a message candidate; the last message candidate becomes the message. A value of
    ``n/a`` (any case) declares the metric unmeasurable. The last occurrence of a name wins,
    across measured and unmeasurable alike. Keys whose canonical form the grammar rejects are
    listed (raw, once per line) in ``invalid_names`` and otherwise ignored.
    """
    data = stdout if isinstance(stdout, bytes) else stdout.encode("utf-8", "surrogatepass")
    # Only exit 2 looks for a skip marker (anywhere in stdout); spare big logs a second decode.
    marker_text = data.decode("utf-8", "replace") if exit_code == 2 else ""
    outcome = classify_exit(exit_code, marker_text)
    extraction = extract_artifacts(data)

    metrics: dict[str, str] = {}
    unmeasurable: set[str] = set()
    invalid: list[str] = []
    message = ""
    # Soak runners reprint the same keys thousands of times; resolve each distinct key once.
    resolved: dict[str, str | None] = {}
    for raw_line in extraction.lines:
        line = trim_space(raw_line.decode("utf-8", "replace"))
        if not line:
            continue
        eq = line.find("=")
        if eq <= 0:
            message = line
            continue
        key = trim_space(line[:eq])
        if not key or " " in key or "\t" in key:
            message = line
            continue
        if key in resolved:
            name = resolved[key]
        else:
            name = canonical_name(kind, key)
            name = resolved[key] = name if validate_metric_name(name) is None else None
        if name is None:
            invalid.append(key)
            continue
        value = trim_space(line[eq + 1 :])
        if value.lower() == UNMEASURABLE:
            unmeasurable.add(name)
            metrics.pop(name, None)
        else:
            metrics[name] = value
            unmeasurable.discard(name)

    return ParsedResult(
        verdict=outcome.verdict,
        exit_code=exit_code,
        metrics=metrics,
        unmeasurable=frozenset(unmeasurable),
        invalid_names=tuple(invalid),
        message=message,
        undeclared_skip=outcome.undeclared_skip,
        artifacts=extraction.artifacts,
    )
