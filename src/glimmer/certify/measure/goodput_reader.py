"""A training log read as it arrives, into the goodput figures (specs/certify.md §6.2–6.3).

A controller reads a pod's log in chunks (``sinceTime`` reads, §6); :class:`TrainingLogReader`
takes them as they come — a chunk may end mid-line, the rest of the line comes with the next —
and keeps running sums, not every step, so a run of a million steps holds only its last
``max_steps`` in memory. Feeding a log whole or in any chunks gives the same figures.

Warmup (§6.2): a step within ``warmupSteps`` of the first step after the latest run boundary
(application start or restore; that first step is ``warmupBaseStep``), counted in step numbers,
or a line the ``warmupStep`` pattern matches; warmup is left out of the averages.

Attempts are told apart by ``applicationStart``: each one after the first is an interruption.
A ``checkpointRestore`` (or ``checkpointLoaded``) after a step of the current attempt, with no
application start between, is a restart and opens an attempt too — a trainer restarted in its
own process prints no start, and Megatron prints its "loaded" line before its "training ..."
start, which then joins the attempt the restore opened. A restore before any step (right after
a start, or a second restore line) only marks the run boundary again: it is the same resume,
not a second interruption. A profile without an ``applicationStart`` pattern opens the first
attempt at the log's first timestamped line.

An interruption's cost splits into lost work (from the last completed checkpoint to the last
line of the failed attempt), rescheduling (to the new attempt's start) and resume (to its first
step). Lines are split at ``\\n`` only (the kubelet prefixes each of those); a ``\\r`` inside
one (a progress bar redrawn in place) separates segments that share the line's timestamp.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from glimmer.certify.measure.goodput_formula import Goodput, goodput
from glimmer.certify.measure.goodput_layout import layout_regex
from glimmer.certify.measure.goodput_profile import (
    CHECKPOINT_STEP_CAPTURES,
    DURATION_CAPTURES,
    MEGATRON,
    SAVE_DURATION,
    STEP_CAPTURES,
    TrainingProfile,
    parse_time,
    to_seconds,
)

_KUBELET = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) ")
EVERY_EVENT = frozenset(
    (
        "applicationStart",
        "checkpointRestore",
        "checkpointLoaded",
        "checkpointSave",
        "checkpointDone",
        "trainingStep",
        "warmupStep",
    )
)
DEFAULT_MAX_STEPS = 1000  # recent steps kept in memory; the figures are running sums


def kubelet_time(raw: str) -> float | None:
    """The kubelet timestamp a log line starts with, in epoch seconds."""
    km = _KUBELET.match(raw)
    stamp = parse_time(km.group(1)) if km else None
    return stamp.timestamp() if stamp else None


@dataclass(frozen=True)
class Step:
    """One training step as read: its number, time, duration and TFLOPs (None: not captured)."""

    step: int
    at: float
    seconds: float | None
    tflops: float | None
    warmup: bool


@dataclass(frozen=True)
class Progress:
    """Where the training stands in its log, for the GoodputMeasurement status (§2.6) and the
    Job's stall and restart rules: times in epoch seconds, None when not seen yet."""

    current_step: int | None = None  # the latest step read (not the highest)
    last_step_time: float | None = None
    warmup_base_step: int | None = None  # the first step after the latest run boundary
    last_checkpoint_step: int | None = None
    last_checkpoint_time: float | None = None
    application_start: float | None = None  # the latest attempt's start
    last_line_time: float | None = None  # the latest kubelet timestamp (applicationStopTime)
    warmup_time: float = 0.0  # Σ seconds of warmup steps
    non_warmup_time: float = 0.0  # Σ seconds of the others


@dataclass
class _Attempt:
    start: float
    last_line: float
    first_step: float | None = None
    last_checkpoint: float | None = None
    stepped: bool = False  # a step since the latest run boundary
    by_restore: bool = False  # opened by a restore line, not an application start


def _number(m: re.Match[str], names: tuple[str, ...]) -> tuple[str, float] | None:
    groups = m.groupdict()
    for name in names:
        text = groups.get(name)
        if text:
            try:
                value = float(text)
            except ValueError:
                return None
            return (name, value) if math.isfinite(value) else None  # "inf" is no step number
    return None


class TrainingLogReader:
    """Goodput figures of a log fed in chunks; :meth:`close` reads an unterminated last line.

    ``pending_saves`` (step → save start, epoch seconds; None for a save line without a step)
    carries checkpoint saves begun but not yet done over from an earlier reader, so a controller
    that persisted them computes the save duration when the done line comes (§6.2).
    """

    def __init__(
        self,
        profile: TrainingProfile = MEGATRON,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
        pending_saves: Mapping[int | None, float] | None = None,
    ) -> None:
        self.profile = profile
        self._pats = profile.compiled()
        self._layout = layout_regex(profile.layout) if profile.layout else None
        self._partial = ""
        # Attempts: the first one's start, the current one, and the interruption costs of the
        # ones before it (summed as each closes, so a run's state stays a fixed size).
        self._first_start: float | None = None
        self._cur: _Attempt | None = None
        self._count = 0
        self._closed = [0.0, 0.0, 0.0]  # Σ t_ch, Σ t_re, Σ t_rm of the attempts closed
        self._pending: dict[int | None, float] = dict(pending_saves or {})
        self._t_save = 0.0
        self._base: int | None = None  # warmupBaseStep: the first step after the boundary
        self._last_step: int | None = None
        self._highest: int | None = None
        self._times: list[float] = [0.0, 0.0]  # Σ non-warmup step seconds, count
        self._flops: list[float] = [0.0, 0.0]
        self._recent: deque[Step] = deque(maxlen=max(1, max_steps))
        self._warm_time = 0.0
        self._checkpoint: tuple[int | None, float] | None = None
        self._last_line: float | None = None

    @property
    def recent_steps(self) -> tuple[Step, ...]:
        """The last ``max_steps`` steps read, oldest first."""
        return tuple(self._recent)

    @property
    def pending_saves(self) -> dict[int | None, float]:
        """Checkpoint saves begun and not yet done, to persist between reads."""
        return dict(self._pending)

    def feed(self, chunk: str) -> None:
        """Read ``chunk``; a line it leaves unterminated waits for the next chunk."""
        *lines, self._partial = (self._partial + chunk).split("\n")
        for raw in lines:
            self.raw_line(raw)

    def close(self) -> None:
        """The log ended: read the line it left unterminated."""
        if self._partial:
            raw, self._partial = self._partial, ""
            self.raw_line(raw)

    def raw_line(self, raw: str, events: Collection[str] = EVERY_EVENT) -> None:
        """One log line, kubelet prefix and all; only ``events`` are looked for in it."""
        km = _KUBELET.match(raw)
        stamp = parse_time(km.group(1)) if km else None
        at = stamp.timestamp() if stamp else None
        self._last_line = at if at is not None else self._last_line
        for segment in (raw[km.end() :] if km else raw).split("\r"):
            self.line(segment, at, events)

    def _hit(self, name: str, line: str, events: Collection[str]) -> re.Match[str] | None:
        got = self._pats.get(name) if name in events else None
        return got[0].search(line) if got else None

    def line(self, line: str, at: float | None, events: Collection[str] = EVERY_EVENT) -> None:
        """One line without its kubelet prefix, ``at`` its kubelet time (None: none)."""

        def when(m: re.Match[str]) -> float | None:
            if "timestamp" in m.groupdict() and m.group("timestamp"):
                t = self.profile.time(m.group("timestamp"), self._layout)
                return t.timestamp() if t else at
            return at

        if hit := self._hit("applicationStart", line, events):
            t = when(hit)
            if t is not None:
                last = self._cur
                # Megatron loads its checkpoint before it prints "training ...": a start right
                # after the restore that opened an attempt is that attempt's, not another one.
                if last is None or not last.by_restore or last.stepped:
                    self._open(_Attempt(t, t))
                self._base = None
            return
        if self._cur is None:
            if "applicationStart" in self._pats or at is None:
                return
            self._open(_Attempt(at, at))
        cur = self._cur
        assert cur is not None
        restore = self._hit("checkpointRestore", line, events) or self._hit(
            "checkpointLoaded", line, events
        )
        if restore:
            t = when(restore)
            if cur.stepped and t is not None:  # restarted: a new attempt
                cur = _Attempt(t, t, by_restore=True)
                self._open(cur)
            cur.stepped = False
            self._base = None  # a restore is a run boundary: warmup counts again (§6.2)
        if at is not None:  # the interruption time is the attempt's last log line (§6.2)
            cur.last_line = at
        if restore:
            return
        if hit := self._hit("checkpointSave", line, events):
            self._save_began(hit, when(hit))
        elif hit := self._hit("checkpointDone", line, events):
            self._save_done(cur, hit, when(hit))
        elif hit := self._hit("trainingStep", line, events):
            self._step(cur, hit, when(hit), line, events)

    def _save_began(self, hit: re.Match[str], t: float | None) -> None:
        took = _number(hit, (SAVE_DURATION,))
        if took is not None:  # the save says how long it took: nothing pending
            self._t_save += to_seconds(took[1], self._units("checkpointSave").get(SAVE_DURATION))
            return
        step = _number(hit, CHECKPOINT_STEP_CAPTURES)
        if t is not None:
            self._pending[int(step[1]) if step else None] = t

    def _save_done(self, cur: _Attempt, hit: re.Match[str], t: float | None) -> None:
        step = _number(hit, CHECKPOINT_STEP_CAPTURES)
        key = int(step[1]) if step else None
        began = self._pending.pop(key, None)
        if began is None and None in self._pending:  # a save line that named no step
            began = self._pending.pop(None)
        if t is None:
            return
        cur.last_checkpoint = t
        self._checkpoint = (key, t)
        took = _number(hit, (SAVE_DURATION,))
        if took is not None:
            self._t_save += to_seconds(took[1], self._units("checkpointDone").get(SAVE_DURATION))
        elif began is not None:
            self._t_save += max(0.0, t - began)

    def _units(self, name: str) -> Mapping[str, str]:
        got = self._pats.get(name)
        return got[1] if got else {}

    def _step(
        self,
        cur: _Attempt,
        hit: re.Match[str],
        t: float | None,
        line: str,
        events: Collection[str],
    ) -> None:
        interval = self.profile.log_interval
        number = _number(hit, STEP_CAPTURES)
        # A step line without its number is the next one by the log interval (§2.8).
        step = int(number[1]) if number else (self._last_step or 0) + interval
        if interval > 1 and step % interval:
            return
        if t is None:
            return
        self._last_step = step
        took = _number(hit, DURATION_CAPTURES)
        seconds = to_seconds(took[1], self._units("trainingStep").get(took[0])) if took else None
        flops = _number(hit, ("tflops",))
        tflops = flops[1] if flops else None
        if self._base is None:
            self._base = step
        warm = step - self._base < self.profile.warmup_steps or (
            self._hit("warmupStep", line, events) is not None
        )
        if cur.first_step is None:
            cur.first_step = t
        cur.stepped = True
        self._highest = step if self._highest is None else max(self._highest, step)
        if warm:
            self._warm_time += seconds or 0.0
        else:
            for sums, value in ((self._times, seconds), (self._flops, tflops)):
                if value is not None:
                    sums[0] += value
                    sums[1] += 1
        self._recent.append(Step(step, t, seconds, tflops, warm))

    def progress(self) -> Progress:
        """The latest step, checkpoint, start and line read so far."""
        last = self._recent[-1] if self._recent else None
        return Progress(
            current_step=last.step if last else None,
            last_step_time=last.at if last else None,
            warmup_base_step=self._base,
            last_checkpoint_step=self._checkpoint[0] if self._checkpoint else None,
            last_checkpoint_time=self._checkpoint[1] if self._checkpoint else None,
            application_start=self._cur.start if self._cur else None,
            last_line_time=self._last_line,
            warmup_time=self._warm_time,
            non_warmup_time=self._times[0],
        )

    def _open(self, nxt: _Attempt) -> None:
        """Start attempt ``nxt``; the current one closes: its interruption's lost work (last
        line back to its last checkpoint) and rescheduling (to ``nxt``'s start) are fixed now,
        and its own resume time (start to first step) once it is not the latest any more."""
        prev = self._cur
        if prev is None:
            self._first_start = nxt.start
        else:
            interrupt = prev.last_line
            self._closed[0] += max(0.0, interrupt - (prev.last_checkpoint or prev.start))
            self._closed[1] += max(0.0, nxt.start - interrupt)
            if self._count > 1:
                self._closed[2] += max(0.0, (prev.first_step or prev.start) - prev.start)
        self._cur = nxt
        self._count += 1

    def figures(self, until: float | None = None) -> Goodput | None:
        """The figures of the lines read so far; None while no training step was seen.
        ``until`` (epoch seconds) ends the training time there instead of at the last line
        read: the Job's terminal time, when the measurement completes (ADR-072)."""
        cur, first = self._cur, self._first_start
        if self._highest is None or cur is None or first is None:
            return None
        t_ch, t_re, t_rm = self._closed
        if self._count > 1:
            t_rm += max(0.0, (cur.first_step or cur.start) - cur.start)
        t_w = (cur.last_line if until is None else until) - first
        return Goodput(
            ratio=goodput(t_w, t_rm, t_ch, t_re, self._t_save),
            training_time=t_w,
            lost_work=t_ch,
            reschedule=t_re,
            resume=t_rm,
            checkpoint_save=self._t_save,
            interruptions=self._count - 1,
            highest_step=self._highest,
            avg_step_time=self._times[0] / self._times[1] if self._times[1] else None,
            avg_tflops_per_gpu=self._flops[0] / self._flops[1] if self._flops[1] else None,
        )

    # ---- persisted between samples -------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Everything the next sample needs to go on where this one stopped, JSON-ready: the
        GoodputMeasurement's ``readerState`` (every float its exact shortest repr, so a
        measurement sampled many times equals one read whole, to the last bit)."""
        cur = self._cur
        last = self._recent[-1] if self._recent else None
        out: dict[str, Any] = {
            "attempts": self._count,
            "firstStart": _f(self._first_start),
            "closed": [_f(v) for v in self._closed],
            "saveTime": _f(self._t_save),
            "pendingSaves": [
                {"step": step, "at": _f(at)}
                for step, at in sorted(self._pending.items(), key=lambda kv: (kv[1], kv[0] or 0))
            ],
            "warmupBaseStep": self._base,
            "lastStep": self._last_step,
            "highestStep": self._highest,
            "stepTimes": {"sum": _f(self._times[0]), "count": int(self._times[1])},
            "tflops": {"sum": _f(self._flops[0]), "count": int(self._flops[1])},
            "warmupTime": _f(self._warm_time),
            "checkpoint": None
            if self._checkpoint is None
            else {"step": self._checkpoint[0], "at": _f(self._checkpoint[1])},
            "lastLine": _f(self._last_line),
            "recent": None
            if last is None
            else {
                "step": last.step,
                "at": _f(last.at),
                "seconds": _f(last.seconds),
                "tflops": _f(last.tflops),
                "warmup": last.warmup,
            },
            "attempt": None
            if cur is None
            else {
                "start": _f(cur.start),
                "lastLine": _f(cur.last_line),
                "firstStep": _f(cur.first_step),
                "lastCheckpoint": _f(cur.last_checkpoint),
                "stepped": cur.stepped,
                "byRestore": cur.by_restore,
            },
        }
        if self._partial:
            out["partial"] = self._partial
        compact: dict[str, Any] = _compact(out)
        return compact

    @classmethod
    def resume(
        cls,
        profile: TrainingProfile,
        state: Mapping[str, Any],
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> TrainingLogReader:
        """A reader that goes on from :meth:`state`'s ``state`` (of a reader of ``profile``)."""
        reader = cls(profile, max_steps=max_steps)
        reader._count = int(state.get("attempts") or 0)
        reader._first_start = _float(state.get("firstStart"))
        closed = list(state.get("closed") or ())
        reader._closed = [_float(v) or 0.0 for v in closed] + [0.0] * (3 - len(closed))
        reader._t_save = _float(state.get("saveTime")) or 0.0
        reader._pending = {
            (None if p.get("step") is None else int(p["step"])): _float(p.get("at")) or 0.0
            for p in state.get("pendingSaves") or ()
        }
        reader._base = _int(state.get("warmupBaseStep"))
        reader._last_step = _int(state.get("lastStep"))
        reader._highest = _int(state.get("highestStep"))
        for name, sums in (("stepTimes", reader._times), ("tflops", reader._flops)):
            got = state.get(name) or {}
            sums[0], sums[1] = _float(got.get("sum")) or 0.0, float(int(got.get("count") or 0))
        reader._warm_time = _float(state.get("warmupTime")) or 0.0
        cp = state.get("checkpoint")
        if cp:
            reader._checkpoint = (_int(cp.get("step")), _float(cp.get("at")) or 0.0)
        reader._last_line = _float(state.get("lastLine"))
        recent = state.get("recent")
        if recent:
            reader._recent.append(
                Step(
                    int(recent["step"]),
                    _float(recent.get("at")) or 0.0,
                    _float(recent.get("seconds")),
                    _float(recent.get("tflops")),
                    bool(recent.get("warmup")),
                )
            )
        attempt = state.get("attempt")
        if attempt:
            reader._cur = _Attempt(
                _float(attempt.get("start")) or 0.0,
                _float(attempt.get("lastLine")) or 0.0,
                _float(attempt.get("firstStep")),
                _float(attempt.get("lastCheckpoint")),
                bool(attempt.get("stepped")),
                bool(attempt.get("byRestore")),
            )
        reader._partial = str(state.get("partial") or "")
        return reader


def _compact(value: Any) -> Any:
    """``value`` without None members (the kind's schema has no nulls), at every depth."""
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return value


def _f(value: float | None) -> str | None:
    return None if value is None else repr(value)


def _float(text: Any) -> float | None:
    return None if text is None else float(text)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def parse_training(text: str, profile: TrainingProfile = MEGATRON) -> Goodput | None:
    """Fold a finished run's log into goodput; None when no training step was seen."""
    reader = TrainingLogReader(profile)
    reader.feed(text)
    reader.close()
    return reader.figures()
