"""The operator in the foreground: connect, assemble the handlers, and let kopf run them until
SIGINT or SIGTERM."""

from __future__ import annotations

import logging
import os
from typing import Any, cast

import kopf
from lightkube.generic_resource import create_global_resource, create_namespaced_resource

from glimmer.backends.kubernetes.client import connect
from glimmer.operator.context import OperatorContext
from glimmer.operator.options import OperatorOptions
from glimmer.operator.peering import own_priority, peering_object
from glimmer.operator.registry import build_registry
from glimmer.operator.settings import operator_settings

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


def run(options: OperatorOptions) -> None:
    """Run the operator until it is told to stop."""
    if options.kubeconfig is not None:
        # kopf's login reads $KUBECONFIG; the backend is given the path itself.
        os.environ["KUBECONFIG"] = str(options.kubeconfig)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    for noisy in QUIET_LOGGERS:  # a line per request or per event: only their warnings
        logging.getLogger(noisy).setLevel(logging.WARNING)
    context = OperatorContext.connect(options.kubeconfig, options.namespace)
    if not options.standalone:
        ensure_peering(options)
    log.info(
        "glimmer operator %s starting (%s)",
        context.identity,
        f"namespace {options.namespace}" if options.namespace else "all namespaces",
    )
    kopf.run(
        registry=build_registry(context),
        settings=operator_settings(),
        identity=cast(Any, context.identity),  # kopf's Identity is a NewType of str
        standalone=options.standalone,
        priority=own_priority(),
        peering_name=None if options.standalone else options.peering,
        liveness_endpoint=options.liveness,
        clusterwide=options.namespace is None,
        namespaces=[options.namespace] if options.namespace else (),
    )
