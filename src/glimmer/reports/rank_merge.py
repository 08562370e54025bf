"""``glimmer merge``: one verdict about a collective from every rank's record (§8.4).

A collective is judged only whole. The records must be exactly ranks 0..n-1 of one rank count:
a duplicate, a rank outside [0, n), a disagreeing count or ANY missing rank is refused, naming
the files and ranks (a partial collective has no verdict, so there is nothing to write).

Each test is folded as the engine's Group unit folds its ranks: what every rank's runner
declared goes through :func:`glimmer.verdict.combine_group` (verdict precedence, full turnout,
per-key election by Combination, disagreement notes), and the collective's elected metrics are
judged by the test's gates through :func:`glimmer.verdict.attempt_outcome` — the same two calls,
so a missing or disagreeing metric fails closed here exactly as it does on a cluster. The
merged run carries the ranks' own fingerprints and the union of their ``required`` flags.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from glimmer.api.result import NotEvaluated, TestResult, Violation
from glimmer.api.threshold import Threshold, to_contract
from glimmer.contract.vocab import ParsedResult, Phase, RunnerVerdict, Scope
from glimmer.errors import InputError
from glimmer.reports.rank_record import RankRecord, RankTest
from glimmer.verdict import ResultView, attempt_outcome, combine_group, run_phase
from glimmer.verdict.ends import NEVER_RAN_EXIT
from glimmer.verdict.text import name_some

MAX_NAMED = 8


def _label(record: RankRecord) -> str:
    return f"rank {record.rank} ({record.source or record.node})"


def _rank_count(records: Sequence[RankRecord], nranks: int | None) -> int:
    counts = sorted({r.nranks for r in records})
    if nranks is None and len(counts) > 1:
        said = [f"{r.source or r.node}: nranks {r.nranks}" for r in records]
        raise InputError(
            "the rank records disagree on the rank count: "
            + name_some(said, MAX_NAMED, sep="; ")
            + "; they are not one collective (give --nranks to say which count is meant)"
        )
    total = nranks if nranks is not None else counts[0]
    if total < 2:
        what = "--nranks" if nranks is not None else "the rank records' nranks"
        raise InputError(f"{what} {total}: a collective needs at least 2 ranks")
    odd = [r for r in records if r.nranks != total]
    if odd:
        said = [f"{r.source or r.node}: nranks {r.nranks}" for r in odd]
        raise InputError(
            f"--nranks {total}, but some rank records say otherwise: "
            + name_some(said, MAX_NAMED, sep="; ")
        )
    return total


def gather(records: Sequence[RankRecord], nranks: int | None = None) -> list[RankRecord]:
    """The records as ranks 0..n-1, in rank order; InputError for anything short of that."""
    if not records:
        raise InputError("--results-dir: no rank records found (ranks/rank-*.json, rank-*.json)")
    total = _rank_count(records, nranks)
    outside = [r for r in records if not 0 <= r.rank < total]
    if outside:
        named = [f"{r.source or r.node} holds rank {r.rank}" for r in outside]
        raise InputError(f"rank outside [0, {total}): " + name_some(named, MAX_NAMED, sep="; "))
    by_rank: dict[int, RankRecord] = {}
    for record in records:
        held = by_rank.get(record.rank)
        if held is not None:
            raise InputError(
                f"rank {record.rank} is given twice: {held.source or held.node} and "
                f"{record.source or record.node}; each rank reports once"
            )
        by_rank[record.rank] = record
    missing = [i for i in range(total) if i not in by_rank]
    if missing:
        given = [_label(by_rank[i]) for i in sorted(by_rank)]
        word = "rank" if len(missing) == 1 else "ranks"
        raise InputError(
            f"{word} {name_some([str(i) for i in missing], MAX_NAMED)} of {total} missing: a "
            "partial collective has no verdict (given: " + name_some(given, MAX_NAMED) + ")"
        )
    return [by_rank[i] for i in range(total)]


def _declared(test: RankTest | None) -> ParsedResult | None:
    """What the rank's runner declared; a rank whose machinery ended it without a runner's
    word (overdue, lost) reported an Error with the machinery's message."""
    if test is None:
        return None
    if test.runner is not None:
        return test.runner
    return ParsedResult(RunnerVerdict.ERROR, NEVER_RAN_EXIT, message=test.result.message or "")


def _gates(name: str, held: Sequence[tuple[RankRecord, RankTest]]) -> tuple[Threshold, ...]:
    first_record, first = held[0]
    for record, test in held[1:]:
        if test.thresholds != first.thresholds:
            raise InputError(
                f"test {name}: {_label(first_record)} and {_label(record)} were run with "
                "different gates; the ranks did not run one profile"
            )
    return first.thresholds


def _earliest(values: Sequence[datetime | None]) -> datetime | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _latest(values: Sequence[datetime | None]) -> datetime | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


@dataclass(frozen=True)
class Merged:
    """The collective's results, the run's phase over the required ones, and the rest of the
    run's status."""

    results: tuple[TestResult, ...]
    required: dict[str, bool]
    profile: str
    nodes: tuple[str, ...]  # rank i's node at i
    phase: Phase
    fingerprint: dict[str, str]
    started_at: datetime | None
    finished_at: datetime | None


def merge_test(name: str, ranks: Sequence[RankRecord]) -> TestResult:
    """One test's collective result over every rank (rank i = ``ranks[i]``)."""
    tests = [next((t for t in r.tests if t.result.name == name), None) for r in ranks]
    held = [(r, t) for r, t in zip(ranks, tests, strict=True) if t is not None]
    nodes = [r.node for r in ranks]
    parsed = combine_group(nodes, [_declared(t) for t in tests])
    outcome = attempt_outcome(parsed, to_contract(list(_gates(name, held))), segmented=False)
    first = held[0][1].result
    return TestResult(
        name=name,
        kind=first.kind,
        scope=Scope.GROUP,
        phase=outcome.phase,
        nodes=nodes,
        started_at=_earliest([t.result.started_at for _, t in held]),
        finished_at=_latest([t.result.finished_at for _, t in held]),
        metrics=dict(outcome.metrics) or None,
        message=outcome.message or None,
        violations=[
            Violation(index=v.index, metric=v.metric, cause=v.cause, kind=v.kind, reason=v.reason)
            for v in outcome.violations
        ]
        or None,
        not_evaluated=[
            NotEvaluated(metric=n.metric, reason=n.reason) for n in outcome.not_evaluated
        ]
        or None,
        unmeasurable=list(outcome.unmeasurable) or None,
        variant_axes=first.variant_axes,
    )


def merge(records: Sequence[RankRecord], nranks: int | None = None) -> Merged:
    """Every test of the collective, folded over ranks 0..n-1 (refused unless all are here)."""
    ranks = gather(records, nranks)
    names: dict[str, None] = {}
    for record in ranks:
        names.update(dict.fromkeys(t.result.name for t in record.tests))
    if not names:
        files = name_some([_label(r) for r in ranks], MAX_NAMED)
        raise InputError(f"the rank records hold no Group test result to merge ({files})")
    results = tuple(merge_test(name, ranks) for name in names)
    required = {
        name: any(t.required for r in ranks for t in r.tests if t.result.name == name)
        for name in names
    }
    phase = run_phase(ResultView(r.kind, r.phase, required[r.name]) for r in results)
    fingerprint: dict[str, str] = {}
    for record in ranks:
        fingerprint.update(record.fingerprint)
    profiles = {r.profile for r in ranks}
    if len(profiles) > 1:
        said = [f"{_label(r)} ran {r.profile or 'no profile named'}" for r in ranks]
        raise InputError(
            "the ranks did not run one profile: " + name_some(said, MAX_NAMED, sep="; ")
        )
    return Merged(
        results,
        required,
        ranks[0].profile,
        tuple(r.node for r in ranks),
        phase,
        fingerprint,
        _earliest([r.started_at for r in ranks]),
        _latest([r.finished_at for r in ranks]),
    )
