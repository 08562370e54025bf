"""A stand-in for NVIDIA's DRA driver for GPUs, as far as a GB200 certification meets it: the
ComputeDomain controller and the scheduling of pods that claim a domain's IMEX channel.

* **The controller**: a ComputeDomain created (``resource.nvidia.com/v1beta1``) gets, after
  ``delay_s`` (the real controller's reconcile, long enough for an operator that does not wait
  to be caught), the channel ResourceClaimTemplate its ``spec.channel.resourceClaimTemplate``
  names (``resource.k8s.io/v1beta1``, device class ``compute-domain-default-channel.nvidia.com``,
  labelled with the domain's UID as the driver labels it), then ``status.status: Ready``. A
  deleted ComputeDomain's template is deleted with it; a deletion while pods that claim its
  channel still run (what gives CUDA error 719 on a cluster, ADR-053) is told by a Warning
  Event ``DeletedWhileClaimed`` on the ComputeDomain naming them, so a test can see it.
* **Scheduling** (the kubelet stand-in's scheduler asks :meth:`ComputeDomainDriver.refusals`):
  a pod whose ``spec.resourceClaims`` name a template not made yet stays Pending; a pod claiming
  a ComputeDomain's channel goes only to a node of an NVLink domain (label
  ``nvidia.com/gpu.clique``), and to the domain the ComputeDomain's other live pods are on
  (one IMEX domain per ComputeDomain in this stand-in: a job spanning two racks stays Pending).
  Per-pod ResourceClaims are not made: nothing glimmer reads needs them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tools.k8s_standin.follow import Controller, Key, follow, key_of
from tools.k8s_standin.kubelet_client import ApiError, Client

log = logging.getLogger("k8s_standin.dra")
Obj = dict[str, Any]
Placed = tuple[Mapping[str, Any], str]  # a live pod and the node it is on
DRA_CRDS = Path(__file__).resolve().parent / "dra_crds"
COMPUTE_DOMAINS = "/apis/resource.nvidia.com/v1beta1"
CLAIM_TEMPLATES = "/apis/resource.k8s.io/v1beta1"
CLIQUE_LABEL = "nvidia.com/gpu.clique"
DOMAIN_LABEL = "resource.nvidia.com/computeDomain"  # what the driver labels its template with
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
USER_AGENT = "glimmer-standin-dra/1"
DELETED_WHILE_CLAIMED = "DeletedWhileClaimed"
_TERMINAL = ("Succeeded", "Failed")


def channel_of(domain: Mapping[str, Any]) -> str:
    """The name of the ResourceClaimTemplate a ComputeDomain's channel is claimed through."""
    spec = domain.get("spec") or {}
    return str(((spec.get("channel") or {}).get("resourceClaimTemplate") or {}).get("name") or "")


def channel_template(domain: Mapping[str, Any]) -> Obj:
    """The template the driver's controller makes for ``domain``'s channel."""
    meta = domain["metadata"]
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": channel_of(domain),
            "namespace": meta.get("namespace", "default"),
            "labels": {DOMAIN_LABEL: str(meta.get("uid", ""))},
        },
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": "channel", "deviceClassName": CHANNEL_CLASS}],
                    "config": [
                        {
                            "requests": ["channel"],
                            "opaque": {
                                "driver": "compute-domain.nvidia.com",
                                "parameters": {
                                    "apiVersion": "resource.nvidia.com/v1beta1",
                                    "kind": "ComputeDomainChannelConfig",
                                    "domainID": str(meta.get("uid", "")),
                                },
                            },
                        }
                    ],
                }
            }
        },
    }


def _templates_claimed(pod: Mapping[str, Any]) -> list[str]:
    claims = (pod.get("spec") or {}).get("resourceClaims") or ()
    return [
        str(c["resourceClaimTemplateName"]) for c in claims if c.get("resourceClaimTemplateName")
    ]


def _event(domain: Mapping[str, Any], message: str) -> Obj:
    meta = domain["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta['name']}.{str(meta.get('uid', ''))[:8]}.deleted"},
        "involvedObject": {
            "apiVersion": "resource.nvidia.com/v1beta1",
            "kind": "ComputeDomain",
            "name": meta["name"],
            "namespace": meta.get("namespace", "default"),
            "uid": meta.get("uid", ""),
        },
        "type": "Warning",
        "reason": DELETED_WHILE_CLAIMED,
        "message": message,
        "source": {"component": "compute-domain-controller"},
    }


def _clique(node: Mapping[str, Any]) -> str | None:
    value = (node["metadata"].get("labels") or {}).get(CLIQUE_LABEL)
    return str(value) if value else None


class ComputeDomainDriver(Controller):
    """The controller (:meth:`run`, until cancelled) and the scheduler's claim check."""

    def __init__(self, url: str, delay_s: float = 0.5) -> None:
        self.url = url
        self.delay_s = delay_s
        self.domains: dict[Key, Obj] = {}
        self.templates: dict[Key, Obj] = {}
        self._made: dict[str, asyncio.Task[None]] = {}  # ComputeDomain UID -> its controller
        # The live pods and their nodes (the kubelet stand-in's view), set by whoever runs both.
        self.placed: Callable[[], Sequence[Placed]] = tuple

    async def run(self, ready: asyncio.Event | None = None) -> None:
        async with Client(self.url, user_agent=USER_AGENT) as client:
            self._client = client
            listed = [asyncio.Event(), asyncio.Event()]
            collections = [
                (f"{COMPUTE_DOMAINS}/computedomains", self.domains, self._on_domain),
                (f"{CLAIM_TEMPLATES}/resourceclaimtemplates", self.templates, self._on_template),
            ]
            tasks = [
                asyncio.create_task(follow(client, path, store, handler, done))
                for (path, store, handler), done in zip(collections, listed, strict=True)
            ]
            try:
                for done in listed:
                    await done.wait()
                if ready is not None:
                    ready.set()
                await asyncio.Event().wait()
            finally:
                for task in [*tasks, *self._made.values()]:
                    task.cancel()
                await asyncio.gather(*tasks, *self._made.values(), return_exceptions=True)

    # -- the controller ----------------------------------------------------------------------

    async def _on_template(self, kind: str, template: Obj) -> None:
        pass  # the store is what the scheduler's check reads

    async def _on_domain(self, kind: str, domain: Obj) -> None:
        uid = str(domain["metadata"].get("uid", ""))
        if kind == "DELETED":
            made = self._made.pop(uid, None)
            if made is not None:
                made.cancel()
            await self._deleted(domain)
            return
        if uid not in self._made and (domain.get("status") or {}).get("status") != "Ready":
            self._made[uid] = asyncio.create_task(self._make_channel(domain))

    async def _make_channel(self, domain: Obj) -> None:
        await asyncio.sleep(self.delay_s)
        ns, name = key_of(domain)
        with contextlib.suppress(ApiError):  # a template there already (a relist) is kept
            await self.client.write(
                "POST",
                f"{CLAIM_TEMPLATES}/namespaces/{ns}/resourceclaimtemplates",
                channel_template(domain),
            )
        try:
            await self.client.merge_patch(
                f"{COMPUTE_DOMAINS}/namespaces/{ns}/computedomains/{name}/status",
                {"status": {"status": "Ready", "nodes": []}},
            )
        except ApiError as e:
            if e.status != 404:  # deleted meanwhile: nothing to report on
                raise

    async def _deleted(self, domain: Obj) -> None:
        ns, _ = key_of(domain)
        channel = channel_of(domain)
        users = [
            p for p, _ in self.placed() if key_of(p)[0] == ns and channel in _templates_claimed(p)
        ]
        if users:
            names = sorted(str(p["metadata"]["name"]) for p in users)
            message = (
                f"deleted while {len(names)} pod(s) claim its channel {channel}: "
                f"{', '.join(names)} (on a cluster: CUDA error 719 in them)"
            )
            log.warning("ComputeDomain %s/%s %s", ns, domain["metadata"]["name"], message)
            with contextlib.suppress(ApiError):
                await self.client.write(
                    "POST", f"/api/v1/namespaces/{ns}/events", _event(domain, message)
                )
        with contextlib.suppress(ApiError):  # gone already
            await self.client.write(
                "DELETE", f"{CLAIM_TEMPLATES}/namespaces/{ns}/resourceclaimtemplates/{channel}", {}
            )

    # -- scheduling --------------------------------------------------------------------------

    def refusals(
        self,
        pod: Mapping[str, Any],
        nodes: Iterable[Mapping[str, Any]],
        placed: Sequence[Placed],
    ) -> tuple[str, dict[str, str]]:
        """Why ``pod``'s claims cannot be allocated yet at all ("" when they can somewhere),
        and the nodes they cannot be allocated on (with the scheduler's reason), given the
        live pods already ``placed``."""
        ns = str(pod["metadata"].get("namespace", "default"))
        by_channel = {(key_of(d)[0], channel_of(d)): d for d in self.domains.values()}
        where = {str(n["metadata"]["name"]): n for n in nodes}
        refused: dict[str, str] = {}
        for template in _templates_claimed(pod):
            if (ns, template) not in self.templates:
                return (
                    f"0/{len(where)} nodes are available: waiting for ResourceClaimTemplate "
                    f'"{template}" (not created yet).'
                ), {}
            if (ns, template) not in by_channel:
                continue  # a claim of another driver's device: not this stand-in's to weigh
            cliques = {
                _clique(where[node])
                for other, node in placed
                if node in where
                and key_of(other)[0] == ns
                and template in _templates_claimed(other)
                and other["metadata"].get("uid") != pod["metadata"].get("uid")
            } - {None}
            for name, node in where.items():
                if _clique(node) is None or (cliques and _clique(node) not in cliques):
                    refused[name] = "cannot allocate all claims"
        return "", refused
