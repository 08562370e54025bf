"""The report card at the width of the terminal it is printed on."""

from __future__ import annotations

import re

import pytest

from glimmer.backends.sim.certify import certify
from glimmer.certify.report_card import MIN_WIDTH, WIDTH, render
from glimmer.certify.spec import from_text
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

CERT = """\
apiVersion: certify.glimmer.ai/v1alpha1
kind: Certification
metadata: {name: nvl-acceptance, namespace: default}
spec:
  target:
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-GB200}
  categories:
    - {domain: communication, variant: nccl-all-reduce, options: {testScale: diagnose}}
    - {domain: communication, variant: nccl-all-gather, options: {enableMNNVL: false}}
"""
NODE = re.compile(r"nvl-node-\d+")


def _card(width: int) -> str:
    twin = FleetSim(load_topology("ai-factory"), [Fault("nic_link_down", "nic:nvl-node-0004/eth1")])
    return render(certify(twin, from_text(CERT)), width)


def test_the_card_keeps_its_width_off_a_terminal() -> None:
    assert {len(line) for line in _card(WIDTH).splitlines()} == {WIDTH}


@pytest.mark.parametrize("width", [MIN_WIDTH, 80])
def test_a_narrow_card_fits_its_width_and_cuts_no_node_name(width: int) -> None:
    card = _card(width)
    assert {len(line) for line in card.splitlines()} == {width}
    names = set(NODE.findall(card))
    assert names and all(len(n) == len("nvl-node-0004") for n in names)
    # A cut reason ends between words with an ellipsis, never inside a name.
    assert not re.search(r"nvl-node-\d{1,3}[^\d]", card)


def test_a_card_is_never_narrower_than_its_minimum() -> None:
    assert {len(line) for line in _card(20).splitlines()} == {MIN_WIDTH}
