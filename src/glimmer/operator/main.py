"""The operator in the foreground: connect, assemble the handlers, and let kopf run them until
SIGINT or SIGTERM."""

from __future__ import annotations

import logging
import os
import signal
import threading
from typing import Any, cast

import kopf
from lightkube.generic_resource import create_global_resource, create_namespaced_resource

from glimmer.backends.common.clock import HostClock
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.operator.context import OperatorContext, identify, own_identity
from glimmer.operator.options import OperatorOptions
from glimmer.operator.peering import own_priority, peering_object
from glimmer.operator.registry import assemble
from glimmer.operator.runs import PASS_GRACE
from glimmer.operator.settings import operator_settings
from glimmer.operator.sinks import ClusterSinks

log = logging.getLogger("glimmer.operator")
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "kopf.objects")

ClusterKopfPeering = create_global_resource(
    "kopf.dev", "v1", "ClusterKopfPeering", "clusterkopfpeerings"
)
KopfPeering = create_namespaced_resource("kopf.dev", "v1", "KopfPeering", "kopfpeerings")


def ensure_peering(options: OperatorOptions) -> None:
    """Create the peering object if it is missing: kopf only patches it, and a replica whose
    peering object does not exist stays paused forever."""
    from lightkube import ApiError

    client = connect(options.kubeconfig)
    body = peering_object(options.peering, options.namespace)
    kind = KopfPeering if options.namespace is not None else ClusterKopfPeering
    try:
        client.create(kind.from_dict(body))
    except ApiError as e:
        if e.status.code != 409:  # AlreadyExists: another replica made it
            raise


def _context(options: OperatorOptions) -> OperatorContext:
    """The backend over the cluster, delivering to the cluster's own BurnInSinks (read fresh
    per delivery, statuses written back), the envelope's cluster the kube-system UID."""
    identity = own_identity()
    client = connect(options.kubeconfig)
    identify(client, identity)
    sinks = ClusterSinks(client, cluster_from_api=True)
    backend = KubernetesBackend(client, sinks=sinks, clock=HostClock())
    return OperatorContext.over(backend, options.namespace, identity=identity)


def run(options: OperatorOptions) -> None:
    """Run the operator until it is told to stop."""
    if options.kubeconfig is not None:
        # kopf's login reads $KUBECONFIG; the backend is given the path itself.
        os.environ["KUBECONFIG"] = str(options.kubeconfig)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    for noisy in QUIET_LOGGERS:  # a line per request or per event: only their warnings
        logging.getLogger(noisy).setLevel(logging.WARNING)
    context = _context(options)
    if not options.standalone:
        ensure_peering(options)
    log.info(
        "glimmer operator %s starting (%s)",
        context.identity,
        f"namespace {options.namespace}" if options.namespace else "all namespaces",
    )
    registry, drain = assemble(
        context, options.metrics, allow_plain_http_exports=options.allow_plain_http_exports
    )
    stop = threading.Event()
    failed: list[BaseException] = []

    def operate() -> None:
        try:
            kopf.run(
                registry=registry,
                settings=operator_settings(),
                identity=cast(Any, context.identity),  # kopf's Identity is a NewType of str
                standalone=options.standalone,
                priority=own_priority(),
                peering_name=None if options.standalone else options.peering,
                liveness_endpoint=options.liveness,
                clusterwide=options.namespace is None,
                namespaces=[options.namespace] if options.namespace else (),
                stop_flag=stop,
            )
        except BaseException as e:  # raised again in the main thread
            failed.append(e)

    # kopf runs in a thread of its own and this thread takes SIGTERM and SIGINT: a replica told
    # to stop first lets its pass in flight finish and starts no other, and only then stops
    # kopf, whose leaving the peering object is what lets the next leader start. (kopf's own
    # handlers stop the daemons and leave the peering at the same time, so the last pass of
    # the leader going could overlap the first of the one coming.)
    told = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: told.set())
    worker = threading.Thread(target=operate, name="kopf")
    worker.start()
    while worker.is_alive() and not told.wait(0.5):
        pass
    if worker.is_alive():
        log.info("stopping: the pass in flight finishes first, then the lead is given up")
        if not drain(PASS_GRACE):
            log.warning("a pass still runs after %.0f s; stopping anyway", PASS_GRACE)
        stop.set()
        worker.join()
    if failed:
        raise failed[0]
