"""``valueFrom`` on this host (specs/burnin.md §8.2): ``fieldRef spec.nodeName`` is the node,
``fieldRef status.hostIP`` the address of the default route's interface; every other source
stays unset (never ``""``); a host with no default route makes an execution asking for its
address an Error attempt naming the variable."""

from __future__ import annotations

import ipaddress
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.specs import spec_from_json
from glimmer.backends.local import field_refs
from glimmer.backends.local.clock import HostClock
from glimmer.backends.local.executions import ProcessExecutions
from glimmer.backends.local.field_refs import (
    FieldRefError,
    default_interface,
    field_path,
    primary_address,
    resolved,
    unanswered,
)
from glimmer.cli.app import main
from glimmer.engine.backend import ExecutionSpec
from glimmer.plan.env import effective_env, runner_env

HOST_IP = {"fieldRef": {"fieldPath": "status.hostIP"}}
NODE_NAME = {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}
OTHERS = {
    "FROM_SECRET": {"secretKeyRef": {"name": "s", "key": "k"}},
    "FROM_CONFIGMAP": {"configMapKeyRef": {"name": "c", "key": "k"}},
    "POD_IP": {"fieldRef": {"fieldPath": "status.podIP"}},
    "CPU_LIMIT": {"resourceFieldRef": {"resource": "limits.cpu"}},
}
ROUTES = (
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth1\t00000000\t0101A8C0\t0003\t0\t0\t200\t00000000\t0\t0\t0\n"
    "eth0\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    "eth0\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
    "eth2\t00000000\t0100000B\t0002\t0\t0\t50\t00000000\t0\t0\t0\n"
)


def _execution(env: list[dict[str, Any]], node: str = "gpu-07") -> ExecutionSpec:
    """The execution the engine would ask for: its env built by the plan's own functions, so
    the valueFrom entries are left out exactly as they are on the way to any substrate."""
    test = BurnInTestSpec.model_validate({"kind": "custom", "runner": {"env": env}})
    effective = effective_env(runner_env(test, 1))
    return ExecutionSpec(
        name="x-a1", namespace="default", run="run", run_uid="u", test="t", test_index=0,
        kind="custom", scope="Node", node=node, unit_nodes=(node,), attempt=1, role="",
        rank=None, nranks=None, image="",
        env=tuple((n, v.value) for n, v in effective.items() if v.value is not None),
        duration_seconds=60, deadline_seconds=180, labels={}, test_spec=test,
    )  # fmt: skip


def _asked(name: str, source: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "valueFrom": source}


def test_node_name_and_host_ip_are_answered_from_the_node_and_the_route_lookup() -> None:
    spec = _execution([_asked("HOST_ADDR", HOST_IP), _asked("NODE", NODE_NAME)])
    assert "HOST_ADDR" not in dict(spec.env)  # the engine left them to the substrate
    env = dict(resolved(spec, lambda: "10.0.0.5").env)
    assert env["HOST_ADDR"] == "10.0.0.5" and env["NODE"] == "gpu-07"
    assert env["BURNIN_ATTEMPT"] == "1"  # the rest stays as the engine asked


def test_every_other_value_from_source_stays_unset_never_empty() -> None:
    spec = _execution([_asked(name, source) for name, source in OTHERS.items()])
    env = dict(resolved(spec, lambda: pytest.fail("no status.hostIP was asked for")).env)
    assert not set(OTHERS) & set(env)


def test_the_route_is_looked_up_only_when_status_host_ip_is_asked_for() -> None:
    spec = _execution([_asked("NODE", NODE_NAME)])
    assert dict(resolved(spec, lambda: pytest.fail("looked up")).env)["NODE"] == "gpu-07"


def test_no_default_route_is_an_error_naming_the_variable() -> None:
    spec = _execution([_asked("HOST_ADDR", HOST_IP)])
    with pytest.raises(FieldRefError, match=r"runner.env HOST_ADDR: valueFrom fieldRef "
                       r"status.hostIP: this host has no default route"):  # fmt: skip
        resolved(spec, lambda: None)


def test_a_later_plain_value_wins_over_a_value_from_and_a_later_value_from_over_a_value() -> None:
    spec = _execution(
        [
            _asked("A", HOST_IP),
            {"name": "A", "value": "by-hand"},
            {"name": "B", "value": "by-hand"},
            _asked("B", NODE_NAME),
        ]
    )
    env = dict(resolved(spec, lambda: "10.0.0.5").env)
    assert env["A"] == "by-hand" and env["B"] == "gpu-07"


def test_a_value_the_spec_already_sets_is_not_replaced() -> None:
    # A half's flags set their variables on the spec after the engine built it: they win.
    spec = _execution([_asked("BURNIN_PEER_NODE", NODE_NAME)])
    spec = ExecutionSpec(**{**spec.__dict__, "env": (*spec.env, ("BURNIN_PEER_NODE", "host-b"))})
    assert dict(resolved(spec, lambda: "10.0.0.5").env)["BURNIN_PEER_NODE"] == "host-b"


def test_a_spec_without_value_from_is_returned_unchanged() -> None:
    spec = _execution([{"name": "X", "value": "1"}])
    assert resolved(spec, lambda: pytest.fail("looked up")) is spec


@pytest.mark.parametrize(
    ("source", "path"),
    [(HOST_IP, "status.hostIP"), (NODE_NAME, "spec.nodeName"), (OTHERS["FROM_SECRET"], None),
     ({"fieldRef": "status.hostIP"}, None), ({"fieldRef": {}}, None), (None, None)],
)  # fmt: skip
def test_field_path_reads_only_a_field_ref(source: dict[str, Any] | None, path: str) -> None:
    assert field_path(source) == path


def test_each_value_from_left_unset_here_is_one_warning_line_naming_test_variable_and_source() -> (
    None
):
    asked = [_asked(name, source) for name, source in OTHERS.items()]
    answered = [_asked("NODE", NODE_NAME), _asked("HOST_ADDR", HOST_IP)]
    overridden = [_asked("LATER", OTHERS["FROM_SECRET"]), {"name": "LATER", "value": "1"}]
    spec = _execution([*asked, *answered, *overridden, {"name": "BARE"}]).test_spec
    lines = unanswered([("fields", spec)])
    assert len(lines) == len(OTHERS)
    assert lines[0] == (
        "test fields: runner.env FROM_SECRET (valueFrom secretKeyRef) is left unset on this "
        "host, which answers only fieldRef spec.nodeName, fieldRef status.hostIP"
    )
    assert "runner.env POD_IP (valueFrom fieldRef status.podIP)" in lines[2]


def test_the_default_route_is_the_lowest_metric_route_that_is_up() -> None:
    # eth2 has the lowest metric but is down; eth1's metric is higher than eth0's.
    assert default_interface(ROUTES) == "eth0"


def test_a_route_table_without_a_default_route_has_no_default_interface() -> None:
    head, *rest = ROUTES.splitlines()
    assert default_interface("\n".join([head, rest[1], "garbage", ""])) is None


def test_the_primary_address_is_the_default_route_interfaces_address(tmp_path: Path) -> None:
    table = tmp_path / "route"
    table.write_text(ROUTES)
    addresses = {"eth0": "10.0.0.5", "eth1": "192.168.1.9"}
    assert primary_address(table, addresses.get) == "10.0.0.5"


@pytest.mark.parametrize("address", [None, "127.0.0.1", "0.0.0.0"])
def test_no_usable_address_on_the_default_route_is_no_primary_address(
    tmp_path: Path, address: str | None
) -> None:
    table = tmp_path / "route"
    table.write_text(ROUTES)
    assert primary_address(table, lambda iface: address) is None


def test_no_route_table_is_no_primary_address(tmp_path: Path) -> None:
    assert primary_address(tmp_path / "absent", lambda iface: "10.0.0.5") is None


def test_this_hosts_own_lookup_gives_a_routable_ipv4_address_or_none() -> None:
    found = primary_address()
    if found is not None:
        parsed = ipaddress.ip_address(found)
        assert parsed.version == 4 and not parsed.is_loopback


# A runner, given as the test's runner.command, that prints what it was given as metrics.
ECHO = """
import os
names = {"HOST_ADDR": "hostAddr", "NODE_NAME": "nodeName", "FROM_SECRET": "fromSecret",
         "POD_IP": "podIP"}
for name, metric in names.items():
    if name in os.environ:
        print(f"{metric}={os.environ[name] or '<empty>'}")
print("echoed=1")
print("FIELD_ECHO_PASS")
"""


def _suite(tmp_path: Path) -> Path:
    env = [
        _asked("HOST_ADDR", HOST_IP),
        _asked("NODE_NAME", NODE_NAME),
        _asked("FROM_SECRET", OTHERS["FROM_SECRET"]),
        _asked("POD_IP", OTHERS["POD_IP"]),
    ]
    docs = [
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInTest",
            "metadata": {"name": "fields"},
            "spec": {
                "kind": "custom",
                "durationSeconds": 5,
                "runner": {"command": [sys.executable, "-c", ECHO], "env": env},
                "thresholds": [{"metric": "echoed", "comparison": "Equal", "value": "1"}],
            },
        },
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": "fields"},
            "spec": {"tests": [{"testRef": "fields"}]},
        },
    ]
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _run_local(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    code = main(["run", "--backend", "local", "-f", str(_suite(tmp_path)), "--node", "rack3-n07",
                 "--state-dir", str(tmp_path / "state"), "-o", "json"])  # fmt: skip
    captured = capsys.readouterr()
    [result] = json.loads(captured.out)["status"]["results"]
    return code, result, captured.err


def test_a_real_runner_gets_its_node_name_and_host_address_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lookup runs in this process, at the execution's creation; the runner is a real one.
    monkeypatch.setattr(field_refs, "primary_address", lambda: "10.9.8.7")
    code, result, err = _run_local(tmp_path, capsys)
    assert code == 0 and result["phase"] == "Passed"
    metrics = result["metrics"]
    assert metrics["hostAddr"] == "10.9.8.7" and metrics["nodeName"] == "rack3-n07"
    assert "fromSecret" not in metrics and "podIP" not in metrics  # unset, not ""
    unset = [line for line in err.splitlines() if "is left unset on this host" in line]
    assert len(unset) == 2 and all(line.startswith("warning: test fields:") for line in unset)


def test_a_real_run_on_a_host_without_a_default_route_errors_naming_the_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(field_refs, "primary_address", lambda: None)
    code, result, _ = _run_local(tmp_path, capsys)
    assert code == 3 and result["phase"] == "Error"
    assert "runner.env HOST_ADDR: valueFrom fieldRef status.hostIP" in result["message"]


def test_a_container_gets_the_answered_variables_as_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A docker that answers `info` and runs nothing: only the command line asked of it counts.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "docker").chmod(0o755)
    monkeypatch.setattr(field_refs, "primary_address", lambda: "10.9.8.7")
    processes = ProcessExecutions(
        tmp_path / "state", HostClock(), runtime="docker", runtime_path=str(bin_dir)
    )
    spec = _execution([_asked("HOST_ADDR", HOST_IP), _asked("FROM_SECRET", OTHERS["FROM_SECRET"])])
    processes.create_execution(ExecutionSpec(**{**spec.__dict__, "image": "runner:test"}))
    path = processes.records.find("default", "x-a1")
    assert path is not None
    record = path.read()
    assert record is not None
    argv = record["launch"]["argv"]
    assert argv[0].endswith("docker") and "HOST_ADDR=10.9.8.7" in argv
    assert not any(arg.startswith("FROM_SECRET") for arg in argv)
    assert "HOST_ADDR" not in dict(spec_from_json(record["spec"]).env)  # kept as asked
