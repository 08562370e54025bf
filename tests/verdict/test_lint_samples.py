"""The shipped samples lint to exactly the defects Appendix C describes, and nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from glimmer.contract.vocab import Threshold
from glimmer.verdict.lint import Problem, TestDefinition, lint_test


def _gates(raw: list[dict[str, Any]] | None) -> tuple[Threshold, ...]:
    return tuple(
        Threshold(
            metric=str(t.get("metric", "")),
            comparison=str(t.get("comparison", "")),
            value=str(t.get("value", "")),
            applicability=str(t.get("applicability", "")),
        )
        for t in raw or ()
    )


def _definition(spec: dict[str, Any]) -> TestDefinition:
    soak = spec.get("soak")
    runner = spec.get("runner") or {}
    port = ((runner.get("readinessProbe") or {}).get("tcpSocket") or {}).get("port")
    env = {e["name"]: str(e.get("value", "")) for e in runner.get("env") or ()}
    return TestDefinition(
        kind=str(spec.get("kind", "")),
        thresholds=_gates(spec.get("thresholds")),
        duration_seconds=int(spec.get("durationSeconds") or 0),
        repeat_count=int(spec.get("repeatCount") or 1),
        segment_seconds=int(soak["segmentSeconds"]) if soak else None,
        readiness_tcp_port=port if isinstance(port, int) else None,
        env=env,
    )


def lint_samples(folder: Path) -> list[tuple[str, str, Problem]]:
    """(file, object, problem) for every test, inline entry and variant overlay in ``folder``."""
    docs = [
        (path.name, doc)
        for path in sorted(folder.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict)
    ]
    tests = {
        doc["metadata"]["name"]: doc["spec"] for _, doc in docs if doc.get("kind") == "BurnInTest"
    }
    found: list[tuple[str, str, Problem]] = []
    for file, doc in docs:
        name = doc.get("metadata", {}).get("name", "")
        if doc.get("kind") == "BurnInTest":
            found += [(file, f"BurnInTest/{name}", p) for p in lint_test(_definition(doc["spec"]))]
        if doc.get("kind") != "BurnInProfile":
            continue
        for i, entry in enumerate(doc["spec"].get("tests", [])):
            spec = entry.get("inline") or tests.get(entry.get("testRef", ""), {})
            where = f"BurnInProfile/{name} tests[{i}]"
            if "inline" in entry:
                found += [(file, where, p) for p in lint_test(_definition(spec))]
            for variant in entry.get("variants") or ():
                cell = dict(spec)
                if "thresholds" in variant:
                    cell["thresholds"] = variant["thresholds"]
                if "durationSeconds" in variant:
                    cell["durationSeconds"] = variant["durationSeconds"]
                problems = lint_test(_definition(cell))
                if "thresholds" not in variant:  # inherited gates were linted with the test
                    problems = [p for p in problems if p.index is None]
                found += [(file, f"{where} variant {variant['name']}", p) for p in problems]
    return found


def test_samples_report_only_the_fabric_soak_defects_of_appendix_c(shared_dir: Path) -> None:
    found = lint_samples(shared_dir / "conformance" / "glimmer-samples")
    assert [(f, o, str(p)) for f, o, p in found] == [
        (
            "fabric-soak.yaml",
            "BurnInTest/fabric-soak",
            "runner.readinessProbe (Unsound): the readiness probe connects to perftest's control "
            "port 18515, which listens with a backlog of one: the probe's connection competes "
            "with the client's and can make a healthy link look broken; probe a port served for "
            "health checks instead (ib-write-bw serves one on BURNIN_HEALTH_PORT, default 18510)",
        ),
        (
            "profile-extended.yaml",
            "BurnInTest/fabric-soak-extended",
            "threshold 0 (bandwidthGbps, Unsound): kind fabric-soak never emits metric "
            '"bandwidthGbps", so this gate fails closed on every execution; its gateable Gbps '
            "metrics are minBandwidthGbps, p1BandwidthGbps, peakBandwidthGbps",
        ),
    ]


BAD_SAMPLES = """
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInTest
metadata: {name: link}
spec: {kind: ib-write-bw, scope: Pair}
---
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInProfile
metadata: {name: sweep}
spec:
  tests:
    - testRef: link
      variants:
        - name: exact
          thresholds:
            - {metric: bandwidthGbps, comparison: Equal, value: "90.5"}
    - inline:
        kind: compute-smoke
        durationSeconds: 120
"""


def test_samples_walk_reaches_variant_overlays_and_inline_entries(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD_SAMPLES)
    found = [(o, p.severity, p.index, p.field) for _, o, p in lint_samples(tmp_path)]
    assert found == [
        ("BurnInProfile/sweep tests[0] variant exact", "Unsound", 0, ""),
        ("BurnInProfile/sweep tests[1]", "Unsound", None, "durationSeconds"),
    ]
