"""The engine and a backend's artifact store (:class:`glimmer.engine.backend.ArtifactStore`,
§3.6 "Operator storage"): a substrate that offers one is handed each harvested execution's
artifacts after the attempt is decided and before the status write; the refs it returns are on
the result, accumulated across attempts and never twice after a re-harvest; nothing it does
changes a phase. A substrate without one stores nothing and the result has no artifacts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine_world import GATE_MISCOMPARES, Recorder, ScriptedRunner, run_object, spec_of, world

from glimmer.api.result import ArtifactRef, TestResult
from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import Artifact, Phase
from glimmer.engine.backend import BackendError, Conflict
from glimmer.verdict.artifact_refs import place, store_name

FENCED = (
    "-----BEGIN BURNIN ARTIFACT per-device.json application/json-----\n"
    '{"gpus": 8}\n'
    "-----END BURNIN ARTIFACT-----\n"
    "-----BEGIN BURNIN ARTIFACT ../escape text/plain-----\n"
    "x\n"
    "-----END BURNIN ARTIFACT-----\n"
    "miscompares=0\n"
)
TESTS = {"burn": spec_of("gpu-burn", durationSeconds=60, thresholds=[GATE_MISCOMPARES])}


class Storing(Recorder):
    """A simulator with an artifact store: entries kept in a dict per run, by the shared rules;
    every call logged among the engine's other actions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held: dict[str, dict[str, str]] = {}
        self.calls: list[tuple[str, str, tuple[str, ...]]] = []
        self.recorded: list[bool] = []  # per status write: whether any result had artifacts

    def write_status(self, run: Any, status: Any) -> Any:
        self.recorded.append(any(r.artifacts for r in status.results or ()))
        return super().write_status(run, status)

    def store_artifacts(
        self, run: BurnInRun, test: str, pod_name: str, artifacts: Sequence[Artifact]
    ) -> list[ArtifactRef]:
        self.log.append(("store", pod_name))
        self.calls.append((test, pod_name, tuple(a.name for a in artifacts)))
        held = self.held.setdefault(run.name, {})
        placed = place(store_name(run.name), test, pod_name, artifacts, held)
        held.update({e.key: e.value for e in placed.entries})
        return list(placed.refs)


class Failing(Recorder):
    """A store that fails outright (the backend broke its promise to return dropped refs)."""

    def store_artifacts(self, *args: Any) -> list[ArtifactRef]:
        raise BackendError("the API server is away")


def _settled(backend_cls: type, **spec: Any) -> tuple[Any, TestResult]:
    tests = {"burn": TESTS["burn"].model_copy(update=spec)} if spec else TESTS
    w = world(
        1, tests, [{"testRef": "burn"}], runner=ScriptedRunner(FENCED), backend_cls=backend_cls
    )
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    [result] = w.run().status.results
    return w.backend, result


def test_a_backend_with_a_store_gets_each_artifact_and_the_result_names_where_it_is() -> None:
    backend, result = _settled(Storing)
    [(test, pod, names)] = backend.calls
    assert (test, names) == ("burn", ("per-device.json", "../escape"))
    stored, refused = result.artifacts
    assert stored.config_map == "run-artifacts" and stored.key == f"burn.{pod}.per-device.json"
    assert stored.digest is not None and stored.digest.startswith("sha256:")
    assert backend.held["run"][stored.key] == '{"gpus": 8}\n'
    assert refused.name == "../escape" and refused.dropped and refused.key is None
    assert result.attempts[0].pod_name == pod


def test_a_dropped_artifact_never_changes_the_phase() -> None:
    _, with_store = _settled(Storing)
    _, failing = _settled(Failing)
    assert with_store.phase is failing.phase is Phase.PASSED
    assert failing.artifacts is not None
    assert all(r.dropped and r.dropped.startswith("write failed: ") for r in failing.artifacts)
    assert all(r.key is None and r.digest is None for r in failing.artifacts)


def test_the_artifacts_are_stored_before_the_status_that_records_the_attempt() -> None:
    backend, _ = _settled(Storing)
    kinds = backend.kinds()
    first_store = kinds.index("store")
    statuses_before = kinds[:first_store].count("status")
    # The first status written after the store is the one that records the attempt, refs and all.
    assert backend.recorded[statuses_before] is True
    assert not any(backend.recorded[:statuses_before])
    assert "delete" not in kinds[:first_store]


def _linked(tests: dict[str, Any], count: int) -> tuple[Storing, TestResult]:
    w = world(count, tests, [{"testRef": "t"}], runner=ScriptedRunner(FENCED), backend_cls=Storing)
    w.submit(run_object(targets=[f"node-{i:03d}" for i in range(count)], maxConcurrentNodes=count))
    w.drive()
    [result] = w.run().status.results
    backend = w.backend
    assert isinstance(backend, Storing)
    return backend, result


def test_a_pair_stores_the_artifacts_of_both_ends() -> None:
    backend, result = _linked({"t": spec_of("ib-write-bw", scope="Pair", durationSeconds=60)}, 2)
    pods = {pod for _, pod, _ in backend.calls}
    assert len(pods) == 2 and any("server" in p for p in pods) and any("client" in p for p in pods)
    assert {r.key for r in result.artifacts if r.key} == {f"t.{p}.per-device.json" for p in pods}
    assert result.phase is Phase.PASSED


def test_a_group_stores_every_ranks_artifacts() -> None:
    backend, result = _linked({"t": spec_of("nccl", scope="Group", durationSeconds=60)}, 3)
    pods = [pod for _, pod, _ in backend.calls]
    assert len(set(pods)) == 3
    assert len([r for r in result.artifacts if r.key]) == 3
    assert result.phase is Phase.PASSED


def test_a_backend_without_a_store_leaves_the_result_without_artifacts() -> None:
    backend, result = _settled(Recorder)
    assert "store" not in backend.kinds()
    assert result.artifacts is None
    assert result.phase is Phase.PASSED


def test_refs_accumulate_across_attempts() -> None:
    _, result = _settled(Storing, repeat_count=2)
    pods = [a.pod_name for a in result.attempts]
    assert len(pods) == 2 and pods[0] != pods[1]
    assert [r.key for r in result.artifacts if r.key] == [
        f"burn.{pod}.per-device.json" for pod in pods
    ]
    # The same refusal in both attempts is one ref (identity: name and reason).
    assert [r.name for r in result.artifacts if r.dropped] == ["../escape"]


class LosesAWrite(Storing):
    """Refuses the first status write that records an artifact: the pass is lost and the next
    one harvests the same execution again."""

    lost = False

    def write_status(self, run: Any, status: Any) -> Any:
        if not self.lost and any(r.artifacts for r in status.results or ()):
            self.lost = True
            raise Conflict("a stale resourceVersion")
        return super().write_status(run, status)


def test_a_re_harvest_after_a_lost_status_write_records_no_ref_twice() -> None:
    backend, result = _settled(LosesAWrite)
    assert backend.lost
    assert len(backend.calls) == 2 and backend.calls[0] == backend.calls[1]  # harvested twice
    assert len(result.artifacts) == 2
    assert len({r.key or r.name for r in result.artifacts}) == 2
