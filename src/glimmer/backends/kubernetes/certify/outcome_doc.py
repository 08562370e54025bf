"""A finished job's :class:`~glimmer.certify.jobs.JobLog` as the Job object's ``status.outcome``
(issue 17, decision 1), and back.

``status.outcome`` is ``{text, exitCode, error, path, crashedOn[], elapsedSeconds}``: written
once by the Job controller when the Job is terminal and never changed after, so a replay of the
certification core re-reads a finished job from the Job object alone, long after its pods and
TrainJob are gone. The text is the launcher's (rank 0's) log, at most :data:`MAX_TEXT_BYTES`:
a longer log keeps its head (the job's configuration, the training start) and its tail (the
last table rows, the error it ended with), which is where the parsers look.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from glimmer.certify.jobs import JobLog

MAX_TEXT_BYTES: Final = 256 * 1024
HEAD_BYTES: Final = 64 * 1024
ELIDED: Final = "\n... [log cut to {kept} of {total} bytes] ...\n"


def bounded_text(text: str) -> str:
    """``text`` cut to at most MAX_TEXT_BYTES of UTF-8, head and tail kept, whole lines only."""
    raw = text.encode()
    if len(raw) <= MAX_TEXT_BYTES:
        return text
    marker = ELIDED.format(kept=MAX_TEXT_BYTES, total=len(raw)).encode()
    tail_budget = MAX_TEXT_BYTES - HEAD_BYTES - len(marker)
    head = raw[:HEAD_BYTES]
    head = head[: head.rfind(b"\n") + 1] if b"\n" in head else head
    tail = raw[-tail_budget:]
    tail = tail[tail.find(b"\n") + 1 :] if b"\n" in tail else tail
    return (head + marker + tail).decode(errors="ignore")


def outcome_doc(log: JobLog) -> dict[str, Any]:
    """``status.outcome`` for ``log``."""
    return {
        "text": bounded_text(log.text),
        "exitCode": int(log.exit_code),
        "error": log.error,
        "path": log.path,
        "crashedOn": list(log.crashed_on),
        "elapsedSeconds": float(log.elapsed_s),
    }


def job_log(doc: Mapping[str, Any]) -> JobLog:
    """The JobLog a ``status.outcome`` holds (a field missing reads as JobLog's default)."""
    return JobLog(
        text=str(doc.get("text") or ""),
        exit_code=int(doc.get("exitCode") or 0),
        error=str(doc.get("error") or ""),
        path=str(doc.get("path") or ""),
        crashed_on=tuple(str(n) for n in doc.get("crashedOn") or ()),
        elapsed_s=float(doc.get("elapsedSeconds") or 0.0),
    )


def outcome_of(job: Mapping[str, Any]) -> JobLog | None:
    """The frozen outcome of a Job object, None while it has none."""
    doc = (job.get("status") or {}).get("outcome")
    return job_log(doc) if isinstance(doc, Mapping) else None
