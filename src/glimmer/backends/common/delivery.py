"""Delivery over ``sinks/``, one component every substrate uses.

The engine hands a :class:`~glimmer.engine.backend.Delivery`; this turns it into the
:class:`~glimmer.sinks.envelope.Transition` the sinks take (the sinks see the run, never a
Delivery), records it, and says whether every sink took it. A substrate owns one and answers
the protocol's ``describes_runs`` / ``deliver`` from it, so no substrate writes its own.
"""

from __future__ import annotations

import dataclasses

from glimmer.engine.backend import Delivery
from glimmer.sinks.envelope import Transition
from glimmer.sinks.sinkset import SinkSet


class SinkDelivery:
    """Deliveries to ``sinks`` (None: recorded only), each recorded in ``recorded``."""

    def __init__(self, sinks: SinkSet | None = None) -> None:
        self.sinks = sinks
        self.recorded: list[Delivery] = []
        self.ok = True  # False makes every delivery report a failed sink (fault injection)

    @property
    def describes_runs(self) -> bool:
        return self.sinks is not None

    def deliver(self, delivery: Delivery) -> bool:
        """Record the delivery and hand it to the sinks; False when a sink did not take it."""
        # Recorded without its view: each view holds the run's result list as it was, so
        # keeping them all would grow with the square of the run (gigabytes at 10,000 nodes).
        self.recorded.append(dataclasses.replace(delivery, view=None))
        delivered = True
        if self.sinks is not None and delivery.view is not None:
            delivered = self.sinks.deliver(
                Transition(
                    reason=delivery.reason,
                    key=delivery.key,
                    run=delivery.view,
                    baseline=delivery.baseline,
                    sinks=delivery.sinks,
                    sequence=delivery.sequence,
                    at=delivery.at,
                    result=delivery.result,
                )
            )
        return self.ok and delivered

    def forget_run(self, run_uid: str) -> None:
        """A deleted run's state in the sinks goes with it (its Prometheus series)."""
        if self.sinks is not None and run_uid:
            self.sinks.forget_run(run_uid)
