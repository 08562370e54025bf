"""``glimmer certify run -f cert.yaml --backend kubernetes`` against the API stand-in, with a
stand-in controller (a thread writing what the Certification controller writes): the
Certification created, followed to its end, the report card printed with the simulator's exit
codes; no report, a deleted Certification, another spec under the same name, mixed flags."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from glimmer.certify.report_card import render
from glimmer.certify.result import from_doc
from glimmer.cli import certify_cluster, certify_cluster_run
from glimmer.cli.app import main
from tests.cli.certify_cluster_standin import (
    CERT_YAML,
    CERTS,
    StandIn,
    create_certification,
    report_doc,
    served,
    standin,
    write_report,
    write_status,
)

__all__ = ["served", "standin"]  # the fixtures, used by name

CATS = [("communication", "nccl-all-reduce"), ("diagnostics", "dcgm-level2")]


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        certify_cluster,
        "TIMING",
        certify_cluster.Timing(poll_seconds=0.02, unclaimed_seconds=0.2, report_seconds=0.3),
    )


@pytest.fixture
def cert(tmp_path: Path) -> Path:
    path = tmp_path / "cert.yaml"
    path.write_text(CERT_YAML)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["certify", "run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def controller(standin: StandIn) -> Iterator[Callable[..., None]]:
    """Starts a thread that, once the Certification exists, runs each category InProgress then
    ``phase`` and writes ``report`` (a document, or None for no report); ``delete`` deletes
    the Certification instead of finishing it."""
    threads: list[threading.Thread] = []

    def start(phase: str = "Succeeded", report: Any = None, delete: bool = False) -> None:
        def work() -> None:
            with httpx.Client(base_url=standin.url, timeout=10) as http:
                while http.get(f"{CERTS}/acceptance").status_code == 404:
                    time.sleep(0.01)
                running = [(d, v, "InProgress") for d, v in CATS]
                write_status(http, "acceptance", "InProgress", running, "CategoryRunning")
                if delete:
                    http.delete(f"{CERTS}/acceptance")
                    return
                if report is not None:
                    write_report(http, "acceptance", report)
                done = [(d, v, phase) for d, v in CATS]
                write_status(http, "acceptance", phase, done, "AllCategoriesCompleted", "done")

        thread = threading.Thread(target=work, daemon=True)
        threads.append(thread)
        thread.start()

    yield start
    for thread in threads:
        thread.join(timeout=10)


def test_a_certification_is_created_followed_and_its_card_printed(
    standin: StandIn,
    controller: Callable[..., None],
    cert: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = report_doc()
    controller("Succeeded", doc)
    code, out, _ = run(capsys, "-f", str(cert), "--backend", "kubernetes")
    assert code == 0, out
    assert "default/acceptance: Certification on a Kubernetes cluster, created" in out
    assert "  diagnostics/dcgm-level2: Succeeded" in out  # the last read always shows
    assert out.endswith(render(from_doc(doc)))
    stored = standin.http.get(f"{CERTS}/acceptance").json()
    assert [c["variant"] for c in stored["spec"]["categories"]] == [v for _, v in CATS]


def test_a_failed_certification_exits_1(
    standin: StandIn,
    controller: Callable[..., None],
    cert: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    controller("Failed", report_doc(failing=True))
    code, out, _ = run(capsys, "-f", str(cert), "--backend", "kubernetes", "-o", "json")
    assert code == 1
    assert '"result": "FAILED"' in out


def test_a_finished_certification_with_no_report_is_not_a_pass(
    standin: StandIn,
    controller: Callable[..., None],
    cert: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    controller("Succeeded", None)
    code, _, err = run(capsys, "-f", str(cert), "--backend", "kubernetes")
    assert code == 1 and "no report was written; not certified" in err


def test_a_certification_deleted_while_followed_is_not_certified(
    standin: StandIn,
    controller: Callable[..., None],
    cert: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    controller(delete=True)
    code, _, err = run(capsys, "-f", str(cert), "--backend", "kubernetes")
    assert code == 1 and "was deleted; not certified" in err


def test_running_it_again_follows_the_finished_one_and_prints_its_card(
    standin: StandIn, cert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    create_certification(standin.http)
    write_status(
        standin.http, "acceptance", "Succeeded", [(d, v, "Succeeded") for d, v in CATS], "Done"
    )
    write_report(standin.http, "acceptance", report_doc())
    code, out, _ = run(capsys, "-f", str(cert), "--backend", "kubernetes")
    assert code == 0 and ", finished earlier" in out and "Result: PASSED" in out


def test_a_certification_still_running_at_the_timeout_is_not_certified_and_goes_on(
    standin: StandIn, cert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    create_certification(standin.http)
    write_status(
        standin.http, "acceptance", "InProgress", [(d, v, "InProgress") for d, v in CATS], "Run"
    )
    code, out, err = run(capsys, "-f", str(cert), "--backend", "kubernetes", "--timeout", "200ms")
    assert code == 1
    assert "Certification default/acceptance: InProgress" in out
    assert "still InProgress after --timeout 200ms; not certified yet" in err
    assert "glimmer certify status acceptance -n default" in err
    assert standin.http.get(f"{CERTS}/acceptance").status_code == 200  # left running


def test_another_spec_under_the_same_name_is_refused(
    standin: StandIn, cert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    create_certification(standin.http)
    cert.write_text(
        CERT_YAML.replace("      variant: dcgm-level2\n", "      variant: dcgm-level1\n")
    )
    code, _, err = run(capsys, "-f", str(cert), "--backend", "kubernetes")
    assert code == 2
    assert "Certification default/acceptance already exists with another spec" in err
    assert "glimmer certify cancel acceptance -n default" in err


def test_nobody_picking_it_up_is_said_once(
    standin: StandIn, cert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def late() -> None:
        with httpx.Client(base_url=standin.url, timeout=10) as http:
            while http.get(f"{CERTS}/acceptance").status_code == 404:
                time.sleep(0.01)
            time.sleep(1.0)  # well past unclaimed_seconds: the warning is due before this
            done = [(d, v, "Succeeded") for d, v in CATS]
            write_report(http, "acceptance", report_doc())
            write_status(http, "acceptance", "Succeeded", done, "Done")

    thread = threading.Thread(target=late, daemon=True)
    thread.start()
    code, _, err = run(capsys, "-f", str(cert), "--backend", "kubernetes")
    thread.join(timeout=10)
    assert code == 0
    assert err.count("no operator seems to watch this namespace") == 1


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--backend", "kubernetes", "--fleet", "hgx-1k"], "--fleet: shapes the simulated fleet"),
        (["--backend", "kubernetes", "--seed", "3"], "--seed: shapes the simulated fleet"),
        (["--kubeconfig", "k.yaml"], "--kubeconfig: only with --backend kubernetes"),
        (["-n", "team-a"], "--namespace: only with --backend kubernetes"),
        (["--timeout", "30m"], "--timeout: only with --backend kubernetes"),
        (["--backend", "kubernetes", "--timeout", "soon"], "--timeout soon: a positive duration"),
    ],
)
def test_flags_of_the_other_backend_are_refused(
    cert: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    code, _, err = run(capsys, "-f", str(cert), *argv)
    assert code == 2 and says in err


def test_a_namespace_flag_that_contradicts_the_file_is_refused(
    cert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cert.write_text(CERT_YAML.replace("{name: acceptance}", "{name: acceptance, namespace: a}"))
    code, _, err = run(capsys, "-f", str(cert), "--backend", "kubernetes", "-n", "b")
    assert code == 2 and "in namespace a and -n says b" in err and str(cert) in err


def test_a_file_without_a_certification_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lp.yaml"
    path.write_text(
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: LogProfile\nmetadata: {name: x}\n"
        "spec:\n  timestamp: {layout: '2006-01-02T15:04:05Z'}\n  patterns: {}\n"
    )
    code, _, err = run(capsys, "-f", str(path), "--backend", "kubernetes")
    assert code == 2 and str(path) in err and "Traceback" not in err


class ScriptedCluster:
    """Answers each read of the Certification with the next object of a script."""

    def __init__(self, *objects: dict[str, Any] | None) -> None:
        self.objects = list(objects)

    def certification(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects.pop(0) if len(self.objects) > 1 else self.objects[0]


def _cert(phase: str | None, *statuses: str) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "acceptance"}, "spec": {"categories": []}}
    if phase is not None:
        cats = [
            {"domain": d, "variant": v, "status": s}
            for (d, v), s in zip(CATS, statuses, strict=True)
        ]
        obj["status"] = {
            "conditions": [{"type": phase, "status": "True"}],
            "categoryStatuses": cats,
        }
    return obj


def test_following_prints_each_category_once_per_change(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cluster = ScriptedCluster(
        _cert(None),
        _cert("InProgress", "InProgress", "Pending"),
        _cert("InProgress", "InProgress", "Pending"),
        _cert("InProgress", "Succeeded", "InProgress"),
        _cert("Succeeded", "Succeeded", "Succeeded"),
    )
    session = certify_cluster.Session(cluster, "kubeconfig")
    final = certify_cluster_run.follow(session, "default", "acceptance", human=True)
    assert final is not None and certify_cluster.phase_of(final) == "Succeeded"
    assert capsys.readouterr().out.splitlines() == [
        "  communication/nccl-all-reduce: InProgress",
        "  diagnostics/dcgm-level2: Pending",
        "  communication/nccl-all-reduce: Succeeded",
        "  diagnostics/dcgm-level2: InProgress",
        "  diagnostics/dcgm-level2: Succeeded",
    ]
