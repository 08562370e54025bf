"""One pod on a stand-in node, from acceptance to its last status write.

The pod is accepted (phase Pending, ``startTime``, the node's address as ``podIP``), its runner
container becomes a process (processes.py) in the node's network namespace, and its status
follows the process: Running with the container running (Ready from the readiness probe, or at
once without one), then Succeeded or Failed with the container terminated (exit code, reason,
times). ``restartPolicy`` is honoured as Never whatever it says: a container runs once.

Three things end a pod early, each killing the process (SIGTERM to its session, SIGKILL after
the grace period): ``activeDeadlineSeconds`` since ``startTime`` (Failed, reason
DeadlineExceeded, as the kubelet's active-deadline handler does, even for a pod whose container
never started); a deletion the API marks with ``deletionTimestamp`` (the kubelet then deletes
the pod for good, as a kubelet confirms a graceful delete); and the pod vanishing from the API.

A pod the ``player`` plays (processes.py) runs its Play instead of its command, is Ready at once
whatever its readiness probe says, and ends with the reason the played process left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from tools.k8s_standin import kubelet_status as st
from tools.k8s_standin.kubelet_client import ApiError, Client
from tools.k8s_standin.node_netns import NodeNetworks
from tools.k8s_standin.probes import Readiness
from tools.k8s_standin.processes import (
    CREATING,
    CannotRun,
    Play,
    Player,
    Process,
    launch_of,
    not_runnable,
    played_launch,
    played_reason,
)

log = logging.getLogger("k8s_standin.kubelet")
DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline"
DEFAULT_GRACE = 30.0


class Gone(Exception):
    """The pod is no longer in the API: nothing more to report."""


class PodWorker:
    def __init__(
        self,
        pod: Mapping[str, Any],
        node: str,
        *,
        client: Client,
        network: NodeNetworks,
        log_dir: Path,
        work_dir: Path,
        before_start: Callable[[], Awaitable[None]],
        player: Player | None = None,
    ) -> None:
        meta = pod["metadata"]
        # The node as the pod's own fields read it, also where the API kept no nodeName.
        self.pod = {**pod, "spec": {**pod["spec"], "nodeName": node}}
        self.ns = str(meta.get("namespace", "default"))
        self.name = str(meta["name"])
        self.uid = str(meta.get("uid", ""))
        self.node = node
        self.client = client
        self.network = network
        self.log_path = log_dir / self.ns / f"{self.name}.log"
        self.scratch = work_dir / self.ns / f"{self.name}-{self.uid[:8]}"
        self.before_start = before_start
        self.play: Play | None = player(self.pod) if player is not None else None
        self.pod_ip = network.address(self.node)
        self.status: dict[str, Any] = {}
        self.process: Process | None = None
        self._stop = asyncio.Event()
        self._stop_why = ""
        self._grace = DEFAULT_GRACE
        self._lock = asyncio.Lock()
        self.task: asyncio.Task[None] | None = None

    @property
    def _path(self) -> str:
        return f"/api/v1/namespaces/{self.ns}/pods/{self.name}"

    @property
    def _container(self) -> Mapping[str, Any]:
        containers = self.pod["spec"].get("containers") or [{}]
        return containers[0]  # type: ignore[no-any-return]

    def start(self) -> asyncio.Task[None]:
        self.task = asyncio.create_task(self._run(), name=f"pod {self.ns}/{self.name}")
        return self.task

    def request_stop(self, why: str, grace: float | None) -> None:
        """End the pod: ``why`` is ``deadline``, ``deleting`` (still in the API) or ``gone``."""
        if self._stop.is_set():
            if why == "gone":
                self._stop_why = why  # nothing left to report to
            return
        self._stop_why = why
        if grace is not None:
            self._grace = grace
        self._stop.set()

    def grace_of(self, pod: Mapping[str, Any]) -> float:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        for value in (
            meta.get("deletionGracePeriodSeconds"),
            spec.get("terminationGracePeriodSeconds"),
        ):
            if value is not None:
                return float(value)
        return DEFAULT_GRACE

    async def _write(self) -> None:
        if self._stop_why == "gone":
            raise Gone()
        async with self._lock:
            try:
                await self.client.merge_patch(f"{self._path}/status", {"status": self.status})
            except ApiError as e:
                if e.status == 404:
                    raise Gone() from e
                raise

    async def _run(self) -> None:
        deadline: asyncio.Task[None] | None = None
        try:
            accepted = st.now()
            self.status = {
                "phase": "Pending",
                "hostIP": self.pod_ip,
                "hostIPs": [{"ip": self.pod_ip}],
                "podIP": self.pod_ip,
                "podIPs": [{"ip": self.pod_ip}],
                "startTime": accepted,
                "conditions": st.pod_conditions(
                    accepted, initialized=True, ready=False, reason="ContainersNotReady"
                ),
                "containerStatuses": [
                    st.container_status(self._container, st.waiting(CREATING), ready=False)
                ],
            }
            await self._write()
            seconds = self.pod["spec"].get("activeDeadlineSeconds")
            if seconds is not None:
                deadline = asyncio.create_task(self._deadline(float(seconds)))
            await self._live()
        except Gone:
            pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("pod %s/%s: the stand-in kubelet failed", self.ns, self.name)
        finally:
            if deadline is not None:
                deadline.cancel()
            if self.process is not None:
                # Cancelled (the kubelet stopping) or failed: the process never outlives it.
                await asyncio.shield(self.process.stop(2.0))

    async def _deadline(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        self.request_stop("deadline", self.grace_of(self.pod))

    async def _live(self) -> None:
        container = self._container
        try:
            if self.play is not None:
                launch = played_launch(self.pod, container, self.play, self.scratch)
            else:
                launch = launch_of(self.pod, container, self.pod_ip, self.scratch)
        except CannotRun as e:
            log.info("pod %s/%s on %s: cannot run: %s", self.ns, self.name, self.node, e)
            self.status["containerStatuses"] = [
                st.container_status(container, st.waiting(e.reason, e.message), ready=False)
            ]
            await self._write()
            await self._stop.wait()
            await self._ended(None, "", st.now())
            return
        await self.before_start()
        if self._stop.is_set():
            # Deleted or past its deadline while being set up: no process is started for it.
            await self._ended(None, "", st.now())
            return
        wrap = self.network.wrap(self.node)
        started = st.now()
        why = not_runnable(launch)
        if why is None:
            try:
                self.process = await Process.start(launch, wrap, self.log_path)
            except OSError as e:
                why = str(e)
        if why is not None:
            # As a runtime reports a command it cannot exec: terminated, exit 128, StartError.
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self.log_path.write_text(f"stand-in kubelet: {why}\n")
            await self._ended(128, "StartError", started, message=why)
            return
        assert self.process is not None
        log.info("pod %s/%s on %s: pid %d runs %s", self.ns, self.name, self.node,
                 self.process.pid, " ".join(launch.argv))  # fmt: skip
        self.status["phase"] = "Running"
        self._set_container(st.running(started), ready=False)
        probe_spec = None if self.play is not None else container.get("readinessProbe")
        probe: asyncio.Task[None] | None = None
        if probe_spec:
            readiness = Readiness(
                probe_spec,
                container,
                pod_ip=self.pod_ip,
                wrap=wrap,
                env=launch.env,
                cwd=launch.cwd,
                connect=lambda h, p, t: self.network.connect(self.node, h, p, t),
                on_change=self._ready,
            )
            await self._write()
            probe = asyncio.create_task(readiness.run())
        else:
            await self._ready(True)
        exited = asyncio.create_task(self.process.wait())
        stopping = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({exited, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if probe is not None:
                probe.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await probe
        if exited.done():
            code = exited.result()
            await self._ended(code, played_reason(self.play, code), started)
        else:
            code = await self.process.stop(self._grace)
            exited.cancel()
            await self._ended(code, "Error", started)

    async def _ready(self, ready: bool) -> None:
        if self.status.get("phase") != "Running":
            return
        state = self.status["containerStatuses"][0]["state"]
        self._set_container(state, ready=ready)
        await self._write()

    def _set_container(self, state: Mapping[str, Any], *, ready: bool) -> None:
        pid = self.process.pid if self.process else 0
        self.status["containerStatuses"] = [
            st.container_status(self._container, state, ready=ready, pid=pid)
        ]
        self.status["conditions"] = st.pod_conditions(
            st.now(), initialized=True, ready=ready, reason="ContainersNotReady"
        )

    async def _ended(self, code: int | None, reason: str, started: str, message: str = "") -> None:
        """The last status: the container terminated (or never started), the pod's phase."""
        log.info("pod %s/%s on %s: exit %s%s", self.ns, self.name, self.node, code,
                 f" ({self._stop_why})" if self._stop_why else "")  # fmt: skip
        if self._stop_why == "gone":
            return
        finished = st.now()
        pid = self.process.pid if self.process else 0
        if code is not None:
            state = st.terminated(code, reason, started, finished, message, pid)
            self._set_container(state, ready=False)
        self.status["conditions"] = st.pod_conditions(
            finished, initialized=True, ready=False, reason="PodCompleted"
        )
        self.status["phase"] = (
            "Succeeded" if code == 0 and self._stop_why != "deadline" else "Failed"
        )
        if self._stop_why == "deadline":
            self.status["phase"] = "Failed"
            self.status["reason"] = "DeadlineExceeded"
            self.status["message"] = DEADLINE_MESSAGE
        await self._write()
        if self._stop_why == "deleting":
            # The kubelet's part of a graceful delete: the process is gone, so is the pod.
            with contextlib.suppress(ApiError):
                await self.client.write("DELETE", self._path, {"gracePeriodSeconds": 0})
