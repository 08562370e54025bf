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


class LogCursor(Wire):
    """Where a measurement's read of one pod's log stands (a glimmer extension of §2.6–2.7):
    written in the same status update as the figures of the lines it passed, so a crash never
    separates the two (:mod:`glimmer.certify.measure.log_cursor`)."""

    role: str = Field(min_length=1)  # log | lifecycle | steps (workerStrategy Multi)
    pod_uid: str = Field(alias="podUID")
    restarts: Int32 = Field(0, ge=0)  # the container's restartCount the cursor is in
    time: str | None = None  # kubelet timestamp (RFC 3339, to ns) of the last line consumed
    lines_at_time: Int64 = Field(0, ge=0)  # consumed lines carrying exactly that timestamp


class ReaderSum(Wire):
    """An exact running sum and how many values it holds."""

    sum: FloatString | None = None
    count: Int64 = Field(0, ge=0)


class ReaderCheckpoint(Wire):
    """A checkpoint event at a step (None: its line named none), at epoch seconds ``at``: a
    save begun and not yet done, or the last one completed."""

    step: Int64 | None = None
    at: FloatString


class ReaderStep(Wire):
    """The latest training step read."""

    step: Int64
    at: FloatString
    seconds: FloatString | None = None
    tflops: FloatString | None = None
    warmup: bool = False


class ReaderAttempt(Wire):
    """The current attempt (epoch seconds)."""

    start: FloatString
    last_line: FloatString
    first_step: FloatString | None = None
    last_checkpoint: FloatString | None = None
    stepped: bool = False
    by_restore: bool = False


class GoodputReaderState(Wire):
    """The incremental goodput reader's exact state between samples (a glimmer extension):
    the spec's own fields are the figures as shown (six decimals, whole seconds), and resuming
    from them would let a sampled measurement drift from one read whole in the last digit;
    these keep every float as its exact repr (epoch seconds for times)."""

    attempts: Int32 = Field(0, ge=0)
    first_start: FloatString | None = None
    closed: list[FloatString] | None = None  # Σ t_ch, Σ t_re, Σ t_rm of closed attempts
    save_time: FloatString | None = None
    pending_saves: list[ReaderCheckpoint] | None = None
    warmup_base_step: Int64 | None = None
    last_step: Int64 | None = None
    highest_step: Int64 | None = None
    step_times: ReaderSum | None = None
    tflops: ReaderSum | None = None
    warmup_time: FloatString | None = None
    checkpoint: ReaderCheckpoint | None = None
    last_line: FloatString | None = None
    recent: ReaderStep | None = None
    attempt: ReaderAttempt | None = None
    partial: str | None = None


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
    reader_state: GoodputReaderState | None = None
    log_cursors: list[LogCursor] | None = None
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


class BandwidthSum(Wire):
    """The exact sums behind one ``results`` entry (a glimmer extension): averages are shown
    to six decimals, and folding new rows into those would drift from one whole read."""

    size_bytes: Int64 = Field(ge=0)
    alg_bw: FloatString = Field(alias="algBW")
    bus_bw: FloatString = Field(alias="busBW")
    samples: Int32 = Field(0, ge=0)


class BandwidthMeasurementStatus(Wire):
    """Results by size, and when the measurement started and finished."""

    results: list[BandwidthResult] | None = None
    sums: list[BandwidthSum] | None = None
    log_cursors: list[LogCursor] | None = None
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
