"""Group combination: one verdict about the COLLECTIVE across every rank (§2.9).

A collective is judged only when every rank reported: a missing rank is an Error, and that is
checked before any Skip or Pass (a root-only Skip once certified whole fleets "not applicable").
Metrics are elected per key by the registry's Combination, never by letting rank 0 speak for
the group, and any rank's ``n/a`` makes the key unmeasurable so its gate cannot quietly pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glimmer.contract.registry import Combination, lookup
from glimmer.contract.vocab import ParsedResult, RunnerVerdict
from glimmer.verdict.ends import NEVER_RAN_EXIT, end_summary, verdict_word
from glimmer.verdict.numbers import format_fixed, read_float
from glimmer.verdict.text import clamp_bytes, clamp_marked, name_some

MAX_RANK_LINE_BYTES = 300
MAX_NAMED_RANKS = 4
MAX_GROUP_MESSAGE_BYTES = 4096
MAX_NOTED_KEYS = 4
NA = "n/a"
NOT_REPORTED_WORD = "did not report"


@dataclass(frozen=True)
class Election:
    """The metrics elected for the collective, the keys it cannot vouch for, and the keys
    where ranks disagreed with what was kept."""

    metrics: dict[str, str]
    unmeasurable: frozenset[str]
    disagreements: tuple[str, ...]


def _rank_label(rank: int, node: str) -> str:
    return f"rank {rank} ({node})"


def _verdict(ranks: Sequence[ParsedResult | None]) -> tuple[RunnerVerdict, int]:
    reported = [p for p in ranks if p is not None]
    if not reported:
        return RunnerVerdict.ERROR, NEVER_RAN_EXIT
    # Error, then Fail, from the lowest rank holding it — honoured even with ranks missing.
    for verdict in (RunnerVerdict.ERROR, RunnerVerdict.FAIL):
        for parsed in reported:
            if parsed.verdict is verdict:
                return verdict, parsed.exit_code
    if len(reported) < len(ranks):
        return RunnerVerdict.ERROR, NEVER_RAN_EXIT  # a silent rank is never a pass or a skip
    if any(p.verdict is RunnerVerdict.SKIP for p in reported):
        return RunnerVerdict.SKIP, reported[0].exit_code
    return RunnerVerdict.PASS, reported[0].exit_code


def _readings(
    ranks: Sequence[ParsedResult | None],
) -> tuple[dict[str, list[tuple[int, str]]], set[str]]:
    """Every rank's reading per key (``n/a`` kept as a reading where another rank measured the
    key) and the keys only declared unmeasurable."""
    measured = {k for p in ranks if p is not None for k in p.metrics}
    readings: dict[str, list[tuple[int, str]]] = {}
    only_declared: set[str] = set()
    for rank, parsed in enumerate(ranks):
        if parsed is None:
            continue
        for key, value in parsed.metrics.items():
            readings.setdefault(key, []).append((rank, value))
        for key in parsed.unmeasurable:
            if key in measured:
                readings.setdefault(key, []).append((rank, NA))
            else:
                only_declared.add(key)
    for values in readings.values():
        values.sort()
    return readings, only_declared


def _numeric_fold(combination: Combination, values: list[tuple[int, str]]) -> str | None:
    """Fold rank readings numerically; None when one of them is not a number at all.

    A non-finite reading wins (the lowest rank's), so the gate on the key fails closed.
    """
    parsed = [(raw, read_float(raw)) for _, raw in values]
    if any(r.value is None for _, r in parsed):
        return None
    for raw, reading in parsed:
        if not reading.finite:
            return raw
    if combination is Combination.SUM:
        return format_fixed(sum(r.value for _, r in parsed if r.value is not None))
    best_raw, best = parsed[0]
    for raw, reading in parsed[1:]:
        assert reading.value is not None and best.value is not None
        better = (
            reading.value > best.value
            if combination is Combination.MAX
            else (reading.value < best.value)
        )
        if better:
            best_raw, best = raw, reading
    return best_raw


def _elect_one(key: str, values: list[tuple[int, str]]) -> str | None:
    """The collective's value of one key, or None when the key must be declared unmeasurable."""
    if any(raw == NA for _, raw in values):
        return None
    spec = lookup(key)
    combination = spec.combination if spec is not None else None
    if combination is Combination.COLLECTIVE:
        return values[0][1]
    if combination in (Combination.SUM, Combination.MAX, Combination.MIN):
        assert combination is not None
        return _numeric_fold(combination, values)
    # Unclassified: kept only when every rank that reported it agrees.
    first = values[0][1]
    return first if all(raw == first for _, raw in values) else None


def _disagreement(
    key: str, kept: str | None, values: list[tuple[int, str]], nodes: Sequence[str]
) -> str:
    odd = [
        f"{_rank_label(rank, nodes[rank] if rank < len(nodes) else '?')}={raw}"
        for rank, raw in values
        if raw != kept
    ]
    head = f"{key} kept {kept}" if kept is not None else f"{key} dropped"
    return f"{head} ({name_some(odd, MAX_NAMED_RANKS)})"


def elect_metrics(ranks: Sequence[ParsedResult | None], nodes: Sequence[str] = ()) -> Election:
    """Elect the collective's metrics from every rank's readings (§2.9).

    Per key, by the registry's Combination: any ``n/a`` reading drops the key and declares it
    unmeasurable; Collective takes the lowest rank's value; Sum/Max/Min fold numerically (a
    non-numeric reading drops the key); an unclassified key survives only if every rank that
    reported it agrees. Disagreements with the kept value are noted (a Sum is nobody's claim,
    so it is not noted).
    """
    readings, unmeasurable = _readings(ranks)
    metrics: dict[str, str] = {}
    notes: list[str] = []
    for key in sorted(readings):
        values = readings[key]
        kept = _elect_one(key, values)
        if kept is None:
            unmeasurable.add(key)
        else:
            metrics[key] = kept
        spec = lookup(key)
        is_sum = spec is not None and spec.combination is Combination.SUM and kept is not None
        if not is_sum and any(raw != kept for _, raw in values):
            notes.append(_disagreement(key, kept, values, nodes))
    return Election(metrics, frozenset(unmeasurable), tuple(notes))


def _classes(ranks: Sequence[ParsedResult | None], nodes: Sequence[str]) -> list[str]:
    by_word: dict[str, list[str]] = {}
    for rank, parsed in enumerate(ranks):
        word = NOT_REPORTED_WORD if parsed is None else verdict_word(parsed.verdict)
        node = nodes[rank] if rank < len(nodes) else "?"
        line = clamp_marked(end_summary(_rank_label(rank, node), parsed), MAX_RANK_LINE_BYTES)
        by_word.setdefault(word, []).append(line)
    total = len(ranks)
    if len(by_word) == 1 and total > MAX_NAMED_RANKS:
        ((word, lines),) = by_word.items()
        return [f"all {total} ranks {word}, e.g. {lines[0]}"]
    out: list[str] = []
    for word in sorted(by_word):
        lines = by_word[word]
        if len(lines) > MAX_NAMED_RANKS:
            shown = "; ".join(lines[:MAX_NAMED_RANKS])
            rest = len(lines) - MAX_NAMED_RANKS
            out.append(
                f"{len(lines)} ranks {word} (first {MAX_NAMED_RANKS}: {shown}; and {rest} more)"
            )
        else:
            out.extend(lines)
    return out


def group_message(
    ranks: Sequence[ParsedResult | None], nodes: Sequence[str], disagreements: Sequence[str] = ()
) -> str:
    """``group of N (this verdict is about the COLLECTIVE, …): <ranks by verdict>`` + notes."""
    text = (
        f"group of {len(ranks)} (this verdict is about the COLLECTIVE, not about any one rank): "
        + "; ".join(_classes(ranks, nodes))
    )
    if disagreements:
        noted = name_some(list(disagreements), MAX_NOTED_KEYS, sep="; ")
        text += f" [ranks disagreed: {noted}]"
    return clamp_bytes(text, MAX_GROUP_MESSAGE_BYTES)


def combine_group(nodes: Sequence[str], ranks: Sequence[ParsedResult | None]) -> ParsedResult:
    """Combine every rank of a collective into one parsed result for :func:`attempt_outcome`.

    ``ranks[i]`` is rank *i* (the pinned target order); ``None`` means that rank never reported.
    """
    verdict, exit_code = _verdict(ranks)
    election = elect_metrics(ranks, nodes)
    invalid: dict[str, None] = {}
    for parsed in ranks:
        if parsed is not None:
            invalid.update(dict.fromkeys(parsed.invalid_names))
    artifacts = tuple(a for p in ranks if p is not None for a in p.artifacts)
    return ParsedResult(
        verdict=verdict,
        exit_code=exit_code,
        metrics=election.metrics,
        unmeasurable=election.unmeasurable,
        invalid_names=tuple(invalid),
        message=group_message(ranks, nodes, election.disagreements),
        undeclared_skip=False,
        artifacts=artifacts,
    )
