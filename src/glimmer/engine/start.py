"""Starting a run (§2.1–§2.5): the planner decides (resolve, admit, pin); the engine applies
the decision, pins the plan and the finalizer in one metadata update, and marks the run Running
with its start-time record of each target's schedulability — captured once, never overwritten.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from glimmer.api.k8s import Condition
from glimmer.api.pinned import PlanDocument
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import NodeView
from glimmer.engine.context import Pass
from glimmer.engine.keys import (
    CORDON_OWNER,
    FINALIZER,
    FINGERPRINT_LABELS,
    PLAN_ANNOTATION,
    PRIOR_UNSCHEDULABLE,
)
from glimmer.engine.persist import flush_deliveries, persist
from glimmer.engine.terminate import terminate
from glimmer.engine.wake import Outcome
from glimmer.plan.decision import Refused, StartDecision
from glimmer.plan.grace import RESOLVE_RETRY, within_resolve_grace
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.review import plan_expanded, thresholds_sound

StartFn = Callable[
    [
        BurnInRun,
        BurnInProfile | None,
        Mapping[str, BurnInTestSpec],
        Sequence[NodeInfo],
        Sequence[BurnInRun],
        datetime,
    ],
    StartDecision,
]

NODE_UNAVAILABLE = "node object unavailable at run start"


def set_conditions(current: list[Condition] | None, new: Sequence[Condition]) -> list[Condition]:
    """``current`` with each of ``new`` replacing the condition of its type; a condition whose
    status did not change keeps its transition time."""
    out = list(current or ())
    for cond in new:
        for i, old in enumerate(out):
            if old.type == cond.type:
                if old.status == cond.status:
                    cond = cond.model_copy(
                        update={"last_transition_time": old.last_transition_time}
                    )
                out[i] = cond
                break
        else:
            out.append(cond)
    return out


NodeInfos = Callable[[list[NodeView]], list[NodeInfo]]


def node_infos(nodes: list[NodeView]) -> list[NodeInfo]:
    """The planner's view of ``nodes`` (an engine passes its own, remembered conversion)."""
    return [NodeInfo(n.name, n.labels, n.unschedulable, n.annotations) for n in nodes]


# A run naming at most this many nodes (a Pair sweep's runs name two) is started against just
# those nodes: every decision of the start is about them (its targets are its names; another
# run's selector overlaps it only on them). A larger one lists the fleet, one call.
FEW_NODES = 64


def _nodes_for(ctx: Pass) -> list[NodeView]:
    names = ctx.run.spec.target.node_names
    if not names or len(names) > FEW_NODES:
        return ctx.backend.list_nodes()
    found = (ctx.backend.get_node(name) for name in dict.fromkeys(names))
    return [node for node in found if node is not None]


Rivals = Callable[[Sequence[BurnInRun], Sequence[str]], Sequence[BurnInRun]]


def every_run(runs: Sequence[BurnInRun], targets: Sequence[str]) -> Sequence[BurnInRun]:
    """Admission is shown every run (an engine passes its own index, :mod:`.rivals`)."""
    return runs


def start(
    ctx: Pass, decide: StartFn, infos: NodeInfos = node_infos, rivals: Rivals = every_run
) -> Outcome:
    """Resolve, admit and pin — or refuse."""
    backend, run = ctx.backend, ctx.run
    profile = backend.get_profile(ctx.namespace, run.spec.profile_ref)
    tests = backend.get_tests(ctx.namespace)
    nodes = infos(_nodes_for(ctx))
    # Every run, this one included (admission tells a run from itself by uid); for a run that
    # names its nodes, only those that could share one (:mod:`.rivals`).
    runs = backend.list_runs()
    names = run.spec.target.node_names
    decision = decide(run, profile, tests, nodes, rivals(runs, names) if names else runs, ctx.now)
    if isinstance(decision, Refused):
        return _refuse(ctx, decision)
    conditions = [decision.admitted_condition, decision.thresholds_sound_condition]
    if decision.plan_expanded_condition is not None:
        conditions.append(decision.plan_expanded_condition)
    # Conditions first (so a crash before markRunning keeps them), then plan + finalizer in ONE
    # metadata update, then markRunning.
    status = ctx.book.base
    ctx.run = backend.write_status(
        run, status.model_copy(update={"conditions": set_conditions(status.conditions, conditions)})
    )
    finalizers = [*(ctx.run.metadata.finalizers or ()), FINALIZER]
    ctx.run = backend.write_metadata(
        ctx.run,
        annotations={PLAN_ANNOTATION: decision.plan_annotation},
        finalizers=list(dict.fromkeys(finalizers)),
    )
    ctx.plan = decision.plan
    ctx.book.base = ctx.run.status or ctx.book.base
    return mark_running(ctx)


def _refuse(ctx: Pass, refusal: Refused) -> Outcome:
    if refusal.config_error and within_resolve_grace(ctx.run.metadata.creation_timestamp, ctx.now):
        return Outcome(RESOLVE_RETRY.total_seconds())  # the rest of an apply may still arrive
    ctx.book.put(refusal.synthetic_result())
    ctx.book.base = ctx.book.base.model_copy(
        update={"conditions": set_conditions(ctx.book.base.conditions, refusal.conditions)}
    )
    ctx.plan = PlanDocument(
        targets=[], profile_entries=[], tests=[], sinks=list(refusal.sinks) or None
    )
    return terminate(ctx, Phase.ERROR)


def _fingerprint(ctx: Pass) -> tuple[dict[str, bool], dict[str, str]]:
    prior: dict[str, bool] = {}
    prints: dict[str, str] = {}
    for name in ctx.units.distinct:
        node = ctx.backend.get_node(name)
        if node is None:
            prints[name] = NODE_UNAVAILABLE
            continue
        if node.annotations.get(CORDON_OWNER):
            prior[name] = node.annotations.get(PRIOR_UNSCHEDULABLE) == "true"
        else:
            prior[name] = node.unschedulable
        parts = [f"kernel={node.kernel}", f"os={node.os_image}", f"arch={node.arch}"]
        parts += [f"{k}={node.labels[k]}" for k in FINGERPRINT_LABELS if k in node.labels]
        prints[name] = " ".join(parts)
    return prior, prints


def mark_running(ctx: Pass) -> Outcome:
    """Finish starting: finalizer, start-time record, Running. No node is cordoned here."""
    if FINALIZER not in (ctx.run.metadata.finalizers or ()):
        finalizers = [*(ctx.run.metadata.finalizers or ()), FINALIZER]
        ctx.run = ctx.backend.write_metadata(ctx.run, finalizers=finalizers)
    status = ctx.run.status
    prior, prints = _fingerprint(ctx)
    changes: dict[str, object] = {
        "phase": Phase.RUNNING,
        "started_at": ctx.now,
        "fingerprint": prints or None,
        "observed_generation": ctx.run.metadata.generation,
    }
    if status is None or status.prior_unschedulable is None:
        changes["prior_unschedulable"] = prior
    known = {c.type for c in (status.conditions if status else None) or ()}
    if "ThresholdsSound" not in known:
        # Recovery: the decision's conditions were lost with the pass that pinned the plan.
        generation = ctx.run.metadata.generation
        review = [thresholds_sound(ctx.plan, ctx.now, generation)]
        expanded = plan_expanded(ctx.plan, ctx.cap, ctx.now, generation)
        if expanded is not None:
            review.append(expanded)
        changes["conditions"] = set_conditions(status.conditions if status else None, review)
    ctx.deliveries.append(
        ctx.delivery("RunPhaseChanged", Phase.RUNNING.value, "Running", status_changes=changes)
    )
    flush_deliveries(ctx)  # before the write: a crash redelivers the same key
    persist(ctx, force=True, **changes)
    return Outcome(0.0)
