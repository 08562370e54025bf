"""A minimal kubelet for the API stand-in, driven by the test: it moves every runner pod it
finds through Pending → Running → Succeeded over HTTP, as a kubelet reports them.

The kubernetes substrate's conformance cases need pods that run and end, and only the pods'
status matters to the engine; what the runner would print is not theirs to judge. So instead
of running processes (the kubelet stand-in of tools/k8s_standin does that), :class:`PodDriver`
writes the status a kubelet would — ``startTime``, the Ready condition, the ``runner``
container running, then terminated with exit 0 — through the pods' status subresource, and the
runner's (empty) log where the stand-in serves ``pods/log`` from. It acts only when stepped
(:meth:`PodDriver.step`, :meth:`PodDriver.sleep`), so a test decides when time passes.
"""

from __future__ import annotations

import contextlib
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lightkube import ALL_NS, ApiError, Client
from lightkube.types import PatchType

from glimmer.backends.kubernetes.resources import PODS

STEP_SECONDS = 0.02


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _container(pod: dict[str, Any], ready: bool, state: dict[str, Any]) -> dict[str, Any]:
    """The runner container's status, with the fields a kubelet always reports."""
    (spec,) = [c for c in pod["spec"]["containers"] if c["name"] == "runner"]
    return {
        "name": "runner",
        "image": spec["image"],
        "imageID": f"driver://{spec['image']}",
        "restartCount": 0,
        "ready": ready,
        "state": state,
    }


class PodDriver:
    """Runs every pod ``runner_seconds`` (host seconds) from the step that starts it, printing
    ``output``; logs go under ``log_dir`` (``<ns>/<pod>.log``, the stand-in's layout)."""

    def __init__(
        self, client: Client, log_dir: Path, runner_seconds: float, output: str = ""
    ) -> None:
        self.client = client
        self.log_dir = Path(log_dir)
        self.runner_seconds = runner_seconds
        self.output = output
        self.started: dict[str, float] = {}  # pod uid -> host monotonic start

    def _status(self, pod: dict[str, Any], status: dict[str, Any]) -> None:
        meta = pod["metadata"]
        # A pod deleted meanwhile, or a fault the stand-in injected: the next step retries.
        with contextlib.suppress(ApiError):
            self.client.patch(
                PODS.Status,
                meta["name"],
                {"status": status},
                namespace=meta["namespace"],
                patch_type=PatchType.MERGE,
            )

    def _start(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        log = self.log_dir / meta["namespace"] / f"{meta['name']}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(self.output)
        at = _stamp()
        self._status(
            pod,
            {
                "phase": "Running",
                "startTime": at,
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {"type": "Ready", "status": "True"},
                ],
                "containerStatuses": [_container(pod, True, {"running": {"startedAt": at}})],
            },
        )

    def _finish(self, pod: dict[str, Any]) -> None:
        started = (pod.get("status") or {}).get("startTime") or _stamp()
        terminated = {
            "exitCode": 0,
            "reason": "Completed",
            "startedAt": started,
            "finishedAt": _stamp(),
        }
        self._status(
            pod,
            {
                "phase": "Succeeded",
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {"type": "Ready", "status": "False"},
                ],
                "containerStatuses": [_container(pod, False, {"terminated": terminated})],
            },
        )

    def step(self) -> int:
        """Move every pod one step on; the number of pods still live."""
        live = 0
        for found in self.client.list(PODS, namespace=ALL_NS):
            pod = found.to_dict()
            uid = pod["metadata"]["uid"]
            phase = (pod.get("status") or {}).get("phase") or "Pending"
            if phase in ("Succeeded", "Failed") or pod["metadata"].get("deletionTimestamp"):
                continue
            live += 1
            if phase == "Pending":
                self.started[uid] = time.monotonic()
                self._start(pod)
            elif time.monotonic() - self.started.get(uid, 0.0) >= self.runner_seconds:
                self._finish(pod)
        return live

    def sleep(self, seconds: float) -> None:
        """Let ``seconds`` of host time pass, stepping the pods meanwhile."""
        until = time.monotonic() + seconds
        while True:
            self.step()
            left = until - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(STEP_SECONDS, left))
