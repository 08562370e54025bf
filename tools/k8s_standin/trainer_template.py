"""The pods Kubeflow Trainer v2 and JobSet would make of one TrainJob, as a pure function of the
TrainJob and its runtime (a TrainingRuntime or a ClusterTrainingRuntime).

What the Trainer does, as far as a glimmer controller can see it:

* the runtime's ``spec.template.spec.replicatedJobs`` are the JobSet's replicated jobs, in order;
* each ``runtimePatches[]`` entry patches them by name: the Job template's metadata (labels,
  annotations) and the pod template (metadata; and the spec fields the CRD allows — affinity,
  tolerations, nodeSelector, containers by name, volumes...). Maps merge, lists of named items
  merge by name, tolerations and pull secrets are appended, any other list is replaced;
* the ``trainer`` (image, command, args, env, resourcesPerNode) lands on the ``node`` container
  of the trainer step (the replicated job labelled ``trainjob-ancestor-step: trainer``: the
  launcher for MPI, the node job for torch); ``numNodes`` is the node job's pod count, the
  launcher runs one pod;
* torch pods get the ``PET_*`` rendezvous variables, the MPI launcher the hostfile variables.

Pods are named as JobSet's Indexed Jobs name them, ``<trainjob>-<replicatedJob>-<jobIndex>-
<podIndex>-<5 chars>`` (the 5 characters derived from the TrainJob's UID, so a second pass
creates the same names), carry JobSet's and the Job's labels, a ``hostname`` and the TrainJob's
name as ``subdomain``, and are owned by the TrainJob (the stand-in has no Job or JobSet kinds:
deleting the TrainJob collects its pods).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

GROUP = "trainer.kubeflow.org"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_STEP = "trainer"
NODE = "node"
LAUNCHER = "launcher"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
REPLICAS = "jobset.sigs.k8s.io/replicatedjob-replicas"
JOB_INDEX = "jobset.sigs.k8s.io/job-index"
GLOBAL_INDEX = "jobset.sigs.k8s.io/job-global-index"
JOB_NAME = "batch.kubernetes.io/job-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
TORCH_MASTER_PORT = 29400
MPI_HOSTFILE = "/etc/mpi/hostfile"
MPI_SSH_VOLUME = "mpi-ssh-auth"
# Kubernetes' random name suffix alphabet (no vowels, no look-alikes).
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_APPENDED = ("tolerations", "imagePullSecrets")


class RuntimeInvalid(ValueError):
    """The TrainJob and its runtime do not make a JobSet (the TrainJob's Failed message)."""


@dataclass(frozen=True)
class PlannedPod:
    """One pod of the JobSet: its replicated job, indices and object."""

    replicated_job: str
    job_index: int
    pod_index: int
    obj: Obj

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])


def _named(items: Any) -> bool:
    return isinstance(items, list) and all(isinstance(i, dict) and "name" in i for i in items)


def merge(base: Any, patch: Any, key: str = "") -> Any:
    """``patch`` over ``base`` as the Trainer's runtime patches apply: see the module's doc."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = merge(base[k], v, k) if k in base else copy.deepcopy(v)
        return out
    if isinstance(base, list) and isinstance(patch, list):
        if key in _APPENDED:
            return [*base, *(copy.deepcopy(p) for p in patch if p not in base)]
        if _named(base) and _named(patch):
            out_list = list(base)
            index = {item["name"]: i for i, item in enumerate(out_list)}
            for item in patch:
                if item["name"] in index:
                    i = index[item["name"]]
                    out_list[i] = merge(out_list[i], item)
                else:
                    out_list.append(copy.deepcopy(item))
            return out_list
    return copy.deepcopy(patch)


def replicated_jobs(train_job: Mapping[str, Any], runtime: Mapping[str, Any]) -> list[Obj]:
    """The runtime's replicated jobs with every runtime patch of the TrainJob applied."""
    spec = runtime.get("spec") or {}
    jobs: list[Obj] = copy.deepcopy(
        (((spec.get("template") or {}).get("spec")) or {}).get("replicatedJobs") or []
    )
    if not jobs:
        raise RuntimeInvalid(f"runtime {runtime['metadata']['name']} has no replicatedJobs")
    by_name = {str(j.get("name")): j for j in jobs}
    for patch in (train_job.get("spec") or {}).get("runtimePatches") or []:
        template = (patch.get("trainingRuntimeSpec") or {}).get("template") or {}
        for rjp in (template.get("spec") or {}).get("replicatedJobs") or []:
            job = by_name.get(str(rjp.get("name")))
            if job is None:
                continue  # a patch for a job the runtime lacks changes nothing
            job["template"] = merge(job.get("template") or {}, rjp.get("template") or {})
    return jobs


def trainer_step(jobs: Sequence[Mapping[str, Any]]) -> str:
    """The replicated job the TrainJob's ``trainer`` applies to."""
    for job in jobs:
        labels = ((job.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(ANCESTOR_LABEL) == TRAINER_STEP:
            return str(job["name"])
    return NODE


def framework(runtime: Mapping[str, Any]) -> str:
    """``mpi`` or ``torch`` (any other policy, or none, runs as torch does: one pod a node)."""
    policy = (runtime.get("spec") or {}).get("mlPolicy") or {}
    return "mpi" if "mpi" in policy else "torch"


def num_nodes(train_job: Mapping[str, Any], runtime: Mapping[str, Any]) -> int:
    trainer = (train_job.get("spec") or {}).get("trainer") or {}
    policy = (runtime.get("spec") or {}).get("mlPolicy") or {}
    return int(trainer.get("numNodes") or policy.get("numNodes") or 1)


def procs_per_node(train_job: Mapping[str, Any], runtime: Mapping[str, Any]) -> int:
    trainer = (train_job.get("spec") or {}).get("trainer") or {}
    policy = (runtime.get("spec") or {}).get("mlPolicy") or {}
    own = (policy.get("mpi") or policy.get("torch") or {}).get("numProcPerNode")
    return int(trainer.get("numProcPerNode") or own or 1)


def pod_count(job: Mapping[str, Any], nodes: int, fw: str) -> int:
    """Pods of one replicated job: the node job holds one per node, a launcher one."""
    if job.get("name") == NODE:
        return nodes
    spec = ((job.get("template") or {}).get("spec")) or {}
    return int(spec.get("parallelism") or 1) if fw != "mpi" else 1


def _suffix(uid: str, name: str) -> str:
    digest = hashlib.sha256(f"{uid}/{name}".encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])


def _apply_trainer(container: Obj, trainer: Mapping[str, Any]) -> None:
    for key in ("image", "command", "args"):
        if trainer.get(key) is not None:
            container[key] = copy.deepcopy(trainer[key])
    if trainer.get("env"):
        container["env"] = merge(container.get("env") or [], list(trainer["env"]))
    resources = trainer.get("resourcesPerNode")
    if resources:
        container["resources"] = merge(container.get("resources") or {}, dict(resources))


def _set_env(container: Obj, values: Mapping[str, str]) -> None:
    env = [{"name": k, "value": v} for k, v in values.items()]
    container["env"] = merge(container.get("env") or [], env)


def _owner(train_job: Mapping[str, Any]) -> Obj:
    meta = train_job["metadata"]
    return {
        "apiVersion": API_VERSION,
        "kind": "TrainJob",
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def plan_pods(train_job: Mapping[str, Any], runtime: Mapping[str, Any]) -> list[PlannedPod]:
    """Every pod of the TrainJob's JobSet, replicated jobs in runtime order."""
    meta = train_job["metadata"]
    name, uid = str(meta["name"]), str(meta.get("uid", ""))
    namespace = str(meta.get("namespace") or "default")
    trainer = (train_job.get("spec") or {}).get("trainer") or {}
    jobs = replicated_jobs(train_job, runtime)
    step = trainer_step(jobs)
    fw = framework(runtime)
    nodes = num_nodes(train_job, runtime)
    procs = procs_per_node(train_job, runtime)
    out: list[PlannedPod] = []
    for global_index, job in enumerate(jobs):
        rj = str(job["name"])
        template = job.get("template") or {}
        job_labels = (template.get("metadata") or {}).get("labels") or {}
        job_annotations = (template.get("metadata") or {}).get("annotations") or {}
        pod_template = ((template.get("spec") or {}).get("template")) or {}
        count = pod_count(job, nodes, fw)
        job_name = f"{name}-{rj}-0"
        for index in range(count):
            pod_meta = copy.deepcopy(pod_template.get("metadata") or {})
            spec: Obj = copy.deepcopy(pod_template.get("spec") or {})
            containers = spec.get("containers") or []
            main = next((c for c in containers if c.get("name") == NODE), None)
            if main is None:
                raise RuntimeInvalid(f"replicated job {rj} has no container named {NODE!r}")
            if rj == step:
                _apply_trainer(main, trainer)
            elif rj == NODE and trainer.get("resourcesPerNode"):
                main["resources"] = merge(main.get("resources") or {}, trainer["resourcesPerNode"])
            if fw == "torch" and rj == NODE:
                _set_env(
                    main,
                    {
                        "PET_NNODES": str(nodes),
                        "PET_NPROC_PER_NODE": str(procs),
                        "PET_NODE_RANK": str(index),
                        "PET_MASTER_ADDR": f"{name}-{NODE}-0-0.{name}",
                        "PET_MASTER_PORT": str(TORCH_MASTER_PORT),
                    },
                )
            if fw == "mpi" and rj == LAUNCHER:
                _set_env(
                    main,
                    {
                        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
                        "OMPI_MCA_orte_default_hostfile": MPI_HOSTFILE,
                        "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
                        "OMPI_MCA_orte_set_default_slots": str(procs),
                    },
                )
            if fw == "mpi" and not any(
                v.get("name") == MPI_SSH_VOLUME for v in spec.get("volumes") or []
            ):
                spec.setdefault("volumes", []).append(
                    {"name": MPI_SSH_VOLUME, "secret": {"secretName": f"{name}-mpi-ssh"}}
                )
            spec["hostname"] = f"{job_name}-{index}"[:63].rstrip("-")
            spec["subdomain"] = name
            labels = {
                **{k: str(v) for k, v in job_labels.items()},
                **(pod_meta.get("labels") or {}),
                JOBSET_NAME: name,
                REPLICATED_JOB: rj,
                REPLICAS: "1",
                JOB_INDEX: "0",
                GLOBAL_INDEX: str(global_index),
                JOB_NAME: job_name,
                COMPLETION_INDEX: str(index),
            }
            annotations = {
                **{k: str(v) for k, v in job_annotations.items()},
                **(pod_meta.get("annotations") or {}),
                JOBSET_NAME: name,
                REPLICATED_JOB: rj,
                JOB_INDEX: "0",
                COMPLETION_INDEX: str(index),
            }
            pod_name = f"{job_name}-{index}-{_suffix(uid, f'{rj}/{index}')}"
            pod_meta.update(
                name=pod_name,
                namespace=namespace,
                labels=labels,
                annotations=annotations,
                ownerReferences=[_owner(train_job)],
            )
            obj = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}
            out.append(PlannedPod(rj, 0, index, obj))
    return out


def depends_on(job: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A replicated job's ``dependsOn``: (job name, ``Ready`` or ``Complete``) pairs."""
    return [(str(d.get("name")), str(d.get("status"))) for d in job.get("dependsOn") or []]
