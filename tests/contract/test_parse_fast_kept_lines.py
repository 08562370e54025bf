"""Lines decided once for every output (issue 12): an output parses to the same result whether
its lines were met before in other outputs, decided afresh, or met while the memory of recent
lines turns over; the memory stays bounded and keeps the lines in use."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.contract import parse as parse_module
from glimmer.contract.parse import parse
from glimmer.contract.vocab import ParsedResult

LINES = st.sampled_from(
    [
        "gpu_temp_c=71", "gpuTempC=n/a", "ecc_errors=0", " busbw_gbps = 12.5 ", "a b=1",
        "bad.key=1", "all good", "", "xid_count=3", "gpuTempC=", "é=1", "gpuTempC=72\r",
    ]
)  # fmt: skip
OUTPUTS = st.lists(st.lists(LINES, max_size=12).map("\n".join), min_size=1, max_size=6)


def _parse_all(kind: str, outputs: list[str]) -> list[ParsedResult]:
    return [parse(kind, out, 0) for out in outputs]


@settings(max_examples=150)
@given(kind=st.sampled_from(["gpu-burn", "nccl-tests", "custom"]), outputs=OUTPUTS)
def test_outputs_parse_the_same_with_lines_kept_or_decided_afresh(
    kind: str, outputs: list[str]
) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parse_module, "_lines", parse_module._RecentLines(4096))
        kept = _parse_all(kind, outputs)
        again = _parse_all(kind, outputs)  # every line met before now
        mp.setattr(parse_module, "_lines", parse_module._RecentLines(1))
        afresh = _parse_all(kind, outputs)  # a new generation at almost every line
    assert kept == again == afresh


def test_the_memory_of_lines_stays_bounded_and_keeps_the_lines_in_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = parse_module._RecentLines(4)
    monkeypatch.setattr(parse_module, "_lines", memory)
    for node in range(50):  # each node prints its own serial next to a line every node prints
        got = parse("gpu-burn", f"ecc_errors=0\nserial=S{node:04d}\n", 0)
        assert got.metrics == {"eccErrors": "0", "serial": f"S{node:04d}"}
        assert len(memory.young) <= 4 and len(memory.old) <= 4
    remembered = memory.young.keys() | memory.old.keys()
    assert ("gpu-burn", b"ecc_errors=0") in remembered  # in steady use: carried over
    assert ("gpu-burn", b"serial=S0000") not in remembered  # a node long finished: gone
    assert ("gpu-burn", b"serial=S0049") in remembered


def test_long_lines_are_decided_where_they_appear_and_never_remembered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = parse_module._RecentLines(4096)
    monkeypatch.setattr(parse_module, "_lines", memory)
    long_value = "x" * 300
    for _ in range(2):
        assert parse("custom", f"note={long_value}\n", 0).metrics == {"note": long_value}
    assert not memory.young and not memory.old
