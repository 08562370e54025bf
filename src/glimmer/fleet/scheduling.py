"""Schedulers of record, projects and workloads checked against the built nodes (§1.10).

The result is static: which GPUs each scheduler, project, workload and worker *names*. Who holds
what at a given minute is the simulator's allocation plan, built on top of this.
"""

from __future__ import annotations

from glimmer.api.fleet import Pool
from glimmer.api.fleet_parts import is_name
from glimmer.api.fleet_sched import Workload
from glimmer.fleet import identity as ids
from glimmer.fleet.context import BuildContext


def check_schedulers(
    ctx: BuildContext,
    pools: dict[str, Pool],
    gpu_of: dict[tuple[str, int, int], int],
) -> dict[str, tuple[int, ...]]:
    """Validate every scheduler; map scheduler/project/workload/worker keys to GPU indices."""
    out: dict[str, set[int]] = {}
    owner: dict[str, str] = {}
    names: set[str] = set()
    pods: set[tuple[str, str, str]] = set()  # (cluster, namespace, pod name)
    spec = ctx.fleet.spec
    for si, sched in sorted(enumerate(spec.schedulers), key=lambda p: p[1].name):
        path = f"spec.schedulers[{si}]"
        if sched.name in names:
            raise ctx.error(f"{path}.name", "invalid/duplicate scheduler name or kind")
        names.add(sched.name)
        for k, pool in enumerate(sched.pools):
            if pool not in pools:
                raise ctx.error(f"{path}.pools[{k}]", f"unknown scheduler pool {pool!r}")
            if pool in owner:
                raise ctx.error(
                    f"{path}.pools[{k}]",
                    f"pool has multiple schedulers of record ({pool}: {owner[pool]}, {sched.name})",
                )
            owner[pool] = sched.name
        skey = ids.scheduler_key(sched.name)
        out.setdefault(skey, set())
        projects: set[str] = set()
        for pi, project in enumerate(sched.projects):
            if project.name in projects:
                raise ctx.error(f"{path}.projects[{pi}]", "duplicate project key")
            projects.add(project.name)
            out.setdefault(ids.project_key(sched.name, project.name), set())
        workloads: set[str] = set()
        for wi, wl in enumerate(sched.workloads):
            wpath = f"{path}.workloads[{wi}]"
            if wl.name in workloads:
                raise ctx.error(f"{wpath}.name", "invalid/duplicate workload key/role")
            workloads.add(wl.name)
            if wl.project not in projects:
                raise ctx.error(f"{wpath}.project", f"unknown project {wl.project!r}")
            held = _workers(ctx, wpath, sched.name, sched.pools, wl, pools, gpu_of, out, pods)
            out[ids.workload_key(sched.name, wl.name)] = held
            out[ids.project_key(sched.name, wl.project)].update(held)
            out[skey].update(held)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _workers(
    ctx: BuildContext,
    wpath: str,
    sched: str,
    sched_pools: list[str],
    wl: Workload,
    pools: dict[str, Pool],
    gpu_of: dict[tuple[str, int, int], int],
    out: dict[str, set[int]],
    pods: set[tuple[str, str, str]],
) -> set[int]:
    held: set[int] = set()
    names: set[str] = set()
    kube: set[bool] = set()
    for ki, w in sorted(enumerate(wl.workers), key=lambda p: p[1].name):
        kpath = f"{wpath}.workers[{ki}]"
        if w.name in names or w.pool not in sched_pools:
            raise ctx.error(kpath, "duplicate worker key or worker outside scheduler pools")
        names.add(w.name)
        pool = pools[w.pool]
        if (
            not 0 <= w.node_ordinal < pool.node_count
            or not w.gpu_slots
            or any(not 0 <= s < pool.gpus_per_node for s in w.gpu_slots)
        ):
            raise ctx.error(kpath, "worker requests nonexistent GPU")
        gpus = {gpu_of[(w.pool, w.node_ordinal, s)] for s in w.gpu_slots}
        if len(gpus) != len(w.gpu_slots) or held & gpus:
            raise ctx.error(f"{kpath}.gpuSlots", "conflicting within-job GPU lists")
        held |= gpus
        kube.add(bool(pool.kubernetes_cluster))
        out[ids.worker_key(sched, wl.name, w.name)] = gpus
    if len(kube) > 1:
        raise ctx.error(f"{wpath}.workers", "mixed Kubernetes/standalone workers")
    if True in kube and not (is_name(wl.namespace) and is_name(wl.container)):
        raise ctx.error(wpath, "Kubernetes workers require namespace/container")
    if True in kube:
        for ki, w in enumerate(wl.workers):
            cluster = pools[w.pool].kubernetes_cluster
            pod = ids.pod_name(ctx.seed, cluster, sched, wl.name, w.name)
            if len(pod) > 63 or (cluster, wl.namespace, pod) in pods:
                raise ctx.error(
                    f"{wpath}.workers[{ki}]", "generated pod name exceeds limit or duplicates"
                )
            pods.add((cluster, wl.namespace, pod))
    if False in kube and (wl.namespace or wl.container):
        raise ctx.error(wpath, "standalone workers omit namespace/container")
    return held
