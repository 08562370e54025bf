"""What a certify Job's workload left, read for its ending (§3.3, §7.1): the workload's pods,
rank 0's log, the nodes' health, and the :class:`~.job_status.Ending` built from them — a
success with the launcher's log, a failure with its failure log and the group blamed, a
hardware failure naming the unhealthy nodes. The reads are the Job controller's; the decisions
are the rules of :mod:`glimmer.certify.job_rules` and :mod:`glimmer.certify.health`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from lightkube import Client

from glimmer.backends.kubernetes.certify.nodes import node_info
from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import NODES, PODS, as_dict
from glimmer.certify import job_rules
from glimmer.certify.catalog.naming import workload_name
from glimmer.certify.grouping import mnnvl_on
from glimmer.certify.health import (
    HealthExpressionError,
    check_nodes,
    hardware_failed_message,
    merge_failed_nodes,
)
from glimmer.certify.jobs import JobLog
from glimmer.certify.outcome import collective_path
from glimmer.certify.platform.vocab import JOB_LABEL
from glimmer.certify.result import WORKLOAD
from glimmer.engine.backend import BackendError, NotFound
from glimmer.operator.certify import job_workload as wl
from glimmer.operator.certify.job_status import (
    Ending,
    blame_group,
    failed_nodes,
    get,
    group_nodes,
)

log = logging.getLogger("glimmer.operator.certify.job")

Obj = dict[str, Any]
HARDWARE_DETECTED = "HardwareFailureDetected"
WORKLOAD_COMPLETED = "WorkloadCompleted"


class JobReads:
    """The reads of a Job's workload through ``client`` (``now`` is the cluster clock)."""

    def __init__(self, client: Client, now: Callable[[], datetime]) -> None:
        self.client = client
        self.now = now

    def _get(self, res: Any, name: str, namespace: str | None) -> Obj | None:
        try:
            with api_call(f"get {res.__name__} {namespace}/{name}"):
                return as_dict(self.client.get(res, name, namespace=namespace))
        except NotFound:
            return None

    def pods(self, job: Mapping[str, Any]) -> list[Obj]:
        """The workload's pods: the JobSet's (launcher included) and those with the job label."""
        meta = job.get("metadata") or {}
        name, ns = str(meta.get("name")), str(meta.get("namespace") or "default")
        workload = str(get(job, "status", "workloadRef", "name") or workload_name(name))
        with api_call(f"list pods of job {ns}/{name}"):
            by_set = [
                as_dict(p)
                for p in self.client.list(PODS, namespace=ns, labels={wl.JOBSET_LABEL: workload})
            ]
            by_job = [
                as_dict(p) for p in self.client.list(PODS, namespace=ns, labels={JOB_LABEL: name})
            ]
        return wl.merged_pods(by_set, by_job)

    def read_log(
        self,
        namespace: str,
        pod: str,
        container: str,
        tail: int | None = None,
        timestamps: bool = False,
    ) -> str:
        """A container's log ("" when it cannot be read: gone, or never started)."""
        try:
            with api_call(f"log of pod {namespace}/{pod}"):
                lines = self.client.log(
                    pod,
                    namespace=namespace,
                    container=container,
                    tail_lines=tail,
                    timestamps=timestamps,
                )
                return "".join(lines)
        except BackendError:
            return ""

    # ---- health (§7.1) -------------------------------------------------------------------------

    def health(self, job: Obj, pods: Sequence[Mapping[str, Any]]) -> Ending | None:
        """The Ending of a Job one of whose pods' nodes the health check finds unhealthy for the
        first time; None when nothing new was found."""
        expression = get(job, "spec", "nodeHealthMonitor", "cel", "expression")
        if not isinstance(expression, str) or not expression.strip():
            return None
        nodes = [n for n in (self._get(NODES, name, None) for name in wl.pods_on(pods)) if n]
        if not nodes:
            return None
        try:
            found = check_nodes(expression, nodes)
        except HealthExpressionError as e:
            log.warning("job %s: node health expression refused: %s", job["metadata"]["name"], e)
            return None
        for node, error in found.errors:
            log.warning(
                "job %s: health check on node %s failed: %s",
                job["metadata"]["name"],
                node,
                error,
            )
        existing = failed_nodes(job.get("status") or {})
        merged, added = merge_failed_nodes(existing, found.unhealthy)
        if not added:
            return None
        message = hardware_failed_message(merged)
        bad = tuple(sorted({f.name for f in merged if f.reason == HARDWARE_DETECTED}))
        # The outcome says what ended the job: rank 0's log as it was when the check fired (none,
        # or a diagnostic's first lines) and then the verdict line a finished job would print, so
        # the replayed core (diag_reason: the last line's "FAIL: <why>") reads the hardware
        # failure instead of whatever the workload had printed so far.
        text = self.speaker_text(job, pods)
        head = text if not text or text.endswith("\n") else text + "\n"
        text = f"{head}FAIL: {message}\n"
        return Ending(
            False,
            HARDWARE_DETECTED,
            message,
            JobLog(text, 1, message, self.path(job, nodes), bad, self.elapsed(pods)),
            failed=merged,
            hardware=True,
        )

    # ---- endings -------------------------------------------------------------------------------

    def speaker_text(self, job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> str:
        """The outcome's text: rank 0's log. A training Job's (one that asks for goodput) is
        read with kubelet timestamps, as the core's goodput parser reads a training log (§6.2:
        the interruption time is a line's kubelet time); a collective's table and a
        diagnostic's verdict are read as the job printed them."""
        who = wl.speaker(pods)
        if who is None:
            return ""
        namespace = str(job["metadata"].get("namespace") or "default")
        training = isinstance(get(job, "spec", "goodputMeasurement"), Mapping)
        return self.read_log(namespace, who[0], who[1], timestamps=training)

    def elapsed(self, pods: Sequence[Mapping[str, Any]]) -> float:
        who = wl.speaker(pods)
        return wl.elapsed_seconds(pods, who[0], who[1]) if who else 0.0

    def path(self, job: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]] | None = None) -> str:
        """The collective's path over the group's nodes (NVLink within one clique with MNNVL
        on, else the network), by the core's rule."""
        if nodes is None:
            names = group_nodes(job)
            nodes = [n for n in (self._get(NODES, name, None) for name in names) if n]
        infos = [node_info(n) for n in nodes]
        if not infos:
            return ""
        return collective_path(infos, mnnvl_on(wl.mnnvl_setting(job), infos))

    def success_ending(self, job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> Ending:
        text = self.speaker_text(job, pods)
        log_ = JobLog(text, 0, "", self.path(job), (), self.elapsed(pods))
        ref = get(job, "status", "workloadRef", "name")
        return Ending(True, WORKLOAD_COMPLETED, f"Workload TrainJob/{ref} completed", log_)

    def failed_ending(
        self,
        job: Mapping[str, Any],
        pods: Sequence[Mapping[str, Any]],
        reason: str,
        message: str,
        *,
        timeout: bool,
    ) -> Ending:
        """setJobFailed (§3.3): the failure log, the group blamed when no node is yet."""
        ns = str(job["metadata"].get("namespace") or "default")

        def read(source: job_rules.LogSource) -> str:
            return self.read_log(ns, source.pod_name, source.container, job_rules.TAIL_LINES)

        captured = job_rules.failure_log(pods, read, timeout=timeout)
        text = self.speaker_text(job, pods)
        who = wl.speaker(pods)
        code = wl.exit_code(pods, who[0], who[1]) if who else None
        exit_code = code if code else (captured.exit_code or 1)
        crashed = (captured.node_name,) if captured.node_name and not timeout else ()
        error = wl.last_line(captured.tail) if captured.exit_code else message
        blamed = blame_group(job, failed_nodes(job.get("status") or {}), WORKLOAD, message)
        return Ending(
            False,
            reason,
            message,
            JobLog(text, exit_code, error or message, self.path(job), crashed, self.elapsed(pods)),
            failure_log=captured.to_wire(),
            failed=blamed,
        )
