"""Delivery through the engine on the simulator (specs/burnin.md §5.1, §2.14; scenarios 55–56):
a sink failure never changes a verdict, the terminal envelope is re-sent on later passes until
accepted, every envelope reaches a flaky webhook exactly once per deliveryId, and a restart
re-sends what was owed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine_world import GATE_MISCOMPARES, ScriptedRunner, reply, run_object, spec_of, world
from receiver import Receiver
from sink_doubles import FakeClock, Gate

from glimmer.api.load import load_text, of_kind
from glimmer.api.sink import BurnInSink
from glimmer.backends.sim.driver import settled
from glimmer.contract.vocab import Phase
from glimmer.engine.keys import PENDING_DELIVERY_ANNOTATION
from glimmer.sinks.config import sinks_from_specs
from glimmer.sinks.envelope import delivery_id
from glimmer.sinks.jsonl import JsonlSink
from glimmer.sinks.outbox import Outbox
from glimmer.sinks.sender import RetryPolicy, Sender
from glimmer.sinks.sinkset import SinkSet

GATED = spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])
QUICK = RetryPolicy(attempts=2, base=1.0, cap=2.0, timeout=0.3, budget=15.0)
DAY = 86_400.0


def two_node_world(**profile_spec: Any) -> Any:
    runner = ScriptedRunner(default="miscompares=0\nok").on(reply("miscompares=2"), node="node-001")
    return world(2, {"a": GATED}, [{"testRef": "a"}], runner=runner, **profile_spec)


def sink_set(*sinks: Any, state_dir: Path | None = None) -> SinkSet:
    return SinkSet(always=list(sinks), outbox=Outbox(state_dir), sender=Sender(QUICK, FakeClock()))


def verdict(w: Any) -> Any:
    status = w.run().status
    return status.phase, [r.model_dump() for r in status.results]


def test_a_failing_sink_never_changes_the_verdict() -> None:
    clean = two_node_world()
    clean.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    clean.drive()
    for bug in (False, True):
        w = two_node_world()
        w.backend.sink_set = sink_set(Gate(bug=bug))
        w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
        w.drive(until=DAY)
        assert verdict(w) == verdict(clean)
        assert w.run().status.phase is Phase.FAILED


def test_the_terminal_envelope_is_pending_and_resent_every_five_minutes_until_accepted() -> None:
    gate = Gate()
    w = two_node_world()
    w.backend.sink_set = sink_set(gate)
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    w.drive(until=w.backend.t + 3600)
    run = w.run()
    assert run.status.phase is Phase.FAILED
    assert run.metadata.annotations[PENDING_DELIVERY_ANNOTATION] == "Failed"
    finished = run.status.finished_at
    tries = gate.tries
    w.drive(until=w.backend.t + 900)  # three more re-sends, five minutes apart, all refused
    assert gate.tries == tries + 3 and not settled(w.run())
    gate.down = False
    final = w.drive(until=w.backend.t + DAY).run
    assert settled(final) and PENDING_DELIVERY_ANNOTATION not in (final.metadata.annotations or {})
    assert final.status.phase is Phase.FAILED and final.status.finished_at == finished
    # Everything owed went out, in order, the terminal envelope last and once.
    reasons = [e["reason"] for e in gate.got]
    assert reasons == ["RunPhaseChanged", "TestCompleted", "TestCompleted", "RunPhaseChanged"]
    assert gate.got[-1]["phase"] == "Failed"


SINKS_YAML = """
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInSink
metadata: {name: hook, namespace: default}
spec:
  type: Webhook
  webhook: {url: "URL"}
---
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInSink
metadata: {name: results, namespace: default}
spec:
  type: ConfigMap
  configMap: {name: burnin-results}
---
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInSink
metadata: {name: dashboards, namespace: default}
spec:
  type: Prometheus
"""


def sink_objects(url: str, *names: str) -> list[BurnInSink]:
    """The sinks of SINKS_YAML (only ``names``, when given) as ``glimmer.api.load`` reads them."""
    loaded = of_kind(load_text(SINKS_YAML.replace("URL", url)), BurnInSink)
    return [obj for obj, _ in loaded if not names or obj.name in names]


def test_55_configmap_sink_stores_each_envelope_under_its_delivery_id(
    receiver: Receiver, tmp_path: Path
) -> None:
    w = two_node_world(sinks=["hook", "results", "dashboards"])
    w.backend.sink_set = sinks_from_specs(
        objects=sink_objects(receiver.url), state_dir=tmp_path, clock=FakeClock()
    )
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    assert settled(w.drive(until=DAY).run)
    ids = {delivery_id(d.run_uid, d.reason, d.key) for d in w.backend.deliveries}
    folder = tmp_path / "configmaps" / "default" / "burnin-results"
    assert {p.stem for p in folder.glob("*.json")} == ids == set(receiver.stored)
    exporter = w.backend.sink_set.exporter
    assert exporter is not None and exporter.tracked == 1
    assert 'burnin_run_phase{namespace="default",run="run",profile="prof",phase="Failed"} 1' in (
        exporter.exposition()
    )


def test_55_webhook_400_is_not_retried_and_500_is(receiver: Receiver, tmp_path: Path) -> None:
    w = two_node_world(sinks=["hook"])
    w.backend.sink_set = sinks_from_specs(
        objects=sink_objects(receiver.url, "hook"), clock=FakeClock()
    )
    receiver.script = ["400", "500"]  # the Running envelope is refused; TestCompleted fails once
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    assert settled(w.drive(until=DAY).run)
    running, first_completed = (
        delivery_id(d.run_uid, d.reason, d.key) for d in w.backend.deliveries[:2]
    )
    assert receiver.posts[running] == 1 and running not in receiver.stored
    assert receiver.posts[first_completed] == 2 and first_completed in receiver.stored
    assert w.backend.sink_set.states["default/hook"].last_error == ""


def test_56_delivery_id_is_the_idempotency_key_and_stable_across_resends(
    receiver: Receiver,
) -> None:
    w = two_node_world(sinks=["hook"])
    w.backend.sink_set = sinks_from_specs(
        objects=sink_objects(receiver.url, "hook"), clock=FakeClock()
    )
    receiver.script = ["500"] * 8
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    assert settled(w.drive(until=DAY).run)
    uid = w.run().metadata.uid
    for seen in receiver.requests:
        envelope = seen.envelope()
        assert seen.key == envelope["deliveryId"]
    # The Running envelope was owed until the receiver recovered: re-sent on later passes.
    running = delivery_id(uid, "RunPhaseChanged", "Running")
    sent = [s.envelope() for s in receiver.requests if s.key == running]
    assert len(sent) > 2 and len({e["sentAt"] for e in sent}) > 1  # bodies differ, id does not
    assert running in receiver.stored
    # The same (uid, reason, key) through another assembler call gives the same id.
    assert delivery_id(uid, "RunPhaseChanged", "Running") == running


def test_a_flaky_webhook_gets_every_envelope_exactly_once(receiver: Receiver) -> None:
    receiver.script = ["refuse", "delay", "500", "refuse", "500", "delay"]
    entries = [{"testRef": "a"}, {"testRef": "b"}]
    runner = ScriptedRunner(default="miscompares=0\nok")
    w = world(3, {"a": GATED, "b": GATED}, entries, runner=runner, sinks=["hook"])
    w.backend.sink_set = sinks_from_specs(
        objects=sink_objects(receiver.url, "hook"), clock=FakeClock(), policy=QUICK
    )
    w.submit(run_object(targets=["node-000", "node-001", "node-002"], maxConcurrentNodes=3))
    final = w.drive(until=DAY).run
    assert settled(final) and final.status.phase is Phase.PASSED
    implied = [delivery_id(d.run_uid, d.reason, d.key) for d in w.backend.deliveries]
    assert len(implied) == 1 + 6 + 1
    assert sorted(receiver.stored) == sorted(set(implied))
    assert any(n > 1 for n in receiver.posts.values())  # duplicates arrived, and were deduped


def test_a_restart_resends_what_was_owed(receiver: Receiver, tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = tmp_path / "out.jsonl"
    first = sink_set(Gate("file"), state_dir=state)
    w = two_node_world()
    w.backend.sink_set = first
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    w.drive(until=w.backend.t + 3600)
    assert len(Outbox(state)) == 4  # Running, two TestCompleted, the terminal envelope
    # A new process with the same state folder and the sink back up: re-sent at once.
    second = SinkSet(always=[JsonlSink(path, name="file")], outbox=Outbox(state))
    assert second.resend_pending() and len(Outbox(state)) == 0
    lines = path.read_text().splitlines()
    assert len(lines) == 4
    # The engine's own re-send of the terminal envelope then finds nothing owed.
    w.backend.sink_set = second
    assert settled(w.drive(until=w.backend.t + DAY).run)


def test_deleting_a_finished_run_forgets_its_prometheus_series() -> None:
    from glimmer.sinks.prometheus import Exporter, PrometheusSink

    w = two_node_world()
    exporter = Exporter()
    w.backend.sink_set = SinkSet(
        always=[PrometheusSink(exporter)], exporter=exporter, sender=Sender(QUICK, FakeClock())
    )
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    w.drive(until=DAY)
    assert exporter.tracked == 1
    w.backend.delete_run("default", "run")  # a finished run holds no finalizer: gone at once
    assert w.backend.get_run("default", "run") is None
    assert exporter.tracked == 0
