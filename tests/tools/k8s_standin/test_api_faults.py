"""The injected conflicts and the request journal, read as a client would: over HTTP and from
the journal file."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.tools.k8s_standin.conftest import MERGE, RUNS, run_body
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.journal import read


def test_every_nth_write_is_409_conflict_without_effect(tmp_path: Path) -> None:
    with api_in_thread(conflict_every=3) as api, httpx.Client(base_url=api.url) as http:
        codes = [http.post(RUNS, json=run_body(f"r{i}")).status_code for i in range(6)]
        assert codes == [201, 201, 409, 201, 201, 409]
        assert http.get(f"{RUNS}/r2").status_code == 404  # the refused create did nothing
        assert http.get(RUNS).status_code == 200  # reads are never refused
        ok = [
            http.patch(f"{RUNS}/r{i}", json={"spec": {"suspend": True}}, headers=MERGE)
            for i in (0, 1)
        ]
        assert [r.status_code for r in ok] == [200, 200]
        refused = http.patch(f"{RUNS}/r0", json={"spec": {"suspend": False}}, headers=MERGE)
        assert (refused.status_code, refused.json()["reason"]) == (409, "Conflict")
        assert http.get(f"{RUNS}/r0").json()["spec"]["suspend"] is True


def test_the_journal_records_every_request_with_its_rbac_verb(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    with (
        api_in_thread(journal=journal) as api,
        httpx.Client(base_url=api.url, headers={"User-Agent": "probe/1"}) as http,
    ):
        http.post(RUNS, json=run_body())
        http.get(RUNS)
        http.get(f"{RUNS}/smoke")
        http.patch(f"{RUNS}/smoke/status", json={"status": {"passed": 1}}, headers=MERGE)
        http.get(RUNS, params={"watch": "true", "timeoutSeconds": "1"})
        http.delete(f"{RUNS}/smoke")
        http.get("/api")
    entries = read(journal)
    verbs = [(e.get("verb"), e.get("resource")) for e in entries]
    assert verbs == [
        ("create", "burninruns"),
        ("list", "burninruns"),
        ("get", "burninruns"),
        ("patch", "burninruns/status"),
        ("watch", "burninruns"),
        ("delete", "burninruns"),
        (None, None),
    ]
    assert {e["user_agent"] for e in entries} == {"probe/1"}
    assert entries[0]["group"] == "burnin.glimmer.ai"
    assert entries[0]["status"] == 201
    assert entries[-1]["path"] == "/api"
