"""The certification core in replay gives the direct run's result (issue 17, decision 2).

A ledger that runs what was submitted on the twin only *between* replays stands in for a
cluster's Job objects: every replay of the core unwinds with JobsPending until the jobs it
needs are done, then goes one job further. The result must be the one the direct
:func:`certify` gives, for every kind of category, with no key naming two jobs and no finished
job asked for again; and dropping what was submitted but not finished (a controller that
crashed before its creates landed) changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.backends.sim.certify.substrate import TwinSubstrate
from glimmer.certify.catalog.naming import WORKFLOW_MAX, truncate
from glimmer.certify.grouping import PRODUCT_LABEL
from glimmer.certify.jobs import Job, JobLog
from glimmer.certify.outcome import outcome_doc, outcome_log
from glimmer.certify.replay import JobsPending, ReplaySubstrate, nodes_of
from glimmer.certify.result import (
    CategoryResult,
    CertResult,
    category_from_doc,
    category_to_doc,
    to_doc,
)
from glimmer.certify.run import cert_result, certify, run_category, target_nodes
from glimmer.certify.spec import Category, CertSpec, from_text
from glimmer.errors import InputError
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

TOPO = load_topology("ai-factory")
NVL = [n.hostname for n in TOPO.nodes if n.hostname.startswith("nvl-")]
GB200 = {"nodeSelector": {PRODUCT_LABEL: "NVIDIA-GB200"}}
ALL_REDUCE = {"domain": "communication", "variant": "nccl-all-reduce"}
MAX_REPLAYS = 500


def _spec(categories: list[dict[str, Any]], target: dict[str, Any] | None = None) -> CertSpec:
    return from_text(
        yaml.safe_dump(
            {
                "apiVersion": "certify.glimmer.ai/v1alpha1",
                "kind": "Certification",
                "metadata": {"name": "t", "namespace": "default"},
                "spec": {"target": target or {}, "categories": categories},
            }
        )
    )


@dataclass
class TwinLedger:
    """Job objects over the twin: a submitted job runs when :meth:`finish` is called."""

    twin: TwinSubstrate
    pending: dict[str, Job] = field(default_factory=dict)  # submitted, not finished
    done: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> status.outcome
    named: dict[str, Job] = field(default_factory=dict)  # every key ever and its job
    creates: list[str] = field(default_factory=list)  # keys as they were first submitted

    def outcome(self, key: str) -> JobLog | None:
        doc = self.done.get(key)
        return None if doc is None else outcome_log(json.loads(json.dumps(doc)), key)

    def submit(self, key: str, job: Job, nodes: tuple[str, ...]) -> None:
        assert self.named.setdefault(key, job) == job, f"{key} names two jobs"
        assert key not in self.done, f"{key} asked for again after it finished"
        assert nodes == nodes_of(job)
        if key not in self.pending:
            self.pending[key] = job
            self.creates.append(key)

    def finish(self) -> None:
        # Jobs sharing a node never run at once (the replay holds back the later one).
        busy: list[str] = [n for job in self.pending.values() for n in nodes_of(job)]
        assert len(busy) == len(set(busy)), "two running jobs share a node"
        for key, job in self.pending.items():
            self.done[key] = outcome_doc(self.twin.run(job))
        self.pending.clear()

    def crash(self) -> None:
        """The creates of the last replay never landed: only finished Jobs are left."""
        for key in self.pending:
            self.creates.remove(key)
        self.pending.clear()


@dataclass
class Replayed:
    result: CategoryResult
    replays: int
    ledger: TwinLedger


def _replay(
    twin: TwinSubstrate, cat: Category, spec: CertSpec, seed: int, crash_every: int = 0
) -> Replayed:
    target = target_nodes(twin.name, twin.nodes(), spec, twin.taint_note)
    ledger = TwinLedger(twin)
    workflow = truncate(f"{spec.name}-{cat.domain}-{cat.variant}", WORKFLOW_MAX)
    for replay in range(1, MAX_REPLAYS):
        sub = ReplaySubstrate(
            target.nodes, twin.fabric, ledger, twin.name, twin.platform, workflow=workflow
        )
        try:
            result = run_category(sub, cat, list(target.nodes), seed)
        except JobsPending as waiting:
            assert waiting.submitted, "a replay that waits submitted something"
            if crash_every and replay % crash_every == 0:
                ledger.crash()
            else:
                ledger.finish()
            continue
        assert not ledger.pending
        return Replayed(result, replay, ledger)
    raise AssertionError("the replay never finished")


def _replayed_certify(twin: FleetSim, spec: CertSpec, seed: int = 0, crash: int = 0) -> CertResult:
    sub = TwinSubstrate(twin)
    target = target_nodes(sub.name, sub.nodes(), spec, sub.taint_note)
    cats = [_replay(sub, c, spec, seed, crash).result for c in spec.categories]
    return cert_result(spec, sub.name, target, cats, seed=seed, platform=sub.platform)


FAULTS = [
    Fault("nic_degraded", "nic:nvl-node-0003/eth2"),
    Fault("gpu_row_remap", "gpu:nvl-node-0005/1"),
    Fault("gpu_xid_burst", "gpu:nvl-node-0009/2"),
    Fault("gpu_low_pstate", "gpu:nvl-node-0014/2"),  # a slow GPU: training isolates it
]
CATEGORIES = [
    *(
        {**ALL_REDUCE, "options": {"testScale": s}}
        for s in ("intra-node", "intra-rack", "full-scale", "diagnose")
    ),
    {**ALL_REDUCE, "options": {"testScale": "full-scale", "nodesPerJob": 4}},
    # MNNVL off: the degraded NIC fails its group, which isolation narrows down.
    {**ALL_REDUCE, "options": {"nodesPerJob": 6, "enableMNNVL": False}},
    {"domain": "communication", "variant": "nccl-all-gather", "options": {"nodesPerJob": 5}},
    {"domain": "diagnostics", "variant": "dcgm-level2"},
    {"domain": "training", "variant": "nemotron5-8b"},
    {"domain": "training", "variant": "nemotron5-8b", "options": {"nodesPerJob": 6}},
    {
        "domain": "training",
        "variant": "nemotron5-8b",
        "options": {"enableCheckpoint": True, "saveInterval": 50, "maxSteps": 200},
    },
]


def test_every_category_in_replay_gives_the_direct_result() -> None:
    twin = FleetSim(TOPO, FAULTS)
    spec = _spec(CATEGORIES, GB200)
    direct = certify(TwinSubstrate(twin), spec, seed=3)
    replayed = _replayed_certify(twin, spec, seed=3)
    assert replayed == direct
    assert to_doc(replayed) == to_doc(direct)
    # The planted faults were found, so the replays went through isolation too.
    assert {"nvl-node-0003", "nvl-node-0005", "nvl-node-0009", "nvl-node-0014"} <= set(
        direct.failed_nodes
    )
    assert sum(c.isolation is not None for c in direct.categories) >= 3


def test_a_replay_submits_each_job_once_and_independent_jobs_together() -> None:
    twin = TwinSubstrate(FleetSim(TOPO, FAULTS))
    spec = _spec([{"domain": "diagnostics", "variant": "dcgm-level2"}], GB200)
    run = _replay(twin, spec.categories[0], spec, 0)
    # One DCGM job per node, all submitted in the first replay: two replays in all.
    assert run.replays == 2 and len(run.ledger.creates) == 18
    assert len(set(run.ledger.creates)) == len(run.ledger.creates)


def test_diagnose_in_replay_asks_for_every_probe_once() -> None:
    twin = TwinSubstrate(FleetSim(TOPO, FAULTS[:1]))
    spec = _spec([{**ALL_REDUCE, "options": {"testScale": "diagnose"}}], GB200)
    run = _replay(twin, spec.categories[0], spec, 0)
    assert len(set(run.ledger.creates)) == len(run.ledger.creates) == len(run.ledger.done)
    assert run.result.isolation is not None
    assert len(run.ledger.creates) == run.result.isolation.jobs
    assert [f.name for f in run.result.failed_nodes] == ["nvl-node-0003"]


def test_a_crash_that_loses_the_unfinished_submits_changes_nothing() -> None:
    twin = FleetSim(TOPO, FAULTS)
    spec = _spec(CATEGORIES[3:], GB200)  # the categories that wait more than once
    assert _replayed_certify(twin, spec, seed=1, crash=3) == certify(
        TwinSubstrate(twin), spec, seed=1
    )


def test_the_report_assembled_from_category_documents_is_the_direct_one() -> None:
    twin = FleetSim(TOPO, FAULTS)
    spec = _spec(CATEGORIES, GB200)
    direct = certify(TwinSubstrate(twin), spec)
    sub = TwinSubstrate(twin)
    target = target_nodes(sub.name, sub.nodes(), spec, sub.taint_note)
    # What each Workflow writes to its <workflow>-result ConfigMap, read back as JSON text.
    docs = [json.dumps(category_to_doc(c)) for c in direct.categories]
    cats = [category_from_doc(json.loads(d), "cm/x-result") for d in docs]
    assembled = cert_result(spec, sub.name, target, cats, seed=0, platform=sub.platform)
    assert to_doc(assembled) == to_doc(direct)


MODES = [
    "nic_degraded",
    "nic_link_down",
    "nic_link_flapping",
    "gpu_row_remap",
    "gpu_xid_burst",
    "gpu_low_pstate",
]


@given(
    st.lists(
        st.tuples(st.sampled_from(MODES), st.sampled_from(NVL[:8]), st.integers(0, 3)),
        max_size=3,
    ),
    st.integers(0, 5),
)
@settings(max_examples=10, deadline=None)
def test_replay_equals_direct_over_random_faults(
    planted: list[tuple[str, str, int]], seed: int
) -> None:
    faults = [
        Fault(mode, f"nic:{node}/eth{1 + i}" if mode.startswith("nic") else f"gpu:{node}/{i}")
        for mode, node, i in planted
    ]
    twin = FleetSim(TOPO, faults)
    spec = _spec(
        [
            {**ALL_REDUCE, "options": {"testScale": "diagnose"}},
            {**ALL_REDUCE, "options": {"nodesPerJob": 3}},
            {"domain": "diagnostics", "variant": "dcgm-level1"},
            {"domain": "training", "variant": "nemotron5-8b", "options": {"nodesPerJob": 4}},
        ],
        {"nodeNames": NVL[:8]},
    )
    assert _replayed_certify(twin, spec, seed) == certify(TwinSubstrate(twin), spec, seed=seed)


@pytest.mark.parametrize(
    "doc",
    [[], {"domain": "communication"}, {"domain": "d", "variant": "v", "status": "S", "groups": 3}],
)
def test_a_category_document_that_is_none_names_where_it_was_read(doc: Any) -> None:
    with pytest.raises(InputError, match="is not a certification category result") as e:
        category_from_doc(doc, "ConfigMap default/w-result category.json")
    assert str(e.value).startswith("ConfigMap default/w-result category.json")


ITERATED = [
    {**ALL_REDUCE, "options": {"nodesPerJob": 6, "enableMNNVL": False}},  # isolates the NIC
    {"domain": "diagnostics", "variant": "dcgm-level2"},
    {"domain": "training", "variant": "nemotron5-8b", "options": {"nodesPerJob": 6}},
]


@pytest.mark.parametrize("iterations", [1, 2, 3])
def test_every_iteration_runs_in_replay_as_directly(iterations: int) -> None:
    twin = FleetSim(TOPO, FAULTS)
    cats = [{**c, "options": {**c.get("options", {}), "repeatCount": iterations}} for c in ITERATED]
    spec = _spec(cats, GB200)
    direct = certify(TwinSubstrate(twin), spec, seed=2)
    assert _replayed_certify(twin, spec, seed=2) == direct
    once = certify(TwinSubstrate(twin), _spec(ITERATED, GB200), seed=2)
    for cat, single in zip(direct.categories, once.categories, strict=True):
        doc = category_to_doc(cat)
        assert [i["number"] for i in doc["iterations"]] == list(range(1, iterations + 1))
        # The twin is judged at time 0: every iteration sees the same faults.
        assert {i["status"] for i in doc["iterations"]} == {single.status}
        assert cat.failed_nodes == single.failed_nodes and cat.groups == single.groups
        assert cat.runtime_s == pytest.approx(iterations * single.runtime_s)
        assert category_to_doc(category_from_doc(json.loads(json.dumps(doc)))) == doc


def test_each_iteration_asks_for_its_own_jobs_and_says_which() -> None:
    twin = TwinSubstrate(FleetSim(TOPO, FAULTS[:1]))
    spec = _spec(
        [{"domain": "diagnostics", "variant": "dcgm-level2", "options": {"repeatCount": 3}}], GB200
    )
    run = _replay(twin, spec.categories[0], spec, 0)
    # 18 DCGM jobs an iteration, each iteration's submitted together: a replay each, one more.
    assert run.replays == 4 and len(run.ledger.creates) == 3 * 18
    assert len(set(run.ledger.creates)) == len(run.ledger.creates)
    started: list[tuple[int, int]] = []
    sub = ReplaySubstrate(
        twin.nodes(),
        twin.fabric,
        run.ledger,
        twin.name,
        twin.platform,
        workflow=truncate("t-diagnostics-dcgm-level2", WORKFLOW_MAX),
    )
    target = target_nodes(twin.name, twin.nodes(), spec, twin.taint_note)

    def begin(i: int, done: Any) -> None:
        started.append((i, len(done)))
        sub.begin_iteration(i)

    run_category(sub, spec.categories[0], list(target.nodes), 0, begin)
    assert started == [(1, 0), (2, 1), (3, 2)]
    assert sorted(set(sub.iteration_of.values())) == [1, 2, 3]
    assert sorted(sub.iteration_of) == sorted(run.ledger.creates)
    assert sum(i == 3 for i in sub.iteration_of.values()) == 18


def test_a_diagnosis_runs_once_whatever_the_repeat_count() -> None:
    twin = FleetSim(TOPO, FAULTS[:1])
    diagnose = {**ALL_REDUCE, "options": {"testScale": "diagnose"}}
    repeated = {**ALL_REDUCE, "options": {"testScale": "diagnose", "repeatCount": 3}}
    once = certify(TwinSubstrate(twin), _spec([diagnose], GB200))
    asked = certify(TwinSubstrate(twin), _spec([repeated], GB200))
    assert asked.categories == once.categories
    assert len(category_to_doc(asked.categories[0])["iterations"]) == 1
