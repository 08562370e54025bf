"""The Prometheus sink (specs/burnin.md §5.7): not a destination but a selector — delivering to
it hands the envelope to an in-process exporter, which always accepts.

For each envelope the exporter replaces that run's whole series set, so a series the new
envelope no longer implies disappears. It holds at most :data:`MAX_RUNS` runs (the least
recently observed is evicted: label cardinality stays bounded), and forgets a run when told the
run was deleted or collected by its TTL — not when it merely finished. Only registered metric
names are exposed (an open-world name is a cardinality risk); non-numeric and non-finite values
are dropped and counted.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from glimmer.contract.registry import lookup
from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.sim.exposition import escape_help, escape_label_value
from glimmer.sinks.envelope import VERSION, Envelope

MAX_RUNS = 128
KNOWN_PHASES: tuple[str, ...] = tuple(p.value for p in Phase)
_TERMINAL = frozenset(p.value for p in TERMINAL_PHASES)
DROP_REASONS: tuple[str, ...] = ("unregistered", "non_numeric", "non_finite")

RUN_PHASE = "burnin_run_phase"
RUN_TESTS = "burnin_run_tests"
RUN_START = "burnin_run_start_time_seconds"
RUN_FINISH = "burnin_run_finish_time_seconds"
TEST_PHASE = "burnin_test_phase"
TEST_METRIC = "burnin_test_metric"
RUNS_TRACKED = "burnin_exporter_runs_tracked"
RUNS_EVICTED = "burnin_exporter_runs_evicted_total"
METRICS_DROPPED = "burnin_exporter_metrics_dropped_total"

# name -> (type, help), in exposition order.
FAMILIES: dict[str, tuple[str, str]] = {
    RUN_PHASE: ("gauge", "1 for the run's current phase, 0 for every other known phase."),
    RUN_TESTS: ("gauge", "Results of the run in each phase."),
    RUN_START: ("gauge", "Unix time of the earliest result start of the run."),
    RUN_FINISH: ("gauge", "Unix time of the latest result finish of a finished run."),
    TEST_PHASE: ("gauge", "Always 1: the phase of a result, one series per node."),
    TEST_METRIC: ("gauge", "A registered metric of a result."),
    RUNS_TRACKED: ("gauge", "Runs the exporter currently holds."),
    RUNS_EVICTED: ("counter", "Runs evicted because the exporter held its maximum."),
    METRICS_DROPPED: ("counter", "Metrics not exposed, by reason."),
}

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Sample:
    family: str
    labels: Labels
    value: float


def _time(text: Any) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class Exporter:
    """The series of the latest :data:`MAX_RUNS` runs, by run UID. Thread-safe: the engine
    observes while an HTTP thread scrapes."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self.max_runs = max_runs
        self._runs: OrderedDict[str, list[Sample]] = OrderedDict()
        self._evicted = 0
        self._dropped = dict.fromkeys(DROP_REASONS, 0)
        self._lock = threading.Lock()

    @property
    def tracked(self) -> int:
        with self._lock:
            return len(self._runs)

    @property
    def evicted(self) -> int:
        return self._evicted

    def dropped(self, reason: str) -> int:
        return self._dropped[reason]

    def observe(self, envelope: Envelope) -> bool:
        """Replace the envelope's run's series; False (ignored) for an unknown version."""
        if envelope.get("version") != VERSION:
            return False
        run = envelope.get("run") or {}
        uid = str(run.get("uid") or "")
        if not uid:
            return False
        samples, dropped = _series(envelope)
        with self._lock:
            for reason, count in dropped.items():
                self._dropped[reason] += count
            self._runs[uid] = samples
            self._runs.move_to_end(uid)
            while len(self._runs) > self.max_runs:
                self._runs.popitem(last=False)
                self._evicted += 1
        return True

    def forget(self, uid: str) -> bool:
        """Drop a deleted (or TTL-collected) run's series; False when it was not held."""
        with self._lock:
            return self._runs.pop(uid, None) is not None

    def samples(self) -> list[Sample]:
        """Every sample, the exporter's own included, in exposition order."""
        with self._lock:
            held = [s for samples in self._runs.values() for s in samples]
            own = [
                Sample(RUNS_TRACKED, (), float(len(self._runs))),
                Sample(RUNS_EVICTED, (), float(self._evicted)),
                *(
                    Sample(METRICS_DROPPED, (("reason", r),), float(n))
                    for r, n in self._dropped.items()
                ),
            ]
        order = {name: i for i, name in enumerate(FAMILIES)}
        return sorted(held + own, key=lambda s: order[s.family])

    def exposition(self) -> str:
        """The text exposition format (0.0.4)."""
        return render(self.samples())


def _series(envelope: Envelope) -> tuple[list[Sample], dict[str, int]]:
    run = envelope.get("run") or {}
    ns, name = str(run.get("namespace") or ""), str(run.get("name") or "")
    base: Labels = (("namespace", ns), ("run", name))
    phase = str(envelope.get("phase") or "")
    out: list[Sample] = []
    profile = str(run.get("profile") or "")
    phases = list(KNOWN_PHASES) + ([phase] if phase and phase not in KNOWN_PHASES else [])
    for p in phases:
        labels = (*base, ("profile", profile), ("phase", p))
        out.append(Sample(RUN_PHASE, labels, 1.0 if p == phase else 0.0))
    results: list[dict[str, Any]] = list(envelope.get("results") or ())
    counts = dict.fromkeys(KNOWN_PHASES, 0)
    for r in results:
        p = str(r.get("phase") or "")
        counts[p] = counts.get(p, 0) + 1
    for p, n in counts.items():
        out.append(Sample(RUN_TESTS, (*base, ("phase", p)), float(n)))
    starts = [t for t in (_time(r.get("startedAt")) for r in results) if t is not None]
    if starts:
        out.append(Sample(RUN_START, base, min(starts)))
    finishes = [t for t in (_time(r.get("finishedAt")) for r in results) if t is not None]
    if finishes and phase in _TERMINAL:
        out.append(Sample(RUN_FINISH, base, max(finishes)))
    dropped = dict.fromkeys(DROP_REASONS, 0)
    seen: set[tuple[str, Labels]] = set()
    for r in results:
        out.extend(_result_series(base, r, dropped, seen))
    return out, dropped


def _result_series(
    base: Labels, result: dict[str, Any], dropped: dict[str, int], seen: set[tuple[str, Labels]]
) -> Iterable[Sample]:
    test = (
        ("test", str(result.get("name") or "")),
        ("kind", str(result.get("kind") or "")),
        ("scope", str(result.get("scope") or "")),
    )
    nodes = [str(n) for n in result.get("nodes") or ()] or [""]
    for node in nodes:
        labels = (*base, *test, ("node", node), ("phase", str(result.get("phase") or "")))
        if _first(seen, TEST_PHASE, labels):
            yield Sample(TEST_PHASE, labels, 1.0)
    # A metric belongs to one node only at Node scope; a link's or a collective's carries none.
    node = nodes[0] if len(nodes) == 1 else ""
    for metric, raw in (result.get("metrics") or {}).items():
        spec = lookup(metric)
        if spec is None:
            dropped["unregistered"] += 1
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            dropped["non_numeric"] += 1
            continue
        if not math.isfinite(value):
            dropped["non_finite"] += 1
            continue
        labels = (
            *base,
            *test,
            ("node", node),
            ("metric", metric),
            ("unit", spec.unit.value),
            ("threshold_use", spec.use.value),
        )
        # Links of one Pair test share every label (node ""): keep the first, so the exposition
        # never repeats a series (which a scraper would reject whole).
        if _first(seen, TEST_METRIC, labels):
            yield Sample(TEST_METRIC, labels, value)


def _first(seen: set[tuple[str, Labels]], family: str, labels: Labels) -> bool:
    key = (family, labels)
    if key in seen:
        return False
    seen.add(key)
    return True


def _number(value: float) -> str:
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def render(samples: Iterable[Sample]) -> str:
    """Samples grouped under their family's HELP and TYPE lines."""
    lines: list[str] = []
    current = ""
    for sample in samples:
        if sample.family != current:
            current = sample.family
            kind, text = FAMILIES[current]
            lines.append(f"# HELP {current} {escape_help(text)}")
            lines.append(f"# TYPE {current} {kind}")
        if sample.labels:
            inner = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in sample.labels)
            lines.append(f"{sample.family}{{{inner}}} {_number(sample.value)}")
        else:
            lines.append(f"{sample.family} {_number(sample.value)}")
    return "\n".join(lines) + "\n"


class PrometheusSink:
    """The selector: hands envelopes to ``exporter`` (never fails)."""

    def __init__(self, exporter: Exporter, *, name: str = "prometheus") -> None:
        self.exporter = exporter
        self._ident = name

    @property
    def ident(self) -> str:
        return self._ident

    def send(self, envelope: Envelope, body: bytes, timeout: float) -> None:
        self.exporter.observe(envelope)
