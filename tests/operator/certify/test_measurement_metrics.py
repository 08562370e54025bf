"""The measurements' burnin_* gauges (ADR-013, §6.1, §6.3) on the operator's /metrics endpoint:
scraped over HTTP from the exporter the BurnInRun series live in, valid exposition by
``promtool check metrics`` when it is on PATH, gone once the measurement is deleted."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from glimmer.operator.certify.measurement_metrics import MeasurementSeries
from glimmer.operator.certify.measurements import MeasurementReconciler
from glimmer.operator.exporter import MetricsEndpoint
from glimmer.sinks.prometheus import Exporter, Sample
from tests.operator.certify.conftest import NS, JobAPI, JobClock
from tests.operator.certify.measurement_harness import JOB, measured_job

TS = "2026-12-02T03:00:{:02d}.000000001Z "


def nccl_row(size: int, alg: float, bus: float) -> str:
    return f"{size:>12} {size // 4:>12}  float  sum  -1  25.10  {alg:.2f}  {bus:.2f}  0  24.90  1.0  1.0  0\n"  # noqa: E501


def megatron_step(second: int, step: int) -> str:
    inner = f"[2026-12-02 03:00:{second:02d}.000000]"
    return (
        f"{TS.format(second)} {inner} iteration {step:>8}/      50 | consumed samples: 1 | "
        "elapsed time per iteration (ms): 1500.0 | throughput per GPU (TFLOP/s/GPU): 400.0 |\n"
    )


@pytest.fixture
def scraped(job_api: JobAPI) -> Iterator[tuple[JobAPI, Exporter, str]]:
    exporter = Exporter()
    endpoint = MetricsEndpoint(exporter, "127.0.0.1", 0)
    port = endpoint.start()
    try:
        yield job_api, exporter, f"http://127.0.0.1:{port}/metrics"
    finally:
        endpoint.stop()


def scrape(url: str) -> str:
    got = httpx.get(url, timeout=10)
    assert got.status_code == 200
    return got.text


def series(text: str, family: str) -> dict[str, float]:
    """``family``'s samples of a scrape: label text -> value."""
    out = {}
    for m in re.finditer(rf"^{family}\{{(?P<labels>[^}}]*)\}} (?P<v>\S+)$", text, re.M):
        out[m.group("labels")] = float(m.group("v"))
    return out


def promtool_check(text: str) -> None:
    tool = shutil.which("promtool")
    if tool is None:
        return  # the exposition itself is asserted above; .ci installs promtool
    done = subprocess.run(
        [tool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_bandwidth_gauges_per_size_are_scraped_and_go_with_the_measurement(
    scraped: tuple[JobAPI, Exporter, str],
) -> None:
    api, exporter, url = scraped
    clock = JobClock()
    asked = {"bandwidthMeasurement": {"logProfileRef": "nccl-bandwidth", "testType": "all_reduce"}}
    log = TS.format(1) + nccl_row(1048576, 100.0, 180.0) + TS.format(2) + nccl_row(8, 0.5, 0.9)
    measured_job(api, clock, asked, [("l-0", log, True)])
    bms = MeasurementReconciler(
        api.client, clock.now, "bandwidthmeasurements", MeasurementSeries(exporter)
    )
    bms.reconcile(NS, f"{JOB}-bandwidth")
    text = scrape(url)
    base = f'namespace="{NS}",job="{JOB}",workflow="wf"'
    assert series(text, "burnin_nccl_busbw_gbps") == {
        f'{base},message_size_bytes="1048576",nccl_test="all_reduce"': 180.0,
        f'{base},message_size_bytes="8",nccl_test="all_reduce"': 0.9,
    }
    assert (
        series(text, "burnin_nccl_algbw_gbps")[
            f'{base},message_size_bytes="1048576",nccl_test="all_reduce"'
        ]
        == 100.0
    )
    assert "# TYPE burnin_nccl_busbw_gbps gauge" in text
    assert "burnin_exporter_runs_tracked 0" in text  # the BurnInRun exporter, not a second one
    promtool_check(text)

    api.http.delete(api.certify("bandwidthmeasurements", f"{JOB}-bandwidth"))
    assert bms.reconcile(NS, f"{JOB}-bandwidth") is None
    assert "burnin_nccl" not in scrape(url)


def test_goodput_gauges_are_scraped_and_forgotten_on_delete(
    scraped: tuple[JobAPI, Exporter, str],
) -> None:
    api, exporter, url = scraped
    clock = JobClock()
    asked = {"goodputMeasurement": {"logProfileRef": "megatron-training", "sampleInterval": "10s"}}
    start = f"{TS.format(0)} [2026-12-02 03:00:00.000000] training ...\n"
    log = start + "".join(megatron_step(s, s) for s in range(1, 6))
    measured_job(api, clock, asked, [("w-0", log, False)])
    series_ = MeasurementSeries(exporter)
    gms = MeasurementReconciler(api.client, clock.now, "goodputmeasurements", series_)
    gms.reconcile(NS, f"{JOB}-goodput")
    text = scrape(url)
    labels = f'namespace="{NS}",job="{JOB}",workflow="wf"'
    assert series(text, "burnin_goodput_current_step") == {labels: 5.0}
    assert series(text, "burnin_goodput_avg_step_time_seconds") == {labels: 1.5}
    assert series(text, "burnin_goodput_avg_tflops_per_gpu") == {labels: 400.0}
    assert series(text, "burnin_goodput_ratio") == {labels: 1.0}
    promtool_check(text)

    series_.forget("goodputmeasurements", NS, f"{JOB}-goodput")  # the DELETED event's path
    assert "burnin_goodput" not in scrape(url)


def test_the_exporter_holds_only_registered_finite_gauges_and_replaces_them_whole() -> None:
    exporter = Exporter()
    labels = (("namespace", NS), ("job", JOB), ("workflow", "wf"))
    exporter.hold("gm", [Sample("burnin_goodput_ratio", labels, 0.5),
                         Sample("burnin_goodput_current_step", labels, math.nan),
                         Sample("not_registered", labels, 1.0)])  # fmt: skip
    text = exporter.exposition()
    assert series(text, "burnin_goodput_ratio") == {
        f'namespace="{NS}",job="{JOB}",workflow="wf"': 0.5
    }
    assert "burnin_goodput_current_step" not in text and "not_registered" not in text
    exporter.hold("gm", [])
    assert "burnin_goodput_ratio" not in exporter.exposition()
    assert exporter.forget("gm") and not exporter.forget("gm")
