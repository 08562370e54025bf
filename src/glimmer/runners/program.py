"""The frame every runner program runs in: read the environment, run the kind's body, print
exactly one marker line last, exit with the code that marker means.

The body returns an Outcome or raises Stop from wherever it found out. Anything else it raises
is a bug in the runner, not a fact about the part: its trace is printed (each line guarded so
the parser reads it as text) and the runner ends in Error, exit 3, never 2 (a crash exiting 2
once read as a clean skip, §12 lesson 11). SIGTERM ends the body through the same path, so
``finally`` blocks (disk-io's file removal) run before the marker is printed.
"""

from __future__ import annotations

import signal
import sys
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import TextIO

from glimmer.runners.hostpaths import HostPaths
from glimmer.runners.outcome import Outcome, Stop, errored
from glimmer.runners.report import MarkerWords, Report, prefix_of
from glimmer.runners.settings import Settings


@dataclass(frozen=True)
class Context:
    kind: str
    settings: Settings
    report: Report
    paths: HostPaths


Body = Callable[[Context], Outcome]

# Trace lines are printed behind this prefix: its space keeps any "a = b" in the trace from
# being read as a metric.
TRACE_PREFIX = "trace| "


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Stop(errored(f"terminated by signal {signal.Signals(signum).name} before a verdict"))


def print_trace(report: Report, exc: BaseException) -> None:
    for block in traceback.format_exception(exc):
        for line in block.rstrip("\n").splitlines():
            report.note(TRACE_PREFIX + line)


def run(
    kind: str,
    body: Body,
    environ: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    words: MarkerWords | None = None,
) -> int:
    """Run ``body`` for ``kind`` and return the exit code (0/1/2/3) after the marker line."""
    report = Report(prefix_of(kind), out, words)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    try:
        settings = Settings(environ)
        context = Context(kind, settings, report, HostPaths.read(settings))
        outcome = body(context)
    except Stop as stop:
        outcome = stop.outcome
    except KeyboardInterrupt:
        outcome = errored("interrupted before a verdict")
    except Exception as exc:  # a runner bug: evidence, then Error
        print_trace(report, exc)
        outcome = errored(f"runner crashed: {type(exc).__name__}: {exc}")
    finally:
        if main_thread:  # called in-process (tests): leave the caller's handler as it was
            signal.signal(signal.SIGTERM, previous)
    return report.finish(outcome)


def main(kind: str, body: Body, words: MarkerWords | None = None) -> None:
    """The ``__main__`` of a kind's module: run it and exit with its code."""
    sys.exit(run(kind, body, words=words))
