"""The measurements' Prometheus gauges (ADR-013, specs/certify.md §6.1, §6.3), held by the
operator's one exporter (:class:`glimmer.sinks.prometheus.Exporter`, served on ``/metrics`` by
:mod:`glimmer.operator.exporter`) beside the BurnInRun series.

A measurement's gauges are replaced whole at every sample from its status, and dropped when it
is deleted (its Job's deletion collects it): ``burnin_nccl_algbw_gbps`` and
``burnin_nccl_busbw_gbps`` per message size (labels ``message_size_bytes``, ``nccl_test`` =
``spec.testType``), ``burnin_goodput_ratio``, ``burnin_goodput_current_step``,
``burnin_goodput_avg_step_time_seconds``, ``burnin_goodput_avg_tflops_per_gpu``; every series
labelled with the measurement's ``namespace``, ``job`` and ``workflow``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glimmer.certify.platform.vocab import WORKFLOW_LABEL
from glimmer.sinks.prometheus import (
    GOODPUT_AVG_STEP_TIME,
    GOODPUT_AVG_TFLOPS,
    GOODPUT_CURRENT_STEP,
    GOODPUT_RATIO,
    NCCL_ALGBW,
    NCCL_BUSBW,
    Exporter,
    Labels,
    Sample,
)

GOODPUT_GAUGES = (  # family, status field
    (GOODPUT_RATIO, "result"),
    (GOODPUT_CURRENT_STEP, "currentStep"),
    (GOODPUT_AVG_STEP_TIME, "avgStepTimeSec"),
    (GOODPUT_AVG_TFLOPS, "avgTFLOPSPerGPU"),
)


def _key(plural: str, namespace: str, name: str) -> str:
    return f"{plural}/{namespace}/{name}"


def _float(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def series_of(plural: str, m: Mapping[str, Any], status: Mapping[str, Any]) -> list[Sample]:
    """The gauges of measurement ``m`` (of kind ``plural``) with ``status``."""
    meta = m.get("metadata") or {}
    spec = m.get("spec") or {}
    base: Labels = (
        ("namespace", str(meta.get("namespace") or "default")),
        ("job", str((spec.get("jobRef") or {}).get("name") or "")),
        ("workflow", str((meta.get("labels") or {}).get(WORKFLOW_LABEL) or "")),
    )
    out: list[Sample] = []
    if plural == "bandwidthmeasurements":
        test = str(spec.get("testType") or "")
        for r in status.get("results") or ():
            labels = (*base, ("message_size_bytes", str(r.get("sizeBytes"))), ("nccl_test", test))
            for family, field in ((NCCL_ALGBW, "algBW"), (NCCL_BUSBW, "busBW")):
                value = _float(r.get(field))
                if value is not None:
                    out.append(Sample(family, labels, value))
        return out
    for family, field in GOODPUT_GAUGES:
        value = _float(status.get(field))
        if value is not None:
            out.append(Sample(family, base, value))
    return out


class MeasurementSeries:
    """The measurements' gauges on ``exporter`` (None: nowhere; the operator has no
    Prometheus sink)."""

    def __init__(self, exporter: Exporter | None) -> None:
        self.exporter = exporter

    def publish(self, plural: str, m: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        if self.exporter is None:
            return
        meta = m.get("metadata") or {}
        key = _key(plural, str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        self.exporter.hold(key, series_of(plural, m, status))

    def forget(self, plural: str, namespace: str, name: str) -> None:
        if self.exporter is not None:
            self.exporter.forget(_key(plural, namespace, name))
