from pathlib import Path

from glimmer.api.load import load_paths, load_text
from glimmer.plan.builtin import load_builtin
from glimmer.plan.lint import lint_loaded
from glimmer.verdict.lint import Severity

DOCS = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInTest
metadata: {name: clock}
spec:
  kind: clockprobe
  thresholds:
    - {metric: sustainedClockPct, comparison: Equal, value: "83.22"}
---
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInProfile
metadata: {name: p}
spec:
  tests:
    - testRef: clock
      variants:
        - name: evidence
          thresholds:
            - {metric: pdWedgeSuspected, comparison: Equal, value: "0"}
        - name: inherits
          durationSeconds: 60
    - inline:
        kind: fabric-soak
        thresholds:
          - {metric: bandwidthGbps, comparison: GreaterThanOrEqual, value: "80"}
"""


def test_findings_are_placed_on_the_object_field_and_line() -> None:
    findings = lint_loaded(load_text(DOCS, source="suite.yaml"))
    placed = {(f.location.obj, f.test, f.location.field) for f in findings}
    assert ("BurnInTest/clock", "clock", "spec.thresholds[0]") in placed
    first = next(f for f in findings if f.test == "clock")
    assert first.location.file == "suite.yaml"
    assert first.location.line == 7


def test_a_variant_cell_is_linted_on_its_own_gates_against_the_parent_kind() -> None:
    findings = lint_loaded(load_text(DOCS, source="suite.yaml"))
    cells = {f.test: f for f in findings if f.location.obj == "BurnInProfile/p"}
    assert cells["clock-evidence"].location.field == "spec.tests[0].variants[0].thresholds[0]"
    assert cells["clock-evidence"].severity is Severity.UNSOUND


def test_a_cell_that_inherits_the_gates_does_not_repeat_the_parent_findings() -> None:
    findings = lint_loaded(load_text(DOCS, source="suite.yaml"))
    assert not [f for f in findings if f.test == "clock-inherits"]


def test_inline_entries_are_linted_with_their_kind() -> None:
    findings = lint_loaded(load_text(DOCS, source="suite.yaml"))
    inline = [f for f in findings if f.test == "inline-1-fabric-soak"]
    assert [f.location.field for f in inline] == ["spec.tests[1].inline.thresholds[0]"]
    assert "never emits" in inline[0].problem.reason


def test_builtin_profiles_lint_clean() -> None:
    assert lint_loaded(load_builtin()) == []


def test_conformance_samples_report_exactly_the_shipped_defects(shared_dir: Path) -> None:
    loaded = load_paths([str(shared_dir / "conformance/glimmer-samples")])
    found = sorted((f.location.obj, f.location.field, f.severity) for f in lint_loaded(loaded))
    assert found == [
        # Appendix C: the readiness probe on perftest's one-backlog control port.
        ("BurnInTest/fabric-soak", "spec.runner.readinessProbe", Severity.UNSOUND),
        # Appendix C: a gate on a metric fabric-soak never emits.
        ("BurnInTest/fabric-soak-extended", "spec.thresholds[0]", Severity.UNSOUND),
    ]


WRITABLE_ROOT = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInTest
metadata: {name: disk}
spec:
  kind: custom
  runner:
    hostPaths:
      - {path: /sys, mountPath: /host/sys}
      - {path: /./, mountPath: /host/root, readOnly: false}
      - {path: /, mountPath: /host/root-ro}
      - {path: /var/tmp/burnin, mountPath: /scratch, readOnly: false}
"""


def test_a_writable_root_host_path_is_flagged_at_its_read_only_field_and_line() -> None:
    findings = lint_loaded(load_text(WRITABLE_ROOT, source="disk.yaml"))
    assert [(f.location.field, f.location.line, f.severity) for f in findings] == [
        ("spec.runner.hostPaths[1].readOnly", 9, Severity.UNSOUND)
    ]
