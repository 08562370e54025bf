"""The CEL decision of issue 17 (item 2): the hand-written subset (certify/health_parse.py,
health_eval.py; api/certify/threshold.py) against cel-python (``celpy``) and
common-expression-language (``cel``, Rust bindings), on fidelity and speed.

Fidelity: the cases of specs/certify.md §9.2 scenarios 29 (threshold evaluator) and 30 (CEL
detector) and the §7.1 examples, each with what cel-go (the original's engine, with its checker)
answers: a bool, ``invalid`` (refused before any node: syntax, type, undeclared name, not bool),
or ``error`` (refused on the node it fails on). Speed: microseconds per evaluation of the
health expressions over a 16-node and a 1,000-node Node list (realistic Node objects: 40 labels,
12 conditions, 30 images), once with the node map built per evaluation and once with it cached
(§7.1: per uid and resourceVersion).

Run: ``.venv/bin/python bench/cel_eval.py``. An engine that is not installed is skipped. It
only prints: a slow machine is a finding, nothing asserts on time. The machine is shared while
other tests run, so the figures are comparable with each other, not absolute.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from glimmer.api.certify.threshold import evaluate as threshold_evaluate
from glimmer.api.certify.threshold import parse as threshold_parse
from glimmer.certify.health import node_view
from glimmer.certify.health_eval import evaluate as subset_evaluate
from glimmer.certify.health_parse import ROOT
from glimmer.certify.health_parse import parse as subset_parse

INVALID, ERROR = "invalid", "error"
Outcome = bool | str


# ---- cases -----------------------------------------------------------------------------------


def make_node(
    i: int = 0,
    *,
    taints: list[dict[str, str]] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    conditions: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    bare: bool = False,
) -> dict[str, Any]:
    """A Node as the API returns it; ``bare`` leaves out what §7.1 defaults (labels, taints...)."""
    if bare:
        return {"metadata": {"name": f"node-{i:04d}"}, "spec": {}, "status": {}}
    base_labels = {f"feature.node.kubernetes.io/f{k}": "true" for k in range(36)}
    base_labels |= {
        "kubernetes.io/hostname": f"node-{i:04d}",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.present": "true",
        "topology.glimmer.ai/rack": f"r{i // 16:03d}",
    }
    base_conditions = [
        {"type": t, "status": "False", "reason": "Fine", "message": "ok"}
        for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable")
    ] + [
        {"type": f"GPU{k}Healthy", "status": "True", "reason": "Fine", "message": "ok"}
        for k in range(7)
    ]
    base_conditions.append({"type": "Ready", "status": "True", "reason": "KubeletReady"})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"node-{i:04d}",
            "uid": f"uid-{i}",
            "resourceVersion": "1",
            "labels": base_labels | (labels or {}),
            "annotations": annotations if annotations is not None else {"a/b": "c"},
        },
        "spec": {
            "providerID": f"aws:///us-east-1a/i-{i:08x}",
            "taints": taints or [],
            "unschedulable": unschedulable,
        },
        "status": {
            "conditions": conditions if conditions is not None else base_conditions,
            "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 256}.{i % 256}"}],
            "capacity": {"nvidia.com/gpu": "8", "cpu": "224", "memory": "2Ti"},
            "allocatable": {"nvidia.com/gpu": "8", "cpu": "220", "memory": "1900Gi"},
            "images": [{"names": [f"registry/img-{k}:v1"], "sizeBytes": 10**9} for k in range(30)],
            "nodeInfo": {"kubeletVersion": "v1.31.0", "architecture": "amd64"},
        },
    }


TAINT = "node.spec.taints.exists(t, t.key == 'nvidia.com/gpu-unhealthy')"
LABEL = "'gpud.nvidia.com/unhealthy' in node.metadata.labels"
CONDITION = "node.status.conditions.exists(c, c.type == 'GPUHealthy' && c.status == 'False')"
READY_FALSE = "node.status.conditions.exists(c, c.type == 'Ready' && c.status != 'True')"
ANNOTATION = "node.metadata.annotations['health.glimmer.ai/state'] == 'unhealthy'"
CORDON = "node.spec.unschedulable == true"
COMPLEX = f"{CORDON} || {TAINT} || {LABEL} || {CONDITION}"

BAD_TAINT = [{"key": "nvidia.com/gpu-unhealthy", "effect": "NoSchedule"}]
OTHER_TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
GPU_FALSE = [{"type": "GPUHealthy", "status": "False"}]
NOT_READY = [{"type": "Ready", "status": "False"}]
READY = [{"type": "Ready", "status": "True"}]


@dataclass(frozen=True)
class HealthCase:
    name: str
    expression: str
    node: dict[str, Any]
    want: Outcome


def health_cases() -> list[HealthCase]:
    """Scenario 30 and the §7.1 examples; ``want`` is cel-go's answer with its checker."""
    n = make_node
    return [
        HealthCase("taint match", TAINT, n(taints=BAD_TAINT), True),
        HealthCase("taint no match", TAINT, n(taints=OTHER_TAINT), False),
        HealthCase("no taints (default [])", TAINT, n(bare=True), False),
        HealthCase("label match", LABEL, n(labels={"gpud.nvidia.com/unhealthy": ""}), True),
        HealthCase("label no match", LABEL, n(), False),
        HealthCase("nil labels (default {})", LABEL, n(bare=True), False),
        HealthCase("condition GPUHealthy=False", CONDITION, n(conditions=GPU_FALSE), True),
        HealthCase("condition ready", READY_FALSE, n(conditions=READY), False),
        HealthCase("condition not ready", READY_FALSE, n(conditions=NOT_READY), True),
        HealthCase("no conditions (default [])", READY_FALSE, n(bare=True), False),
        HealthCase(
            "annotation unhealthy",
            ANNOTATION,
            n(annotations={"health.glimmer.ai/state": "unhealthy"}),
            True,
        ),
        HealthCase(
            "annotation healthy",
            ANNOTATION,
            n(annotations={"health.glimmer.ai/state": "ok"}),
            False,
        ),
        HealthCase("annotation absent: no such key", ANNOTATION, n(), ERROR),
        HealthCase("unschedulable", CORDON, n(unschedulable=True), True),
        HealthCase("schedulable", CORDON, n(), False),
        HealthCase("unschedulable absent (default false)", CORDON, n(bare=True), False),
        HealthCase("complex OR", COMPLEX, n(conditions=GPU_FALSE), True),
        HealthCase("complex OR, healthy", COMPLEX, n(), False),
        HealthCase("has() on a present field", "has(node.spec.providerID)", n(), True),
        HealthCase("has() on an absent field", "has(node.spec.podCIDR)", n(), False),
        HealthCase(
            "optional select .?",
            "node.metadata.labels.?['x'].orValue('') == 'y'",
            n(labels={"x": "y"}),
            True,
        ),
        HealthCase(
            "optional select, absent key",
            "node.metadata.annotations.?['health'].orValue('ok') == 'bad'",
            n(),
            False,
        ),
        HealthCase("size() of taints", "size(node.spec.taints) > 0", n(taints=BAD_TAINT), True),
        HealthCase(
            "int == double by value", "size(node.spec.taints) == 1.0", n(taints=BAD_TAINT), True
        ),
        HealthCase("invalid: syntax", "node.spec.taints.exists(t, t.key ==", n(), INVALID),
        HealthCase("invalid: non-boolean", "node.metadata.name", n(), INVALID),
        HealthCase("invalid: dyn, not bool", "node.spec.unschedulable", n(), INVALID),
        HealthCase("invalid: undefined variable", "pod.spec.nodeName == 'x'", n(), INVALID),
        HealthCase("invalid: string + int", "node.metadata.name + 1 == 2", n(), INVALID),
        HealthCase("invalid: int literal vs string", "1 == 'a' || 2 < 'b'", n(), INVALID),
    ]


@dataclass(frozen=True)
class ThresholdCase:
    name: str
    expression: str
    value: float
    want: Outcome


def threshold_cases() -> list[ThresholdCase]:
    """Scenario 29: exact boundaries, range, ratio, invalid ones; the value is a double and the
    literals are ints, so every comparison is cross-type (§7.5: enabled)."""
    return [
        ThresholdCase(">= boundary passes", "value >= 300", 300.0, True),
        ThresholdCase(">= below fails", "value >= 300", 299.9999, False),
        ThresholdCase("> boundary fails", "value > 300", 300.0, False),
        ThresholdCase("<= boundary passes", "value <= 2", 2.0, True),
        ThresholdCase("< boundary fails", "value < 2", 2.0, False),
        ThresholdCase("range", "value >= 300 && value <= 500", 400.0, True),
        ThresholdCase("range, above", "value >= 300 && value <= 500", 500.5, False),
        ThresholdCase("ratio", "value > 0.9", 0.95, True),
        ThresholdCase("== int by value", "value == 1", 1.0, True),
        ThresholdCase("syntax error", "value >=", 1.0, INVALID),
        ThresholdCase("non-bool return", "value", 1.0, INVALID),
        ThresholdCase("invalid: undeclared", "bandwidth > 1", 1.0, INVALID),
        ThresholdCase("invalid: double * int", "value * 2 >= 600", 300.0, INVALID),
    ]


# ---- engines ---------------------------------------------------------------------------------

Compile = Callable[[str], Any]
Run = Callable[[Any, Any], Any]
Prepare = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Engine:
    name: str
    compile: Compile  # expression -> program (raise: invalid)
    prepare: Prepare  # node view -> what run() takes (the cached node map)
    run: Run  # (program, prepared node) -> result (raise: error)
    threshold: Callable[[str, float], Any]  # (expression, value) -> result (raise: invalid)


def subset_engine() -> Engine:
    def threshold(expression: str, value: float) -> Any:
        return threshold_evaluate(threshold_parse(expression), value)

    return Engine(
        "subset",
        subset_parse,
        lambda view: {ROOT: view},
        subset_evaluate,
        threshold,
    )


def celpy_engine() -> Engine | None:
    if importlib.util.find_spec("celpy") is None:
        return None
    import celpy

    env = celpy.Environment()

    def compile_(expression: str) -> Any:
        return env.program(env.compile(expression))

    def run(program: Any, activation: Any) -> Any:
        got = program.evaluate(activation)
        if isinstance(got, Exception):
            raise got
        return got

    def threshold(expression: str, value: float) -> Any:
        return run(compile_(expression), {"value": celpy.celtypes.DoubleType(value)})

    return Engine(
        "cel-python 0.5",
        compile_,
        lambda view: {"node": celpy.json_to_cel(view)},
        run,
        threshold,
    )


def rust_engine() -> Engine | None:
    if importlib.util.find_spec("cel") is None:
        return None
    import cel

    def prepare(view: Mapping[str, Any]) -> Any:
        return cel.Context(variables={"node": dict(view)})

    def threshold(expression: str, value: float) -> Any:
        return cel.compile(expression).execute({"value": value})

    return Engine(
        "common-expression-language 0.10",
        cel.compile,
        prepare,
        lambda program, context: program.execute(context),
        threshold,
    )


def engines() -> list[Engine]:
    return [e for e in (subset_engine(), celpy_engine(), rust_engine()) if e is not None]


# ---- fidelity --------------------------------------------------------------------------------


def _as_outcome(got: Any) -> Outcome:
    # A compile step that does not check types lets a non-bool through: cel-go refuses it.
    if isinstance(got, bool) or type(got).__name__ == "BoolType":
        return bool(got)
    return INVALID


def health_outcome(engine: Engine, case: HealthCase) -> Outcome:
    try:
        program = engine.compile(case.expression)
    except Exception:
        return INVALID
    try:
        got = engine.run(program, engine.prepare(node_view(case.node)))
    except Exception:
        return ERROR
    return _as_outcome(got)


def threshold_outcome(engine: Engine, case: ThresholdCase) -> Outcome:
    try:
        return _as_outcome(engine.threshold(case.expression, case.value))
    except Exception:
        return INVALID


def fidelity(engine: Engine) -> tuple[int, int, list[str]]:
    """(agreeing cases, all cases, the names of those that disagree with cel-go)."""
    wrong: list[str] = []
    hc, tc = health_cases(), threshold_cases()
    for h in hc:
        got = health_outcome(engine, h)
        if got != h.want:
            wrong.append(f"health {h.name}: {got} (cel-go {h.want})")
    for t in tc:
        got = threshold_outcome(engine, t)
        if got != t.want:
            wrong.append(f"threshold {t.name}: {got} (cel-go {t.want})")
    total = len(hc) + len(tc)
    return total - len(wrong), total, wrong


# ---- speed -----------------------------------------------------------------------------------

SPEED_EXPRESSIONS = (CORDON, TAINT, LABEL, CONDITION, COMPLEX)


def fleet(size: int) -> list[dict[str, Any]]:
    out = [make_node(i) for i in range(size)]
    out[size // 2] = make_node(size // 2, conditions=GPU_FALSE)
    return out


def _best(fn: Callable[[], None], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def speed(engine: Engine, nodes: list[dict[str, Any]], repeat: int = 5) -> tuple[float, float]:
    """(µs per evaluation with the node map cached, µs per evaluation building it each time),
    over every SPEED_EXPRESSION on every node."""
    programs = [engine.compile(e) for e in SPEED_EXPRESSIONS]
    views = [node_view(n) for n in nodes]
    prepared = [engine.prepare(v) for v in views]
    count = len(programs) * len(nodes)

    def cached() -> None:
        for p in programs:
            for node in prepared:
                engine.run(p, node)

    warm = _best(cached, repeat) / count * 1e6
    # Building the map each time costs the same per node whatever the fleet: 200 nodes say it.
    some = nodes[:200]

    def uncached() -> None:
        for p in programs:
            for node in some:
                engine.run(p, engine.prepare(node_view(node)))

    cold = _best(uncached, repeat) / (len(programs) * len(some)) * 1e6
    return warm, cold


def compile_speed(engine: Engine, repeat: int = 20) -> float:
    """µs to compile one health expression (what the per-expression cache saves)."""

    def all_() -> None:
        for e in SPEED_EXPRESSIONS:
            engine.compile(e)

    return _best(all_, repeat) / len(SPEED_EXPRESSIONS) * 1e6


def main() -> None:
    found = engines()
    print("fidelity against cel-go (scenarios 29, 30, §7.1 examples):")
    for engine in found:
        ok, total, wrong = fidelity(engine)
        print(f"  {engine.name}: {ok}/{total}")
        for w in wrong:
            print(f"      {w}")
    print("speed, µs per evaluation (5 health expressions; cached node map / built each time):")
    for size in (16, 1000):
        nodes = fleet(size)
        for engine in found:
            warm, cold = speed(engine, nodes, repeat=5 if size == 16 else 1)
            print(f"  {size:>5} nodes  {engine.name:<34} {warm:8.1f} / {cold:8.1f}")
    print("compile, µs per expression:")
    for engine in found:
        print(f"  {engine.name:<34} {compile_speed(engine):8.1f}")


if __name__ == "__main__":
    main()
