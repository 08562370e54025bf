"""Report.artifact: the fence a runner prints for non-metric evidence (§3.6), read back by the
contract's own parser, and refused when the payload would break the fence."""

from __future__ import annotations

import io

import pytest

from glimmer.contract.artifacts import extract_artifacts
from glimmer.runners.report import Report


def _report() -> tuple[Report, io.StringIO]:
    out = io.StringIO()
    return Report("GEMM_SWEEP", out), out


def test_an_artifact_round_trips_through_the_contract_parser() -> None:
    report, out = _report()
    report.metric("a", 1)
    report.artifact("per-device.json", "application/json", '{"devices": [\n {"index": 0}\n]}')
    report.metric("b", 2)
    found = extract_artifacts(out.getvalue().encode())
    (art,) = found.artifacts
    assert (art.name, art.media_type, art.dropped) == ("per-device.json", "application/json", "")
    assert art.payload == b'{"devices": [\n {"index": 0}\n]}\n'
    assert found.lines == (b"a=1", b"b=2")  # payload lines never reach the metric scanner


def test_artifact_payload_lines_are_not_guarded_like_notes() -> None:
    report, out = _report()
    report.artifact("t.txt", "text/plain", "x=1\nGEMM_SWEEP_PASS")
    assert out.getvalue().splitlines()[1:3] == ["x=1", "GEMM_SWEEP_PASS"]


@pytest.mark.parametrize(
    "payload",
    ["ok\n-----END BURNIN ARTIFACT-----\nafter", "-----BEGIN BURNIN ARTIFACT x y-----"],
)
def test_a_payload_holding_a_fence_line_is_refused_before_anything_is_written(
    payload: str,
) -> None:
    report, out = _report()
    with pytest.raises(ValueError, match="fence line"):
        report.artifact("t.txt", "text/plain", payload)
    assert out.getvalue() == ""


@pytest.mark.parametrize(("name", "media"), [("two words", "text/plain"), ("t.txt", "")])
def test_a_name_or_media_type_that_is_not_one_word_is_refused(name: str, media: str) -> None:
    report, out = _report()
    with pytest.raises(ValueError, match="one word"):
        report.artifact(name, media, "x")
    assert out.getvalue() == ""
