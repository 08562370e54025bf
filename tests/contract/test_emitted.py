from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from glimmer.contract.emitted import ALIASES_NEVER_EMITTED, emitted_metrics, kinds_emitting
from glimmer.contract.kinds import BUILT_IN
from glimmer.contract.names import validate_metric_name
from glimmer.contract.registry import REGISTRY

# The shipped sample defect this table must expose (a gate on a metric the kind never emits).
KNOWN_DEFECTS = {("fabric-soak-extended", "fabric-soak", "bandwidthGbps")}


def test_every_built_in_kind_has_an_emitted_set() -> None:
    for kind in BUILT_IN:
        names = emitted_metrics(kind)
        assert names, kind


def test_custom_and_unknown_kinds_have_no_emitted_set() -> None:
    assert emitted_metrics("custom") is None
    assert emitted_metrics("somebody-elses-runner") is None


def test_every_emitted_name_is_a_legal_canonical_name() -> None:
    for kind in BUILT_IN:
        for name in emitted_metrics(kind) or ():
            assert validate_metric_name(name) is None, (kind, name)


def test_every_registered_metric_is_emitted_by_some_kind() -> None:
    orphans = [name for name in REGISTRY if not kinds_emitting(name)]
    assert orphans == []


def test_every_alias_target_is_emitted_by_its_kind() -> None:
    for kind in BUILT_IN.values():
        emitted = emitted_metrics(kind.name) or frozenset()
        for raw, target in kind.aliases.items():
            if (kind.name, raw) in ALIASES_NEVER_EMITTED:
                assert target not in emitted
                continue
            assert target in emitted, (kind.name, raw, target)


def test_documented_absences_are_absent() -> None:
    assert "bandwidthGbps" not in (emitted_metrics("fabric-soak") or ())
    assert "peakBandwidthGbps" not in (emitted_metrics("ib-write-bw") or ())
    assert "maxRelativeError" not in (emitted_metrics("compute-smoke") or ())
    assert "eccErrors" not in (emitted_metrics("dcgm-diag") or ())
    assert "iterationsCompleted" not in (emitted_metrics("memory-stress") or ())
    for kind in ("host-health", "dcgm-diag", "memory-bw"):
        assert "deviceCount" not in (emitted_metrics(kind) or ()), kind


def test_kinds_emitting_lists_every_kind_in_table_order() -> None:
    assert kinds_emitting("bandwidthGbps") == ("ib-write-bw", "gpudirect-rdma")
    assert kinds_emitting("gpuIdleSamples") == ("clockprobe",)
    assert kinds_emitting("neverPrintedAnywhere") == ()


# --- samples as claims: every gate on a built-in kind names a metric that kind prints ----------


def _thresholds(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if "metric" in node and "comparison" in node:
            yield node
        for value in node.values():
            yield from _thresholds(value)
    elif isinstance(node, list):
        for item in node:
            yield from _thresholds(item)


def _sample_gates(shared: Path) -> set[tuple[str, str, str]]:
    """(test name, kind, metric) of every gate in the samples, variants resolved to their
    test's kind through testRef (same file first, then any sample)."""
    docs: list[tuple[Path, dict[str, Any]]] = []
    for path in sorted((shared / "conformance" / "glimmer-samples").glob("*.yaml")):
        with path.open() as f:
            docs += [(path, d) for d in yaml.safe_load_all(f) if isinstance(d, dict)]
    tests: dict[tuple[Path | None, str], str] = {}
    for path, doc in docs:
        if doc.get("kind") == "BurnInTest":
            name, kind = doc["metadata"]["name"], doc["spec"]["kind"]
            tests[(path, name)] = kind
            tests.setdefault((None, name), kind)
    gates: set[tuple[str, str, str]] = set()
    for path, doc in docs:
        spec = doc.get("spec") or {}
        if doc.get("kind") == "BurnInTest":
            for gate in _thresholds(spec.get("thresholds")):
                gates.add((doc["metadata"]["name"], spec["kind"], gate["metric"]))
        elif doc.get("kind") == "BurnInProfile":
            for entry in spec.get("tests") or []:
                ref = entry.get("testRef")
                kind = (entry.get("spec") or {}).get("kind") or tests.get(
                    (path, ref), tests.get((None, ref), "")
                )
                for gate in _thresholds(entry):
                    gates.add((ref or "inline", kind, gate["metric"]))
    return gates


def test_sample_gates_on_built_in_kinds_name_emitted_metrics_except_known_defects(
    shared_dir: Path,
) -> None:
    gates = _sample_gates(shared_dir)
    assert len(gates) > 30  # the walk found the samples' gates at all
    assert all(kind for _, kind, _ in gates)  # every testRef resolved to a kind
    never_emitted = {
        (test, kind, metric)
        for test, kind, metric in gates
        if (emitted := emitted_metrics(kind)) is not None and metric not in emitted
    }
    assert never_emitted == KNOWN_DEFECTS
