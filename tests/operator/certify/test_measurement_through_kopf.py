"""The measurement controllers through kopf (jobs_register.register): the Job's daemon creates
its BandwidthMeasurement, the measurement's daemon samples the launcher log into the operator's
exporter (the one its BurnInRun sinks deliver to), and the measurement's DELETED event drops its
gauges."""

from __future__ import annotations

import kopf
from kopf.testing import KopfRunner

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.operator.certify.jobs_register import register
from glimmer.operator.context import OperatorContext
from glimmer.operator.exporter import exporter_of
from glimmer.sinks.prometheus import Exporter
from glimmer.sinks.sinkset import SinkSet
from tests.operator.certify.conftest import NS, JobAPI, eventually
from tests.operator.certify.job_harness import add_node, add_pod, job_body
from tests.operator.certify.measurement_harness import JOB, NODE, WORKLOAD

ROW = "2026-12-02T03:00:01.5Z      1048576   262144  float  sum  -1  25.1  100.00  180.00  0  24.9  1.0  1.0  0\n"  # noqa: E501


def test_kopf_samples_a_measurement_into_the_exporter_and_its_deletion_drops_the_gauges(
    job_api: JobAPI,
) -> None:
    exporter = Exporter()
    backend = KubernetesBackend(job_api.client, sinks=SinkSet(exporter=exporter))
    context = OperatorContext.over(backend, NS, identity="test")
    assert exporter_of(context) is exporter
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry)(kopf.login_with_kubeconfig)
    register(registry, context)
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    add_node(job_api, NODE)
    asked = {"bandwidthMeasurement": {"logProfileRef": "nccl-bandwidth", "sampleInterval": "1s",
                                      "testType": "all_reduce"}}  # fmt: skip
    with KopfRunner(["run", "--standalone", "--namespace", NS], registry=registry,
                    settings=settings, timeout=60) as kopf_run:  # fmt: skip
        job_api.post(job_api.certify("jobs"), job_body(JOB, [NODE], **asked))
        eventually(lambda: job_api.read(job_api.trainer("trainjobs", WORKLOAD)), "the TrainJob")
        add_pod(job_api, "l-0", NODE, WORKLOAD, launcher=True, log=ROW)
        eventually(lambda: "burnin_nccl_busbw_gbps{" in exporter.exposition(), "the gauges")
        assert 'message_size_bytes="1048576",nccl_test="all_reduce"} 180' in exporter.exposition()
        deleted = job_api.http.delete(job_api.certify("bandwidthmeasurements", f"{JOB}-bandwidth"))
        assert deleted.status_code == 200, deleted.text
        eventually(lambda: "burnin_nccl" not in exporter.exposition(), "the gauges dropped")
    assert kopf_run.exit_code == 0, kopf_run.output
