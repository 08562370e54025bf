"""List-then-watch, the loop every stand-in controller (kubelet, Trainer, DRA driver) keeps its
view of a collection with, as client-go's reflector does: LIST, report what changed since the
last view, WATCH from the list's resourceVersion, and LIST again when the watch expires (410)
or the connection drops, so a change made while no watch was open is never missed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp

from tools.k8s_standin.kubelet_client import ApiError, Client, WatchExpired

log = logging.getLogger("k8s_standin.follow")
Key = tuple[str, str]
Obj = dict[str, Any]
Handler = Callable[[str, Obj], Awaitable[None]]
RETRY_S = 0.2  # after a failed list or a dropped watch


class Controller:
    """A stand-in controller's API client, there while :meth:`run` serves."""

    _client: Client | None = None

    @property
    def client(self) -> Client:
        assert self._client is not None, "the controller is not running"
        return self._client


def key_of(obj: Mapping[str, Any]) -> Key:
    """(namespace, name): how a stand-in controller keys what it follows."""
    meta = obj["metadata"]
    return str(meta.get("namespace", "")), str(meta["name"])


async def follow(
    client: Client,
    path: str,
    store: dict[Key, Obj],
    handler: Handler,
    listed: asyncio.Event,
    params: Mapping[str, str] | None = None,
) -> None:
    """Keep ``store`` equal to the API's objects at ``path`` (with query ``params``), calling
    ``handler`` for each change (a relist reports deletions and every object as MODIFIED);
    ``listed`` is set after the first list. Runs until cancelled."""
    while True:
        try:
            items, rv = await client.list(path, params)
            fresh = {key_of(o): o for o in items}
            for key in set(store) - set(fresh):
                await handler("DELETED", store.pop(key))
            for key, obj in fresh.items():
                store[key] = obj
                await handler("MODIFIED", obj)
            listed.set()
            while True:
                async for kind, obj in client.watch(path, rv, params):
                    rv = str(obj["metadata"].get("resourceVersion") or rv)
                    if kind == "DELETED":
                        store.pop(key_of(obj), None)
                    else:
                        store[key_of(obj)] = obj
                    await handler(kind, obj)
        except asyncio.CancelledError:
            raise
        except WatchExpired:
            continue
        except (aiohttp.ClientError, ApiError, TimeoutError, ValueError) as e:
            log.debug("following %s: %s; listing again", path, e)
            await asyncio.sleep(RETRY_S)
