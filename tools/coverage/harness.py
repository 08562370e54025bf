"""Running built-in tests through the simulated runners, the contract parser and the verdict
rules, the way the engine will: one unit (a node, a pair, a group) at a time.

Used by the fault-coverage sweep and its document; it is also a small reference for how a
unit's executions settle: a Pair's two ends combine into one verdict about the link, a Group's
ranks into one about the collective, and a segmented soak's windows fold by the registry's
Aggregation before its gates are judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from glimmer.api.load import load_paths
from glimmer.api.overlay import apply_overlay, variant_env
from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTest, BurnInTestSpec, RunnerSpec
from glimmer.api.threshold import to_contract
from glimmer.contract.parse import parse
from glimmer.contract.vocab import ParsedResult, RunnerVerdict
from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.dispatch import simulate_runner
from glimmer.sim.twin import FleetSim
from glimmer.verdict import (
    AttemptOutcome,
    attempt_outcome,
    combine_group,
    combine_pair,
    fold_metrics,
    fold_unmeasurable,
)
from glimmer.verdict.fold import segments_required


@dataclass(frozen=True)
class Builtins:
    tests: Mapping[str, BurnInTestSpec]
    # profile -> planned test names (inline entries named, variant cells as <test>-<cell>)
    profiles: Mapping[str, tuple[str, ...]]


@cache
def builtins() -> Builtins:
    """The tests and profiles shipped in glimmer/data/profiles."""
    folder = str(files("glimmer.data") / "profiles")
    tests: dict[str, BurnInTestSpec] = {}
    profiles: dict[str, tuple[str, ...]] = {}
    for item in load_paths([folder]):
        if isinstance(item.obj, BurnInTest):
            tests[item.name] = item.obj.spec
    for item in load_paths([folder]):
        if isinstance(item.obj, BurnInProfile):
            names = []
            for i, entry in enumerate(item.obj.spec.tests):
                if entry.test_ref is not None:
                    name = entry.test_ref
                elif entry.inline is not None:
                    name = f"inline-{i}-{entry.inline.kind}"
                    tests[name] = entry.inline
                else:
                    continue
                if not entry.variants:
                    names.append(name)
                    continue
                # Cells are planned tests of their own, named as the plan names them, and
                # carrying the BURNIN_VARIANT_<AXIS> variables the plan would give them.
                for cell in entry.variants:
                    spec = apply_overlay(tests[name], cell)
                    runner = spec.runner or RunnerSpec()
                    runner.env = [*(runner.env or []), *variant_env(cell.axes or {})]
                    spec.runner = runner
                    tests[f"{name}-{cell.name}"] = spec
                    names.append(f"{name}-{cell.name}")
            profiles[item.name] = tuple(names)
    return Builtins(tests, profiles)


@dataclass(frozen=True)
class UnitResult:
    """One built-in test on one unit, settled."""

    test: str
    kind: str
    nodes: tuple[str, ...]
    parsed: ParsedResult  # the combined result the verdict was decided from
    outcome: AttemptOutcome
    outputs: tuple[RunnerOutput, ...]


def _call(
    spec: BurnInTestSpec,
    nodes: tuple[str, ...],
    node: str,
    *,
    role: str = "",
    rank: int | None = None,
    seconds: int,
    started_at: float,
    seed: int,
    attempt: int,
) -> RunnerCall:
    env = {"BURNIN_DURATION_SECONDS": str(seconds), "BURNIN_ATTEMPT": str(attempt)}
    env.update(
        {e.name: e.value or "" for e in (spec.runner.env or []) if spec.runner}
        if spec.runner
        else {}
    )
    if role:
        env["BURNIN_ROLE"] = role
        env["BURNIN_PEER_NODE"] = next((n for n in nodes if n != node), node)
    if rank is not None:
        env.update({"BURNIN_RANK": str(rank), "BURNIN_NRANKS": str(len(nodes)),
                    "BURNIN_ROOT_NODE": nodes[0]})  # fmt: skip
    return RunnerCall(
        kind=spec.kind, scope=spec.scope.value, nodes=nodes, node=node, role=role, rank=rank,
        nranks=len(nodes) if rank is not None else None, env=env, duration_seconds=seconds,
        attempt=attempt, spec=spec, started_at=started_at, seed=seed,
    )  # fmt: skip


def _once(
    twin: FleetSim, spec: BurnInTestSpec, nodes: tuple[str, ...], seconds: int, started_at: float,
    seed: int, attempt: int,
) -> tuple[ParsedResult, tuple[RunnerOutput, ...]]:  # fmt: skip
    scope = spec.scope.value
    kw = {"seconds": seconds, "started_at": started_at, "seed": seed, "attempt": attempt}
    if scope == "Pair":
        server, client = nodes
        s_out = simulate_runner(twin, _call(spec, nodes, server, role="server", **kw))  # type: ignore[arg-type]
        c_out = simulate_runner(twin, _call(spec, nodes, client, role="client", **kw))  # type: ignore[arg-type]
        combined = combine_pair(
            server, client, parse(spec.kind, s_out.stdout, s_out.exit_code),
            parse(spec.kind, c_out.stdout, c_out.exit_code),
        )  # fmt: skip
        return combined, (s_out, c_out)
    if scope == "Group":
        outs = tuple(
            simulate_runner(twin, _call(spec, nodes, n, rank=r, **kw))  # type: ignore[arg-type]
            for r, n in enumerate(nodes)
        )
        ranks = [parse(spec.kind, o.stdout, o.exit_code) for o in outs]
        return combine_group(list(nodes), ranks), outs
    out = simulate_runner(twin, _call(spec, nodes, nodes[0], **kw))  # type: ignore[arg-type]
    return parse(spec.kind, out.stdout, out.exit_code), (out,)


def run_unit(
    twin: FleetSim,
    name: str,
    spec: BurnInTestSpec,
    nodes: Sequence[str],
    *,
    started_at: float = 600.0,
    seed: int = 1,
    attempt: int = 1,
) -> UnitResult:
    """Run test ``name`` on one unit and settle it (segments folded for a segmented soak)."""
    unit = tuple(nodes)
    thresholds = to_contract(spec.thresholds)
    if spec.soak is None:
        parsed, outs = _once(twin, spec, unit, spec.duration_seconds, started_at, seed, attempt)
        return UnitResult(name, spec.kind, unit, parsed,
                          attempt_outcome(parsed, thresholds, segmented=False), outs)  # fmt: skip
    segment = spec.soak.segment_seconds
    count = segments_required(spec.duration_seconds, segment)
    aggregate: dict[str, str] = {}
    declared: frozenset[str] = frozenset()
    all_outs: list[RunnerOutput] = []
    last: ParsedResult | None = None
    for i in range(count):
        parsed, outs = _once(twin, spec, unit, segment, started_at + i * segment, seed, attempt)
        all_outs.extend(outs)
        last = parsed
        if parsed.verdict is not RunnerVerdict.PASS:
            outcome = attempt_outcome(parsed, thresholds, segmented=False)
            return UnitResult(name, spec.kind, unit, parsed, outcome, tuple(all_outs))
        aggregate = fold_metrics(aggregate, parsed.metrics)
        declared = fold_unmeasurable(declared, parsed.unmeasurable, aggregate)
    assert last is not None
    folded = ParsedResult(
        verdict=RunnerVerdict.PASS, exit_code=0, metrics=aggregate, unmeasurable=declared,
        invalid_names=last.invalid_names, message=last.message,
    )  # fmt: skip
    outcome = attempt_outcome(folded, thresholds, segmented=False)
    return UnitResult(name, spec.kind, unit, folded, outcome, tuple(all_outs))
