"""Starting a run (§2.1–§2.4): resolve its profile and targets, admit it across runs, build and
pin its plan. The engine calls :func:`start_run` once, when a run has no plan pinned yet, and
applies the decision; the planner touches nothing itself.

Order: the profile (a built-in one stands in when none of that name was given), its entries
and variant cells, the targets, admission (so a refused run holds nothing), then the plan's
refusals and the pinned document. Every refusal but admission's is a configuration error,
which the engine holds for the resolve grace before settling ``Error``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from glimmer.api.k8s import Condition
from glimmer.api.pinned import PlanError, encode_plan
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.plan.admission import admit
from glimmer.plan.build import PlanRefused, build_plan
from glimmer.plan.builtin import profile_or_builtin
from glimmer.plan.decision import Admitted, RefusalKind, Refused, StartDecision
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.resolve import ResolveError, plan_tests
from glimmer.plan.review import plan_expanded, thresholds_sound
from glimmer.plan.slots import effective_cap
from glimmer.plan.targets import TargetError, resolve_targets
from glimmer.verdict.text import quote

__all__ = ["Admitted", "RefusalKind", "Refused", "StartDecision", "start_run"]


def _missing_profile(ref: str) -> str:
    return (
        f"BurnInProfile {quote(ref)} does not exist in the run's namespace, and no built-in "
        "profile has that name"
    )


def start_run(
    run: BurnInRun,
    profile: BurnInProfile | None,
    tests: Mapping[str, BurnInTestSpec],
    nodes: Sequence[NodeInfo],
    other_runs: Sequence[BurnInRun],
    now: datetime,
) -> StartDecision:
    """Decide whether ``run`` starts, and on what plan.

    ``profile`` is the profile named by ``run.spec.profileRef`` (None: not found, so a built-in
    profile of that name is used if there is one); ``tests`` maps BurnInTest names to specs in
    the run's namespace; ``nodes`` is the backend's node list, read fresh (for a run that names
    its nodes, those nodes are enough: nothing here looks past them); ``other_runs`` is
    every other BurnInRun in every namespace, read uncached (``run`` itself may be among them:
    admission tells it apart by uid); ``now`` is timezone-aware UTC.
    """
    generation = run.metadata.generation
    found = profile_or_builtin(run.spec.profile_ref, profile, tests)
    if found is None:
        return Refused("resolve", _missing_profile(run.spec.profile_ref), (), True, now)
    resolved, known_tests = found
    sinks = tuple(resolved.spec.sinks or ())

    def refuse(message: str, conditions: Sequence[Condition] = ()) -> Refused:
        return Refused("resolve", message, tuple(conditions), True, now, sinks)

    try:
        planned = plan_tests(resolved, known_tests)
        targets = resolve_targets(run.spec.target, nodes)
    except (ResolveError, TargetError) as error:
        return refuse(error.message)

    admission = admit(run, targets, other_runs, nodes, now)
    if not admission.admitted:
        return Refused("admission", admission.refusal, (admission.condition,), False, now, sinks)

    cap = effective_cap(run.spec.max_concurrent_nodes)
    try:
        plan = build_plan(resolved, planned, targets, cap, run.spec.baseline)
        annotation = encode_plan(plan)
    except PlanRefused as refusal:
        return refuse(refusal.message, (admission.condition,))
    except PlanError as error:
        return refuse(str(error), (admission.condition,))
    return Admitted(
        plan=plan,
        admitted_condition=admission.condition,
        plan_expanded_condition=plan_expanded(plan, cap, now, generation),
        thresholds_sound_condition=thresholds_sound(plan, now, generation),
        plan_annotation=annotation,
    )
