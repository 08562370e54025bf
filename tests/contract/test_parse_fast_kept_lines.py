"""Lines decided once for every output (issue 12): an output parses to the same result whether
its lines were met before in other outputs, decided afresh, or met once the bound is reached."""

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
        mp.setattr(parse_module, "_kept", {})
        kept = _parse_all(kind, outputs)
        again = _parse_all(kind, outputs)  # every line met before now
        mp.setattr(parse_module, "_KEPT_LINES", 0)
        afresh = _parse_all(kind, outputs)
    assert kept == again == afresh


def test_lines_past_the_bound_are_decided_per_output(monkeypatch: pytest.MonkeyPatch) -> None:
    kept: dict[tuple[str, bytes], object] = {}
    monkeypatch.setattr(parse_module, "_kept", kept)
    monkeypatch.setattr(parse_module, "_KEPT_LINES", 2)
    got = parse("gpu-burn", "gpu_temp_c=71\necc_errors=0\nxid_count=3\nxid_count=3\n", 0)
    assert got.metrics == {"gpuTempC": "71", "eccErrors": "0", "xidEvents": "3"}
    assert len(kept) == 2  # the first two lines met; the bound holds
    assert parse("gpu-burn", "xid_count=3\ngpu_temp_c=71", 0).metrics == {
        "xidEvents": "3",
        "gpuTempC": "71",
    }
