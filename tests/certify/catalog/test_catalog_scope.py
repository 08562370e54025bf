"""§3.4's inferred scope: which dependencies are copied per Job, and which shared references
are suffixed with them."""

from __future__ import annotations

from typing import Any

from glimmer.certify.catalog.scope import cross_references, job_scoped, rename_job_scoped


def dep(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


RUNTIME = dep(
    "TrainingRuntime",
    "rt",
    template={
        "resourceClaims": [{"name": "compute-domain", "resourceClaimTemplateName": "cd-channel"}],
        "containers": [{"name": "node"}],
        "schedulerName": "volcano",
    },
)
DOMAIN = dep(
    "ComputeDomain", "cd", numNodes=0, channel={"resourceClaimTemplate": {"name": "cd-channel"}}
)
JOB = {"workload": {"trainJob": {"runtimeRef": {"name": "rt"}}}}


def test_a_compute_domain_sharing_the_runtimes_channel_is_copied_per_job() -> None:
    """Rule (b): the job spec reaches the runtime, the runtime claims a template that is no
    dependency, and the domain names the same template: the domain is the Job's too."""
    assert job_scoped([DOMAIN, RUNTIME], JOB) == ["cd", "rt"]
    assert cross_references([DOMAIN, RUNTIME], ["cd", "rt"]) == ["cd-channel"]


def test_each_jobs_copies_point_at_each_other_and_structural_names_stay() -> None:
    deps, spec = rename_job_scoped([DOMAIN, RUNTIME], JOB, "-j1", None)
    domain, runtime = deps
    assert domain["metadata"]["name"] == "cd-j1"
    assert domain["spec"]["channel"]["resourceClaimTemplate"]["name"] == "cd-channel-j1"
    claim = runtime["spec"]["template"]["resourceClaims"][0]
    assert claim == {"name": "compute-domain", "resourceClaimTemplateName": "cd-channel-j1"}
    assert runtime["spec"]["template"]["containers"] == [{"name": "node"}]
    assert runtime["spec"]["template"]["schedulerName"] == "volcano"
    assert spec["workload"]["trainJob"]["runtimeRef"]["name"] == "rt-j1"


def test_a_shared_cluster_provided_name_promotes_nothing() -> None:
    """Two objects naming one storage class or scheduler share what the cluster provides, not
    an object of the workload's: the claim stays created once for the Workflow."""
    runtime = dep("TrainingRuntime", "rt", storageClassName="fast", schedulerName="volcano")
    claim = dep("PersistentVolumeClaim", "data", storageClassName="fast")
    config = dep("ConfigMap", "cfg", schedulerName="volcano")
    assert job_scoped([runtime, claim, config], JOB) == ["rt"]


def test_a_cluster_scoped_kind_is_never_copied() -> None:
    cluster_domain = dep(
        "ClusterComputeDomain", "ccd", channel={"resourceClaimTemplate": {"name": "cd-channel"}}
    )
    assert job_scoped([cluster_domain, RUNTIME], JOB) == ["rt"]
