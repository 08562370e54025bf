from glimmer.api.load import load_text
from glimmer.api.overlay import apply_overlay, is_env_safe_axis
from glimmer.api.profile import BurnInProfile, TestVariant
from glimmer.api.test import BurnInTestSpec
from glimmer.plan.variants import expand_entry

PARENT = BurnInTestSpec.model_validate(
    {
        "kind": "gemm-sweep",
        "durationSeconds": 60,
        "thresholds": [{"metric": "nonfiniteCount", "comparison": "Equal", "value": "0"}],
    }
)


def _cell(**fields: object) -> TestVariant:
    return TestVariant.model_validate({"name": "c", **fields})


def test_unset_cell_fields_inherit_the_entry() -> None:
    spec = apply_overlay(PARENT, _cell())
    assert spec == PARENT
    assert spec is not PARENT


def test_cell_duration_and_repeats_replace_the_entry_values() -> None:
    spec = apply_overlay(PARENT, _cell(durationSeconds=300, repeatCount=3))
    assert (spec.duration_seconds, spec.repeat_count) == (300, 3)
    assert PARENT.duration_seconds == 60  # the entry itself is untouched


def test_empty_threshold_overlay_clears_the_parent_gates() -> None:
    assert apply_overlay(PARENT, _cell(thresholds=[])).thresholds == []


def test_threshold_overlay_replaces_never_merges() -> None:
    gate = {"metric": "achievedTflops", "comparison": "GreaterThanOrEqual", "value": "40"}
    spec = apply_overlay(PARENT, _cell(thresholds=[gate]))
    assert [t.metric for t in spec.thresholds or []] == ["achievedTflops"]


def test_args_and_env_overlay_on_a_test_without_runner_block_creates_one() -> None:
    assert PARENT.runner is None
    spec = apply_overlay(PARENT, _cell(args=["--fast"], env=[{"name": "X", "value": "1"}]))
    assert spec.runner is not None
    assert spec.runner.args == ["--fast"]
    assert [e.name for e in spec.runner.env or []] == ["X"]


def test_each_cell_is_planned_as_test_dash_cell_with_its_axes_and_parent() -> None:
    cells = [
        TestVariant.model_validate({"name": p, "axes": {"precision": p}}) for p in ("fp8", "bf16")
    ]
    planned = expand_entry("gemm", PARENT, True, cells)
    assert [p.name for p in planned] == ["gemm-fp8", "gemm-bf16"]
    assert [p.axes for p in planned] == [{"precision": "fp8"}, {"precision": "bf16"}]
    assert {p.parent for p in planned} == {"gemm"}


def test_an_entry_without_variants_is_planned_once_under_its_own_name() -> None:
    planned = expand_entry("gemm", PARENT, False, None)
    assert [(p.name, p.required, p.parent) for p in planned] == [("gemm", False, None)]


def test_axis_names_must_be_environment_safe() -> None:
    assert is_env_safe_axis("precision")
    assert is_env_safe_axis("_x9")
    assert not is_env_safe_axis("9lives")
    assert not is_env_safe_axis("msg-size")
    assert not is_env_safe_axis("")


def test_variant_sample_expands_to_one_planned_test_per_cell(shared_dir) -> None:  # type: ignore[no-untyped-def]
    loaded = load_text((shared_dir / "conformance/glimmer-samples/variant-sweep.yaml").read_text())
    profiles = [i.obj for i in loaded if isinstance(i.obj, BurnInProfile)]
    assert profiles
    for profile in profiles:
        for entry in profile.spec.tests:
            if entry.variants and entry.inline is not None:
                planned = expand_entry("e", entry.inline, True, entry.variants)
                assert len(planned) == len(entry.variants)
