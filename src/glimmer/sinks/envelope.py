"""The delivery envelope (specs/burnin.md §5.2–§5.3), assembled in ONE place for every substrate.

A sink never sees a run: it sees the envelope built here from the run as the engine describes
it at the transition (spec, metadata, the status of the pass), the transition's reason and key,
and the pinned plan's baseline flag. ``deliveryId`` is a pure function of what is described —
run UID, reason, key — so every retry and every re-send of the same transition carries the same
id, and a receiver dedupes on it. Bodies of retries differ (``sentAt``; a re-sent terminal
envelope may carry more results).

Field rules kept from the wire contract: additive only; ``omitempty`` fields are left out when
empty (absent is not zero); attempts and conditions never travel.

What ``results`` holds depends on the reason (:data:`CARRIES`), so that what a run sends is
linear in its results rather than quadratic: a RunPhaseChanged carries every result of the run
(the terminal one is the verdict a receiver keeps), a TestCompleted only the result that
settled, a Checkpoint only the results still in flight; ``fingerprint`` follows, limited to the
nodes the carried results name. ``summary`` always counts the whole run. A receiver that wants
the run's state between phase changes folds the envelopes it got by ``(name, nodes)`` (the
Prometheus exporter does); docs/sinks.md records the decision.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.contract.names import validate_metric_name
from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.sinks.errors import DeliveryError

VERSION = "burnin.glimmer.ai/v1alpha1"

RUN_PHASE_CHANGED = "RunPhaseChanged"
TEST_COMPLETED = "TestCompleted"
CHECKPOINT = "Checkpoint"
REASONS: frozenset[str] = frozenset({RUN_PHASE_CHANGED, TEST_COMPLETED, CHECKPOINT})

Envelope = dict[str, Any]


@dataclass(frozen=True)
class Cluster:
    """Who the run ran on. ``name`` only from an operator's own flag (never guessed); ``uid``
    the kube-system namespace UID on Kubernetes. Both empty: the field is left out."""

    name: str = ""
    uid: str = ""


@dataclass(frozen=True)
class Transition:
    """One delivery as the sinks see it: what happened (reason, key, checkpoint sequence), the
    run as the envelope describes it, the pinned plan's baseline flag and sink names, the
    substrate's clock at the transition (virtual on the simulator), and for a TestCompleted the
    result that settled (when not given it is looked up in the run by the key)."""

    reason: str
    key: str
    run: BurnInRun
    baseline: bool = False
    sinks: tuple[str, ...] = ()
    sequence: int | None = None
    at: datetime | None = None
    result: TestResult | None = None


def delivery_id(run_uid: str, reason: str, key: str) -> str:
    """``hex(sha256(uid NUL reason NUL key)[:16])``: 32 lowercase hex characters."""
    digest = hashlib.sha256(f"{run_uid}\x00{reason}\x00{key}".encode()).digest()
    return digest[:16].hex()


def rfc3339(at: datetime) -> str:
    """UTC to the second, ``Z`` suffix (a naive time is taken as UTC)."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` unless ``value`` is empty (Go's ``omitempty``: None, "", 0, False, {} and
    [] are all left out)."""
    if value is None or value == "" or value is False:
        return
    if isinstance(value, (dict, list, tuple)) and not value:
        return
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        return
    out[key] = value


def _all(transition: Transition) -> list[TestResult]:
    status = transition.run.status
    return list(status.results or ()) if status is not None else []


def _settled(transition: Transition) -> list[TestResult]:
    if transition.result is not None:
        return [transition.result]
    # A caller that did not say which result settled: the one the key names, last one wins.
    found = [r for r in _all(transition) if _key_of(r) == transition.key]
    return found[-1:]


def _in_flight(transition: Transition) -> list[TestResult]:
    return [r for r in _all(transition) if r.phase not in TERMINAL_PHASES]


def _key_of(result: TestResult) -> str:
    """The TestCompleted key of a result: ``<test>/<node1>[+<node2>…]`` (§5.1)."""
    return f"{result.name}/{'+'.join(result.nodes or ())}"


# Which results each reason's envelope carries. A phase change is rare (Running, then the
# terminal phase, and re-sends of that) and says everything; the per-unit reasons are many and
# say only what changed, so every envelope but the phase changes is O(1) in the run's size.
CARRIES: dict[str, Callable[[Transition], list[TestResult]]] = {
    RUN_PHASE_CHANGED: _all,
    TEST_COMPLETED: _settled,
    CHECKPOINT: _in_flight,
}


def _fingerprint(transition: Transition, carried: list[TestResult]) -> dict[str, str] | None:
    """The run's fingerprints a phase change carries all of; a per-unit envelope only those of
    the nodes its results name (the map is as long as the run is wide)."""
    status = transition.run.status
    prints = (status.fingerprint if status is not None else None) or {}
    if CARRIES.get(transition.reason, _all) is _all:
        return dict(prints)
    # Looked up by node, never by walking the map: a per-unit envelope costs the same at any
    # width of run.
    named = dict.fromkeys(node for r in carried for node in r.nodes or ())
    return {node: prints[node] for node in named if node in prints}


def result_entry(result: TestResult) -> dict[str, Any]:
    """One ``results[]`` item. ``name``, ``kind`` (``""`` marks a synthetic result) and
    ``phase`` are always present; everything else only when it says something."""
    out: dict[str, Any] = {"name": result.name, "kind": result.kind}
    _put(out, "scope", result.scope.value if result.scope is not None else None)
    out["phase"] = result.phase.value
    _put(out, "nodes", list(result.nodes or ()))
    _put(out, "startedAt", rfc3339(result.started_at) if result.started_at else None)
    _put(out, "finishedAt", rfc3339(result.finished_at) if result.finished_at else None)
    _put(out, "metrics", dict(result.metrics or {}))
    _put(out, "message", result.message)
    _put(
        out,
        "violations",
        [
            _omit_empty(
                {
                    "index": v.index,
                    "metric": v.metric,
                    "cause": v.cause,
                    "kind": v.kind,
                    "reason": v.reason,
                },
                keep=("index", "metric"),
            )
            for v in result.violations or ()
        ],
    )
    _put(
        out,
        "notEvaluated",
        [{"metric": n.metric, "reason": n.reason} for n in result.not_evaluated or ()],
    )
    _put(out, "unmeasurable", list(result.unmeasurable or ()))
    _put(
        out,
        "artifacts",
        [
            _omit_empty(
                {
                    "name": a.name,
                    "mediaType": a.media_type,
                    "sizeBytes": a.size_bytes,
                    "digest": a.digest,
                    "configMap": a.config_map,
                    "key": a.key,
                    "dropped": a.dropped,
                },
                keep=("name",),
            )
            for a in result.artifacts or ()
        ],
    )
    _put(out, "variantAxes", dict(result.variant_axes or {}))
    if result.segments_required > 0:
        # Present only for a segmented soak; its metrics are then the fold of the windows.
        segments: dict[str, Any] = {
            "completed": result.segments_completed,
            "required": result.segments_required,
        }
        _put(segments, "segmentSeconds", result.segment_seconds)
        _put(segments, "truncatedAttempts", result.truncated_attempts)
        out["segments"] = segments
    return out


def _omit_empty(fields: dict[str, Any], keep: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key in keep:
            out[key] = value
        else:
            _put(out, key, value)
    return out


def build_envelope(
    transition: Transition, *, sent_at: datetime, cluster: Cluster | None = None
) -> Envelope:
    """The §5.3 envelope of ``transition``, built now (``sent_at``)."""
    run = transition.run
    status = run.status
    meta = run.metadata
    uid = meta.uid or ""
    phase = status.phase.value if status is not None else Phase.PENDING.value
    env: Envelope = {"version": VERSION}
    _put(env, "baseline", transition.baseline)
    env["deliveryId"] = delivery_id(uid, transition.reason, transition.key)
    env["reason"] = transition.reason
    env["sentAt"] = rfc3339(sent_at)
    identity: dict[str, Any] = {
        "namespace": meta.namespace or "default",
        "name": run.name,
        "uid": uid,
    }
    _put(identity, "profile", run.spec.profile_ref)
    env["run"] = identity
    if cluster is not None:
        _put(env, "cluster", _omit_empty({"name": cluster.name, "uid": cluster.uid}, keep=()))
    env["phase"] = phase
    if phase == Phase.CANCELLED.value:
        _put(env, "cancelReason", run.spec.cancel_reason)
    if transition.reason == CHECKPOINT:
        _put(env, "checkpointSequence", transition.sequence)
    carried = CARRIES.get(transition.reason, _all)(transition)
    _put(env, "fingerprint", _fingerprint(transition, carried))
    _put(env, "results", [result_entry(r) for r in carried])
    env["summary"] = {
        "passed": status.passed if status else 0,
        "failed": status.failed if status else 0,
        "errored": status.errored if status else 0,
        "skipped": status.skipped if status else 0,
    }
    return env


def validate_envelope(env: Envelope) -> None:
    """Refuse an envelope no receiver should get (a permanent failure: it is never sent)."""
    problems: list[str] = []
    if env.get("version") != VERSION:
        problems.append(f"version is {env.get('version')!r}, not {VERSION!r}")
    if not env.get("deliveryId"):
        problems.append("deliveryId is empty")
    if not env.get("reason"):
        problems.append("reason is empty")
    if not (env.get("run") or {}).get("uid"):
        problems.append("run.uid is empty")
    if not env.get("sentAt"):
        problems.append("sentAt is zero")
    for result in env.get("results") or ():
        for name in result.get("metrics") or {}:
            why = validate_metric_name(name)
            if why is not None:
                problems.append(f"result {result.get('name')!r}: {why}")
    if problems:
        raise DeliveryError("invalid envelope: " + "; ".join(problems), permanent=True)
