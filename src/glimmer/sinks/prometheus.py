"""The Prometheus sink (specs/burnin.md §5.7): not a destination but a selector — delivering to
it hands the envelope to an in-process exporter, which always accepts.

A RunPhaseChanged envelope carries the whole run and replaces that run's series set, so a
series it no longer implies disappears; a TestCompleted or Checkpoint envelope carries only the
results that changed, and the exporter folds them into what it holds for the run. It holds at
most :data:`MAX_RUNS` runs (the least recently observed is evicted: label cardinality stays
bounded), and forgets a run when told the run was deleted or collected by its TTL — not when it
merely finished. Only registered metric names are exposed (an open-world name is a cardinality
risk); non-numeric and non-finite values are dropped and counted.
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
from glimmer.sinks.envelope import CHECKPOINT, TEST_COMPLETED, VERSION, Envelope

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
# Certification measurements' gauges (specs/certify.md §6.1, §6.3), held by key (hold/forget).
NCCL_ALGBW = "burnin_nccl_algbw_gbps"
NCCL_BUSBW = "burnin_nccl_busbw_gbps"
GOODPUT_RATIO = "burnin_goodput_ratio"
GOODPUT_CURRENT_STEP = "burnin_goodput_current_step"
GOODPUT_AVG_STEP_TIME = "burnin_goodput_avg_step_time_seconds"
GOODPUT_AVG_TFLOPS = "burnin_goodput_avg_tflops_per_gpu"

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
    NCCL_ALGBW: ("gauge", "NCCL algorithm bandwidth at one message size, GB/s (running average)."),
    NCCL_BUSBW: ("gauge", "NCCL bus bandwidth at one message size, GB/s (running average)."),
    GOODPUT_RATIO: ("gauge", "Goodput ratio of a training job (provisional until Complete)."),
    GOODPUT_CURRENT_STEP: ("gauge", "Latest training step read from the job's log."),
    GOODPUT_AVG_STEP_TIME: ("gauge", "Average training step time, warmup excluded, seconds."),
    GOODPUT_AVG_TFLOPS: ("gauge", "Average TFLOP/s per GPU over the non-warmup steps."),
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


ResultKey = tuple[str, tuple[str, ...]]  # (test name, nodes): one unit of the run


@dataclass(frozen=True)
class _Held:
    """One result as the exporter keeps it: what the run-level series need, and its own
    series (built once, when it arrives)."""

    phase: str
    started: float | None
    finished: float | None
    samples: tuple[Sample, ...]


@dataclass
class _Run:
    """A run's state folded from its envelopes: the latest run-level fields and the latest
    result of each unit."""

    base: Labels
    profile: str
    phase: str
    results: dict[ResultKey, _Held]


# Envelopes whose ``results`` say only what changed (specs: TestCompleted carries the result that
# settled, a Checkpoint the ones in flight); they are folded into what the run already shows.
# Every other reason carries the whole run, and replaces it.
_PARTIAL_REASONS = frozenset({TEST_COMPLETED, CHECKPOINT})


class Exporter:
    """The series of the latest :data:`MAX_RUNS` runs, by run UID. Thread-safe: the engine
    observes while an HTTP thread scrapes.

    A RunPhaseChanged envelope carries every result and replaces the run's set; a TestCompleted
    or Checkpoint envelope carries some, which replace those units' entries and leave the rest.
    A settled result is never replaced by an in-flight one of the same unit (an envelope read
    out of order must not reopen a verdict)."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self.max_runs = max_runs
        self._runs: OrderedDict[str, _Run] = OrderedDict()
        self._evicted = 0
        self._dropped = dict.fromkeys(DROP_REASONS, 0)
        self._held: dict[str, tuple[Sample, ...]] = {}  # series another source keeps, by key
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
        """Fold the envelope into its run's series; False (ignored) for an unknown version."""
        if envelope.get("version") != VERSION:
            return False
        run = envelope.get("run") or {}
        uid = str(run.get("uid") or "")
        if not uid:
            return False
        base: Labels = (
            ("namespace", str(run.get("namespace") or "")),
            ("run", str(run.get("name") or "")),
        )
        dropped = dict.fromkeys(DROP_REASONS, 0)
        arrived = [
            (_result_key(r), _hold(base, r, dropped))
            for r in envelope.get("results") or ()
            if isinstance(r, dict)
        ]
        partial = envelope.get("reason") in _PARTIAL_REASONS
        with self._lock:
            for reason, count in dropped.items():
                self._dropped[reason] += count
            held = self._runs.get(uid)
            if held is None or not partial:
                held = _Run(base, "", "", {})
            held.base = base
            held.profile = str(run.get("profile") or "")
            held.phase = str(envelope.get("phase") or "")
            for key, result in arrived:
                before = held.results.get(key)
                if partial and before is not None and _settled(before) and not _settled(result):
                    continue
                held.results[key] = result
            self._runs[uid] = held
            self._runs.move_to_end(uid)
            while len(self._runs) > self.max_runs:
                self._runs.popitem(last=False)
                self._evicted += 1
        return True

    def forget(self, uid: str) -> bool:
        """Drop a deleted (or TTL-collected) run's series, or what :meth:`hold` holds under
        that key; False when neither was held."""
        with self._lock:
            run = self._runs.pop(uid, None)
            return self._held.pop(uid, None) is not None or run is not None

    def hold(self, key: str, samples: Iterable[Sample]) -> None:
        """Expose ``samples`` (of registered families) under ``key``, replacing what it held:
        a certification measurement's gauges, replaced at each sample (forget drops them)."""
        kept = tuple(s for s in samples if s.family in FAMILIES and math.isfinite(s.value))
        with self._lock:
            self._held[key] = kept

    def samples(self) -> list[Sample]:
        """Every sample, the exporter's own included, in exposition order."""
        with self._lock:
            held = [s for run in self._runs.values() for s in _run_series(run)]
            held += [s for samples in self._held.values() for s in samples]
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


def _result_key(result: dict[str, Any]) -> ResultKey:
    return str(result.get("name") or ""), tuple(str(n) for n in result.get("nodes") or ())


def _settled(result: _Held) -> bool:
    return result.phase in _TERMINAL


def _hold(base: Labels, result: dict[str, Any], dropped: dict[str, int]) -> _Held:
    return _Held(
        phase=str(result.get("phase") or ""),
        started=_time(result.get("startedAt")),
        finished=_time(result.get("finishedAt")),
        samples=tuple(_result_series(base, result, dropped)),
    )


def _run_series(run: _Run) -> list[Sample]:
    base, phase = run.base, run.phase
    out: list[Sample] = []
    phases = list(KNOWN_PHASES) + ([phase] if phase and phase not in KNOWN_PHASES else [])
    for p in phases:
        labels = (*base, ("profile", run.profile), ("phase", p))
        out.append(Sample(RUN_PHASE, labels, 1.0 if p == phase else 0.0))
    results = list(run.results.values())
    counts = dict.fromkeys(KNOWN_PHASES, 0)
    for r in results:
        counts[r.phase] = counts.get(r.phase, 0) + 1
    for p, n in counts.items():
        out.append(Sample(RUN_TESTS, (*base, ("phase", p)), float(n)))
    starts = [r.started for r in results if r.started is not None]
    if starts:
        out.append(Sample(RUN_START, base, min(starts)))
    finishes = [r.finished for r in results if r.finished is not None]
    if finishes and phase in _TERMINAL:
        out.append(Sample(RUN_FINISH, base, max(finishes)))
    # Links of one Pair test share every label of a metric (node ""): keep the first, so the
    # exposition never repeats a series (which a scraper would reject whole).
    seen: set[tuple[str, Labels]] = set()
    for r in results:
        for sample in r.samples:
            if _first(seen, sample.family, sample.labels):
                out.append(sample)
    return out


def _result_series(
    base: Labels, result: dict[str, Any], dropped: dict[str, int]
) -> Iterable[Sample]:
    test = (
        ("test", str(result.get("name") or "")),
        ("kind", str(result.get("kind") or "")),
        ("scope", str(result.get("scope") or "")),
    )
    nodes = [str(n) for n in result.get("nodes") or ()] or [""]
    for node in nodes:
        labels = (*base, *test, ("node", node), ("phase", str(result.get("phase") or "")))
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
