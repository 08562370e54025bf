"""One result as the reports see it: a TestResult plus the gates its test was held to.

The API model stays the source; this view only adds what every renderer would otherwise work
out again (status word, whether it is a link, its endpoints label, sorted metrics, duration).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from glimmer.api.result import ArtifactRef, NotEvaluated, TestAttempt, TestResult, Violation
from glimmer.contract.vocab import Scope
from glimmer.reports.findings import Finding
from glimmer.reports.words import status_word, symbol


@dataclass(frozen=True)
class Gate:
    """One threshold of a planned test, as written."""

    metric: str
    comparison: str
    value: str
    applicability: str

    def describe(self) -> str:
        """``sustainedClockPct ≥ 70``."""
        return f"{self.metric} {symbol(self.comparison)} {self.value}"

    def bound(self) -> str:
        """``≥ 70``: the gate without its metric, for a chart's gate label."""
        return f"{symbol(self.comparison)} {self.value}"


@dataclass(frozen=True)
class Unit:
    """One execution unit's result (or a synthetic one) with its test's gates."""

    result: TestResult
    gates: tuple[Gate, ...]
    required: bool | None  # None when the pinned plan does not name the test
    finding: Finding | None = None  # set when the unit did not pass: the gates it missed
    # The test it is shown under: its own name, or its parent's for a gpuClass cell
    # (reports.matrix); empty means its own name.
    column: str = ""

    @property
    def missed(self) -> frozenset[str]:
        """Metrics of the gates this unit missed: recorded violations, and for a runner's own
        Fail the gates its readings fall short of (the findings' evidence)."""
        named = {v.metric for v in self.violations}
        if self.finding is not None:
            named |= {e.metric for e in self.finding.evidence}
        return frozenset(named)

    @property
    def name(self) -> str:
        return self.result.name

    @property
    def shown_as(self) -> str:
        return self.column or self.result.name

    @property
    def kind(self) -> str:
        return self.result.kind

    @property
    def phase(self) -> str:
        return str(self.result.phase)

    @property
    def word(self) -> str:
        return status_word(self.phase)

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(self.result.nodes or ())

    @property
    def node(self) -> str:
        """The node a non-link result belongs to; ``""`` for a node-less (synthetic) one."""
        return self.nodes[0] if self.nodes else ""

    @property
    def synthetic(self) -> bool:
        return self.result.synthetic

    @property
    def is_link(self) -> bool:
        """Pair and Group verdicts are about the link or the collective, never one node; a
        result without a scope but with several nodes is treated the same way."""
        scope = self.result.scope
        if scope in (Scope.PAIR, Scope.GROUP):
            return True
        return scope is None and len(self.nodes) > 1

    @property
    def scope_word(self) -> str:
        """``pair``, ``group`` or ``node`` (``""`` for a synthetic result)."""
        scope = self.result.scope
        if scope is None:
            return "group" if len(self.nodes) > 2 else ("pair" if len(self.nodes) == 2 else "")
        return str(scope).lower()

    @property
    def endpoints(self) -> str:
        """``a <-> b`` for a pair, ``a + b + c`` for a group, the node otherwise."""
        if self.scope_word == "pair" and len(self.nodes) == 2:
            return f"{self.nodes[0]} <-> {self.nodes[1]}"
        return " + ".join(self.nodes)

    @property
    def label(self) -> str:
        """Who a result is about: the node, or the link/collective."""
        return self.endpoints if self.is_link else self.node

    @property
    def started_at(self) -> datetime | None:
        return self.result.started_at

    @property
    def finished_at(self) -> datetime | None:
        return self.result.finished_at

    @property
    def seconds(self) -> float | None:
        """Finished minus started; None when either is missing (never a made-up 0)."""
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    @property
    def metrics(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted((self.result.metrics or {}).items()))

    def metric(self, name: str) -> str | None:
        return (self.result.metrics or {}).get(name)

    @property
    def message(self) -> str:
        return self.result.message or ""

    @property
    def first_line(self) -> str:
        return self.message.splitlines()[0] if self.message else ""

    @property
    def violations(self) -> tuple[Violation, ...]:
        return tuple(self.result.violations or ())

    @property
    def not_evaluated(self) -> tuple[NotEvaluated, ...]:
        return tuple(self.result.not_evaluated or ())

    @property
    def unmeasurable(self) -> tuple[str, ...]:
        return tuple(sorted(self.result.unmeasurable or ()))

    @property
    def artifacts(self) -> tuple[ArtifactRef, ...]:
        return tuple(self.result.artifacts or ())

    @property
    def attempts(self) -> tuple[TestAttempt, ...]:
        return tuple(self.result.attempts or ())

    @property
    def segmented(self) -> bool:
        return self.result.segments_required > 0


# Who has to act on a violation, by its cause (§6.2): the part, nobody yet, or the author.
_WHO_ACTS = {
    "Measurement": "hardware fell short",
    "Evidence": "unjudged: the runner's report could not support a judgement",
    "Authoring": "the threshold itself is broken; no node should be touched",
}

# One sentence per cause for the human-readable formats.
_CAUSE_SENTENCE = {
    "Measurement": "The hardware fell short of the gate. This one is about the part.",
    "Evidence": (
        "The runner's report could not support a judgement (missing or unusable value). "
        "This one is about the evidence, not yet about the part."
    ),
    "Authoring": "The gate itself is broken. No node should be touched because of it.",
}


def who_acts(cause: str | None) -> str:
    """The bracketed who-acts phrase of a JUnit failure body."""
    return _WHO_ACTS.get(cause or "", f"cause {cause or 'not stated'}")


def cause_sentence(cause: str | None, link: bool = False) -> str:
    """A sentence saying what a violation's cause means for the reader."""
    if link and cause == "Measurement":
        return "The link fell short of the gate. This one is about the link, not either endpoint."
    return _CAUSE_SENTENCE.get(cause or "", f"Cause: {cause or 'not stated'}.")


def artifact_line(artifact: ArtifactRef) -> str:
    """Where a piece of evidence is kept, or why it was not kept."""
    if artifact.dropped:
        return f"{artifact.name}: NOT KEPT: {artifact.dropped}"
    where = "/".join(p for p in (artifact.config_map, artifact.key) if p)
    details = [d for d in (artifact.media_type, where, artifact.digest) if d]
    if artifact.size_bytes is not None:
        details.append(f"{artifact.size_bytes} bytes")
    return f"{artifact.name}: " + ", ".join(details) if details else artifact.name
