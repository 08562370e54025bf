"""The BurnInRun a tick creates (specs/burnin.md §7.1 step 8).

The name is derived from the schedule and the tick (``<schedule[:200]>-<unix seconds>``), not
left to ``generateName``: a driver that retries a create after a lost reply, or two schedulers
racing, then collide on one name instead of starting the same tick twice.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from glimmer.api.meta import API_VERSION
from glimmer.api.run import BurnInRun
from glimmer.api.schedule import BurnInSchedule
from glimmer.schedule.keys import RUN_NAME_PREFIX_MAX, SCHEDULE_LABEL, SCHEDULED_AT_ANNOTATION


def rfc3339(when: datetime) -> str:
    """``2026-10-04T03:00:00Z``: the tick in UTC, to the second."""
    return when.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_name(schedule_name: str, tick: datetime) -> str:
    """The deterministic name of the run for ``tick``; a valid object name."""
    # A cut may end on '-' or '.', which would make "<prefix>-<n>" an invalid name.
    prefix = schedule_name[:RUN_NAME_PREFIX_MAX].rstrip("-.")
    return f"{prefix}-{int(tick.astimezone(UTC).timestamp())}"


def stamp_run(schedule: BurnInSchedule, tick: datetime) -> BurnInRun:
    """The run ``schedule`` creates for ``tick``: its profile and (copied) target, the run
    template's limits, the schedule label, the scheduled-at annotation and a controller owner
    reference back to the schedule."""
    spec = schedule.spec
    template = spec.run_template
    run_spec: dict[str, Any] = {
        "profileRef": spec.profile_ref,
        "target": spec.target.model_dump(mode="json", by_alias=True, exclude_unset=True),
        "maxConcurrentNodes": template.max_concurrent_nodes if template else 1,
        "retryOnErrorLimit": template.retry_on_error_limit if template else 0,
    }
    if template is not None:
        if template.deadline_seconds is not None:
            run_spec["deadlineSeconds"] = template.deadline_seconds
        if template.ttl_seconds_after_finished is not None:
            run_spec["ttlSecondsAfterFinished"] = template.ttl_seconds_after_finished
        if template.baseline:
            run_spec["baseline"] = True
    owner: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": schedule.KIND,
        "name": schedule.name,
        "uid": schedule.metadata.uid or "",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return BurnInRun.model_validate(
        {
            "apiVersion": API_VERSION,
            "kind": BurnInRun.KIND,
            "metadata": {
                "name": run_name(schedule.name, tick),
                "namespace": schedule.metadata.namespace or "default",
                "labels": {SCHEDULE_LABEL: schedule.name},
                "annotations": {SCHEDULED_AT_ANNOTATION: rfc3339(tick)},
                "ownerReferences": [owner],
            },
            "spec": run_spec,
        }
    )
