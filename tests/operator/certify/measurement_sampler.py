"""A measurement controller alone in a process, for the SIGKILL test: ``python -m
tests.operator.certify.measurement_sampler KUBECONFIG NAMESPACE PLURAL NAME`` reconciles the
measurement every :data:`PAUSE` seconds until it is killed. Its only state is what it wrote to
the measurement's status, so a kill at any instant must lose nothing."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime

from glimmer.backends.kubernetes.client import connect
from glimmer.operator.certify.measurements import MeasurementReconciler

PAUSE = 0.02


def main(argv: list[str]) -> int:
    kubeconfig, namespace, plural, name = argv
    reconciler = MeasurementReconciler(connect(kubeconfig), lambda: datetime.now(UTC), plural)
    print("sampling", flush=True)
    while True:
        reconciler.reconcile(namespace, name)
        time.sleep(PAUSE)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
