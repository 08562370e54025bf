"""The kubernetes backend's artifact store over real HTTP against the API stand-in (§3.6,
"Operator storage"): the run's ``<run>-artifacts`` ConfigMap, created owned by the run and
labelled with it, text in ``data`` and anything else in ``binaryData``, its budget counted
from what it already holds, a re-harvest writing nothing twice, a lost race retried once, and
every failure a dropped ref rather than an error."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest
from engine_world import run_object
from kube_cluster import Journal
from lightkube import Client
from lightkube.resources.core_v1 import ConfigMap

from glimmer.api.run import BurnInRun
from glimmer.backends.kubernetes.artifacts import KubeArtifacts
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.resources import as_dict
from glimmer.contract.vocab import Artifact
from glimmer.engine.backend import Conflict
from glimmer.engine.keys import RUN_LABEL

NS = "default"
CM_PATH = "/api/v1/namespaces/default/configmaps"


def art(name: str, payload: bytes, media: str = "application/json") -> Artifact:
    digest = "sha256:" + hashlib.sha256(payload).hexdigest()
    return Artifact(name, media, payload=payload, size_bytes=len(payload), digest=digest)


def submitted(backend: KubernetesBackend, name: str = "run") -> BurnInRun:
    return backend.submit(run_object(name, targets=["n1"]))


def config_map(client: Client, name: str = "run-artifacts") -> dict[str, Any]:
    return as_dict(client.get(ConfigMap, name, namespace=NS))


def writes(journal: Journal) -> list[str]:
    return [
        e["method"]
        for e in journal()
        if e["path"].startswith(CM_PATH) and e["method"] in ("POST", "PUT", "PATCH")
    ]


def test_text_goes_to_data_and_anything_else_to_binary_data(
    backend: KubernetesBackend, client: Client
) -> None:
    run = submitted(backend)
    text = art("per-device.json", b'{"gpus": 8}\n')
    blob = art("dump.bin", b"\xff\x00\xfe\n", "application/octet-stream")
    refs = backend.store_artifacts(run, "burn", "run-burn-n1-1", [text, blob])
    held = config_map(client)
    assert held["data"] == {"burn.run-burn-n1-1.per-device.json": '{"gpus": 8}\n'}
    assert base64.b64decode(held["binaryData"]["burn.run-burn-n1-1.dump.bin"]) == blob.payload
    assert [(r.config_map, r.key, r.digest, r.size_bytes) for r in refs] == [
        ("run-artifacts", "burn.run-burn-n1-1.per-device.json", text.digest, len(text.payload)),
        ("run-artifacts", "burn.run-burn-n1-1.dump.bin", blob.digest, len(blob.payload)),
    ]
    assert all(r.dropped is None for r in refs)


def test_the_config_map_is_owned_by_the_run_and_labelled_with_it(
    backend: KubernetesBackend, client: Client
) -> None:
    run = submitted(backend)
    backend.store_artifacts(run, "burn", "pod-1", [art("a.json", b"{}\n")])
    meta = config_map(client)["metadata"]
    assert meta["labels"] == {RUN_LABEL: "run"}
    [owner] = meta["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("BurnInRun", "run", run.metadata.uid)
    assert owner["controller"] is True


def test_a_later_execution_adds_its_entries_beside_the_earlier_ones(
    backend: KubernetesBackend, client: Client
) -> None:
    run = submitted(backend)
    backend.store_artifacts(run, "burn", "pod-1", [art("a.json", b"1\n")])
    backend.store_artifacts(run, "burn", "pod-2", [art("a.json", b"2\n")])
    assert config_map(client)["data"] == {"burn.pod-1.a.json": "1\n", "burn.pod-2.a.json": "2\n"}


def test_past_the_budget_counted_from_what_the_config_map_holds_an_artifact_is_dropped(
    backend: KubernetesBackend, client: Client
) -> None:
    run = submitted(backend)
    chunk = b"x" * (250 * 1024)
    for pod in ("pod-1", "pod-2", "pod-3"):  # 750 KiB held, in three separate writes
        [ref] = backend.store_artifacts(run, "burn", pod, [art("big.txt", chunk, "text/plain")])
        assert ref.dropped is None
    [over] = backend.store_artifacts(run, "burn", "pod-4", [art("big.txt", chunk, "text/plain")])
    assert over.dropped is not None and "921600-byte budget" in over.dropped
    assert (over.config_map, over.key, over.digest) == (None, None, None)
    assert "burn.pod-4.big.txt" not in config_map(client)["data"]


def test_a_refused_name_is_dropped_and_never_written(
    backend: KubernetesBackend, client: Client, journal: Journal
) -> None:
    run = submitted(backend)
    [ref] = backend.store_artifacts(run, "burn", "pod-1", [art("../etc", b"x\n")])
    assert ref.dropped is not None and ref.key is None
    assert writes(journal) == []


def test_a_re_harvest_writes_nothing_and_returns_the_same_refs(
    backend: KubernetesBackend, client: Client, journal: Journal
) -> None:
    run = submitted(backend)
    artifacts = [art("a.json", b"{}\n"), art("b.bin", b"\xff\n")]
    first = backend.store_artifacts(run, "burn", "pod-1", artifacts)
    before = writes(journal)
    again = backend.store_artifacts(run, "burn", "pod-1", artifacts)
    assert again == first
    assert writes(journal) == before == ["POST"]


def test_a_write_that_loses_a_race_is_read_again_and_retried_once(conflicting: Client) -> None:
    backend = KubernetesBackend(conflicting)
    run = submitted(backend)  # the stand-in refuses every second write: one of each pair below
    refs = []
    for pod in ("pod-1", "pod-2", "pod-3"):
        refs += backend.store_artifacts(run, "burn", pod, [art("a.json", pod.encode() + b"\n")])
    assert all(r.dropped is None for r in refs), refs
    held = config_map(conflicting)["data"]
    assert held == {f"burn.{p}.a.json": f"{p}\n" for p in ("pod-1", "pod-2", "pod-3")}


def test_a_second_lost_race_drops_what_was_to_be_written(
    backend: KubernetesBackend, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = submitted(backend)
    tries: list[bool] = []

    def always_conflicting(self: KubeArtifacts, body: dict[str, Any], created: bool) -> None:
        tries.append(created)
        raise Conflict("replace ConfigMap default/run-artifacts: the object has been modified")

    monkeypatch.setattr(KubeArtifacts, "_write", always_conflicting)
    refs = backend.store_artifacts(run, "burn", "pod-1", [art("a.json", b"{}\n"), art(".", b"")])
    assert len(tries) == 2
    assert refs[0].dropped is not None and refs[0].dropped.startswith("write failed: ")
    assert "has been modified" in refs[0].dropped
    assert (refs[0].config_map, refs[0].key, refs[0].digest) == (None, None, None)
    assert refs[1].dropped is not None and "[A-Za-z0-9._-]" in refs[1].dropped


def test_a_config_map_of_that_name_the_run_does_not_own_is_never_written_into(
    backend: KubernetesBackend, client: Client
) -> None:
    run = submitted(backend)
    theirs = {"metadata": {"name": "run-artifacts", "namespace": NS}, "data": {"mine": "yes"}}
    client.create(ConfigMap.from_dict(theirs), namespace=NS)
    [ref] = backend.store_artifacts(run, "burn", "pod-1", [art("a.json", b"{}\n")])
    assert ref.dropped is not None and "not owned by this run" in ref.dropped
    assert config_map(client)["data"] == {"mine": "yes"}


def test_the_config_map_goes_with_its_run(backend: KubernetesBackend, client: Client) -> None:
    run = submitted(backend)
    backend.store_artifacts(run, "burn", "pod-1", [art("a.json", b"{}\n")])
    assert config_map(client)["data"]
    backend.delete_run(NS, "run")
    names = [c.metadata.name for c in client.list(ConfigMap, namespace=NS)]
    assert "run-artifacts" not in names
