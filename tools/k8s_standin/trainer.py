"""The Kubeflow Trainer stand-in: a controller on the stand-in cluster's loop that follows
TrainJobs and does what Trainer v2 and JobSet do, as far as glimmer's controllers can see.

For each TrainJob it resolves ``spec.runtimeRef`` (a TrainingRuntime in the TrainJob's
namespace, or a ClusterTrainingRuntime — the default kind), makes the JobSet's pods
(trainer_template.py) and creates them — a replicated job with ``dependsOn`` once the jobs it
names are Ready or Complete — leaving their placement (the hostname affinity glimmer pins a
group with) to the kubelet stand-in's scheduler; it writes the TrainJob's status
(trainer_status.py) from the pods, and once the JobSet has finished deletes the pods still
active. ``spec.suspend`` keeps pods absent (deleting those that run); deleting the TrainJob
collects its pods (they are owned by it). A TrainJob another controller manages
(``spec.managedBy``) is left alone.

With a simulated fleet (trainer_fleet.py), once every pod of a TrainJob is bound the stand-in
reads the job its trainer container runs (trainer_jobs.py), asks the fleet simulator for that
job's log over the nodes the pods landed on, and writes it as the job's plan; the kubelet
stand-in then plays those pods (``player``): they run trainer_play.py instead of their image.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import aiohttp

from tools.k8s_standin import kubelet_status as st
from tools.k8s_standin import trainer_status as ts
from tools.k8s_standin.follow import Controller, Key, follow, key_of
from tools.k8s_standin.kubelet_client import ApiError, Client
from tools.k8s_standin.processes import Play, expand
from tools.k8s_standin.trainer_fleet import TrainerFleet
from tools.k8s_standin.trainer_jobs import NotAJob, job_name, job_of
from tools.k8s_standin.trainer_template import (
    API_VERSION,
    COMPLETION_INDEX,
    JOBSET_NAME,
    NODE,
    PlannedPod,
    RuntimeInvalid,
    depends_on,
    framework,
    plan_pods,
    replicated_jobs,
    trainer_step,
)

log = logging.getLogger("k8s_standin.trainer")
Obj = dict[str, Any]
REPO = Path(__file__).resolve().parents[2]
TRAINER_CRDS = REPO.parent / "shared" / "schemas" / "kubeflow-trainer"
TRAINER_MANAGER = "trainer.kubeflow.org/trainjob-controller"
RESYNC_S = 1.0


def _owner_uid(pod: Mapping[str, Any]) -> str:
    for ref in pod["metadata"].get("ownerReferences") or []:
        if ref.get("kind") == "TrainJob" and ref.get("apiVersion") == API_VERSION:
            return str(ref.get("uid", ""))
    return ""


def _plain_env(container: Mapping[str, Any]) -> dict[str, str]:
    env: dict[str, str] = {}
    for var in container.get("env") or []:
        if "valueFrom" not in var:
            env[str(var["name"])] = expand(str(var.get("value") or ""), env)
    return env


class TrainerStandIn(Controller):
    """The controller; :meth:`run` serves until cancelled, :meth:`player` is the kubelet's
    hook for the pods it simulates."""

    def __init__(self, url: str, plan_dir: Path, fleet: TrainerFleet | None = None) -> None:
        self.url = url
        self.plan_dir = plan_dir
        self.fleet = fleet
        self.train_jobs: dict[Key, Obj] = {}
        self.pods: dict[Key, Obj] = {}
        self._dirty: set[Key] = set()
        self._wake = asyncio.Event()
        self._created: dict[str, set[str]] = {}  # TrainJob UID -> pod names created for it
        self._seen: dict[str, set[str]] = {}  # TrainJob UID -> its pods seen in the API
        self._planned: set[str] = set()  # TrainJob UIDs whose plan is written
        self._roles: dict[Key, tuple[Path, str]] = {}  # pod -> (plan, lead | follow)

    async def run(self, ready: asyncio.Event | None = None) -> None:
        async with Client(self.url) as client:
            self._client = client
            tasks: list[asyncio.Task[None]] = []
            try:
                listed = [asyncio.Event(), asyncio.Event()]
                collections = [
                    (f"/apis/{API_VERSION}/trainjobs", None, self.train_jobs, self._on_train_job),
                    ("/api/v1/pods", {"labelSelector": JOBSET_NAME}, self.pods, self._on_pod),
                ]
                for (path, params, store, handler), done in zip(collections, listed, strict=True):
                    tasks.append(
                        asyncio.create_task(follow(client, path, store, handler, done, params))
                    )
                for done in listed:
                    await done.wait()
                tasks.append(asyncio.create_task(self._reconcile_loop()))
                if ready is not None:
                    ready.set()
                await asyncio.Event().wait()
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    # -- the kubelet's hook ------------------------------------------------------------------

    def player(self, pod: Mapping[str, Any]) -> Play | None:
        """The Play of a pod this stand-in simulates; None for any other pod."""
        role = self._roles.get(key_of(pod))
        if self.fleet is None or role is None:
            return None
        plan, part = role
        reason = plan.with_name(f"{plan.name}.{pod['metadata']['name']}.reason")
        argv = (sys.executable, "-m", "tools.k8s_standin.trainer_play", str(plan), part)
        # The repository on the path: the played module is repository tooling, not the wheel's.
        env = {"PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        return Play((*argv, str(reason)) if part == "lead" else argv, reason, env)

    # -- events ------------------------------------------------------------------------------

    async def _on_train_job(self, kind: str, obj: Obj) -> None:
        key = key_of(obj)
        if kind == "DELETED":
            self._created.pop(str(obj["metadata"].get("uid", "")), None)
            self._seen.pop(str(obj["metadata"].get("uid", "")), None)
            self._forget_plan(obj)
            return
        self._dirty.add(key)
        self._wake.set()

    async def _on_pod(self, kind: str, pod: Obj) -> None:
        if kind == "DELETED":
            self._roles.pop(key_of(pod), None)
        owner = str(pod["metadata"].get("labels", {}).get(JOBSET_NAME, ""))
        self._dirty.add((str(pod["metadata"].get("namespace", "")), owner))
        self._wake.set()

    async def _reconcile_loop(self) -> None:
        while True:
            # asyncio.wait, not wait_for: on 3.11 a wait_for whose event fires as the task is
            # cancelled returns, and the cancellation is lost (the cluster's stop then hung).
            woken = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait({woken}, timeout=RESYNC_S)
            finally:
                woken.cancel()
            self._wake.clear()
            # Quiet: resync every unfinished one (a runtime created late, a lost event).
            keys = set(self._dirty) or {k for k, t in self.train_jobs.items() if not _ended(t)}
            self._dirty.clear()
            for key in sorted(keys):
                train_job = self.train_jobs.get(key)
                if train_job is None:
                    continue
                try:
                    await self.reconcile(train_job)
                except (ApiError, aiohttp.ClientError, TimeoutError) as e:
                    # A refusal (422: a pod the API finds invalid) is worth a word; it is tried
                    # again all the same, as the Trainer retries a JobSet it cannot create.
                    refused = isinstance(e, ApiError) and e.status == 422
                    (log.warning if refused else log.debug)("trainjob %s/%s: %s; again", *key, e)
                    self._dirty.add(key)
                except Exception:  # a stand-in bug: told, and the loop goes on
                    log.exception("trainjob %s/%s: the Trainer stand-in failed", *key)

    # -- one TrainJob ------------------------------------------------------------------------

    def _plan_path(self, train_job: Mapping[str, Any]) -> Path:
        meta = train_job["metadata"]
        uid8 = str(meta.get("uid", ""))[:8]
        return self.plan_dir / str(meta.get("namespace", "")) / f"{meta['name']}-{uid8}.json"

    def _forget_plan(self, train_job: Mapping[str, Any]) -> None:
        self._planned.discard(str(train_job["metadata"].get("uid", "")))
        plan = self._plan_path(train_job)
        for path in plan.parent.glob(f"{plan.name}*"):
            path.unlink(missing_ok=True)

    def _pods_of(self, train_job: Mapping[str, Any]) -> list[Obj]:
        uid = str(train_job["metadata"].get("uid", ""))
        return [p for p in self.pods.values() if _owner_uid(p) == uid]

    async def _runtime(self, train_job: Mapping[str, Any]) -> Obj | None:
        ns = str(train_job["metadata"].get("namespace", ""))
        ref = (train_job.get("spec") or {}).get("runtimeRef") or {}
        kind = str(ref.get("kind") or "ClusterTrainingRuntime")
        name = str(ref.get("name", ""))
        path = (
            f"/apis/{API_VERSION}/namespaces/{ns}/trainingruntimes/{name}"
            if kind == "TrainingRuntime"
            else f"/apis/{API_VERSION}/clustertrainingruntimes/{name}"
        )
        try:
            return await self.client.get(path)
        except ApiError as e:
            if e.status == 404:
                log.info("trainjob %s/%s: %s %s not found", ns, train_job["metadata"]["name"],
                         kind, name)  # fmt: skip
                return None
            raise

    async def reconcile(self, train_job: Obj) -> None:
        meta, spec = train_job["metadata"], train_job.get("spec") or {}
        status: Obj = train_job.get("status") or {}
        if meta.get("deletionTimestamp"):
            return
        if spec.get("managedBy") not in (None, "", TRAINER_MANAGER):
            return
        mine = self._pods_of(train_job)
        at = st.now()
        conditions = list(status.get("conditions") or [])
        runtime = await self._runtime(train_job)
        names = [str(j["name"]) for j in replicated_jobs(train_job, runtime)] if runtime else []
        if _ended(train_job):
            # Finished: what still runs goes, and the counts follow the pods as they go.
            await self._delete_active(mine)
            if runtime is not None:
                await self._write_status(train_job, conditions, ts.jobs_status(names, mine))
            return
        if spec.get("suspend"):
            await self._delete(mine)
            self._created.pop(str(meta.get("uid", "")), None)
            self._seen.pop(str(meta.get("uid", "")), None)
            self._forget_plan(train_job)  # resumed, the pods may land elsewhere
            conditions = ts.set_condition(conditions, ts.SUSPENDED, True, "suspended", at)
            await self._write_status(train_job, conditions, ts.jobs_status(names, [], True))
            return
        if ts.condition_true(status, ts.SUSPENDED):
            conditions = ts.set_condition(conditions, ts.SUSPENDED, False, "resumed", at)
        if runtime is None:
            return  # as the Trainer: retried until the runtime exists
        try:
            planned = plan_pods(train_job, runtime)
        except RuntimeInvalid as e:
            log.warning("trainjob %s/%s: %s", meta.get("namespace"), meta["name"], e)
            conditions = ts.set_condition(conditions, ts.FAILED, True, ts.FAILED, at)
            await self._write_status(train_job, conditions, ts.jobs_status(names, mine))
            return
        await self._create(train_job, runtime, planned, mine)
        if self.fleet is not None:
            self._write_plan(train_job, runtime, planned, mine)
        expected = Counter(p.replicated_job for p in planned)
        end = ts.finished(expected, mine, ts.success_targets(runtime))
        if end == ts.FAILED and self._lead_ending(train_job, runtime, planned, mine):
            end = None
        if end is None and self._lost(train_job, planned, mine):
            end = ts.FAILED
        if end is not None:
            conditions = ts.set_condition(conditions, end, True, end, at)
        await self._write_status(train_job, conditions, ts.jobs_status(names, mine))
        if end is not None:
            await self._delete_active(mine)

    async def _create(
        self,
        train_job: Mapping[str, Any],
        runtime: Mapping[str, Any],
        planned: Sequence[PlannedPod],
        mine: Sequence[Obj],
    ) -> None:
        uid = str(train_job["metadata"].get("uid", ""))
        created = self._created.setdefault(uid, set())
        existing = {str(p["metadata"]["name"]) for p in mine}
        jobs = {str(j["name"]): j for j in replicated_jobs(train_job, runtime)}
        step = trainer_step(list(jobs.values()))
        plan = self._plan_path(train_job)
        for pod in planned:
            if pod.name in existing or pod.name in created:
                continue
            if not _dependencies_met(jobs[pod.replicated_job], planned, mine):
                continue
            ns = str(pod.obj["metadata"]["namespace"])
            lead = pod.replicated_job == step and pod.pod_index == 0
            self._roles[(ns, pod.name)] = (plan, "lead" if lead else "follow")
            try:
                await self.client.write("POST", f"/api/v1/namespaces/{ns}/pods", pod.obj)
            except ApiError as e:
                if e.reason != "AlreadyExists":
                    self._roles.pop((ns, pod.name), None)
                    raise
                continue  # an old pod of the name still going: made again once it is gone
            created.add(pod.name)

    def _lost(
        self, train_job: Mapping[str, Any], planned: Sequence[PlannedPod], mine: Sequence[Obj]
    ) -> bool:
        """A pod of the running JobSet vanished (deleted, its node gone): a failure, as the Job
        controller's tracking finalizer counts it, since its Job allows no retry."""
        seen = self._seen.setdefault(str(train_job["metadata"].get("uid", "")), set())
        present = {str(p["metadata"]["name"]) for p in mine}
        seen |= present & {p.name for p in planned}
        return bool(seen - present)

    def _lead_ending(
        self,
        train_job: Mapping[str, Any],
        runtime: Mapping[str, Any],
        planned: Sequence[PlannedPod],
        mine: Sequence[Obj],
    ) -> bool:
        """A played follower has failed with its lead, whose end is not reported yet: the
        JobSet waits for it, so that deleting what still runs never takes the lead's log (a
        follower only ends once the lead has printed everything)."""
        if str(train_job["metadata"].get("uid", "")) not in self._planned:
            return False
        step = trainer_step(replicated_jobs(train_job, runtime))
        lead = next(p for p in planned if p.replicated_job == step and p.pod_index == 0)
        pod = next((p for p in mine if p["metadata"]["name"] == lead.name), None)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return False
        return ts.phase(pod) not in ("Succeeded", "Failed")

    def _write_plan(
        self,
        train_job: Mapping[str, Any],
        runtime: Mapping[str, Any],
        planned: Sequence[PlannedPod],
        mine: Sequence[Obj],
    ) -> None:
        """The job's log for the nodes its pods are bound to, once all of them are."""
        assert self.fleet is not None
        uid = str(train_job["metadata"].get("uid", ""))
        if uid in self._planned:
            return
        bound = {
            str(p["metadata"]["name"]): p for p in mine if (p.get("spec") or {}).get("nodeName")
        }
        if any(p.name not in bound for p in planned):
            return
        step = trainer_step(replicated_jobs(train_job, runtime))
        lead = next(p for p in planned if p.replicated_job == step and p.pod_index == 0)
        container = next(c for c in lead.obj["spec"]["containers"] if c.get("name") == NODE)
        env = _plain_env(container)
        argv = [expand(str(a), env) for a in [*(container.get("command") or []),
                                               *(container.get("args") or [])]]  # fmt: skip
        workers = sorted(
            (p for p in planned if p.replicated_job == NODE),
            key=lambda p: int(p.obj["metadata"]["labels"][COMPLETION_INDEX]),
        )
        nodes = tuple(str(bound[p.name]["spec"]["nodeName"]) for p in workers)
        name = str(train_job["metadata"]["name"])
        try:
            # The fleet's seed is the certification's: 0, as a cluster's core runs (its report
            # says seed 0), the simulator's CLI run with --seed 0 to compare.
            job = job_of(job_name(train_job), argv, env, nodes, self.fleet.seed)
        except NotAJob as e:
            doc = {"text": f"stand-in trainer: {e}\n", "exit_code": 1, "seconds": 0.0}
        else:
            got = self.fleet.run(job)
            # What the simulator knows beyond the log, for a test to compare with (a cluster
            # tells none of it: the pods show only the text and the exit code).
            doc = {"text": got.text, "exit_code": got.exit_code, "error": got.error}
            doc |= {"path": got.path, "crashed_on": list(got.crashed_on)}
            doc["elapsed_s"] = got.elapsed_s
            doc["seconds"] = self.fleet.seconds_per_job
            doc["oom"] = bool(self.fleet.oom_nodes & set(nodes))
        doc["job"] = name
        mpi = framework(runtime) == "mpi"
        doc["follower_exit"] = 0 if mpi else doc["exit_code"]
        path = self._plan_path(train_job)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(doc))
        partial.replace(path)  # a pod waiting for the plan reads all of it or nothing
        self._planned.add(uid)

    async def _write_status(
        self, train_job: Mapping[str, Any], conditions: list[Obj], jobs: list[Obj]
    ) -> None:
        current = train_job.get("status") or {}
        if current.get("conditions", []) == conditions and current.get("jobsStatus") == jobs:
            return
        ns, name = key_of(train_job)
        body: Obj = {"status": {"conditions": conditions, "jobsStatus": jobs}}
        try:
            await self.client.merge_patch(
                f"/apis/{API_VERSION}/namespaces/{ns}/trainjobs/{name}/status", body
            )
        except ApiError as e:
            if e.status != 404:
                raise

    async def _delete(self, pods: Sequence[Obj]) -> None:
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp"):
                continue
            ns, name = key_of(pod)
            try:
                await self.client.write("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", {})
            except ApiError as e:
                if e.status != 404:
                    raise

    async def _delete_active(self, pods: Sequence[Obj]) -> None:
        """What JobSet does to the jobs still running once it has finished."""
        await self._delete([p for p in pods if ts.phase(p) not in ("Succeeded", "Failed")])


def _ended(train_job: Mapping[str, Any]) -> bool:
    status = train_job.get("status") or {}
    return ts.condition_true(status, ts.COMPLETE) or ts.condition_true(status, ts.FAILED)


def _dependencies_met(
    job: Mapping[str, Any], planned: Sequence[PlannedPod], pods: Sequence[Obj]
) -> bool:
    grouped = ts.by_job(pods)
    for name, wanted in depends_on(job):
        count = sum(1 for p in planned if p.replicated_job == name)
        mine = grouped.get(name, [])
        if wanted == "Ready":
            ok = sum(1 for p in mine if ts.ready(p) or ts.phase(p) == "Succeeded") >= count
        else:
            ok = sum(1 for p in mine if ts.phase(p) == "Succeeded") >= count
        if not ok:
            return False
    return True
