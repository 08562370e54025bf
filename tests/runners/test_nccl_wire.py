"""nccl's wire figures: the bytes each rank sent per iteration, read from the namespace's
transmit counters, pooled to rank 0 and printed beside the bus factor they check (the real
cross-host check is tests/scenarios/slurm: over loopback the ranks share ``lo``)."""

from __future__ import annotations

from pathlib import Path

from real_runner import assert_contract, finish
from test_nccl import FAST, _ended, _start, free_port

from glimmer.runners import nccl_wire

NET_DEV = """\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  900      10    0    0    0     0          0         0      700      10    0    0    0     0       0          0
  eth0: 5000      40    0    0    0     0          0         0     1200      30    0    0    0     0       0          0
 mgmt0:   10       1    0    0    0     0          0         0       34       1    0    0    0     0       0          0
"""  # noqa: E501


def test_transmitted_bytes_are_summed_over_the_fabric_interfaces_or_loopback_alone() -> None:
    assert nccl_wire.transmitted(NET_DEV, loopback=False) == 1234
    assert nccl_wire.transmitted(NET_DEV, loopback=True) == 700


def test_unreadable_counters_read_as_nothing_sent(tmp_path: Path) -> None:
    assert nccl_wire.sent_bytes(False, tmp_path / "absent") == 0


def test_a_loopback_peer_is_told_apart_from_a_host_name() -> None:
    assert nccl_wire.is_loopback("127.0.0.1") and nccl_wire.is_loopback("localhost")
    assert not nccl_wire.is_loopback("n1") and not nccl_wire.is_loopback(None)


def test_each_rank_and_size_gets_a_line_with_its_ratio_to_the_size_beside_the_bus_factor() -> None:
    lines = nccl_wire.wire_lines("allreduce", 4 / 3, [1000, 2000], [[1340, 2670], [1330, 2660]])
    assert lines == [
        "wire size 1000 B rank 0: sent 1340 B per iteration, 1.3400x the size "
        "(allreduce bus factor 1.3333)",
        "wire size 1000 B rank 1: sent 1330 B per iteration, 1.3300x the size "
        "(allreduce bus factor 1.3333)",
        "wire size 2000 B rank 0: sent 2670 B per iteration, 1.3350x the size "
        "(allreduce bus factor 1.3333)",
        "wire size 2000 B rank 1: sent 2660 B per iteration, 1.3300x the size "
        "(allreduce bus factor 1.3333)",
    ]


def test_a_group_on_gloo_has_rank_0_note_every_ranks_wire_bytes_for_every_size() -> None:
    base = {**FAST, "BURNIN_NCCL_PORT": str(free_port()), "BURNIN_ROOT_HOST": "127.0.0.1",
            "BURNIN_NRANKS": "3"}  # fmt: skip
    procs = [_start({**base, "BURNIN_RANK": str(r)}) for r in (2, 1, 0)]
    rans = [finish("nccl", *_ended(p)) for p in procs]
    for ran in rans:
        assert_contract(ran)
        assert ran.exit_code == 0, ran.stdout + ran.stderr
    wire = [ln for ln in rans[2].stdout.splitlines() if ln.startswith("wire ")]
    # 3 sizes x 3 ranks; over loopback every rank shares lo, so only that something was sent.
    assert len(wire) == 9 and all("(allreduce bus factor 1.3333)" in ln for ln in wire)
    assert all(int(ln.split(" sent ")[1].split()[0]) > 0 for ln in wire)
    assert not any(ln.startswith("wire ") for ran in rans[:2] for ln in ran.stdout.splitlines())


def test_every_networked_rank_notes_that_it_joined_before_its_sweep() -> None:
    base = {**FAST, "BURNIN_NCCL_PORT": str(free_port()), "BURNIN_ROOT_HOST": "127.0.0.1",
            "BURNIN_NRANKS": "2"}  # fmt: skip
    procs = [_start({**base, "BURNIN_RANK": str(r)}) for r in (1, 0)]
    rans = [finish("nccl", *_ended(p)) for p in procs]
    for rank, ran in zip((1, 0), rans, strict=True):
        assert ran.exit_code == 0, ran.stdout + ran.stderr
        lines = ran.stdout.splitlines()
        assert f"joined as rank {rank} of 2" in lines
        assert lines.index(f"joined as rank {rank} of 2") < len(lines) - 1
