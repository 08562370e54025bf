"""The shared vocabulary of the runner contract: scopes, comparisons, thresholds, verdicts.

These types are neutral (no pydantic, no cluster library) so that runners, the verdict rules and
the API models all speak them. The API layer aliases them into its models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Scope(StrEnum):
    """What one verdict is about: a part (Node), a link (Pair) or a collective (Group)."""

    NODE = "Node"
    PAIR = "Pair"
    GROUP = "Group"


class Comparison(StrEnum):
    GREATER_THAN_OR_EQUAL = "GreaterThanOrEqual"
    LESS_THAN_OR_EQUAL = "LessThanOrEqual"
    EQUAL = "Equal"
    NOT_EQUAL = "NotEqual"


class Applicability(StrEnum):
    """Whether a runner's explicit ``n/a`` relaxes a gate. Unset or unknown reads as Required."""

    REQUIRED = "Required"
    REQUIRED_IF_MEASURABLE = "RequiredIfMeasurable"


class RunnerVerdict(StrEnum):
    """What a runner's exit code says, before any threshold is applied."""

    PASS = "Pass"
    FAIL = "Fail"
    SKIP = "Skip"
    ERROR = "Error"


class Phase(StrEnum):
    """Phases of runs, results and attempts on the API side. A run never takes Skipped."""

    PENDING = "Pending"
    RUNNING = "Running"
    PASSED = "Passed"
    FAILED = "Failed"
    ERROR = "Error"
    SKIPPED = "Skipped"
    CANCELLED = "Cancelled"


TERMINAL_PHASES: frozenset[Phase] = frozenset(
    {Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.SKIPPED, Phase.CANCELLED}
)


ACCELERATOR_VENDORS: tuple[str, ...] = ("amd", "habana", "intel", "nvidia", "tenstorrent")


@dataclass(frozen=True)
class Threshold:
    """One gate. Fields are kept as written (strings) so that evaluation can fail closed on
    anything malformed instead of the loader guessing a meaning."""

    metric: str
    comparison: str
    value: str
    applicability: str = ""


@dataclass(frozen=True)
class Artifact:
    """Non-metric evidence a runner fenced on stdout (see contract.artifacts)."""

    name: str
    media_type: str
    payload: bytes = b""
    size_bytes: int = 0
    digest: str = ""
    dropped: str = ""  # non-empty: why the artifact was refused


@dataclass(frozen=True)
class ParsedResult:
    """What one runner execution declared: verdict, metrics, n/a names, and its last words."""

    verdict: RunnerVerdict
    exit_code: int
    metrics: dict[str, str] = field(default_factory=dict)
    unmeasurable: frozenset[str] = frozenset()
    invalid_names: tuple[str, ...] = ()
    message: str = ""
    undeclared_skip: bool = False
    artifacts: tuple[Artifact, ...] = ()

    def reported_nothing(self) -> bool:
        """True when the runner printed no key=value line at all (not even a rejected one)."""
        return not self.metrics and not self.unmeasurable and not self.invalid_names
