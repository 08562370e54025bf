"""Admission across runs (§2.2) and scenarios 20–22 at the plan level."""

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plan_builders import T0, later, node, profile, run

from glimmer.api.pinned import PlanDocument, encode_plan
from glimmer.api.run import BurnInRun
from glimmer.plan.admission import admit, find_holder, holds, precedes
from glimmer.plan.decision import Admitted, Refused
from glimmer.plan.start import start_run

NODES = [node("n1", pool="a"), node("n2", pool="a"), node("n3", pool="b")]
PROFILE = profile({"inline": {"kind": "host-health"}})


def _start(this: BurnInRun, *others: BurnInRun) -> Admitted | Refused:
    return start_run(this, PROFILE, {}, NODES, list(others), later(60))


def _pinned(*targets: str) -> str:
    return encode_plan(PlanDocument(targets=list(targets), profile_entries=[], tests=[]))


def test_overlapping_run_is_refused_targets_busy_naming_the_holder() -> None:
    holder = run("first", nodes=["n1", "n2"], started=T0, phase="Running", finalizer=True)
    decision = _start(run("second", nodes=["n2", "n3"], created=later(5)), holder)
    assert isinstance(decision, Refused)
    assert decision.kind == "admission" and not decision.config_error
    assert decision.message.startswith("refused: BurnInRun lab/first is already testing n2. ")
    assert "Re-create this run once first finishes, or set spec.force" in decision.message
    (cond,) = decision.conditions
    assert (cond.type, cond.status, cond.reason) == ("Admitted", "False", "TargetsBusy")
    assert "lab/first" in cond.message and "n2" in cond.message
    result = decision.synthetic_result()
    assert (result.name, result.kind, result.scope, result.nodes) == ("admission", "", None, None)
    assert result.phase == "Error" and result.finished_at == later(60)
    assert result.synthetic


def test_runs_on_disjoint_nodes_both_admit() -> None:
    a = run("a", nodes=["n1"], started=T0, phase="Running", finalizer=True)
    decision = _start(run("b", nodes=["n2"], created=later(1)), a)
    assert isinstance(decision, Admitted)
    cond = decision.admitted_condition
    assert (cond.status, cond.reason) == ("True", "TargetsAvailable")


def test_a_terminal_run_without_finalizer_does_not_hold() -> None:
    done = run("done", nodes=["n1"], started=T0, phase="Passed")
    assert not holds(done)
    assert isinstance(_start(run("b", nodes=["n1"], created=later(1)), done), Admitted)


@pytest.mark.parametrize("phase", ["Passed", "Failed", "Error", "Cancelled"])
def test_a_terminal_run_still_carrying_its_finalizer_holds(phase: str) -> None:
    # Its cordons may not be released yet.
    leaving = run("leaving", nodes=["n1"], started=T0, phase=phase, finalizer=True)
    assert holds(leaving)
    assert isinstance(_start(run("b", nodes=["n1"], created=later(1)), leaving), Refused)


@pytest.mark.parametrize("phase", [None, "Pending", "Running"])
def test_a_non_terminal_run_holds_even_without_finalizer(phase: str | None) -> None:
    assert holds(run("x", nodes=["n1"], phase=phase))


def test_started_run_precedes_an_older_unstarted_one() -> None:
    started = run("started", nodes=["n1"], created=later(100), started=later(101))
    older = run("older", nodes=["n1"], created=T0)
    assert precedes(started, older) and not precedes(older, started)


def test_same_instant_runs_are_ordered_by_uid() -> None:
    a = run("a", nodes=["n1"], uid="aaa")
    b = run("b", nodes=["n1"], uid="bbb")
    assert precedes(a, b) and not precedes(b, a)


def test_two_runs_created_together_admit_exactly_one_whichever_is_seen_first() -> None:
    a = run("a", nodes=["n1"], uid="0001")
    b = run("b", nodes=["n1"], uid="0002")
    # Both pending, neither started: each sees the other as holding.
    assert isinstance(_start(a, b), Admitted)
    assert isinstance(_start(b, a), Refused)


def test_older_run_wins_over_a_smaller_uid() -> None:
    old = run("old", nodes=["n1"], uid="zzz", created=T0)
    new = run("new", nodes=["n1"], uid="aaa", created=T0 + timedelta(seconds=1))
    assert isinstance(_start(old, new), Admitted)
    assert isinstance(_start(new, old), Refused)


def test_reported_holder_is_the_conflicting_run_that_sorts_first() -> None:
    this = run("this", nodes=["n1", "n2", "n3"], created=later(50))
    late = run("late", nodes=["n3"], created=later(10), started=later(11), finalizer=True)
    early = run("early", nodes=["n2"], created=later(20), phase="Pending")
    first = run("first", nodes=["n1"], created=T0, started=later(30), finalizer=True)
    holder = find_holder(this, this.spec.target.node_names or [], [early, late, first], NODES)
    assert holder is not None and holder.ref == "lab/first" and holder.nodes == ("n1",)


def test_overlap_reads_the_other_runs_pinned_targets_over_its_selector() -> None:
    # Its selector now matches pool b only, but it pinned n1 at its start.
    other = run("o", selector={"pool": "b"}, plan=_pinned("n1"), started=T0, finalizer=True)
    assert isinstance(_start(run("t", nodes=["n1"], created=later(1)), other), Refused)
    assert isinstance(_start(run("t", nodes=["n3"], created=later(1)), other), Admitted)


def test_overlap_reads_a_compressed_pinned_plan() -> None:
    big = [f"node-{i:05d}-{'x' * 40}" for i in range(4000)] + ["n1"]
    value = _pinned(*big)
    assert not value.startswith("{")
    other = run("o", nodes=["elsewhere"], plan=value, started=T0, finalizer=True)
    assert isinstance(_start(run("t", nodes=["n1"], created=later(1)), other), Refused)


def test_without_a_plan_the_other_runs_selector_is_re_resolved() -> None:
    other = run("o", selector={"pool": "a"}, created=T0)
    assert isinstance(_start(run("t", nodes=["n2"], created=later(1)), other), Refused)


def test_a_selector_that_resolves_nothing_overlaps_nothing() -> None:
    other = run("o", selector={"pool": "gone"}, created=T0)
    assert isinstance(_start(run("t", nodes=["n1"], created=later(1)), other), Admitted)


def test_a_run_that_does_not_precede_this_one_does_not_block_it() -> None:
    newer = run("newer", nodes=["n1"], created=later(10))
    assert isinstance(_start(run("t", nodes=["n1"], created=T0), newer), Admitted)


def test_the_run_itself_in_the_list_is_not_a_conflict() -> None:
    this = run("t", nodes=["n1"])
    assert isinstance(_start(this, this), Admitted)


def test_force_admits_by_force_naming_the_other_run_and_the_contention() -> None:
    holder = run("first", nodes=["n1"], started=T0, phase="Running", finalizer=True)
    forced = run("second", nodes=["n1"], created=later(1), force=True)
    decision = _start(forced, holder)
    assert isinstance(decision, Admitted)
    cond = decision.admitted_condition
    assert (cond.type, cond.status, cond.reason) == ("Admitted", "True", "AdmittedByForce")
    assert "lab/first" in cond.message and "not comparable" in cond.message


def test_contested_nodes_are_named_in_this_runs_order_and_counted_past_ten() -> None:
    names = [f"n{i:02d}" for i in range(14)]
    holder = run("h", nodes=list(reversed(names)), started=T0, finalizer=True)
    outcome = admit(run("t", nodes=names, created=later(1)), names, [holder], [], later(2))
    assert not outcome.admitted
    assert "already testing n00, n01, n02" in outcome.refusal
    assert "n09, and 4 more." in outcome.refusal


_TIMES = st.integers(min_value=0, max_value=3).map(lambda s: T0 + timedelta(seconds=s))


@given(
    created=st.tuples(_TIMES, _TIMES),
    started=st.tuples(st.booleans(), st.booleans()),
    uids=st.lists(st.sampled_from(["u1", "u2", "u3"]), min_size=2, max_size=2, unique=True),
)
def test_of_two_overlapping_holders_exactly_one_admits_whichever_is_seen_first(
    created: tuple[Any, Any], started: tuple[bool, bool], uids: list[str]
) -> None:
    a, b = (
        run(
            name,
            nodes=["n1"],
            uid=uid,
            created=when,
            started=when + timedelta(seconds=1) if began else None,
            finalizer=began,
        )
        for name, uid, when, began in zip(("a", "b"), uids, created, started, strict=True)
    )
    assert precedes(a, b) != precedes(b, a)
    outcomes = [isinstance(_start(a, b), Admitted), isinstance(_start(b, a), Admitted)]
    assert sorted(outcomes) == [False, True]
