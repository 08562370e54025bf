"""A runner's output split at once (issue 12): parsing it gives what the line-by-line scan gives,
blank and whitespace-only lines, carriage returns and fences included."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.contract import parse as parse_module
from glimmer.contract.artifacts import plain_lines, scan
from glimmer.contract.parse import parse

LINES = st.sampled_from(
    [
        "gpu_temp_c=71", "gpuTempC=n/a", "ecc_errors=0", " busbw_gbps = 12.5 ", "a b=1", "",
        "   ", "\t", "\x0b", "all good", "gpuTempC=72\r", "\r", "GPU_BURN_PASS", "xid_count=3",
        "-----BEGIN BURNIN ARTIFACT name=a.json type=application/json-----", "{}",
        "-----END BURNIN ARTIFACT-----",
    ]
)  # fmt: skip
OUTPUTS = st.lists(LINES, max_size=16).map("\n".join)


@settings(max_examples=300)
@given(kind=st.sampled_from(["gpu-burn", "custom"]), output=OUTPUTS, code=st.sampled_from([0, 1]))
def test_an_output_parses_the_same_split_at_once_or_scanned(
    kind: str, output: str, code: int
) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parse_module, "_lines", parse_module._RecentLines(4096))
        split = parse(kind, output, code)
        mp.setattr(parse_module, "_lines", parse_module._RecentLines(4096))
        mp.setattr(parse_module, "plain_lines", lambda data: None)
        scanned = parse(kind, output, code)
    assert split == scanned


@given(output=OUTPUTS)
def test_plain_lines_are_the_scanned_lines_with_the_blank_ones(output: str) -> None:
    data = output.encode()
    lines = plain_lines(data)
    if b"\r" in data or b"BURNIN ARTIFACT" in data:
        assert lines is None
        return
    assert lines is not None
    assert [line for line in lines if line.strip()] == list(scan(data, []))


def test_an_output_with_a_carriage_return_or_a_fence_is_left_to_the_scan() -> None:
    assert plain_lines(b"a=1\r\nb=2\n") is None
    assert plain_lines(b"-----BEGIN BURNIN ARTIFACT name=x type=text/plain-----\n") is None
    assert plain_lines(b"a=1\n\nb=2") == [b"a=1", b"", b"b=2"]
