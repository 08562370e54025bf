"""The pinned plan document and its annotation encoding."""

from __future__ import annotations

import base64
import gzip
import random

import pytest

from glimmer.api.pinned import (
    MAX_ANNOTATION_BYTES,
    MAX_DECOMPRESSED_BYTES,
    PlanDocument,
    PlanError,
    PlannedTest,
    decode_plan,
    encode_plan,
)
from glimmer.api.profile import ProfileTest
from glimmer.api.test import BurnInTestSpec
from glimmer.api.threshold import Threshold


def _plan(tests: int = 1, env_bytes: int = 0) -> PlanDocument:
    spec = BurnInTestSpec.model_validate(
        {
            "kind": "gemm-sweep",
            "durationSeconds": 60,
            "runner": {"env": [{"name": "PAD", "value": "x" * env_bytes}]},
        }
    )
    planned = [
        PlannedTest(
            name=f"gemm-sweep-c{i}",
            required=True,
            spec=spec,
            axes={"cell": str(i)},
            parent="gemm-sweep",
        )
        for i in range(tests)
    ]
    return PlanDocument(
        targets=["node-a", "node-b"],
        sinks=[],
        profile_entries=[ProfileTest(test_ref="gemm-sweep")],
        tests=planned,
    )


def test_a_small_plan_is_stored_as_raw_json_with_defaults_written_out() -> None:
    value = encode_plan(_plan())
    assert value.startswith('{"version":1,"targets":["node-a","node-b"]')
    assert '"scope":"Node"' in value and '"repeatCount":1' in value  # pinned, not inherited
    assert decode_plan(value) == decode_plan(encode_plan(decode_plan(value)))


def test_a_large_plan_is_gzipped_and_base64_encoded_and_reads_back() -> None:
    plan = _plan(tests=300, env_bytes=600)
    value = encode_plan(plan)
    assert not value.startswith("{") and len(value) <= MAX_ANNOTATION_BYTES
    assert decode_plan(value).tests[299].name == "gemm-sweep-c299"


def test_encoding_is_deterministic() -> None:
    plan = _plan(tests=300, env_bytes=600)
    assert encode_plan(plan) == encode_plan(plan)


def test_a_plan_too_large_even_compressed_is_refused() -> None:
    # Incompressible padding: distinct pseudo-random text per test.
    rng = random.Random(7)
    spec = BurnInTestSpec(kind="nccl", thresholds=[])
    tests = [
        PlannedTest(
            name=f"t{i}",
            required=True,
            spec=spec,
            axes={
                "pad": "".join(
                    rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(500)
                )
            },
        )
        for i in range(400)
    ]
    plan = PlanDocument(targets=["a"], profile_entries=[ProfileTest(test_ref="t")], tests=tests)
    with pytest.raises(PlanError, match="annotation limit"):
        encode_plan(plan)


def test_an_empty_threshold_list_survives_pinning_apart_from_none() -> None:
    plan = _plan()
    plan.tests[0].spec.thresholds = []
    assert decode_plan(encode_plan(plan)).tests[0].spec.thresholds == []
    plan.tests[0].spec.thresholds = None
    assert decode_plan(encode_plan(plan)).tests[0].spec.thresholds is None


def test_a_gzip_bomb_is_refused() -> None:
    bomb = base64.b64encode(gzip.compress(b"{" + b" " * (MAX_DECOMPRESSED_BYTES + 10))).decode()
    with pytest.raises(PlanError, match="decompresses past"):
        decode_plan(bomb)


@pytest.mark.parametrize("value", ["not base64 !!", base64.b64encode(b"not gzip").decode(), "{"])
def test_a_corrupt_annotation_is_a_plan_error(value: str) -> None:
    with pytest.raises(PlanError):
        decode_plan(value)


def test_planned_specs_keep_their_gates() -> None:
    plan = _plan()
    plan.tests[0].spec.thresholds = [
        Threshold.model_validate(
            {"metric": "throughputTflops", "comparison": "GreaterThanOrEqual", "value": "90"}
        )
    ]
    (gate,) = decode_plan(encode_plan(plan)).tests[0].spec.thresholds or []
    assert gate.to_contract().value == "90"
