"""What a run refers to, checked against what was given with it, before anything runs.

A command that holds every object of the run's namespace (``glimmer run -f``, ``glimmer
schedule run -f``: the files are the namespace) can refuse a dangling reference at once, at
the file, line and field it was written on, instead of letting the engine find it after its
grace and settle the run ``Error``. The rules are the planner's own (profile and test
resolution, target resolution, the start decision); only the moment and the error differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from glimmer.api.load import Loaded
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.sink import BurnInSink
from glimmer.api.target import TargetSelector
from glimmer.api.test import BurnInTestSpec
from glimmer.errors import InputError, Location
from glimmer.plan.builtin import builtin_profile_names, profile_or_builtin, tests_with_builtin
from glimmer.plan.decision import Refused
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.preview import preview
from glimmer.plan.resolve import ResolveError, resolve_entries
from glimmer.plan.targets import TargetError, resolve_targets, unknown_node_names
from glimmer.verdict.text import name_some

MAX_NAMED = 5
NOT_GIVEN = "not in the files given"


def check_profile(
    ref: str,
    loaded: Mapping[str, BurnInProfile],
    tests: Mapping[str, BurnInTestSpec],
    written: Location,
    flag: str = "--profile",
) -> None:
    """``ref`` names a profile given or built in; else InputError at ``written`` (the run's or
    schedule's ``spec.profileRef``), or as ``flag`` when it was typed on the command line
    (``written`` has no file)."""
    if ref in loaded or profile_or_builtin(ref, None, tests) is not None:
        return
    known = ", ".join(builtin_profile_names())
    given = f"; loaded: {', '.join(loaded)}" if loaded else ""
    what = f"unknown profile {ref}" if written.file else f"{flag} {ref}: unknown profile"
    raise InputError(f"{what}, {NOT_GIVEN} and not built in (built-in: {known}{given})", written)


def check_test_refs(
    profiles: Sequence[tuple[BurnInProfile, Loaded]], tests: Mapping[str, BurnInTestSpec]
) -> None:
    """Every entry of every profile given names a test that exists (given or built in): a
    typo in a testRef is refused at the line it was written on."""
    known = tests_with_builtin(tests)
    for profile, item in profiles:
        try:
            resolve_entries(profile, known)
        except ResolveError as error:
            raise InputError(
                f"{error.message} ({NOT_GIVEN}, and no built-in test has that name)",
                item.locate(error.field),
            ) from None


def check_sink_refs(
    ref: str,
    profiles: Sequence[tuple[BurnInProfile, Loaded]],
    sinks: Sequence[tuple[BurnInSink, Loaded]],
) -> None:
    """Every sink the run's profile ``ref`` names is among the BurnInSinks given. In a cluster
    a missing sink is a failed delivery the run never notices; where the files are the whole
    namespace, the envelopes would silently go nowhere."""
    known = {item.name for _, item in sinks}
    for profile, item in profiles:
        if item.name != ref:
            continue
        for index, name in enumerate(profile.spec.sinks or ()):
            if name not in known:
                given = f" (given: {', '.join(sorted(known))})" if known else ""
                raise InputError(
                    f"BurnInSink {name!r} is {NOT_GIVEN}{given}; add it with -f, or deliver "
                    "with --sink",
                    item.locate(f"spec.sinks[{index}]"),
                )


def _named_twice(names: Sequence[str]) -> int | None:
    return next((i for i, name in enumerate(names) if name in names[:i]), None)


def check_targets(
    target: TargetSelector,
    nodes: Sequence[NodeInfo],
    fleet: str,
    written: Loaded | None,
    flag: str = "--nodes",
) -> list[str]:
    """The target's node names on ``fleet``. InputError for a node named twice, a node the
    fleet lacks or a selector that selects nothing: at ``written``'s ``spec.target`` field
    when the target was written in a file (a BurnInRun, a BurnInSchedule), else as ``flag``.
    """
    names = list(target.node_names or ())
    again = _named_twice(names)
    if written is not None and again is not None:
        # The API keeps a duplicate for the Pair and Group checks to name; on a Node test it
        # silently collapses onto one node, so the node that was meant is never tested.
        first = names.index(names[again])
        raise InputError(
            f"node {names[again]} is named twice (first at nodeNames[{first}]); name each "
            "node once",
            written.locate(f"spec.target.nodeNames[{again}]"),
        )
    unknown = unknown_node_names(target, nodes)
    if unknown:
        some = name_some([n.name for n in nodes], MAX_NAMED)
        what = f"unknown node {name_some(unknown, MAX_NAMED)}, not in fleet {fleet} "
        what += f"({len(nodes)} nodes: {some})"
        if written is None:
            raise InputError(f"{flag}: {what}")
        index = names.index(unknown[0])
        raise InputError(what, written.locate(f"spec.target.nodeNames[{index}]"))
    try:
        return resolve_targets(target, nodes)
    except TargetError as error:
        if written is None:
            raise InputError(f"the run's target: {error.message}") from None
        field = "spec.target.nodeSelector" if target.node_selector else "spec.target"
        raise InputError(f"{error.message} in fleet {fleet}", written.locate(field)) from None


def check_startable(
    run: BurnInRun,
    profile: BurnInProfile | None,
    tests: Mapping[str, BurnInTestSpec],
    nodes: Sequence[NodeInfo],
    written: Location,
    now: datetime,
    what: str = "the run cannot start",
) -> None:
    """The planner's own start decision, made before anything runs: a run it would refuse as
    a configuration error (a Pair test on three nodes, a cap below a Group's size, a baseline
    run with gates) is bad input, not an ``Error`` run with reports. Admission is not judged:
    this is the run alone on ``nodes``."""
    decision = preview(run, profile, tests, nodes, now)
    if isinstance(decision, Refused) and decision.kind == "resolve":
        raise InputError(f"{what}: {decision.message}", written)
