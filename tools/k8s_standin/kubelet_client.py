"""The stand-in kubelet's client of the API: plain JSON over HTTP with aiohttp.

aiohttp rather than lightkube: the kubelet reads and writes Pods, Services and Nodes as the
plain dicts the pod shape is built as (podspec.py), so there is no typed model to round-trip
(and none to drop a field the API stand-in should see); a watch is a newline-delimited JSON
stream, which is a few lines here; and aiohttp is already there (kopf's own client).

Every write is retried on ``409 Conflict``: the kubelet's writes carry no resourceVersion
precondition, so a Conflict can only be a refused write without effect (the API stand-in's
``conflict_every`` fault), and a real kubelet retries its status updates too. A 409
``AlreadyExists`` is an answer, not retried. A dropped connection is retried as well: the
status patches are idempotent, and losing one would leave a pod's phase behind its process.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp

MERGE = "application/merge-patch+json"
USER_AGENT = "glimmer-standin-kubelet/1"
_RETRIES = 20


class ApiError(Exception):
    """The API answered an error status."""

    def __init__(self, status: int, body: Mapping[str, Any] | str) -> None:
        self.status = status
        self.reason = body.get("reason", "") if isinstance(body, Mapping) else ""
        message = body.get("message", "") if isinstance(body, Mapping) else body
        super().__init__(f"{status} {self.reason}: {message}")


class WatchExpired(Exception):
    """The watch's resourceVersion is too old (410 Gone): list again."""


class Client:
    def __init__(self, url: str, user_agent: str = USER_AGENT) -> None:
        self.url = url.rstrip("/")
        self.user_agent = user_agent  # what the API's journal says made each request
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Client:
        self._session = aiohttp.ClientSession(
            headers={"User-Agent": self.user_agent, "Accept": "application/json"},
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        assert self._session is not None, "use the client as an async context manager"
        return self._session

    async def _request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        content_type: str = "application/json",
        params: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        data = None if body is None else json.dumps(body)
        headers = {"Content-Type": content_type} if data is not None else {}
        async with self.session.request(
            method,
            self.url + path,
            data=data,
            headers=headers,
            params=params,
            timeout=aiohttp.ClientTimeout(total=30),
        ) as resp:
            text = await resp.text()
            try:
                parsed: Any = json.loads(text) if text else {}
            except ValueError:
                parsed = text
            if resp.status >= 400:
                raise ApiError(resp.status, parsed)
            return parsed if isinstance(parsed, dict) else {}

    async def get(self, path: str, params: Mapping[str, str] | None = None) -> dict[str, Any]:
        return await self._request("GET", path, params=params)

    async def write(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> dict[str, Any]:
        """A write, retried while the API answers Conflict (see the module's docstring) or
        the connection drops before an answer (a busy machine's listen queue)."""
        for attempt in range(_RETRIES):
            last = attempt == _RETRIES - 1
            try:
                return await self._request(method, path, body=body, content_type=content_type)
            except ApiError as e:
                if e.status != 409 or e.reason == "AlreadyExists" or last:
                    raise
            except (aiohttp.ClientConnectionError, TimeoutError):
                if last:
                    raise
            await asyncio.sleep(min(0.02 * (attempt + 1), 0.3))
        raise AssertionError("unreachable")

    async def post_once(self, path: str, body: Any) -> dict[str, Any]:
        """A POST whose Conflict the caller judges (a binding's may be final)."""
        return await self._request("POST", path, body=body)

    async def merge_patch(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return await self.write("PATCH", path, body, MERGE)

    async def list(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> tuple[list[dict[str, Any]], str]:
        """The items and the list's resourceVersion, to watch from."""
        body = await self.get(path, params)
        return list(body.get("items") or []), str(
            (body.get("metadata") or {}).get("resourceVersion", "")
        )

    async def watch(
        self, path: str, resource_version: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """(type, object) events after ``resource_version`` until the server ends the stream."""
        query = {**(params or {}), "watch": "true", "resourceVersion": resource_version}
        async with self.session.get(self.url + path, params=query) as resp:
            if resp.status == 410:
                raise WatchExpired(path)
            if resp.status >= 400:
                raise ApiError(resp.status, await resp.text())
            buffer = b""
            async for chunk in resp.content.iter_any():
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    kind, obj = event.get("type", ""), event.get("object") or {}
                    if kind == "ERROR":
                        if obj.get("code") == 410:
                            raise WatchExpired(path)
                        raise ApiError(int(obj.get("code") or 500), obj)
                    if kind == "BOOKMARK":
                        continue
                    yield kind, obj
