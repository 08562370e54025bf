"""Cordons follow the wave (§2.10): stamp then cordon just before load, release as soon as the
run holds no work on a node, and restore exactly what was found at the run's start.

Every read here is fresh from the backend: a cordon decided from a stale read once dropped a
still-cordoned node or skipped a cordon before creating a pod. A node stamped by another run is
never touched; a heat declaration (for an external thermal watchdog) rides with the cordon
while the node runs a sustained-load kind, only ever extended, and is withdrawn otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from datetime import UTC, datetime, timedelta

from glimmer.api.pinned import PlannedTest
from glimmer.contract.kinds import drives_sustained_load
from glimmer.engine.backend import NodeView, NotFound
from glimmer.engine.context import Pass
from glimmer.engine.keys import CORDON_OWNER, HEAT_EXPECTED, HEAT_PAD, PRIOR_UNSCHEDULABLE
from glimmer.plan.env import pod_window_seconds


def _rfc3339(at: datetime) -> str:
    # strftime("%Y-%m-%dT%H:%M:%SZ") spelled out (its year unpadded, as glibc's %Y): a
    # strftime per cordon was half a per cent of a fleet's run.
    return f"{at.year}-{at.month:02d}-{at.day:02d}T{at.hour:02d}:{at.minute:02d}:{at.second:02d}Z"


def _canonical_time(at: str) -> bool:
    """Whether ``at`` is exactly ``YYYY-MM-DDTHH:MM:SSZ`` in ASCII digits."""
    return (
        len(at) == 20
        and at.isascii()
        and at[4] == at[7] == "-"
        and at[10] == "T"
        and at[13] == at[16] == ":"
        and at[19] == "Z"
        and (at[:4] + at[5:7] + at[8:10] + at[11:13] + at[14:16] + at[17:19]).isdigit()
    )


def _heat_owner_and_expiry(value: str) -> tuple[str, datetime] | None:
    """``<ns>/<name>/<uid>/<RFC3339>`` → (owner stamp, expiry); None when unparseable."""
    parts = value.split("/")
    if len(parts) != 4 or not all(parts):
        return None
    at = parts[3]
    try:
        if _canonical_time(at):  # as _rfc3339 writes it: the C parser, 10x faster
            expiry = datetime.fromisoformat(at[:-1])
        else:
            expiry = datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None

    return "/".join(parts[:3]), expiry.replace(tzinfo=UTC)


def _heat_change(ctx: Pass, node: NodeView, test: PlannedTest) -> dict[str, str | None]:
    """The heat-declaration change for ``node`` about to run ``test`` (empty: none)."""
    current = node.annotations.get(HEAT_EXPECTED)
    parsed = _heat_owner_and_expiry(current) if current is not None else None
    ours = parsed is not None and parsed[0] == ctx.owner
    if current is not None and not ours:
        return {}  # another run's marker, or one we cannot read: never touched
    if not drives_sustained_load(test.spec.kind):
        return {HEAT_EXPECTED: None} if ours else {}
    expiry = ctx.now + timedelta(seconds=pod_window_seconds(test.spec) + HEAT_PAD)
    if parsed is not None and parsed[1] >= expiry:
        return {}  # only ever extended
    return {HEAT_EXPECTED: f"{ctx.owner}/{_rfc3339(expiry)}"}


def _prior(ctx: Pass, node: NodeView) -> bool:
    recorded = (ctx.run.status.prior_unschedulable if ctx.run.status else None) or {}
    return recorded.get(node.name, node.unschedulable)


def cordon_node(ctx: Pass, name: str, test: PlannedTest) -> None:
    """Stamp, then cordon, ``name`` for ``test``; re-assert when already ours."""
    node = ctx.backend.get_node(name)
    if node is None:
        return  # the execution will not schedule and ends as an Error later
    owner = node.annotations.get(CORDON_OWNER)
    if owner is not None and owner != ctx.owner:
        return  # someone else's cordon: leave the node alone, and do not hold it
    if name not in ctx.cordoned and len(ctx.cordoned) >= ctx.cap:
        # The cap bounds cordons at every instant, not only once the pass has released what
        # it no longer holds: the last wave of one test was still cordoned while the first
        # wave of the next was stamped (cap 8, 16 cordoned). Give back the idle ones first:
        # all of them once a pass, then only those a harvest freed since (a pass handing slots
        # on stamps at the cap once per harvest, and at cap 1,024 every one compared the whole
        # cordon set with the busy one).
        release_idle(ctx, ctx.freed if ctx.swept else None)
        ctx.swept = True
        ctx.freed.clear()
    heat = _heat_change(ctx, node, test)
    try:
        if owner is None:
            stamp: dict[str, str | None] = {
                CORDON_OWNER: ctx.owner,
                PRIOR_UNSCHEDULABLE: "true" if _prior(ctx, node) else "false",
                **heat,
            }
            ctx.backend.update_node(name, annotations=stamp)  # the stamp strictly first
            ctx.backend.update_node(name, unschedulable=True)
        elif heat or not node.unschedulable:
            ctx.backend.update_node(
                name, unschedulable=True if not node.unschedulable else None, annotations=heat
            )
    except NotFound:
        return
    ctx.cordoned.add(name)


def _restore_value(ctx: Pass, node: NodeView) -> bool:
    recorded = (ctx.run.status.prior_unschedulable if ctx.run.status else None) or {}
    if node.name in recorded:
        return recorded[node.name]
    return node.annotations.get(PRIOR_UNSCHEDULABLE) == "true"


def _unstamp(ctx: Pass, node: NodeView) -> None:
    changes: dict[str, str | None] = {CORDON_OWNER: None, PRIOR_UNSCHEDULABLE: None}
    heat = node.annotations.get(HEAT_EXPECTED)
    parsed = _heat_owner_and_expiry(heat) if heat is not None else None
    if parsed is not None and parsed[0] == ctx.owner:
        changes[HEAT_EXPECTED] = None
    with contextlib.suppress(NotFound):
        ctx.backend.update_node(
            node.name, unschedulable=_restore_value(ctx, node), annotations=changes
        )


def release_node(ctx: Pass, name: str) -> None:
    """Give ``name`` back: restore its start-time schedulability and remove our annotations
    in one update, then stop holding it."""
    node = ctx.backend.get_node(name)
    if node is not None and node.annotations.get(CORDON_OWNER) == ctx.owner:
        _unstamp(ctx, node)
    ctx.cordoned.discard(name)


def release_idle(ctx: Pass, candidates: Collection[str] | None = None) -> None:
    """After the sweep: release every held node the run no longer has work on. ``candidates``,
    when given, are the only held nodes that can have become idle since every idle one was last
    released (the nodes of what changed); None looks at every held node."""
    if candidates is None:
        idle = ctx.cordoned - ctx.busy
    else:
        idle = {n for n in candidates if n in ctx.cordoned and n not in ctx.busy}
    for name in sorted(idle):
        release_node(ctx, name)


# A run on at most this many nodes (a Pair sweep's runs have two) reads just the nodes it could
# have stamped; a larger one lists the fleet once, which on an API server is one call, not one
# per node. Either way a sweep of many small runs no longer lists the whole fleet per run.
FEW_NODES = 64


def _stampable(ctx: Pass) -> list[NodeView]:
    """The nodes that may carry this run's stamp: a run stamps only its plan's targets (and
    the status names what it cordoned), so a small run reads those; without a plan (an
    unreadable one) every node is listed."""
    names = dict.fromkeys(ctx.plan.targets)
    if not names:
        return ctx.backend.list_nodes()
    names.update(dict.fromkeys(ctx.run.status.cordoned_nodes or () if ctx.run.status else ()))
    if len(names) > FEW_NODES:
        return ctx.backend.list_nodes()
    found = (ctx.backend.get_node(name) for name in names)
    return [node for node in found if node is not None]


def account_stamps(ctx: Pass) -> None:
    """Resume: a node carrying this run's stamp that the status does not list was cordoned by a
    pass that stopped before its status write. Adopt it when the run has work there (it is
    held from now on, and recorded by this pass's write); release it at once otherwise, before
    anything new is cordoned, so it neither idles until teardown nor costs a slot."""
    owner = ctx.owner
    for node in _stampable(ctx):
        if node.name in ctx.cordoned or node.annotations.get(CORDON_OWNER) != owner:
            continue
        if node.name in ctx.busy:
            ctx.cordoned.add(node.name)
        else:
            _unstamp(ctx, node)


def release_all(ctx: Pass) -> None:
    """Terminal and deleted paths: find our stamps on every node the run may have stamped (so a
    cordon placed by a pass that crashed before recording it is found too), release them, hold
    nothing."""
    owner = ctx.owner
    for node in _stampable(ctx):
        if node.annotations.get(CORDON_OWNER) == owner:
            _unstamp(ctx, node)
    ctx.cordoned.clear()
