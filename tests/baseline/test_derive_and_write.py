"""Deriving a profile and writing it as commented YAML (glimmer.baseline.derive, .write)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from baseline_world import GB200, R, make_run, suite_of
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.api.load import load_text
from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTest
from glimmer.baseline import derive as derive_module
from glimmer.baseline.collect import collect
from glimmer.baseline.derive import derive
from glimmer.baseline.guarantee import GuaranteeBroken
from glimmer.baseline.rules import Gate
from glimmer.baseline.suite import planned_tests, thresholdless
from glimmer.baseline.write import render
from glimmer.cli.app import main
from glimmer.errors import InputError
from glimmer.plan.lint import lint_loaded

CLOCK = {
    "kind": "clockprobe",
    "durationSeconds": 300,
    "runner": {
        "privileged": True,
        "hostPaths": [{"path": "/dev/kmsg", "mountPath": "/dev/kmsg", "type": "CharDevice"}],
    },
    "thresholds": [
        {"metric": "sustainedClockPct", "comparison": "GreaterThanOrEqual", "value": "70"}
    ],
}
GEMM = {"kind": "gemm-sweep", "durationSeconds": 120}
INLINE_BURN = {
    "kind": "gpu-burn",
    "durationSeconds": 60,
    "thresholds": [{"metric": "miscompares", "comparison": "Equal", "value": "0"}],
}
ENTRIES = [
    {"testRef": "clock"},
    {"inline": INLINE_BURN},
    {
        "testRef": "gemm",
        "variants": [
            {"name": "fp16", "axes": {"precision": "fp16"}},
            {
                "name": "fp32",
                "axes": {"precision": "fp32"},
                "thresholds": [
                    {"metric": "achievedTflops", "comparison": "GreaterThanOrEqual", "value": "1"}
                ],
            },
        ],
    },
]  # fmt: skip
NODES = [f"n{i:02d}" for i in range(12)]


def suite():  # type: ignore[no-untyped-def]
    return suite_of({"clock": CLOCK, "gemm": GEMM}, ENTRIES)


def results(seed: int, nodes: list[str] = NODES) -> list[R]:
    rng = random.Random(seed)
    out: list[R] = []
    for n in nodes:
        out.append(
            R("clock", (n,), {
                "sustainedClockPct": f"{rng.gauss(90, 1):.2f}",
                "gpuTempC": f"{rng.gauss(60, 1):.1f}",
                "throttleEvents": "0",
                "deviceCount": "8",
                "gpuName": "H100",
                "gpuIdleSamples": "0",
            }, na=("sustainedClockSpreadPct",) if n == "n00" else ())
        )  # fmt: skip
        out.append(
            R("inline-1-gpu-burn", (n,), {"miscompares": "0", "iterationsCompleted": "900"},
              kind="gpu-burn")
        )  # fmt: skip
        for cell in ("fp16", "fp32"):
            out.append(
                R(f"gemm-{cell}", (n,), {"achievedTflops": f"{rng.gauss(500, 5):.1f}",
                  "maxRelativeError": f"{rng.uniform(1e-4, 2e-4):.3e}"}, kind="gemm-sweep")
            )  # fmt: skip
    return out


def test_planned_names_follow_the_planner_and_a_thresholdless_copy_has_no_gate() -> None:
    names = [(p.name, len(p.gates)) for p in planned_tests(suite())]
    assert names == [("clock", 1), ("inline-1-gpu-burn", 1), ("gemm-fp16", 0), ("gemm-fp32", 1)]
    bare = thresholdless(suite())
    assert all(not p.gates for p in planned_tests(bare))
    assert bare.tests["clock"].runner == suite().tests["clock"].runner


def _written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "derived.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_derived_profile_lints_clean_and_keeps_everything_but_the_gates(
    tmp_path: Path,
) -> None:
    text = render(derive(suite(), collect([make_run("b1", results(1))])))
    loaded = load_text(text, "derived.yaml")
    assert lint_loaded(loaded) == []
    assert main(["lint", str(_written(tmp_path, text))]) == 0
    tests = {i.name: i.obj for i in loaded if isinstance(i.obj, BurnInTest)}
    profile = next(i.obj for i in loaded if isinstance(i.obj, BurnInProfile))
    clock = tests["clock"].spec
    source = suite().tests["clock"]
    assert (clock.runner, clock.duration_seconds) == (source.runner, source.duration_seconds)
    gates = {g.metric: (g.comparison.value, g.value) for g in clock.thresholds or []}
    assert gates["throttleEvents"] == ("Equal", "0")
    assert gates["deviceCount"] == ("Equal", "8")
    assert gates["sustainedClockPct"][0] == "GreaterThanOrEqual"
    assert gates["gpuTempC"][0] == "LessThanOrEqual"
    assert "gpuName" not in gates and "gpuIdleSamples" not in gates
    inline = profile.spec.tests[1].inline
    assert inline is not None and [g.metric for g in inline.thresholds or []] == ["miscompares"]
    cells = profile.spec.tests[2].variants or []
    assert all({g.metric for g in c.thresholds or []} >= {"achievedTflops"} for c in cells)
    assert tests["gemm"].spec.thresholds is None  # the cells carry the gates


def test_every_gate_carries_a_comment_saying_what_it_was_made_of() -> None:
    text = render(derive(suite(), collect([make_run("b1", results(1))])))
    lines = text.splitlines()
    gates = 0
    for i, line in enumerate(lines):
        found = re.match(r"\s*- metric: (\w+)", line)
        if not found:
            continue
        gates += 1
        block = []
        j = i - 1
        while lines[j].lstrip().startswith("#"):
            block.insert(0, lines[j])
            j -= 1
        comment = "\n".join(block)
        assert comment.lstrip().startswith(f"# {found.group(1)}:"), comment
        assert "from n=12" in comment and "rule:" in comment, comment
        if "GreaterThanOrEqual" in comment or "LessThanOrEqual" in comment:
            words = ("median", "MAD", "k 6", "margin", "worst clean unit")
            assert all(w in comment for w in words), comment
    assert gates >= 9
    assert "replaces the source profile's sustainedClockPct GreaterThanOrEqual 70" in text
    assert "not gated: iterationsCompleted: counter was nonzero" in text


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_the_output_does_not_depend_on_the_order_of_runs_or_results(data: st.DataObject) -> None:
    first, second = results(1), results(2)
    expected = render(derive(suite(), collect([make_run("b1", first), make_run("b2", second)])))
    runs = [
        make_run("b1", data.draw(st.permutations(first))),
        make_run("b2", data.draw(st.permutations(second))),
    ]
    assert render(derive(suite(), collect(data.draw(st.permutations(runs))))) == expected


def test_a_group_is_one_unit_named_by_its_ranks() -> None:
    group = [
        R("allreduce", tuple(NODES[i : i + 4]), {"busBandwidthGBs": f"{400 + i}"}, kind="nccl",
          scope="Group")
        for i in range(0, 8)
    ]  # fmt: skip
    nccl = suite_of({"allreduce": {"kind": "nccl", "scope": "Group"}}, [{"testRef": "allreduce"}])
    test = derive(nccl, collect([make_run("b1", group)])).profiles[0].tests[0]
    gate = next(g for g in test.gates if g.threshold.metric == "busBandwidthGBs")
    assert gate.summary.n == 8 and gate.worst is not None
    assert gate.worst.unit == "n00+n01+n02+n03"


def test_a_mixed_fleet_gets_one_profile_per_gpu_product() -> None:
    products = {n: GB200 for n in NODES[6:]}
    text = render(derive(suite(), collect([make_run("b1", results(1), products=products)]),
                         min_samples=5))  # fmt: skip
    loaded = load_text(text, "derived.yaml")
    assert lint_loaded(loaded) == []
    profiles = sorted(i.name for i in loaded if isinstance(i.obj, BurnInProfile))
    assert profiles == ["p-nvidia-gb200", "p-nvidia-h100-80gb-hbm3"]
    assert "clock-nvidia-gb200" in {i.name for i in loaded if isinstance(i.obj, BurnInTest)}
    assert "nodeSelector nvidia.com/gpu.product: NVIDIA-GB200" in text


def test_too_few_samples_derive_nothing_and_keep_the_source_gates_that_hold() -> None:
    few = collect([make_run("b1", results(1, NODES[:3]))])
    text = render(derive(suite(), few))
    loaded = load_text(text, "derived.yaml")
    assert lint_loaded(loaded) == []
    tests = {i.name: i.obj for i in loaded if isinstance(i.obj, BurnInTest)}
    gates = [(g.metric, g.value) for g in tests["clock"].spec.thresholds or []]
    assert gates == [("sustainedClockPct", "70")]
    assert "only 3 sample(s), fewer than 5" in text
    assert "sustainedClockPct: kept from the source profile (GreaterThanOrEqual 70)" in text
    bare = render(derive(suite(), few, keep_source=False))
    assert "NO GATES could be derived for this profile" in bare
    assert "source gate dropped: sustainedClockPct GreaterThanOrEqual 70: source gates" in bare


def test_a_source_gate_that_fails_a_clean_unit_is_dropped_with_the_unit_named() -> None:
    # The spec-sheet lesson: a floor of 95 % clock fails healthy parts that hold 90 %.
    strict = dict(CLOCK, thresholds=[
        {"metric": "sustainedClockPct", "comparison": "GreaterThanOrEqual", "value": "95"},
        {"metric": "throttledSamples", "comparison": "Equal", "value": "0"},
    ])  # fmt: skip
    source = suite_of({"clock": strict, "gemm": GEMM}, ENTRIES)
    few = collect([make_run("b1", results(1, NODES[:3]))])
    clock = derive(source, few).profiles[0].tests[0]
    by_metric = {g.threshold.metric: g for g in clock.source}
    assert not by_metric["sustainedClockPct"].kept
    assert "fails clean unit n0" in by_metric["sustainedClockPct"].reason
    # A metric the baseline's runners never printed would fail every clean unit closed.
    assert not by_metric["throttledSamples"].kept
    assert "was not reported" in by_metric["throttledSamples"].reason


def test_a_gate_the_linter_would_flag_is_dropped_with_its_reason() -> None:
    # clockprobe never prints bandwidthGbps: a gate on it would fail closed on real runners.
    odd = [R("clock", (n,), {"bandwidthGbps": "100", "throttleEvents": "0"}) for n in NODES]
    got = derive(suite(), collect([make_run("b1", odd)]))
    clock = got.profiles[0].tests[0]
    assert [g.threshold.metric for g in clock.gates] == ["throttleEvents"]
    assert any(d.reason.startswith("the linter:") for d in clock.declined)


def test_runs_of_another_profile_are_refused() -> None:
    other = [R("something-else", (n,), {"smClockMHz": "1"}) for n in NODES]
    with pytest.raises(InputError, match="measured none of the tests of profile 'p'"):
        derive(suite(), collect([make_run("b1", other)]))


def test_a_gate_that_would_fail_a_clean_unit_is_never_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = derive_module.derive_gate

    def too_tight(found, **kw):  # type: ignore[no-untyped-def]
        gate = real(found, **kw)
        if isinstance(gate, Gate) and found.metric == "sustainedClockPct":
            tight = gate.threshold.model_copy(update={"value": "1000"})
            return Gate(tight, *[getattr(gate, f) for f in list(Gate.__dataclass_fields__)[1:]])
        return gate

    monkeypatch.setattr(derive_module, "derive_gate", too_tight)
    with pytest.raises(GuaranteeBroken, match="fails clean unit n"):
        derive(suite(), collect([make_run("b1", results(1))]))
