"""nccl run for real: in test mode the ranks are real processes joined over loopback by the
rendezvous rank 0 serves, running the gloo backend on cpu, so the scopes, the sweep, the
element checks and the bus factors are the code a GPU node runs; §9.11's exit rules in order,
the Skip on this host with no GPU, and injected miscompares found."""

from __future__ import annotations

import io
import os
import socket
import subprocess
from pathlib import Path

import pytest
from real_runner import Ran, argv_of, assert_contract, finish, run_runner, runner_env

from glimmer.runners import nccl, nccl_fabric, nccl_sweep, program

FAST = {
    "BURNIN_TEST_DEVICE": "cpu",
    "BURNIN_NCCL_SIZES": "8,4K,64K",
    "BURNIN_NCCL_WARMUP": "1",
    "BURNIN_NCCL_ITERS": "3",
    "BURNIN_NCCL_RENDEZVOUS_TIMEOUT_S": "60",
    "BURNIN_NCCL_MIN_MEMLOCK_MIB": "0",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def in_process(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Ran:
    """The program's body in this process, for the runs that end before any rank is started
    (a rank pins NCCL in its own environment: here that is a copy, dropped afterwards)."""
    monkeypatch.setattr(os, "environ", dict(os.environ))
    out = io.StringIO()
    code = program.run("nccl", nccl.measure, runner_env(env), out)
    ran = finish("nccl", out.getvalue(), "", code)
    assert_contract(ran)
    return ran


def notes(stdout: str) -> list[str]:
    return [ln for ln in stdout.splitlines() if ln.startswith("size ")]


@pytest.mark.parametrize(
    ("collective", "ranks", "factor"),
    [("allreduce", 3, 4 / 3), ("allgather", 2, 1 / 2), ("alltoall", 3, 2 / 3)],
)  # fmt: skip
def test_node_scope_runs_every_visible_device_as_a_rank_and_checks_every_element(
    collective: str, ranks: int, factor: float
) -> None:
    env = {**FAST, "BURNIN_TEST_DEVICE_COUNT": str(ranks), "BURNIN_VARIANT_COLLECTIVE": collective}
    ran = run_runner("nccl", env)
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    m = ran.parsed.metrics
    assert m["ranks"] == str(ranks) and m["miscompares"] == "0"
    bus, alg = float(m["busBandwidthGBs"]), float(m["algBandwidthGBs"])
    assert bus > 0 and bus == pytest.approx(alg * factor, rel=0.01, abs=2e-4)
    assert float(m["latencyUs"]) > 0
    assert len(notes(ran.stdout)) == 3  # the whole sweep, one line a size
    assert ran.marker == "NCCL_PASS"


def test_injected_miscompares_are_found_and_fail() -> None:
    env = {**FAST, "BURNIN_TEST_DEVICE_COUNT": "2", "BURNIN_NCCL_INJECT_MISCOMPARES": "5"}
    ran = run_runner("nccl", env)
    assert_contract(ran)
    assert ran.exit_code == 1, ran.stdout + ran.stderr
    assert ran.parsed.metrics["miscompares"] == "5"
    assert ran.marker == "NCCL_FAIL: 5 incorrect elements in the allreduce results"


def test_node_scope_with_one_gpu_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    ran = in_process({**FAST}, monkeypatch)
    assert ran.exit_code == 2
    assert ran.marker == "NCCL_SKIP: Node scope needs at least 2 GPUs: 1 visible"


def test_without_a_gpu_and_without_test_mode_it_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    ran = in_process({}, monkeypatch)
    assert ran.exit_code == 2
    assert ran.marker.startswith("NCCL_SKIP: no NVIDIA accelerator")


def _start(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv_of("nccl"), env=runner_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _ended(proc: subprocess.Popen[str]) -> tuple[str, str, int]:
    out, err = proc.communicate(timeout=120)
    return out, err, proc.returncode


def test_a_pair_meets_at_the_server_which_alone_reports() -> None:
    base = {**FAST, "BURNIN_NCCL_PORT": str(free_port()), "BURNIN_PEER_HOST": "127.0.0.1"}
    server = _start({**base, "BURNIN_ROLE": "server"})
    client = _start({**base, "BURNIN_ROLE": "client"})
    s_ran = finish("nccl", *_ended(server))
    c_ran = finish("nccl", *_ended(client))
    for ran in (s_ran, c_ran):
        assert_contract(ran)
        assert ran.exit_code == 0, ran.stdout + ran.stderr
    assert s_ran.parsed.metrics["ranks"] == "2"
    # At n = 2 all-reduce moves as much over the bus as the algorithm does.
    assert s_ran.parsed.metrics["busBandwidthGBs"] == s_ran.parsed.metrics["algBandwidthGBs"]
    assert c_ran.parsed.metrics == {}


def test_a_group_of_three_meets_at_rank_0() -> None:
    base = {**FAST, "BURNIN_NCCL_PORT": str(free_port()), "BURNIN_ROOT_HOST": "127.0.0.1",
            "BURNIN_NRANKS": "3", "BURNIN_VARIANT_COLLECTIVE": "reducescatter"}  # fmt: skip
    procs = [_start({**base, "BURNIN_RANK": str(r)}) for r in (2, 1, 0)]
    rans = [finish("nccl", *_ended(p)) for p in procs]
    for ran in rans:
        assert_contract(ran)
        assert ran.exit_code == 0, ran.stdout + ran.stderr
    root = rans[2].parsed.metrics
    assert root["ranks"] == "3" and root["miscompares"] == "0"
    bus, alg = float(root["busBandwidthGBs"]), float(root["algBandwidthGBs"])
    assert bus == pytest.approx(alg * 2 / 3, rel=0.01, abs=2e-4)
    assert rans[0].parsed.metrics == {} and rans[1].parsed.metrics == {}


def test_a_memlock_limit_too_small_is_an_error_before_any_rendezvous(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = {**FAST, "BURNIN_ROLE": "server", "BURNIN_PEER_HOST": "127.0.0.1",
           "BURNIN_NCCL_MIN_MEMLOCK_MIB": str(1 << 30)}  # fmt: skip
    ran = in_process(env, monkeypatch)  # no client: a rendezvous would wait
    assert ran.exit_code == 3
    assert ran.marker.startswith("NCCL_ERROR: memlock limit is ")
    assert "IB is never disabled" in ran.marker


def test_a_rendezvous_nobody_serves_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**FAST, "BURNIN_ROLE": "client", "BURNIN_PEER_HOST": "127.0.0.1",
           "BURNIN_NCCL_PORT": str(free_port())}  # fmt: skip
    env["BURNIN_NCCL_RENDEZVOUS_TIMEOUT_S"] = "2"
    ran = in_process(env, monkeypatch)
    assert ran.exit_code == 3
    assert ran.marker.startswith("NCCL_ERROR: rendezvous at 127.0.0.1:")


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"BURNIN_VARIANT_COLLECTIVE": "broadcast"}, "unknown collective 'broadcast'"),
        ({"BURNIN_NCCL_SIZES": "8,lots"}, "BURNIN_NCCL_SIZES: 'lots'"),
        ({"BURNIN_ROLE": "leader", "BURNIN_PEER_HOST": "x"}, "neither server nor client"),
        ({"BURNIN_ROLE": "client"}, "BURNIN_PEER_HOST: unset"),
        ({"BURNIN_RANK": "3", "BURNIN_NRANKS": "3"}, "BURNIN_RANK: 3 is above the maximum 2"),
        ({"BURNIN_RANK": "1", "BURNIN_NRANKS": "2"}, "BURNIN_ROOT_HOST: unset"),
    ],
)
def test_bad_configuration_is_an_error(
    env: dict[str, str], why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = in_process({**FAST, **env}, monkeypatch)
    assert ran.exit_code == 3
    assert why in ran.marker, ran.marker


def test_bus_factors_are_nccl_tests_conventions() -> None:
    assert nccl_sweep.bus_factor("allreduce", 8) == 2 * 7 / 8
    assert nccl_sweep.bus_factor("allreduce", 2) == 1.0
    for other in ("allgather", "reducescatter", "alltoall"):
        assert nccl_sweep.bus_factor(other, 4) == 3 / 4


def test_sizes_parse_with_binary_suffixes() -> None:
    assert nccl_sweep.parse_sizes("8, 1K,256M, 1MiB") == (8, 1024, 1 << 20, 256 << 20)
    assert isinstance(nccl_sweep.parse_sizes("0"), str)
    assert nccl_sweep.DEFAULT_SIZES[0] == 8 and nccl_sweep.DEFAULT_SIZES[-1] == 256 << 20


def _rdma_host(tmp_path: Path) -> Path:
    port = tmp_path / "class/infiniband/mlx5_0/ports/1"
    port.mkdir(parents=True)
    (tmp_path / "class/infiniband/mlx5_0/device/net/enp1s0").mkdir(parents=True)
    return tmp_path


def test_a_socket_choice_on_an_rdma_host_is_a_silent_tcp_fallback(tmp_path: Path) -> None:
    sysfs = _rdma_host(tmp_path)
    log = "host:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0\nhost NCCL INFO Using network Socket"
    assert "refusing a silent fallback" in (nccl_fabric.silent_tcp(log, {}, sysfs) or "")
    assert nccl_fabric.silent_tcp(log, {"NCCL_IB_DISABLE": "1"}, sysfs) is None  # on purpose
    assert nccl_fabric.silent_tcp("NCCL INFO Using network IB", {}, sysfs) is None
    assert nccl_fabric.silent_tcp(log, {}, tmp_path / "none") is None  # no RDMA to fall from


def test_the_rdma_device_behind_the_route_is_pinned(tmp_path: Path) -> None:
    sysfs = _rdma_host(tmp_path)
    assert nccl_fabric.hca_of("enp1s0", sysfs) == "mlx5_0:1"
    assert nccl_fabric.hca_of("eth9", sysfs) is None
    assert nccl_fabric.route_interface("127.0.0.1") == "lo"
    assert nccl_fabric.pinned_env({}, "127.0.0.1", sysfs) == {"NCCL_SOCKET_IFNAME": "lo"}
    assert nccl_fabric.pinned_env({"NCCL_SOCKET_IFNAME": "eth0"}, "127.0.0.1", sysfs) == {}


def test_the_transport_is_read_from_nccls_log() -> None:
    assert nccl_fabric.transport("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read") == "p2p"
    assert nccl_fabric.transport("NVLS multicast support is available") == "nvlink"
    assert nccl_fabric.transport("Channel 00 : 0[0] -> 1[1] via SHM/direct/direct") == "shm"
    assert nccl_fabric.transport("nothing said") is None


def test_memlock_below_the_asked_minimum_is_named() -> None:
    assert nccl_fabric.memlock_shortfall(0) is None
    reason = nccl_fabric.memlock_shortfall(1 << 40)
    assert reason is None or "below the" in reason  # None only where memlock is unlimited
