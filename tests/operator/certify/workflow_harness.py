"""Workflows for the Workflow controller's tests on the API stand-in: the DCGM level-1
Workflow a Certification builds over H100 nodes, and a hand-written Workflow made from its
spec (the shape a test edits: a dependency added, the target changed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.operator.certify.conftest import NS, Controllers, add_nodes, certification, h100_nodes

LEVEL1 = {"domain": "diagnostics", "variant": "dcgm-level1"}


def level1_workflow(ctl: Controllers, nodes: int = 2, cert: str = "d", **options: Any) -> str:
    """Certification ``cert`` of dcgm-level1 (``options`` its category options) over ``nodes``
    H100 nodes, reconciled once: the name of the Workflow it created (not reconciled yet)."""
    add_nodes(ctl.api, h100_nodes(nodes))
    category = {**LEVEL1, "options": options} if options else LEVEL1
    ctl.api.create("certifications", certification(cert, [category]))
    ctl.certification.reconcile(NS, cert)
    name = f"{cert}-diagnostics-dcgm-level1"
    assert ctl.api.get("workflows", name) is not None
    return name


def hand_written(ctl: Controllers, name: str, edit: Callable[[dict[str, Any]], None]) -> str:
    """Workflow ``name`` with the spec of a Certification's dcgm-level1 Workflow over two
    nodes, as ``edit`` changes it; created, not reconciled."""
    donor = ctl.api.get("workflows", level1_workflow(ctl))
    assert donor is not None
    spec = donor["spec"]
    edit(spec)
    body = {"apiVersion": donor["apiVersion"], "kind": "Workflow", "metadata": {"name": name},
            "spec": spec}  # fmt: skip
    ctl.api.create("workflows", body)
    return name
