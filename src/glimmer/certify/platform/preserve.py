"""Keeping the gang-scheduling fields intact through per-job dependency renaming.

Renaming rewrites every quoted occurrence of a dependency name, which also hits a queue label
value that happens to equal one (a queue named after the runtime it serves). The queue is not a
reference, so its value is copied back from the original. This preserves and never repairs: a
field absent from the original stays absent, and a value an override changed is carried through,
so that validation rejects it instead of the Job silently running in a queue nobody chose.
"""

from __future__ import annotations

import json
from typing import Any

from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.gang import GangScheduler, resolved_gang_scheduler
from glimmer.certify.platform.vocab import TRAINING_RUNTIME
from glimmer.certify.platform.walk import get_path

_LABEL_PATHS = (
    ("template", "metadata", "labels"),
    ("template", "spec", "template", "metadata", "labels"),
)
_POD_SPEC = ("template", "spec", "template", "spec")


def _jobs(doc: Any) -> list[Any] | None:
    jobs = get_path(doc, "spec", "template", "spec", "replicatedJobs")
    return jobs if isinstance(jobs, list) else None


def _restore(orig_job: Any, new_job: Any, key: str) -> bool:
    changed = False
    for path in _LABEL_PATHS:
        was = get_path(orig_job, *path)
        now = get_path(new_job, *path)
        if (
            isinstance(was, dict)
            and key in was
            and isinstance(now, dict)
            and now.get(key) != was[key]
        ):
            now[key] = was[key]
            changed = True
    was_pod, now_pod = get_path(orig_job, *_POD_SPEC), get_path(new_job, *_POD_SPEC)
    if (
        isinstance(was_pod, dict)
        and "schedulerName" in was_pod
        and isinstance(now_pod, dict)
        and now_pod.get("schedulerName") != was_pod["schedulerName"]
    ):
        now_pod["schedulerName"] = was_pod["schedulerName"]
        changed = True
    return changed


def preserve_scheduling_fields(original: bytes, renamed: bytes, gs: GangScheduler | None) -> bytes:
    """``renamed`` with the queue labels and schedulerName of ``original`` copied back.

    Returns ``renamed`` unchanged (the same bytes) when ``gs`` configures nothing, either input
    is empty, the document is not a TrainingRuntime, the replicated jobs differ in number, or
    nothing needed restoring.
    """
    resolved = resolved_gang_scheduler(gs)
    if resolved is None or not original or not renamed:
        return renamed
    try:
        before, after = json.loads(original), json.loads(renamed)
    except ValueError as e:
        raise PlatformError(f"preserve scheduling fields: not JSON: {e}") from None
    if not isinstance(after, dict) or after.get("kind") != TRAINING_RUNTIME:
        return renamed
    was, now = _jobs(before), _jobs(after)
    if was is None or now is None or len(was) != len(now):
        return renamed
    changed = False
    for orig_job, new_job in zip(was, now, strict=True):
        changed |= _restore(orig_job, new_job, resolved["queueLabelKey"])
    if not changed:
        return renamed
    return json.dumps(after, separators=(",", ":"), sort_keys=True).encode()
