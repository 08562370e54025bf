"""Watch streams, as kopf, lightkube and ``kubectl get -w`` read them.

One JSON event a line on a chunked ``application/json`` response. The events sent first and
the subscription for the rest are taken in one synchronous step (no write can fall between);
from a ``resourceVersion`` the stream replays what was missed (410 Expired, as an ERROR event,
when the history no longer reaches); with a selector, an object entering it is ADDED and one
leaving it DELETED; ``sendInitialEvents`` ends the initial ADDED events with a bookmark;
``timeoutSeconds`` ends the stream; Table output when the client asks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import aiohttp.web

from tools.k8s_standin import errors, tables
from tools.k8s_standin.emulator import Cluster
from tools.k8s_standin.resources import ResourceType
from tools.k8s_standin.selectors import Selector
from tools.k8s_standin.store import Event, Obj, meta

JSON = "application/json"


def _flag(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "yes")


async def stream(
    request: aiohttp.web.BaseRequest,
    cluster: Cluster,
    rtype: ResourceType,
    namespace: str | None,
    selector: Selector,
) -> aiohttp.web.StreamResponse:
    """The watch stream of ``rtype`` in ``namespace`` (None: all) under ``selector``."""
    as_table = tables.wants_table(request.headers.get("Accept", ""))
    include = request.query.get("includeObject", "Metadata")
    response = aiohttp.web.StreamResponse(status=200, headers={"Content-Type": JSON})
    response.enable_chunked_encoding()
    # A streaming list (kopf's optional mode): every object as ADDED, then a bookmark.
    initial = _flag(request.query.get("sendInitialEvents"))
    since = None if initial else request.query.get("resourceVersion")
    try:
        backlog, sub = cluster.watch(rtype, namespace, selector, since)
        snapshot_rv = str(cluster.store.rv)
    except errors.APIError as exc:
        if exc.code != 410:
            raise
        # As a real API server: a 200 stream carrying one ERROR event, then the end.
        await response.prepare(request)
        await response.write(json.dumps({"type": "ERROR", "object": exc.status()}).encode() + b"\n")
        await response.write_eof()
        return response
    await response.prepare(request)
    first = [True]

    def render(kind: str, obj: Obj) -> bytes:
        if as_table:
            obj = tables.table(
                rtype, [obj], meta(obj)["resourceVersion"], include, with_columns=first[0]
            )
            first[0] = False
        return json.dumps({"type": kind, "object": obj}, separators=(",", ":")).encode() + b"\n"

    timeout = request.query.get("timeoutSeconds")
    try:
        async with asyncio.timeout(float(timeout) if timeout else None):
            for event in backlog:
                for kind, obj in _visible(event, namespace, selector):
                    await response.write(render(kind, obj))
            if initial:
                await response.write(_bookmark(rtype, snapshot_rv))
            while True:
                got = await sub.queue.get()
                if got is None:
                    break
                for kind, obj in _visible(got, namespace, selector):
                    await response.write(render(kind, obj))
    except (TimeoutError, ConnectionResetError):
        pass
    finally:
        cluster.store.unsubscribe(rtype.key, sub)
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response


def _bookmark(rtype: ResourceType, rv: str) -> bytes:
    """The BOOKMARK that ends a streaming list's initial events."""
    obj = {
        "kind": rtype.kind,
        "apiVersion": rtype.api_version,
        "metadata": {"resourceVersion": rv, "annotations": {"k8s.io/initial-events-end": "true"}},
    }
    return json.dumps({"type": "BOOKMARK", "object": obj}).encode() + b"\n"


def _visible(event: Event, namespace: str | None, selector: Selector) -> list[tuple[str, Obj]]:
    """What a watcher with this namespace and selector sees of ``event``: an object entering
    the selection is ADDED, one leaving it is DELETED, as a real API server reports it."""
    if namespace is not None and meta(event.obj).get("namespace") != namespace:
        return []
    if selector.empty:
        return [(event.type, event.obj)]
    now_in = selector.matches(event.obj)
    was_in = event.prev is not None and selector.matches(event.prev)
    if event.type == "ADDED":
        return [("ADDED", event.obj)] if now_in else []
    if event.type == "DELETED":
        return [("DELETED", event.obj)] if now_in or was_in else []
    if now_in and was_in:
        return [("MODIFIED", event.obj)]
    if now_in:
        return [("ADDED", event.obj)]
    if was_in:
        return [("DELETED", event.obj)]
    return []
