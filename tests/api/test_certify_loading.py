"""The certify.glimmer.ai/v1alpha1 kinds load through the one loader, with located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import glimmer.api.certify.kinds  # noqa: F401  (registers the kinds)
from glimmer.api.certify.certification import Certification
from glimmer.api.certify.logprofile import LogProfile
from glimmer.api.certify.options import CategoryOptions, merged_options, quantity_value
from glimmer.api.certify.workloadrun import WorkloadRun
from glimmer.api.dump import to_wire
from glimmer.api.load import load_paths, load_text
from glimmer.errors import InputErrors

SAMPLES = Path(__file__).resolve().parents[1] / "certify" / "catalog" / "samples"
HEAD = "apiVersion: certify.glimmer.ai/v1alpha1\n"


def _errors(text: str) -> list[str]:
    with pytest.raises(InputErrors) as e:
        load_text(text, "in.yaml")
    return [str(x) for x in e.value.errors]


def test_every_sample_loads_as_its_kind_and_round_trips() -> None:
    loaded = load_paths([str(SAMPLES)])
    kinds = {type(item.obj) for item in loaded}
    assert kinds == {Certification, WorkloadRun, LogProfile}
    for item in loaded:
        again = type(item.obj).model_validate(to_wire(item.obj))
        assert to_wire(again) == to_wire(item.obj)


def test_an_unknown_field_names_file_line_object_and_field() -> None:
    text = HEAD + "kind: Certification\nmetadata: {name: c}\nspec:\n  target: {}\n"
    text += "  categories: [{domain: a, variant: b, colour: red}]\n"
    (err,) = _errors(text)
    assert err.startswith("in.yaml:6, document 1, Certification/c, field spec.categories[0].colour")
    assert "unknown field" in err


def test_certification_needs_one_to_sixty_four_categories() -> None:
    text = HEAD + "kind: Certification\nmetadata: {name: c}\nspec: {target: {}, categories: []}\n"
    assert "field spec.categories" in _errors(text)[0]


def test_category_options_win_over_global_and_labels_merge_per_key() -> None:
    (item,) = load_text(
        HEAD
        + """kind: Certification
metadata: {name: c}
spec:
  target: {}
  maxBytes: 16G
  numIterations: 50
  workloadMetadata: {labels: {team: a, tier: gold}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options:
        maxBytes: 8G
        workloadMetadata: {labels: {team: b}}
"""
    )
    assert isinstance(item.obj, Certification)
    options = item.obj.spec.options_for(0)
    assert options.max_bytes == "8G" and options.num_iterations == 50
    assert options.workload_metadata is not None
    assert options.workload_metadata.labels == {"team": "b", "tier": "gold"}


def test_reserved_workload_label_keys_are_refused_at_load() -> None:
    text = HEAD + "kind: Certification\nmetadata: {name: c}\nspec:\n  target: {}\n"
    text += "  categories: [{domain: a, variant: b}]\n"
    text += "  workloadMetadata: {labels: {certify.glimmer.ai/job: x}}\n"
    assert "reserved" in _errors(text)[0]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("maxBytes", "16X"),
        ("timeoutPerJob", "1 hour"),
        ("sourceRepo", "git://example.com/repo"),
        ("nicResourceName", "kubernetes.io/rdma"),
        ("testScale", "galaxy"),
        ("nodesPerJob", 0),
    ],
)
def test_category_option_patterns_and_ranges_are_checked(field: str, value: object) -> None:
    text = HEAD + "kind: Certification\nmetadata: {name: c}\nspec:\n  target: {}\n"
    text += f"  categories: [{{domain: a, variant: b}}]\n  {field}: {value!r}\n"
    assert f"field spec.{field}" in _errors(text)[0]


def test_a_resource_request_above_its_limit_is_refused() -> None:
    text = HEAD + "kind: Certification\nmetadata: {name: c}\nspec:\n  target: {}\n"
    text += "  categories: [{domain: a, variant: b}]\n"
    text += "  resources: {limits: {memory: 1Gi}, requests: {memory: 2Gi}}\n"
    assert "exceeds limits.memory" in _errors(text)[0]


def test_gang_queue_label_key_may_not_be_a_reserved_key() -> None:
    text = HEAD + "kind: Certification\nmetadata: {name: c}\nspec:\n  target: {}\n"
    text += "  categories: [{domain: a, variant: b}]\n"
    text += "  gangScheduler: {schedulerName: s, queueLabelKey: app.kubernetes.io/managed-by}\n"
    assert "reserved" in _errors(text)[0]


def test_workload_run_needs_exactly_one_framework_and_torch_one_entry_point() -> None:
    base = HEAD + "kind: WorkloadRun\nmetadata: {name: w}\nspec:\n  image: i\n  numNodes: 1\n"
    two = base + "  framework: {exec: {command: [a]}, torch: {script: s.py}}\n"
    assert "exactly one of torch, mpi and exec" in _errors(two)[0]
    both = base + "  framework: {torch: {script: s.py, module: m}}\n"
    assert "exactly one of script and module" in _errors(both)[0]


def test_workload_run_config_is_inline_or_a_config_map_not_both() -> None:
    text = HEAD + "kind: WorkloadRun\nmetadata: {name: w}\nspec:\n  image: i\n  numNodes: 1\n"
    text += "  framework: {exec: {command: [a]}}\n"
    text += "  config: {inline: {a: b}, configMapRef: {name: c}}\n"
    assert "exactly one of inline and configMapRef" in _errors(text)[0]


def test_log_profile_example_must_match_its_regex() -> None:
    text = HEAD + "kind: LogProfile\nmetadata: {name: p}\nspec:\n  timestamp: {layout: '15:04'}\n"
    text += "  patterns: {trainingStep: {regex: 'step (?P<step>\\d+)', example: 'no steps'}}\n"
    assert "does not match the regex" in _errors(text)[0]


def test_log_profile_regex_must_compile() -> None:
    text = HEAD + "kind: LogProfile\nmetadata: {name: p}\nspec:\n  timestamp: {layout: '15:04'}\n"
    text += "  patterns: {trainingStep: {regex: '(unclosed'}}\n"
    assert "invalid regex" in _errors(text)[0]


def test_job_template_patch_accepts_a_json_string_holding_the_array() -> None:
    text = HEAD + "kind: WorkloadRun\nmetadata: {name: w}\nspec:\n  image: i\n  numNodes: 1\n"
    text += "  framework: {exec: {command: [a]}}\n  overrides:\n    - when: {}\n"
    text += """      jobTemplatePatch: '[{"op": "add", "path": "/a", "value": 1}]'\n"""
    (item,) = load_text(text)
    assert isinstance(item.obj, WorkloadRun)
    assert item.obj.spec.overrides is not None
    assert item.obj.spec.overrides[0].job_template_patch == [
        {"op": "add", "path": "/a", "value": 1}
    ]


def test_merged_options_without_a_category_keep_the_global_values() -> None:
    glob = CategoryOptions(max_steps=5)
    assert merged_options(glob, None).max_steps == 5


@pytest.mark.parametrize(
    ("q", "v"), [("2", 2.0), ("500m", 0.5), ("1Gi", 2.0**30), ("1e3", 1000.0), ("x", None)]
)
def test_quantities_are_read_with_their_suffixes(q: str, v: float | None) -> None:
    assert quantity_value(q) == v


def test_a_reserved_label_error_points_at_the_key_and_its_line() -> None:
    text = HEAD + "kind: Certification\nmetadata: {name: c}\nspec:\n  target: {}\n"
    text += "  categories: [{domain: a, variant: b}]\n  workloadMetadata:\n    labels:\n"
    text += "      team: x\n      app.kubernetes.io/managed-by: me\n"
    (err,) = _errors(text)
    assert err.startswith(
        "in.yaml:10, document 1, Certification/c, "
        "field spec.workloadMetadata.labels.app.kubernetes.io/managed-by: "
    )
    assert err.endswith("the key is reserved for glimmer")


def _located(text: str) -> tuple[str | None, int | None, str]:
    with pytest.raises(InputErrors) as e:
        load_text(text, "in.yaml")
    (error,) = e.value.errors
    return error.location.field, error.location.line, error.message


WLR = HEAD + "kind: WorkloadRun\nmetadata: {name: w}\nspec:\n  image: i\n  numNodes: 1\n"
WLR += "  framework: {exec: {command: [a]}}\n"
LP = HEAD + "kind: LogProfile\nmetadata: {name: p}\nspec:\n"


def test_a_workload_run_threshold_without_its_measurement_is_refused_at_load() -> None:
    field, line, message = _located(WLR + "  thresholds: {busBandwidthGBps: 'value >= 400'}\n")
    assert (field, line) == ("spec.thresholds.busBandwidthGBps", 8)
    assert "only with spec.bandwidthMeasurement, which is not set" in message
    loaded = load_text(
        WLR + "  thresholds: {busBandwidthGBps: 'value >= 400'}\n"
        "  bandwidthMeasurement: {logProfileRef: nccl-bandwidth}\n"
    )
    assert isinstance(loaded[0].obj, WorkloadRun)


def test_a_cel_guard_is_refused_when_the_file_loads_not_when_it_renders() -> None:
    text = WLR + "  overrides:\n    - when: {expression: 'true'}\n      jobTemplate: {}\n"
    field, line, message = _located(text)
    assert (field, line) == ("spec.overrides[0].when.expression", 9)
    assert "CEL is not supported" in message


@pytest.mark.parametrize(
    ("selector", "field", "why"),
    [
        ("taintSelectors: [{key: k, effect: NoSchedul}]", "taintSelectors[0].effect", "NoSchedule"),
        ("matchExpressions: [{key: k, operator: In}]", "matchExpressions[0].values", "needs"),
        ("matchExpressions: [{key: k, operator: NotIn, values: []}]", "matchExpressions[0].values",
         "needs"),
        ("matchExpressions: [{key: k, operator: Exists, values: [v]}]",
         "matchExpressions[0].values", "takes no values"),
    ],
)  # fmt: skip
def test_a_target_that_can_match_no_node_by_construction_is_refused_at_load(
    selector: str, field: str, why: str
) -> None:
    text = HEAD + "kind: Certification\nmetadata: {name: c}\nspec:\n"
    text += f"  target: {{{selector}}}\n  categories: [{{domain: a, variant: b}}]\n"
    got_field, line, message = _located(text)
    assert (got_field, line) == (f"spec.target.{field}", 5)
    assert why in message


def test_a_log_profile_unit_for_a_capture_its_regex_lacks_is_refused_at_load() -> None:
    text = LP + "  timestamp: {layout: '15:04'}\n  patterns:\n    trainingStep:\n"
    text += "      regex: 'step (?P<step>\\d+) took (?P<stepTiming>[\\d.]+)'\n"
    text += "      units: {stepTime: ms}\n"
    field, line, message = _located(text)
    assert (field, line) == ("spec.patterns.trainingStep.units.stepTime", 9)
    assert "no capture named 'stepTime' (it has: step, stepTiming)" in message


def test_a_bandwidth_pattern_without_its_three_captures_is_refused_at_load() -> None:
    text = LP + "  timestamp: {layout: '15:04'}\n  patterns:\n    bandwidthResult:\n"
    text += "      regex: '(?P<size>\\d+) (?P<algBW>[\\d.]+)'\n"
    field, line, message = _located(text)
    assert (field, line) == ("spec.patterns.bandwidthResult.regex", 8)
    assert message.endswith("(missing: busBW)")


@pytest.mark.parametrize("layout", ["%Y-%m-%dT%H:%M:%S", "YYYY-MM-DD hh:mm:ss"])
def test_a_timestamp_layout_that_is_not_a_go_layout_is_refused_at_load(layout: str) -> None:
    text = LP + f"  timestamp: {{layout: '{layout}'}}\n  patterns: {{}}\n"
    field, line, message = _located(text)
    assert (field, line) == ("spec.timestamp.layout", 5)
    assert "is not a Go time layout" in message


@pytest.mark.parametrize(
    ("selector", "field", "why"),
    [
        ("{nvidia.com/gpu.product: NVIDIA GB200}", "nvidia.com/gpu.product", "not a label value"),
        ("{'gpu product': x}", "gpu product", "not a label key"),
    ],
)
def test_a_node_selector_label_no_node_can_carry_is_refused_at_load(
    selector: str, field: str, why: str
) -> None:
    text = HEAD + "kind: Certification\nmetadata: {name: c}\nspec:\n"
    text += f"  target: {{nodeSelector: {selector}}}\n  categories: [{{domain: a, variant: b}}]\n"
    got_field, line, message = _located(text)
    assert (got_field, line) == (f"spec.target.nodeSelector.{field}", 5)
    assert why in message


@pytest.mark.parametrize(
    ("op", "field", "why"),
    [
        ("{op: copy, from: /a, path: /b}", "[0].op", "unsupported op 'copy'"),
        ("{op: add, path: spec/a, value: 1}", "[0].path", "must start with '/'"),
        ("{op: replace, path: /spec/a}", "[0].value", "replace needs a value"),
    ],
)
def test_a_json_patch_operation_of_the_wrong_shape_is_refused_at_load(
    op: str, field: str, why: str
) -> None:
    text = WLR + f"  overrides:\n    - when: {{}}\n      jobTemplatePatch: [{op}]\n"
    got_field, line, message = _located(text)
    assert got_field == f"spec.overrides[0].jobTemplatePatch{field}"
    assert line == 10 and why in message


@pytest.mark.parametrize("name", ["rdma_shared_device_a", "k8s.io/rdma"])
def test_a_workload_run_nic_resource_name_is_checked_at_load_as_a_certification_one(
    name: str,
) -> None:
    field, line, _ = _located(WLR + f"  nicResourceName: {name}\n")
    assert (field, line) == ("spec.nicResourceName", 8)
