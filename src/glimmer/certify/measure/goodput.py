"""Goodput from training logs (specs/certify.md §6.2–6.3).

A LogProfile names regexes for the events of a training run — steps, checkpoint save and done,
application start, checkpoint restore and loaded — with units for durations. This module is
the one place callers import from; the pieces live beside it:

* :mod:`~glimmer.certify.measure.goodput_formula`: :func:`goodput` (§6.3) and :class:`Goodput`,
  the GoodputMeasurement figures;
* :mod:`~glimmer.certify.measure.goodput_profile`: :class:`TrainingProfile` (the goodput half of
  a LogProfile, §2.8), the built-in :data:`MEGATRON` recipe of §6.2, :func:`parse_time`;
* :mod:`~glimmer.certify.measure.goodput_reader`: :class:`TrainingLogReader`, the incremental
  parser a controller feeds log chunks, and :func:`parse_training` for a whole log;
* :mod:`~glimmer.certify.measure.goodput_workers`: multi-worker reads (``workerStrategy``),
  lifecycle events from one pod and training steps from another, merged in time order.
"""

from __future__ import annotations

from glimmer.certify.measure.goodput_formula import Goodput, goodput
from glimmer.certify.measure.goodput_profile import (
    MEGATRON,
    EventPattern,
    TrainingProfile,
    parse_time,
    to_seconds,
    training_profile,
)
from glimmer.certify.measure.goodput_reader import (
    DEFAULT_MAX_STEPS,
    Progress,
    Step,
    TrainingLogReader,
    parse_training,
)
from glimmer.certify.measure.goodput_workers import (
    LIFECYCLE,
    STEPS,
    WorkerLogReader,
    parse_workers,
    pick_workers,
)

__all__ = [
    "DEFAULT_MAX_STEPS",
    "LIFECYCLE",
    "MEGATRON",
    "STEPS",
    "EventPattern",
    "Goodput",
    "Progress",
    "Step",
    "TrainingLogReader",
    "TrainingProfile",
    "WorkerLogReader",
    "goodput",
    "parse_time",
    "parse_training",
    "parse_workers",
    "pick_workers",
    "to_seconds",
    "training_profile",
]
