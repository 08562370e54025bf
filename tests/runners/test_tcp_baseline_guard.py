"""tcp-baseline's management-path guard (§9.13) on route tables: the default-route interface is
never loaded; a one-NIC node Skips only in an established host namespace; a false or unsafe
TCP_BASELINE_INTERFACE is an Error."""

from __future__ import annotations

from pathlib import Path

from glimmer.runners.tcp_baseline_guard import (
    decide_client,
    decide_server,
    default_interfaces,
    net_namespace,
    read_routes,
    route_to,
)

FIXTURES = Path(__file__).parent / "fixtures" / "tcp-baseline"
HEADER = "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
# One NIC: its subnet and the default route (10.0.0.1 gateway) on eth0.
ONE_NIC = HEADER + (
    "eth0\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
    "eth0\t0000000A\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
)


def test_a_captured_table_reads_routes_and_the_default_interface() -> None:
    routes = read_routes((FIXTURES / "route-fabric-and-mgmt.txt").read_text())
    assert default_interfaces(routes) == ("gxe-mb0",)
    assert route_to(routes, "10.77.0.1") == "gxe-fb"
    assert route_to(routes, "10.78.0.9") == "gxe-mb0"
    assert route_to(routes, "192.0.2.1") == "gxe-mb0"  # only the default matches


def test_longest_prefix_then_lowest_metric_wins() -> None:
    table = HEADER + (
        "eth0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
        "ib0\t0000A8C0\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
        "ib1\t0001A8C0\t00000000\t0001\t0\t0\t5\t00FFFFFF\t0\t0\t0\n"
        "ib2\t0001A8C0\t00000000\t0001\t0\t0\t1\t00FFFFFF\t0\t0\t0\n"
        "down0\t0002A8C0\t00000000\t0000\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    )
    routes = read_routes(table)
    assert route_to(routes, "192.168.1.7") == "ib2"
    assert route_to(routes, "192.168.9.7") == "ib0"
    assert route_to(routes, "192.168.2.7") == "ib0"  # a route that is not up is no route


def test_a_separate_fabric_interface_runs() -> None:
    routes = read_routes((FIXTURES / "route-fabric-and-mgmt.txt").read_text())
    decision = decide_client(routes, "10.77.0.1", None, None)
    assert decision.refusal is None
    assert decision.test_interface == "gxe-fb"
    assert decision.mgmt_interfaces == ("gxe-mb0",)


def test_one_nic_skips_only_in_an_established_host_namespace() -> None:
    routes = read_routes(ONE_NIC)
    established = decide_client(routes, "10.0.0.7", None, "host")
    assert established.skip and established.refusal is not None
    assert "eth0" in established.refusal
    unknown = decide_client(routes, "10.0.0.7", None, None)
    assert not unknown.skip and unknown.refusal is not None
    assert "hostNetwork" in unknown.refusal


def test_naming_the_default_route_interface_is_an_error() -> None:
    # Once on a one-NIC node, once where a fabric ib0 reaches the peer beside eth0's default.
    fabric = ONE_NIC + "ib0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    for routes in (read_routes(ONE_NIC), read_routes(fabric)):
        decision = decide_client(routes, "10.0.0.7", "eth0", "host")
        assert decision.refusal is not None and not decision.skip
        assert "default route" in decision.refusal


def test_a_name_the_route_disagrees_with_is_an_error() -> None:
    routes = read_routes((FIXTURES / "route-fabric-and-mgmt.txt").read_text())
    decision = decide_client(routes, "10.77.0.1", "ib7", None)
    assert decision.refusal is not None and not decision.skip
    assert "leaves by gxe-fb" in decision.refusal


def test_no_default_route_or_no_route_to_the_peer_is_an_error() -> None:
    only_ib = "ib0\t0000A8C0\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
    no_default = read_routes(HEADER + only_ib)
    decision = decide_client(no_default, "192.168.0.2", None, "host")
    assert decision.refusal is not None and "no default route" in decision.refusal
    assert decide_client(read_routes(HEADER), "10.0.0.1", None, "host").refusal is not None


def test_the_server_requires_a_safe_named_interface() -> None:
    routes = read_routes((FIXTURES / "route-fabric-and-mgmt.txt").read_text())
    assert decide_server(routes, "gxe-fb").refusal is None
    assert "required" in (decide_server(routes, None).refusal or "")
    assert "default route" in (decide_server(routes, "gxe-mb0").refusal or "")
    assert "holds no route" in (decide_server(routes, "ib9").refusal or "")


def test_a_namespace_is_established_by_a_physical_nic_or_an_ip_netns_name(tmp_path: Path) -> None:
    proc, sysfs, run = tmp_path / "proc", tmp_path / "sys", tmp_path / "netns"
    (proc / "self" / "ns").mkdir(parents=True)
    netfile = proc / "self" / "ns" / "net"
    netfile.write_text("")
    assert net_namespace(proc, sysfs, "eth0", run) is None
    (sysfs / "class" / "net" / "eth0" / "device").mkdir(parents=True)
    assert net_namespace(proc, sysfs, "eth0", run) == "host"
    run.mkdir()
    (run / "cni-1234").hardlink_to(netfile)
    assert net_namespace(proc, sysfs, "veth0", run) is None  # a CNI pod's namespace
    (run / "rack-a").hardlink_to(netfile)
    assert net_namespace(proc, sysfs, "veth0", run) == "rack-a"
