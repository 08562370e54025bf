"""The ``--fault MODE@TARGET[=INTENSITY]`` flag parser, with property tests."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.api.fleet import Fault
from glimmer.errors import InputError
from glimmer.fleet.faultspec import FaultSpec, from_declared, parse_fault, parse_faults

modes = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
targets = st.from_regex(r"[a-z][a-z_]{0,10}:[a-z0-9][a-z0-9./-]{0,30}", fullmatch=True)
levels = st.floats(min_value=0.001, max_value=1.0, allow_nan=False)


def test_examples() -> None:
    assert parse_fault("gpu_fallen_off_bus@gpu:hgx-node-0001/3") == FaultSpec(
        "gpu_fallen_off_bus", "gpu:hgx-node-0001/3", 1.0
    )
    f = parse_fault("gpu_cooling_fault@rack:site-a/nvl-a=0.5")
    assert (f.mode, f.target, f.intensity) == ("gpu_cooling_fault", "rack:site-a/nvl-a", 0.5)
    assert parse_fault("gpu_cooling_fault@gpu_rack:*").target == "gpu_rack:*"
    assert [f.mode for f in parse_faults(["a@gpu:x/0", "b@node:x"])] == ["a", "b"]


@given(modes, targets, levels)
def test_render_parses_back(mode: str, target: str, level: float) -> None:
    spec = FaultSpec(mode, target, float(f"{level:g}"))
    assert parse_fault(spec.render()) == spec


@given(st.text(max_size=40))
def test_any_text_parses_or_is_refused_cleanly(text: str) -> None:
    try:
        spec = parse_fault(text)
    except InputError as e:
        assert e.location.field == "--fault"
        assert "MODE@TARGET" in e.message
    else:
        assert 0 < spec.intensity <= 1 and ":" in spec.target


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("gpu_xid_burst", "missing '@'"),
        ("Xid@gpu:a/0", "invalid fault mode"),
        ("@gpu:a/0", "invalid fault mode"),
        ("gpu_xid_burst@hgx-node-0001", "invalid target"),
        ("gpu_xid_burst@gpu:", "invalid target"),
        ("gpu_xid_burst@gpu:a/0=high", "is not a number"),
        ("gpu_xid_burst@gpu:a/0=0", "must be within (0, 1]"),
        ("gpu_xid_burst@gpu:a/0=1.5", "must be within (0, 1]"),
        ("gpu_xid_burst@gpu:a/0=nan", "must be within (0, 1]"),
    ],
)
def test_bad_flags_say_what_is_wrong(text: str, reason: str) -> None:
    with pytest.raises(InputError) as e:
        parse_fault(text)
    assert reason in e.value.message


def test_declared_faults_convert_with_their_window() -> None:
    fault = Fault.model_validate(
        {"mode": "gpu_xid_burst", "target": "gpu:a/0", "intensity": 2,
         "window": {"start": "2026-10-02T00:00:00Z"}}
    )  # fmt: skip
    spec = from_declared(fault)
    assert spec.intensity == 1.0 and spec.start is not None and spec.end is None
