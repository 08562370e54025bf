"""nccl's lost-peer words: a rank whose collective broke because a peer went away says so
first, naming the peer's host from the hosts file (never DNS), so the group's message points at
the rank that went away (the real case: tests/scenarios/slurm, a rank's job cancelled)."""

from __future__ import annotations

from pathlib import Path

from glimmer.runners import nccl_peer

HOSTS = "127.0.0.1 localhost\n10.198.0.1 head\n10.198.0.13 n3  # a node\n"


def test_a_rank_that_lost_its_peer_names_it_first_with_its_host_from_the_hosts_file(
    tmp_path: Path,
) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text(HOSTS)
    said = "[gloo/transport/tcp/pair.cc:553] Connection closed by peer [10.198.0.13]:13526. This"
    assert nccl_peer.lost_peer(said, hosts) == "the peer at 10.198.0.13 (n3) went away"
    unknown = "Read error [10.1.2.3]:8874: Connection reset by peer."
    assert nccl_peer.lost_peer(unknown, hosts) == "the peer at 10.1.2.3 went away"
    assert nccl_peer.lost_peer(said, tmp_path / "absent") == "the peer at 10.198.0.13 went away"


def test_an_error_that_is_no_lost_peer_is_left_as_it_is(tmp_path: Path) -> None:
    assert nccl_peer.lost_peer("Timed out waiting 60000ms for [10.1.2.3]", tmp_path) is None
    assert nccl_peer.lost_peer("Connection closed by peer", tmp_path) is None
    assert nccl_peer.host_of("10.198.0.1", HOSTS) == "head"
