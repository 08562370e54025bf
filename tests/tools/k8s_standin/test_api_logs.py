"""Pod logs: the text the kubelet stand-in writes to <log_dir>/<ns>/<pod>.log."""

from __future__ import annotations

import httpx

from tests.k8s_api import K8sAPI
from tests.tools.k8s_standin.conftest import PODS, pod_body


def write_log(api: K8sAPI, pod: str, text: str) -> None:
    folder = api.log_dir / "default"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{pod}.log").write_text(text)


def test_the_log_of_a_pod_is_its_log_file(http: httpx.Client, k8s_api: K8sAPI) -> None:
    http.post(PODS, json=pod_body())
    write_log(k8s_api, "runner", "one\ntwo\nthree\n")
    r = http.get(f"{PODS}/runner/log")
    assert r.status_code == 200
    assert r.text == "one\ntwo\nthree\n"
    assert r.headers["content-type"].startswith("text/plain")


def test_tail_lines_and_the_container_name_are_honoured(
    http: httpx.Client, k8s_api: K8sAPI
) -> None:
    http.post(PODS, json=pod_body())
    write_log(k8s_api, "runner", "one\ntwo\nthree\n")
    assert (
        http.get(f"{PODS}/runner/log", params={"tailLines": "2", "container": "runner"}).text
        == "two\nthree\n"
    )
    wrong = http.get(f"{PODS}/runner/log", params={"container": "sidecar"})
    assert (wrong.status_code, wrong.json()["reason"]) == (400, "BadRequest")


def test_a_missing_pod_is_404_and_a_pod_without_a_log_yet_is_400_waiting(
    http: httpx.Client,
) -> None:
    missing = http.get(f"{PODS}/ghost/log")
    assert (missing.status_code, missing.json()["reason"]) == (404, "NotFound")
    http.post(PODS, json=pod_body())
    waiting = http.get(f"{PODS}/runner/log")
    assert waiting.status_code == 400
    assert "is waiting to start" in waiting.json()["message"]


def test_a_followed_log_streams_what_is_appended_until_the_pod_finishes(
    http: httpx.Client, k8s_api: K8sAPI
) -> None:
    http.post(PODS, json=pod_body())
    write_log(k8s_api, "runner", "first\n")
    with http.stream("GET", f"{PODS}/runner/log", params={"follow": "true"}) as r:
        chunks = r.iter_text()
        assert next(chunks) == "first\n"
        with (k8s_api.log_dir / "default" / "runner.log").open("a") as f:
            f.write("second\n")
        assert next(chunks) == "second\n"
        http.patch(
            f"{PODS}/runner/status",
            json={"status": {"phase": "Succeeded"}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert "".join(chunks) == ""  # the stream ends with the pod
