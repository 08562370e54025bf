"""The shortcuts a fleet-sized run takes (issue 12) decide exactly what the long way does: the
node-independent parts of an execution built once per test, the counters of a (kind, phase)
decided once, results and attempts opened by copy of one validated, the simulator's cheaper
copy of an execution and its event order, and the runners' jitter drawn without the
generator's argument handling."""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
from datetime import UTC, datetime

import numpy as np
import pytest
from pydantic import BaseModel

from glimmer.api.pinned import PlannedTest
from glimmer.api.result import TestAttempt, TestResult
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.base import updated_node
from glimmer.backends.sim.backend import SimBackend, _changed, _Event
from glimmer.contract.gpu_class import AXIS_ENV, CLASSES_ENV, choose
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import ExecPhase, Execution, NodeView
from glimmer.engine.book import Index
from glimmer.engine.cordon import _rfc3339
from glimmer.engine.memory import RunMemory
from glimmer.engine.podspec import Fixed, FixedKey, Placement, build_execution
from glimmer.engine.results import fresh_attempt, fresh_result, new_result
from glimmer.plan.env import group_place, pair_place
from glimmer.plan.images import ImageError
from glimmer.sim.runners.call import RunnerCall
from glimmer.sim.runners.memory import _cell
from glimmer.sim.runners.noise import Jitter, rng_for

AT = datetime(2026, 10, 2, tzinfo=UTC)


def _run() -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "r", "namespace": "default", "uid": "u-1"},
            "spec": {"profileRef": "p", "target": {"nodeNames": ["a", "b"]}},
        }
    )


def _test(kind: str = "gpu-burn", **spec: object) -> PlannedTest:
    return PlannedTest(
        name="t",
        required=True,
        spec=BurnInTestSpec.model_validate({"kind": kind, "durationSeconds": 60, **spec}),
    )


PLACES = [
    Placement("node-1", ("node-1",)),
    Placement(
        "node-1",
        ("node-1", "node-2"),
        "server",
        pair_place("server", "node-2", "svc"),
        "svc",
    ),
    Placement("node-2", ("node-1", "node-2"), "rank-1", group_place(1, 2, "node-1", "svc"), "svc"),
]


@pytest.mark.parametrize("where", PLACES, ids=["node", "pair", "group"])
def test_an_execution_built_from_the_memo_is_the_one_built_afresh(where: Placement) -> None:
    run, test = _run(), _test(runner={"env": [{"name": "EXTRA", "value": "1"}]})
    memo: dict[FixedKey, Fixed] = {}
    for attempt in (1, 2, 1):
        for node in ("node-1", "node-7"):
            here = dataclasses.replace(where, node=node)
            kept = build_execution(run, test, 0, attempt, here, images=False, memo=memo)
            assert kept == build_execution(run, test, 0, attempt, here, images=False)
    assert len(memo) == 2  # one entry per attempt, whatever the node


def test_an_image_that_does_not_resolve_is_refused_for_every_node_not_remembered() -> None:
    run, test = _run(), _test(kind="no-such-kind")
    memo: dict[FixedKey, Fixed] = {}
    for node in ("node-1", "node-2"):
        with pytest.raises(ImageError):
            build_execution(run, test, 0, 1, Placement(node, (node,)), memo=memo)
    assert memo == {}


def test_the_counters_of_a_kind_and_phase_are_the_same_decided_once() -> None:
    phases = [Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.SKIPPED, Phase.RUNNING]
    results = [
        TestResult(name=f"t{i}", kind=kind, phase=phase, nodes=[f"n{i}"])
        for i, (kind, phase) in enumerate((k, p) for k in ("gpu-burn", "") for p in phases * 3)
    ]
    index = Index.build(results)
    assert index.counts == [6, 6, 6, 6]
    for result in results:
        index.add(result, -1)
    assert index.counts == [0, 0, 0, 0]
    assert len(index.counted) == 10


def test_the_simulators_copy_of_an_execution_is_what_dataclasses_replace_makes() -> None:
    run, test = _run(), _test()
    spec = build_execution(run, test, 0, 1, PLACES[0], images=False)
    view = Execution(spec=spec, phase=ExecPhase.PENDING, created_at=AT)
    changes = {"phase": ExecPhase.RUNNING, "started_at": AT, "ready": True}
    copied = _changed(view, changes)
    assert copied == dataclasses.replace(view, **changes)  # type: ignore[arg-type]
    assert copied is not view and view.phase is ExecPhase.PENDING
    # The copy relies on a plain dataclass: its fields are its __dict__.
    for plain in (Execution, NodeView):
        assert not hasattr(plain, "__slots__") and not hasattr(plain, "__post_init__")


def test_a_simulated_node_update_is_what_updated_node_makes() -> None:
    node = NodeView("n1", labels={"a": "b"}, annotations={"keep": "1", "drop": "2"})
    backend = SimBackend([node])
    changes: dict[str, str | None] = {"drop": None, "new": "3"}
    got = backend.update_node("n1", unschedulable=True, annotations=changes)
    assert got == updated_node(node, True, changes) and backend.get_node("n1") is got
    assert backend.update_node("n1") == updated_node(got)
    assert node.annotations == {"keep": "1", "drop": "2"}  # the old view is left as it was


def test_simulator_events_come_off_the_heap_by_time_then_by_push_order() -> None:
    heap: list[_Event] = []
    pushed = [(5.0, "finish"), (1.0, "start"), (5.0, "deadline"), (1.0, "ready")]
    for seq, (at, kind) in enumerate(pushed):
        heapq.heappush(heap, _Event(at, seq, kind, "uid", f"e{seq}"))
    kinds = [heapq.heappop(heap).kind for _ in pushed]
    assert kinds == ["start", "ready", "finish", "deadline"]


def test_jitter_draws_the_numbers_the_generator_itself_draws() -> None:
    words = np.array([1, 2, 3, 4], dtype=np.uint32)
    ours, theirs = Jitter(np.random.default_rng(words)), np.random.default_rng(words)
    for i in range(2000):
        lo, hi = i * 0.37 - 100.0, i * 1.3 + 0.5
        assert ours.uniform(lo, hi) == float(theirs.uniform(lo, hi))
        z = min(3.0, max(-3.0, float(theirs.standard_normal())))
        assert ours.rel(10.0, 0.01) == 10.0 * (1.0 + 0.01 * z)


def test_the_heat_expiry_is_spelled_as_strftime_spells_it() -> None:
    for at in (AT, datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC), datetime(2031, 12, 31, 23, 59, 59)):
        assert _rfc3339(at) == at.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_runner_calls_generator_is_the_one_default_rng_makes_of_its_seed() -> None:
    call = RunnerCall(
        kind="gpu-burn",
        scope="Node",
        nodes=("node-1",),
        node="node-1",
        role="",
        rank=None,
        nranks=None,
        env={},
        duration_seconds=60,
        attempt=2,
        spec=BurnInTestSpec.model_validate({"kind": "gpu-burn"}),
        started_at=12.5,
        seed=7,
    )
    text = "7|node-1|2|gpu-burn|12|"
    words = np.frombuffer(hashlib.sha256(text.encode()).digest()[:16], dtype=np.uint32)
    ours, theirs = rng_for(call), np.random.default_rng(words)
    assert list(ours.random(64)) == list(theirs.random(64))
    assert list(ours.standard_normal(64)) == list(theirs.standard_normal(64))


def test_a_memory_bw_cell_is_chosen_as_choose_chooses_it() -> None:
    classes = "pcie-gen5=NVIDIA H100 80GB HBM3,NVIDIA B200;gb10-c2c=NVIDIA GB10"
    cases = [
        (None, None, ("NVIDIA H100 80GB HBM3",)),
        ("pcie-gen5", classes, ("NVIDIA H100 80GB HBM3",) * 8),
        ("gb10-c2c", classes, ("NVIDIA H100 80GB HBM3",)),
        ("pcie-gen5", None, ("NVIDIA B200",)),
        ("pcie-gen5", "", ("NVIDIA B200",)),
        ("nowhere", classes, ()),
        ("pcie-gen5", classes, ("NVIDIA A100",)),
    ]
    for axis, table, names in cases:
        env = {k: v for k, v in ((AXIS_ENV, axis), (CLASSES_ENV, table)) if v is not None}
        assert _cell(axis, table, names) == choose(env, list(names))


def _as_validated(ours: BaseModel, theirs: BaseModel) -> None:
    assert ours == theirs
    assert list(ours.__dict__) == list(theirs.__dict__)
    assert ours.__pydantic_fields_set__ == theirs.__pydantic_fields_set__
    assert ours.model_dump_json(exclude_unset=True) == theirs.model_dump_json(exclude_unset=True)


def test_a_result_and_an_attempt_opened_by_copy_are_the_ones_validated() -> None:
    memory = RunMemory("u-1")
    plain = _test()
    cell = PlannedTest(name="t[pcie]", required=True, spec=plain.spec, axes={"gpuClass": "pcie"})
    for test in (plain, cell, plain):
        for nodes, started in ((["a"], AT), (["a", "b"], None)):
            ours = fresh_result(memory, test, nodes, started)
            _as_validated(ours, new_result(test, nodes, started))
            again = fresh_result(memory, test, nodes, started)
            assert again.nodes is not ours.nodes and again.attempts is not ours.attempts
            if test.axes:
                assert again.variant_axes is not ours.variant_axes
    for attempt, trigger, pod in ((1, "Initial", "pod-1"), (3, "ErrorRetry", None)):
        validated = TestAttempt(
            attempt=attempt, trigger=trigger, node="a", pod_name=pod, phase=Phase.RUNNING,
            started_at=AT,
        )  # fmt: skip
        _as_validated(fresh_attempt(memory, attempt, trigger, "a", pod, AT), validated)
