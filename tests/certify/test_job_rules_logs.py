"""Which log a failed or timed-out Job keeps (specs/certify.md §3.2, §3.3) — §9.2 scenario 40:
failure log tail keeps the end, OOMKilled preferred, PodNotFound."""

from __future__ import annotations

from typing import Any

from glimmer.certify.job_rules import (
    NO_TERMINATED_CONTAINER,
    POD_NOT_FOUND,
    TAIL_BYTES,
    TAIL_LINES,
    LogSource,
    failed_container,
    failure_log,
    keep_tail,
    timeout_log_source,
)


def pod(
    name: str,
    *,
    node: str = "n0",
    ended: dict[str, tuple[int, str]] | None = None,
    last: dict[str, tuple[int, str]] | None = None,
    labels: dict[str, str] | None = None,
    containers: tuple[str, ...] = ("node",),
) -> dict[str, Any]:
    statuses = []
    for c in containers:
        status: dict[str, Any] = {"name": c, "state": {"running": {}}}
        if ended and c in ended:
            code, reason = ended[c]
            status["state"] = {"terminated": {"exitCode": code, "reason": reason}}
        if last and c in last:
            code, reason = last[c]
            status["lastState"] = {"terminated": {"exitCode": code, "reason": reason}}
        statuses.append(status)
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"nodeName": node, "containers": [{"name": c} for c in containers]},
        "status": {"containerStatuses": statuses},
    }


def reader(text: str = "last line\n") -> Any:
    seen: list[LogSource] = []

    def read(source: LogSource) -> str:
        seen.append(source)
        return text

    read.seen = seen  # type: ignore[attr-defined]
    return read


def test_the_first_pod_with_a_non_zero_exit_is_chosen() -> None:
    pods = [
        pod("w-2", node="n2", ended={"node": (1, "Error")}),
        pod("w-0", node="n0", ended={"node": (0, "Completed")}),
        pod("w-1", node="n1", ended={"node": (137, "Error")}),
    ]
    got = failed_container(pods)
    assert got == LogSource("w-1", "node", "n1", 137, "Error")


def test_an_oom_killed_container_is_preferred_over_an_earlier_failure() -> None:
    pods = [
        pod("w-0", ended={"node": (1, "Error")}),
        pod("w-1", node="n1", ended={"node": (137, "OOMKilled")}),
    ]
    read = reader("killed\n")
    got = failure_log(pods, read)
    assert (got.pod_name, got.node_name, got.exit_code, got.reason) == (
        "w-1",
        "n1",
        137,
        "OOMKilled",
    )
    assert got.tail == "killed\n"
    assert read.seen == [LogSource("w-1", "node", "n1", 137, "OOMKilled")]


def test_a_restarted_container_is_judged_by_its_last_termination() -> None:
    pods = [pod("w-0", last={"node": (2, "Error")})]
    assert failed_container(pods) == LogSource("w-0", "node", "n0", 2, "Error")


def test_no_pod_is_pod_not_found_with_a_tail_that_says_why() -> None:
    got = failure_log([], reader())
    assert got.reason == POD_NOT_FOUND and got.pod_name == "" and "no pod" in got.tail
    assert failure_log([], reader(), timeout=True).reason == POD_NOT_FOUND


def test_no_failed_container_is_no_terminated_container() -> None:
    got = failure_log([pod("w-0"), pod("w-1", ended={"node": (0, "Completed")})], reader())
    assert got.reason == NO_TERMINATED_CONTAINER and "non-zero" in got.tail


def test_the_tail_keeps_the_end_of_a_long_log() -> None:
    lines = [f"line {i:05d} " + "x" * 100 for i in range(2000)]
    text = "\n".join(lines) + "\n"
    kept = keep_tail(text)
    assert kept.endswith("line 01999 " + "x" * 100 + "\n")
    assert len(kept.encode()) <= TAIL_BYTES
    assert "line 01000" not in kept  # more than 800 lines back
    short = keep_tail("\n".join(f"l{i}" for i in range(1000)))
    assert short.splitlines()[0] == f"l{1000 - TAIL_LINES}"


def test_the_tail_never_splits_a_character() -> None:
    text = "é" * TAIL_BYTES  # two bytes each
    kept = keep_tail(text)
    assert set(kept) == {"é"} and len(kept.encode()) <= TAIL_BYTES


def test_a_failure_log_cuts_what_the_reader_returned() -> None:
    got = failure_log([pod("w-0", ended={"node": (1, "")})], reader("y" * (TAIL_BYTES + 10)))
    assert len(got.tail) == TAIL_BYTES and got.reason == "Error"
    assert got.to_wire() == {
        "podName": "w-0",
        "nodeName": "n0",
        "exitCode": 1,
        "reason": "Error",
        "tail": "y" * TAIL_BYTES,
    }


LAUNCHER = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}


def test_the_timeout_log_prefers_the_launcher_and_its_node_container() -> None:
    pods = [
        pod("job-node-0-0", node="n0"),
        pod("job-launcher-0-0", node="n3", labels=LAUNCHER, containers=("sidecar", "node")),
    ]
    got = timeout_log_source(pods)
    assert got == LogSource("job-launcher-0-0", "node", "n3", 0, "Timeout")
    log = failure_log(pods, reader("stuck\n"), timeout=True)
    assert (log.pod_name, log.reason, log.tail) == ("job-launcher-0-0", "Timeout", "stuck\n")


def test_without_a_launcher_the_first_worker_and_its_first_container() -> None:
    pods = [pod("w-1"), pod("w-0", containers=("trainer", "sidecar"))]
    assert timeout_log_source(pods) == LogSource("w-0", "trainer", "n0", 0, "Timeout")
    assert timeout_log_source([]) is None


def test_a_failed_init_container_counts_after_the_main_ones() -> None:
    failed_init = pod("w-0")
    failed_init["status"]["initContainerStatuses"] = [
        {"name": "wait-for-workers", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}
    ]
    assert failed_container([failed_init]) == LogSource("w-0", "wait-for-workers", "n0", 1, "Error")
    failed_init["status"]["containerStatuses"][0]["state"] = {
        "terminated": {"exitCode": 3, "reason": "Error"}
    }
    assert failed_container([failed_init]) == LogSource("w-0", "node", "n0", 3, "Error")


def test_an_unreadable_exit_code_is_no_failure() -> None:
    odd = pod("w-0")
    odd["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": "x"}}
    assert failed_container([odd]) is None
