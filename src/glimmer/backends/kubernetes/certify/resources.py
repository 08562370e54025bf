"""The kinds certification reads and writes on a cluster, as lightkube generic resources (plain
JSON, a dict with the API path attached).

The ``certify.glimmer.ai`` kinds (specs/certify.md §2) and Kubeflow Trainer's
(``trainer.kubeflow.org/v1alpha1``) are named here once, by group, version, kind and plural,
and not built from the pydantic models: the controllers read and write whole objects whose
fields they own (status, outcome) and must keep every field they do not know as the cluster
stored it, which a generic resource does and a strict model would not. lightkube keeps one
class per (group/version, kind), so another module asking for the same kind gets these.
"""

from __future__ import annotations

from typing import Final

from lightkube.generic_resource import (
    GenericGlobalResource,
    GenericNamespacedResource,
    create_global_resource,
    create_namespaced_resource,
)

from glimmer.api.certify.labels import CERTIFY_GROUP

VERSION: Final = "v1alpha1"
CERTIFY_API_VERSION: Final = f"{CERTIFY_GROUP}/{VERSION}"
TRAINER_GROUP: Final = "trainer.kubeflow.org"
TRAINER_API_VERSION: Final = f"{TRAINER_GROUP}/{VERSION}"


def _certify(kind: str, plural: str) -> type[GenericNamespacedResource]:
    return create_namespaced_resource(CERTIFY_GROUP, VERSION, kind, plural)


CERTIFICATIONS = _certify("Certification", "certifications")
WORKFLOWS = _certify("Workflow", "workflows")
JOBS = _certify("Job", "jobs")
GOODPUT_MEASUREMENTS = _certify("GoodputMeasurement", "goodputmeasurements")
BANDWIDTH_MEASUREMENTS = _certify("BandwidthMeasurement", "bandwidthmeasurements")
WORKLOAD_RUNS = _certify("WorkloadRun", "workloadruns")
# LogProfile is cluster-scoped (§2.8): one recipe serves every namespace's measurements.
LOG_PROFILES: type[GenericGlobalResource] = create_global_resource(
    CERTIFY_GROUP, VERSION, "LogProfile", "logprofiles"
)

TRAIN_JOBS = create_namespaced_resource(TRAINER_GROUP, VERSION, "TrainJob", "trainjobs")
TRAINING_RUNTIMES = create_namespaced_resource(
    TRAINER_GROUP, VERSION, "TrainingRuntime", "trainingruntimes"
)
CLUSTER_TRAINING_RUNTIMES: type[GenericGlobalResource] = create_global_resource(
    TRAINER_GROUP, VERSION, "ClusterTrainingRuntime", "clustertrainingruntimes"
)

# ConfigMaps (node results, category and report documents) as raw JSON, the way the burn-in
# substrate reads Pods and Nodes (see glimmer.backends.kubernetes.resources for why raw).
