"""The cordon stamp as a drain reason: every run name and uid round-trips, anything else is
refused, and Slurm's own node facts read as labels."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.backends.slurm.node_facts import gres_counts, labels_of, node_state
from glimmer.backends.slurm.stamp import Stamp, bare_reason, decode, encode, stamped
from glimmer.engine.keys import CORDON_OWNER, HEAT_EXPECTED, PRIOR_UNSCHEDULABLE

STORE = "3f9c2a71d0b4"
texts = st.text(min_size=1, max_size=40)


@given(namespace=texts, name=texts, uid=texts, prior=st.sampled_from(["true", "false"]))
def test_any_run_name_and_uid_round_trip_through_a_drain_reason(
    namespace: str, name: str, uid: str, prior: str
) -> None:
    owner = f"{namespace}/{name}/{uid}"
    annotations = {
        CORDON_OWNER: owner,
        PRIOR_UNSCHEDULABLE: prior,
        HEAT_EXPECTED: f"{owner}/2026-12-01T23:00:00Z",
    }
    reason = encode(Stamp(STORE, annotations))
    # What would end the value in `scontrol show node -o` output never appears raw.
    assert "=" not in reason and "\n" not in reason and reason.count(" ") == 4
    found = decode(reason)
    assert found == Stamp(STORE, annotations)
    assert found.owner == owner


def test_a_stamp_reads_as_the_run_that_drained_the_node() -> None:
    reason = encode(
        Stamp(STORE, {CORDON_OWNER: "default/host-n1/0b6e", PRIOR_UNSCHEDULABLE: "false"})
    )
    assert reason == f"glimmer:v1 store:{STORE} owner:default/host-n1/0b6e prior:false"


def test_a_drain_by_glimmer_for_no_run_is_a_stamp_without_an_owner() -> None:
    found = decode(encode(Stamp(STORE)))
    assert found == Stamp(STORE) and found.owner is None


@pytest.mark.parametrize(
    "reason",
    [
        "",
        "maintenance",
        "glimmer:v1",
        "glimmer:v2 store:3f9c2a71d0b4",
        f"glimmer:v1 store:{STORE.upper()}",
        "glimmer:v1 store:ab",
        f"glimmer:v1  store:{STORE}",
        f"glimmer:v1 owner:a/b/c store:{STORE}",
        f"glimmer:v1 store:{STORE} prior:false owner:a/b/c",  # out of order
        f"glimmer:v1 store:{STORE} owner:a/b/c owner:a/b/c",  # twice
        f"glimmer:v1 store:{STORE} owner:",
        f"glimmer:v1 store:{STORE} colour:blue",
        f"glimmer:v1 store:{STORE} owner:a%2fb/c",  # not as encode writes it
        f"glimmer:v1 store:{STORE} owner:a%zz",
        f"glimmer:v1 store:{STORE} owner:%FF",  # not UTF-8
        f"glimmer:v1 store:{STORE} owner:a b",
        f"glimmer:v1 store:{STORE} owner:a=b",
        f"glimmer:v1 store:{STORE} ",
    ],
)
def test_anything_not_written_by_encode_is_not_a_stamp(reason: str) -> None:
    assert decode(reason) is None


@given(st.text(max_size=80))
def test_junk_is_refused_or_read_back_exactly(reason: str) -> None:
    found = decode(reason)
    assert found is None or encode(found) == reason


def test_only_the_engine_s_three_keys_are_stamped() -> None:
    with pytest.raises(ValueError, match="carries only"):
        encode(Stamp(STORE, {"other": "x"}))
    assert stamped({"other": "x", CORDON_OWNER: "a/b/c"}) == {CORDON_OWNER: "a/b/c"}
    with pytest.raises(ValueError, match="store id"):
        encode(Stamp("no such store!"))


def test_slurm_s_user_and_time_suffix_is_not_part_of_the_reason() -> None:
    assert bare_reason("maint [root@2026-12-01T21:43:37]") == "maint"
    assert bare_reason("maint") == "maint"


def test_a_node_state_reads_its_drain_whatever_the_base_state() -> None:
    for text in (
        "IDLE+DRAIN",
        "MIXED+DRAIN",
        "ALLOCATED+DRAIN",
        "DOWN*+DRAIN",
        "IDLE+DRAIN+RESERVED",
    ):
        assert node_state(text).drained, text
    assert not node_state("IDLE+RESERVED").drained
    assert not node_state("IDLE*").drained and not node_state("IDLE*").down
    assert node_state("DOWN*").down and node_state("DOWN*+DRAIN").base == "DOWN"


def test_gres_are_counted_per_name_over_their_types() -> None:
    assert gres_counts("(null)") == {}
    assert gres_counts("gpu:8") == {"gpu": (8, set())}
    assert gres_counts("gpu:a100:4(S:0,1),gpu:v100:2,mps:100") == {
        "gpu": (6, {"a100", "v100"}),
        "mps": (100, set()),
    }
    assert gres_counts("gpu:a100") == {"gpu": (1, {"a100"})}


def test_labels_come_from_arch_os_features_partitions_and_gres() -> None:
    record = {
        "NodeName": "n1",
        "Arch": "x86_64",
        "OS": "Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0",
        "AvailableFeatures": "ib,h100",
        "Partitions": "debug,gpu",
        "Gres": "gpu:h100:8(S:0-1)",
    }
    assert labels_of(record) == {
        "kubernetes.io/hostname": "n1",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "slurm.glimmer.ai/feature.ib": "true",
        "slurm.glimmer.ai/feature.h100": "true",
        "slurm.glimmer.ai/partition.debug": "true",
        "slurm.glimmer.ai/partition.gpu": "true",
        "slurm.glimmer.ai/gres.gpu": "8",
        "slurm.glimmer.ai/gpu.count": "8",
        "slurm.glimmer.ai/gpu.product": "h100",
    }
    bare = {"NodeName": "n2", "Arch": "(null)", "AvailableFeatures": "(null)", "Gres": "(null)"}
    assert labels_of(bare) == {"kubernetes.io/hostname": "n2"}
