"""What stressapptest printed, read into the figures of §9.7, and the verdict they support.

stressapptest writes one text log: ``Log:``/``Stats:`` lines, a ``Report Error:`` line plus a
``Hardware Error:`` line per miscompare, a ``Process Error:`` line per procedural fault, and a
final ``Status: PASS|FAIL - <why>`` line. Its exit code is 1 both for bad memory and for a run
that could not start, so the verdict is read from the text, in §9.7's order:

1. any positive evidence of corruption (an incident, a miscompare, a logged ``Hardware Error:``)
   is a Fail, even when the run was later killed: memory that returned a wrong value did so;
2. a procedural error is an Error;
3. anything that is not a completed, clean ``Status: PASS`` (no summary, a signal, "User
   exiting early") is an Error, and its counters are not reported: a run that stopped looking
   does not know that there was nothing to find;
4. otherwise Pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from glimmer.contract.vocab import RunnerVerdict

_REVISION = re.compile(r"^Stats: SAT revision ([^,\s]+)", re.MULTILINE)
_FOUND = re.compile(r"^Stats: Found (\d+) hardware incidents?", re.MULTILINE)
_COMPLETED = re.compile(
    r"^Stats: Completed: ([\d.]+)M in ([\d.]+)s ([\d.]+)MB/s, "
    r"with (\d+) hardware incidents?, (\d+) errors?",
    re.MULTILINE,
)
# Per thread class: "Stats: Memory Copy: 129188.00M at 25836.96MB/s".
_CLASS = re.compile(r"^Stats: ([A-Za-z ]+): ([\d.]+)M at ([\d.]+)MB/s", re.MULTILINE)
_STATUS = re.compile(r"^Status: (PASS|FAIL)\b(?: - (.*))?$", re.MULTILINE)
_MISCOMPARE = re.compile(r"^Report Error: miscompare\b", re.MULTILINE)
_HARDWARE_ERROR = re.compile(r"^Hardware Error: .*$", re.MULTILINE)
_PROCESS_ERROR = re.compile(r"^Process Error: (.*)$", re.MULTILINE)
_EARLY_EXIT = re.compile(r"^Log: User exiting early", re.MULTILINE)

# Which directions each thread class moves (a copy reads and writes every byte; a check only
# reads; an invert reads and writes back). With copy threads only, the two figures are equal
# by construction: a property of the workload, not of the parser.
READ_CLASSES = ("Memory Copy", "Data Check", "Invert Data")
WRITE_CLASSES = ("Memory Copy", "Invert Data")


@dataclass(frozen=True)
class SatLog:
    """The facts of one stressapptest log; None where the log did not say."""

    revision: str | None
    incidents: int | None  # "Found N hardware incidents"
    errors: int | None  # the summary's "M errors": faults that are not memory incidents
    run_seconds: float | None
    class_mbs: dict[str, float]
    status: str | None  # "PASS" | "FAIL"
    status_detail: str
    miscompares: int
    hardware_errors: tuple[str, ...]
    process_errors: tuple[str, ...]
    exited_early: bool

    @property
    def completed(self) -> bool:
        return self.run_seconds is not None and self.incidents is not None

    @property
    def corruption(self) -> bool:
        return bool(self.incidents) or self.miscompares > 0 or bool(self.hardware_errors)

    @property
    def procedural(self) -> bool:
        return bool(self.process_errors) or "procedural" in self.status_detail

    def read_mbs(self) -> float | None:
        return self._sum(READ_CLASSES)

    def write_mbs(self) -> float | None:
        return self._sum(WRITE_CLASSES)

    def _sum(self, classes: tuple[str, ...]) -> float | None:
        if not self.completed or "Memory Copy" not in self.class_mbs:
            return None
        return sum(self.class_mbs.get(c, 0.0) for c in classes)


def read_log(text: str) -> SatLog:
    """Read a stressapptest log (stdout and stderr together); never raises."""
    revision = _REVISION.search(text)
    found = _FOUND.search(text)
    completed = _COMPLETED.search(text)
    statuses = _STATUS.findall(text)
    status, detail = statuses[-1] if statuses else (None, "")
    return SatLog(
        revision=revision.group(1) if revision else None,
        incidents=int(found.group(1)) if found else None,
        errors=int(completed.group(5)) if completed else None,
        run_seconds=float(completed.group(2)) if completed else None,
        class_mbs={m.group(1).strip(): float(m.group(3)) for m in _CLASS.finditer(text)},
        status=status,
        status_detail=detail.strip(),
        miscompares=len(_MISCOMPARE.findall(text)),
        hardware_errors=tuple(_HARDWARE_ERROR.findall(text)),
        process_errors=tuple(m.group(1).strip() for m in _PROCESS_ERROR.finditer(text)),
        exited_early=_EARLY_EXIT.search(text) is not None,
    )


@dataclass(frozen=True)
class SatVerdict:
    verdict: RunnerVerdict
    reason: str
    sat_status: str | None  # pass | fail-hardware | fail-procedural; None: the tool never said
    counters: bool  # whether the incident counters may be reported


def judge(log: SatLog, exit_code: int, interrupted: str = "") -> SatVerdict:
    """The verdict of §9.7 from a read log, the tool's exit code and, when the runner stopped
    the tool itself (a signal, its own deadline), why."""
    sat_status = _sat_status(log)
    if log.corruption:
        found = log.incidents or max(log.miscompares, len(log.hardware_errors))
        why = f"stressapptest found {found} hardware incident(s) in host memory"
        if log.hardware_errors:
            why += f"; first: {log.hardware_errors[0][:200]}"
        return SatVerdict(RunnerVerdict.FAIL, why, "fail-hardware", log.completed)
    if log.procedural:
        first = log.process_errors[0] if log.process_errors else log.status_detail
        return SatVerdict(
            RunnerVerdict.ERROR,
            f"stressapptest could not run the test (procedural error: {first})",
            "fail-procedural",
            False,
        )
    if interrupted:
        return SatVerdict(RunnerVerdict.ERROR, interrupted, sat_status, False)
    if log.exited_early:
        return SatVerdict(
            RunnerVerdict.ERROR,
            "stressapptest was stopped early (a signal reached it): the memory was not tested "
            "for the whole duration",
            sat_status,
            False,
        )
    if not log.completed or log.status != "PASS":
        said = f"Status: {log.status} - {log.status_detail}" if log.status else "no final status"
        return SatVerdict(
            RunnerVerdict.ERROR,
            f"stressapptest did not complete a clean run (exit {exit_code}, {said})",
            sat_status,
            False,
        )
    if log.errors:
        return SatVerdict(
            RunnerVerdict.ERROR,
            f"stressapptest counted {log.errors} error(s) that are not memory incidents",
            sat_status,
            False,
        )
    if exit_code != 0:
        return SatVerdict(
            RunnerVerdict.ERROR,
            f"stressapptest printed PASS but exited {exit_code}",
            sat_status,
            False,
        )
    return SatVerdict(RunnerVerdict.PASS, "", "pass", True)


def _sat_status(log: SatLog) -> str | None:
    if log.status == "PASS":
        return "pass"
    if log.status == "FAIL":
        return "fail-procedural" if "procedural" in log.status_detail else "fail-hardware"
    return None
