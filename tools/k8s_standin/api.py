"""The Kubernetes API stand-in over HTTP: ``StandInAPI``, ``running_api`` and ``serve``.

``StandInAPI`` is a ``kmock.KubernetesEmulator`` subclass, so it can be served by
``kmock.Server`` like any kmock handler, but it answers every request itself: kmock 0.8's
emulator scans all objects of all types on each request, keeps every version of every object,
and lacks what kopf and kubectl depend on (see the trial note's gap list). The semantics live
in ``emulator.Cluster`` (indexed, O(n) LIST and WATCH); this module is HTTP only — paths,
verbs, query parameters, content types, the journal and the injected conflicts, with watches,
Table output and pod logs in their own modules. Every JSON answer, errors and watch streams
included, is ``application/json`` exactly.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp.web
import attrs
import kmock
import yaml

from tools.k8s_standin import discovery, errors, logs, openapi, patching, tables, watches
from tools.k8s_standin.emulator import Cluster
from tools.k8s_standin.faults import ConflictEvery
from tools.k8s_standin.journal import Journal
from tools.k8s_standin.resources import ResourceType
from tools.k8s_standin.selectors import Selector, SelectorError, parse
from tools.k8s_standin.store import meta

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
GLIMMER_CRDS = REPO / "deploy" / "crds"
JSON = "application/json"
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_BODY_BYTES = 3 * 1024 * 1024  # the API server's limit on a request body


@dataclass(frozen=True)
class Target:
    """What a request path names."""

    rtype: ResourceType
    namespace: str | None
    name: str | None
    sub: str | None


def _json(body: Any, status: int = 200) -> aiohttp.web.Response:
    return aiohttp.web.Response(
        body=json.dumps(body, separators=(",", ":")).encode(),
        status=status,
        headers={"Content-Type": JSON},
    )


def _integer(query: Any, name: str) -> int:
    try:
        return int(query[name])
    except ValueError:
        raise errors.bad_request(f"invalid {name}: {query[name]!r}") from None


def _flag(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "yes")


@attrs.define(kw_only=True, eq=False)
class StandInAPI(kmock.KubernetesEmulator):
    """A Kubernetes API server in memory. ``crd_dirs`` are preloaded at start (the glimmer CRDs
    by default); ``log_dir`` holds the pod logs (``<log_dir>/<ns>/<pod>.log``) its kubelet
    writes; ``conflict_every`` injects 409s; ``journal`` records every request as JSON lines."""

    log_dir: Path | None = None
    conflict_every: int | None = None
    journal: Path | None = None
    crd_dirs: tuple[Path, ...] = (GLIMMER_CRDS,)
    graceful_pod_deletion: bool = True
    pod_binding: bool = False

    cluster: Cluster = attrs.field(init=False)
    _faults: ConflictEvery = attrs.field(init=False)
    _journal: Journal = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self.cluster = Cluster(
            crd_dirs=self.crd_dirs,
            graceful_pod_deletion=self.graceful_pod_deletion,
            pod_binding=self.pod_binding,
        )
        self._faults = ConflictEvery(self.conflict_every)
        self._journal = Journal(self.journal)

    def preload_crds(self, folder: Path) -> list[str]:
        """Register the CRDs of ``folder`` as if applied (for a test that needs other CRDs)."""
        return self.cluster.preload_crds(folder)

    def close(self) -> None:
        """End every watch stream and close the journal (the server is going away)."""
        self.cluster.store.close()
        self._journal.close()

    # --- the entry point aiohttp calls -----------------------------------------------------

    async def __call__(self, request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        if (request.content_length or 0) > MAX_BODY_BYTES:
            too_big = errors.APIError(413, "RequestEntityTooLarge", "the request is too large")
            return _json(too_big.status(), 413)
        body = await request.read()
        entry: dict[str, Any] = {
            "method": request.method,
            "path": request.path,
            "query": dict(request.query),
            "user_agent": request.headers.get("User-Agent", ""),
        }
        try:
            response = await self._dispatch(request, body, entry)
        except errors.APIError as exc:
            response = _json(exc.status(), exc.code)
        except Exception as exc:  # a bug here must reach the client as a Status, and the log
            log.exception("stand-in failed on %s %s", request.method, request.path)
            response = _json(errors.APIError(500, "InternalError", repr(exc)).status(), 500)
        if not entry.get("streamed"):
            entry["status"] = response.status
            self._journal.record(entry)
        return response

    # --- routing ----------------------------------------------------------------------------

    async def _dispatch(
        self, request: aiohttp.web.BaseRequest, body: bytes, entry: dict[str, Any]
    ) -> aiohttp.web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        registry = self.cluster.registry
        if not parts:
            return _json(discovery.root_paths(registry))
        head = parts[0]
        if head == "version" and len(parts) == 1:
            return _json(discovery.SERVER_VERSION)
        if head in ("healthz", "livez", "readyz") and len(parts) == 1:
            return aiohttp.web.Response(text="ok")
        if parts == ["openapi", "v2"]:
            if "protobuf" in request.headers.get("Accept", ""):
                return aiohttp.web.Response(
                    # What kube-openapi answers the protobuf Accept with (Go's mime
                    # parser refuses the '@' of the requested type).
                    body=openapi.document_protobuf(),
                    headers={"Content-Type": "application/octet-stream"},
                )
            return aiohttp.web.Response(
                body=openapi.document_json(), headers={"Content-Type": JSON}
            )
        if head == "api":
            if len(parts) == 1:
                return _json(discovery.api_versions())
            group, version, rest = "", parts[1], parts[2:]
        elif head == "apis":
            if len(parts) == 1:
                return _json(discovery.api_groups(registry))
            if len(parts) == 2:
                doc = discovery.api_group(registry, parts[1])
                if doc is None:
                    raise errors.no_such_path(request.path)
                return _json(doc)
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise errors.no_such_path(request.path)
        if not rest:
            listing = discovery.resource_list(registry, group, version)
            if listing is None:
                raise errors.no_such_path(request.path)
            return _json(listing)
        target = self._target(group, version, rest, request.path)
        entry.update(self._rbac(request.method, request.query, target))
        if request.method in _WRITES and self._faults.strikes():
            entry["injected"] = "conflict"
            raise errors.conflict(
                target.rtype, target.name or "", "injected conflict (conflict_every)"
            )
        return await self._serve(request, body, target, entry)

    def _target(self, group: str, version: str, rest: list[str], path: str) -> Target:
        namespace = None
        if (
            rest[0] == "namespaces"
            and len(rest) >= 3
            and not (group == "" and rest[2] in ("status", "finalize"))
        ):
            namespace, rest = rest[1], rest[2:]
        if len(rest) > 3:
            raise errors.no_such_path(path)
        rtype = self.cluster.registry.lookup(group, version, rest[0])
        if rtype is None:
            raise errors.no_such_path(path)
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if namespace is not None and not rtype.namespaced:
            raise errors.no_such_path(path)
        if namespace is None and rtype.namespaced and name is not None:
            raise errors.no_such_path(path)
        if sub is not None and sub not in rtype.subresources:
            raise errors.no_such_path(path)
        return Target(rtype, namespace, name, sub)

    @staticmethod
    def _rbac(method: str, query: Any, target: Target) -> dict[str, Any]:
        """The (verb, group, resource) an RBAC rule would need for this request."""
        if method == "GET":
            verb = "get" if target.name else ("watch" if _flag(query.get("watch")) else "list")
        else:
            verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, "")
            if method == "DELETE":
                verb = "delete" if target.name else "deletecollection"
        resource = target.rtype.plural + (f"/{target.sub}" if target.sub else "")
        return {
            "verb": verb,
            "group": target.rtype.group,
            "resource": resource,
            "namespace": target.namespace,
            "name": target.name,
        }

    # --- verbs ------------------------------------------------------------------------------

    async def _serve(
        self, request: aiohttp.web.BaseRequest, raw: bytes, target: Target, entry: dict[str, Any]
    ) -> aiohttp.web.StreamResponse:
        method, query, rtype = request.method, request.query, target.rtype
        cluster = self.cluster
        dry_run = bool(query.get("dryRun"))
        if method == "GET" and target.name is None:
            selector = self._selector(query, rtype)
            if _flag(query.get("watch")):
                entry["streamed"] = True
                entry["status"] = 200
                self._journal.record(entry)
                return await watches.stream(request, cluster, rtype, target.namespace, selector)
            items, rv = cluster.list_objects(rtype, target.namespace, selector)
            if tables.wants_table(request.headers.get("Accept", "")):
                return _json(tables.table(rtype, items, rv, query.get("includeObject", "Metadata")))
            return _json(
                {
                    "kind": f"{rtype.kind}List",
                    "apiVersion": rtype.api_version,
                    "metadata": {"resourceVersion": rv},
                    "items": items,
                }
            )
        if method == "GET":
            assert target.name is not None
            if target.sub == "log":
                return await self._logs(request, target)
            if target.sub not in (None, "status"):
                raise errors.method_not_allowed()
            obj = cluster.get(rtype, target.namespace, target.name)
            if tables.wants_table(request.headers.get("Accept", "")):
                return _json(
                    tables.table(
                        rtype,
                        [obj],
                        meta(obj)["resourceVersion"],
                        query.get("includeObject", "Metadata"),
                    )
                )
            return _json(obj)
        body = self._body(raw, request.headers.get("Content-Type", JSON))
        if method == "POST":
            if target.name is not None and target.sub == "binding":
                cluster.bind(rtype, target.namespace, target.name, body)
                done = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
                return _json({**done, "code": 201}, 201)
            if target.name is not None:
                raise errors.method_not_allowed()
            if target.namespace is None and rtype.namespaced:
                raise errors.method_not_allowed(
                    "a namespaced resource is created under /namespaces/<ns>/"
                )
            return _json(cluster.create(rtype, target.namespace, body, dry_run=dry_run), 201)
        if method == "DELETE" and target.name is None:
            selector = self._selector(query, rtype)
            items, _ = cluster.list_objects(rtype, target.namespace, selector)
            for obj in items:
                with contextlib.suppress(errors.APIError):
                    cluster.delete(
                        rtype, meta(obj).get("namespace"), meta(obj)["name"], {}, dry_run=dry_run
                    )
            return _json(
                {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
            )
        assert target.name is not None
        if target.sub not in (None, "status"):
            raise errors.method_not_allowed()
        status = target.sub == "status"
        if method == "PUT":
            return _json(
                cluster.replace(
                    rtype, target.namespace, target.name, body, status=status, dry_run=dry_run
                )
            )
        if method == "PATCH":
            ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
            if ctype not in patching.PATCH_TYPES:
                raise errors.APIError(
                    415,
                    "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types "
                    "include: " + ", ".join(sorted(patching.PATCH_TYPES)),
                )
            if ctype == patching.APPLY and not query.get("fieldManager"):
                raise errors.bad_request(
                    "PATCH requests with apply content type must specify fieldManager"
                )
            obj, created = cluster.patch(
                rtype, target.namespace, target.name, ctype, body, status=status, dry_run=dry_run
            )
            return _json(obj, 201 if created else 200)
        if method == "DELETE":
            if target.sub is not None:
                raise errors.method_not_allowed()
            options = dict(body) if isinstance(body, dict) else {}
            if "gracePeriodSeconds" in query:
                options["gracePeriodSeconds"] = _integer(query, "gracePeriodSeconds")
            return _json(
                cluster.delete(rtype, target.namespace, target.name, options, dry_run=dry_run)
            )
        raise errors.method_not_allowed()

    @staticmethod
    def _selector(query: Any, rtype: ResourceType) -> Selector:
        try:
            return parse(query.get("labelSelector"), query.get("fieldSelector"), rtype.kind)
        except SelectorError as exc:
            raise errors.bad_request(str(exc)) from None

    @staticmethod
    def _body(raw: bytes, content_type: str) -> Any:
        if not raw.strip():
            return {}
        try:
            if content_type.startswith(patching.APPLY):
                return yaml.safe_load(raw)
            return json.loads(raw)
        except (ValueError, yaml.YAMLError) as exc:
            raise errors.bad_request(f"the request body is not valid: {exc}") from None

    # --- pod logs ---------------------------------------------------------------------------

    async def _logs(
        self, request: aiohttp.web.BaseRequest, target: Target
    ) -> aiohttp.web.StreamResponse:
        assert target.name is not None
        query, name, namespace = request.query, target.name, target.namespace or ""
        pod = self.cluster.get(target.rtype, namespace, name)
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        container = query.get("container") or (containers[0] if containers else "")
        if container not in containers:
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        path = logs.log_path(self.log_dir, namespace, name)
        if path is None or not path.is_file():
            raise errors.bad_request(
                f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
            )
        if _flag(query.get("follow")):
            uid = meta(pod).get("uid")

            def running() -> bool:
                now = self.cluster.store.get(target.rtype.key, (namespace, name))
                phase = ((now or {}).get("status") or {}).get("phase")
                return (
                    now is not None
                    and meta(now).get("uid") == uid
                    and phase not in ("Succeeded", "Failed")
                )

            return await logs.follow(request, path, query.get("tailLines"), running)
        text = logs.tail(path.read_text(errors="replace"), query.get("tailLines"))
        return aiohttp.web.Response(text=text, content_type="text/plain")


# --- serving -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Running:
    """A started stand-in: its URL, its handler and the loop it serves on. Tests ask over HTTP;
    ``preload_crds`` is the one direct call, safe from any thread."""

    url: str
    api: StandInAPI
    port: int
    loop: asyncio.AbstractEventLoop

    def preload_crds(self, folder: Path) -> list[str]:
        """Register the CRDs of ``folder`` as if applied, on the server's own loop (the store and
        its watchers' queues belong to that loop; another thread must not touch them)."""
        try:
            if asyncio.get_running_loop() is self.loop:
                return self.api.preload_crds(folder)
        except RuntimeError:
            pass  # no loop in this thread

        async def call() -> list[str]:
            return self.api.preload_crds(folder)

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(timeout=60)


@contextlib.asynccontextmanager
async def running_api(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    log_dir: Path | None = None,
    conflict_every: int | None = None,
    journal: Path | None = None,
    crd_dirs: tuple[Path, ...] = (GLIMMER_CRDS,),
    graceful_pod_deletion: bool = True,
    pod_binding: bool = False,
) -> AsyncIterator[Running]:
    """The stand-in served on ``host:port`` (0: a free port) in the current event loop."""
    api = StandInAPI(
        log_dir=log_dir,
        conflict_every=conflict_every,
        journal=journal,
        crd_dirs=crd_dirs,
        graceful_pod_deletion=graceful_pod_deletion,
        pod_binding=pod_binding,
    )
    loop = asyncio.get_running_loop()

    def request_factory(
        message: Any, payload: Any, protocol: Any, writer: Any, task: Any
    ) -> aiohttp.web.BaseRequest:
        # aiohttp's own limit (1 MiB) is below the API server's; MAX_BODY_BYTES decides.
        return aiohttp.web.BaseRequest(
            message, payload, protocol, writer, task, loop, client_max_size=MAX_BODY_BYTES + 1
        )

    # handler_cancellation: a watch whose client went away ends at once, not at its next event.
    server = aiohttp.web.Server(
        api, request_factory=request_factory, access_log=None, handler_cancellation=True
    )
    runner = aiohttp.web.ServerRunner(server, shutdown_timeout=1.0, handle_signals=False)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, host, port, reuse_address=True)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []  # the only way to learn port 0's pick
    bound = sockets[0].getsockname()[1] if sockets else port
    try:
        yield Running(url=f"http://{host}:{bound}", api=api, port=bound, loop=loop)
    finally:
        api.close()
        await runner.cleanup()


async def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    log_dir: Path | None = None,
    conflict_every: int | None = None,
    journal: Path | None = None,
    crd_dirs: tuple[Path, ...] = (GLIMMER_CRDS,),
    graceful_pod_deletion: bool = True,
    pod_binding: bool = False,
    ready: Callable[[Running], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until ``stop`` is set (forever without one); ``ready`` is told the URL first."""
    async with running_api(
        host=host,
        port=port,
        log_dir=log_dir,
        conflict_every=conflict_every,
        journal=journal,
        crd_dirs=crd_dirs,
        graceful_pod_deletion=graceful_pod_deletion,
        pod_binding=pod_binding,
    ) as running:
        if ready is not None:
            ready(running)
        await (stop or asyncio.Event()).wait()
