"""GoodputMeasurement (``gpm``) and BandwidthMeasurement (``bwm``): what a Job's logs measured
(specs/certify.md §2.6, §2.7), one of each per Job that asks for it.

Every float is stored as a decimal string (``"0.9731"``), as the seed does: Kubernetes objects
hold no floats portably, and a string keeps the value exactly as the parser printed it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field

from glimmer.api.base import Int32, Int64, Wire
from glimmer.api.certify.meta import CertifyResource
from glimmer.api.certify.options import DURATION_PATTERN
from glimmer.api.certify.types import TypedLocalObjectReference
from glimmer.api.k8s import Condition

FLOAT_PATTERN = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"


def _decimal(value: Any) -> Any:
    # A writer holding a float passes it as is; it is kept as its shortest exact repr.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(float(value))
    return value


# A float as Kubernetes objects carry it: a decimal string.
FloatString = Annotated[str, BeforeValidator(_decimal), Field(pattern=FLOAT_PATTERN)]


def float_of(value: str | None) -> float | None:
    """A stored decimal string read back as a float (None stays None)."""
    return None if value is None else float(value)


class MeasurementSpec(Wire):
    """Which Job's logs, read with which LogProfile, how often."""

    job_ref: TypedLocalObjectReference
    log_profile_ref: str = Field(min_length=1)
    sample_interval: str = Field("60s", pattern=DURATION_PATTERN)


class PendingInterruption(Wire):
    """An interruption seen but not yet folded into goodput (persisted across restarts)."""

    t_checkpoint: datetime | None = None
    t_interrupt: datetime | None = None
    checkpoint_step: Int64 | None = None
    last_step: Int64 | None = None
    t_ch: FloatString | None = None
    reason: str | None = None


class GoodputMeasurementStatus(Wire):
    """The goodput ratio and the times it is made of (§6.3), with the parser's running state."""

    result: FloatString | None = None
    current_step: Int64 | None = None
    highest_step: Int64 | None = None
    training_time_sec: FloatString | None = None
    lost_work_time_sec: FloatString | None = None
    reschedule_time_sec: FloatString | None = None
    resume_time_sec: FloatString | None = None
    checkpoint_save_time_sec: FloatString | None = None
    interruption_count: Int32 | None = None
    last_checkpoint_step: Int64 | None = None
    last_checkpoint_time: datetime | None = None
    start_time: datetime | None = None
    completion_time: datetime | None = None
    last_step_timestamp: datetime | None = None
    avg_step_time_sec: FloatString | None = None
    log_interval: Int64 | None = None
    warmup_base_step: Int64 | None = None
    warmup_time_sec: FloatString | None = None
    non_warmup_time_sec: FloatString | None = None
    last_non_warmup_step: Int64 | None = None
    prior_warmup_time_sec: FloatString | None = None
    prior_non_warmup_time_sec: FloatString | None = None
    avg_tflops_per_gpu: FloatString | None = Field(None, alias="avgTFLOPSPerGPU")
    application_start_time: datetime | None = None
    application_stop_time: datetime | None = None
    pending_interruption: PendingInterruption | None = None
    conditions: list[Condition] | None = None


class GoodputMeasurement(CertifyResource):
    """The goodput of one training Job, read from its logs."""

    KIND: ClassVar[str] = "GoodputMeasurement"
    SHORT_NAME: ClassVar[str] = "gpm"
    PLURAL: ClassVar[str] = "goodputmeasurements"

    spec: MeasurementSpec
    status: GoodputMeasurementStatus | None = None


class BandwidthMeasurementSpec(MeasurementSpec):
    """A measurement spec and the collective measured (the ``nccl_test`` metric label)."""

    test_type: str | None = None


class BandwidthResult(Wire):
    """The bandwidth at one message size, in GB/s."""

    size_bytes: Int64 = Field(ge=0)
    alg_bw: FloatString = Field(alias="algBW")
    bus_bw: FloatString = Field(alias="busBW")
    samples: Int32 = Field(0, ge=0)


class BandwidthMeasurementStatus(Wire):
    """Results by size, and when the measurement started and finished."""

    results: list[BandwidthResult] | None = None
    start_time: datetime | None = None
    completion_time: datetime | None = None
    conditions: list[Condition] | None = None


class BandwidthMeasurement(CertifyResource):
    """The NCCL bandwidth of one communication Job, read from its logs."""

    KIND: ClassVar[str] = "BandwidthMeasurement"
    SHORT_NAME: ClassVar[str] = "bwm"
    PLURAL: ClassVar[str] = "bandwidthmeasurements"

    spec: BandwidthMeasurementSpec
    status: BandwidthMeasurementStatus | None = None
