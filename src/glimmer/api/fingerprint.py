"""NodeFingerprint (``nfp``): the observed hardware identity of one node, for drift detection.
Created only by the operator, one per Node, in the operator's namespace."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from pydantic import Field

from glimmer.api.base import Int32, Int64, Wire
from glimmer.api.k8s import Condition
from glimmer.api.meta import Resource


class NodeFingerprintSpec(Wire):
    """Which node this fingerprint describes."""

    node_name: str = Field(min_length=1)


class GPUInfo(Wire):
    """One accelerator as the node reports it."""

    index: Int32 = Field(ge=0)
    vendor: str | None = None
    model: str | None = None
    arch: str | None = None
    memory_bytes: Int64 | None = Field(None, ge=0)
    driver_version: str | None = None


class NICInfo(Wire):
    """One network interface as the node reports it."""

    name: str
    role: str | None = None
    pci_vendor: str | None = None
    model: str | None = None
    rdma_device: str | None = None
    link_layer: str | None = None
    speed_mbps: Int64 | None = Field(None, ge=0)
    mtu: Int32 | None = Field(None, ge=0)


class NodeFingerprintStatus(Wire):
    """The salient identity and its digest; ``capturedAt`` moves only when it changes."""

    captured_at: datetime | None = None
    gpus: list[GPUInfo] | None = None
    nics: list[NICInfo] | None = None
    os_image: str | None = None
    kernel: str | None = None
    labels: dict[str, str] | None = None
    digest: str | None = None
    observed_generation: Int64 | None = None
    conditions: list[Condition] | None = None


class NodeFingerprint(Resource):
    """A node's hardware identity."""

    KIND: ClassVar[str] = "NodeFingerprint"
    SHORT_NAME: ClassVar[str] = "nfp"
    PLURAL: ClassVar[str] = "nodefingerprints"

    spec: NodeFingerprintSpec
    status: NodeFingerprintStatus | None = None
