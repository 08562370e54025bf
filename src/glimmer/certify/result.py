"""The result document of a certification run (specs/certify.md §8, JSON report), as values,
with its JSON form both ways so ``glimmer certify report`` can print a saved run.

The §8 fields are kept by name (``name``, ``platform``, ``gpu``, ``totalNodes``,
``excludedNodes``, ``exclusionReason``, ``categories[]``, ``failedNodes``, ``result``,
``nodeResults[]``); we add per-category ``groups[]`` (measured vs expected per group),
``failedNodeReasons[]`` (the §2.1 FailedNode: name, reason, message) and ``isolation``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from glimmer.certify.isolate_types import Diagnosis
from glimmer.certify.measure.bandwidth import SizeResult
from glimmer.errors import InputError, Location

PASSED, INCOMPLETE, FAILED = "PASSED", "INCOMPLETE", "FAILED"
# §2.1 FailedNode reasons.
HARDWARE, THRESHOLD, WORKLOAD = "HardwareFailureDetected", "ThresholdViolation", "WorkloadFailed"


@dataclass(frozen=True)
class GroupRun:
    """One job of a category: its group, what it measured against what was expected."""

    name: str
    nodes: tuple[str, ...]
    metric: str  # busBandwidthGBps | dcgmLevel | the training key that decided the verdict
    passed: bool
    measured: float | None = None
    expected: float | None = None
    floor: float | None = None
    path: str = ""  # nvlink | network | node
    reason: str = ""
    source: str = ""  # where the expectation comes from
    failure: str = ""  # on failure: ThresholdViolation or WorkloadFailed (§2.1)
    # A training job's own figures (goodput, tflops, stepTime, trainTime): the ones its verdict
    # read, never another group's.
    figures: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class FailedNode:
    name: str
    reason: str
    message: str


@dataclass(frozen=True)
class Isolation:
    rounds: int
    jobs: int
    message: str
    infrastructure: tuple[str, ...] = ()


def diagnosis_reasons(diag: Diagnosis) -> list[str]:
    """What a diagnosis adds to a failed category's reason: its message and each fault
    between groups that no single node explains."""
    return [diag.message] + [
        f"infrastructure fault between {', '.join(f.group_a)} and {', '.join(f.group_b)}"
        for f in diag.infrastructure
    ]


def isolation_of(diag: Diagnosis | None) -> Isolation | None:
    """The report card's isolation line of a diagnosis (None: nothing was isolated)."""
    if diag is None:
        return None
    pairs = tuple(f"{', '.join(f.group_a)} <-> {', '.join(f.group_b)}" for f in diag.infrastructure)
    return Isolation(diag.rounds, diag.tests, diag.message, pairs)


@dataclass(frozen=True)
class IterationRun:
    """One iteration of a category (§8 ``iterations[]``): its number, status and runtime."""

    number: int
    status: str  # Succeeded | Failed
    runtime_s: float


@dataclass(frozen=True)
class CategoryResult:
    domain: str
    variant: str
    status: str  # Succeeded | Failed
    test_scale: str
    nodes_per_job: int
    runtime_s: float
    mnnvl: bool | None
    groups: tuple[GroupRun, ...]
    failed_nodes: tuple[FailedNode, ...] = ()
    failure_reason: str = ""
    bandwidth: tuple[SizeResult, ...] = ()
    training: Mapping[str, float] = field(default_factory=dict)
    isolation: Isolation | None = None
    # Every iteration run (repeatCount); empty: the category ran once, as the whole says.
    iterations: tuple[IterationRun, ...] = ()

    @property
    def ref(self) -> str:
        return f"{self.domain}/{self.variant}"

    @property
    def passed(self) -> bool:
        return self.status == "Succeeded"


@dataclass(frozen=True)
class CertResult:
    name: str
    fleet: str
    gpu: str
    total_nodes: int
    excluded_nodes: tuple[str, ...]
    exclusion_reason: str
    categories: tuple[CategoryResult, ...]
    node_racks: Mapping[str, str]
    faults: tuple[str, ...] = ()  # what was planted (a simulated run), as the CLI spells it
    seed: int = 0
    platform: str = "simulator"  # the substrate's name for itself (Substrate.platform)

    @property
    def failed_nodes(self) -> list[str]:
        return sorted({f.name for c in self.categories for f in c.failed_nodes})

    @property
    def result(self) -> str:
        if any(not c.passed for c in self.categories):
            return FAILED
        return INCOMPLETE if self.excluded_nodes else PASSED


def dedupe(nodes: list[FailedNode]) -> list[FailedNode]:
    """Keyed by (name, reason) and sorted, as FailedNode lists are (§2.1)."""
    seen: dict[tuple[str, str], FailedNode] = {}
    for f in nodes:
        seen.setdefault((f.name, f.reason), f)
    return [seen[k] for k in sorted(seen)]


def runtime_text(seconds: float) -> str:
    """ "6m 47s" as the report writes durations."""
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h {m}m {s}s" if h else f"{m}m {s}s"


# ---- JSON ------------------------------------------------------------------------------------


def _group_doc(g: GroupRun) -> dict[str, Any]:
    return {
        "name": g.name,
        "nodes": list(g.nodes),
        "metric": g.metric,
        "passed": g.passed,
        "measured": g.measured,
        "expected": g.expected,
        "floor": g.floor,
        "path": g.path,
        "reason": g.reason,
        "source": g.source,
        "failure": g.failure,
        "figures": dict(g.figures),
    }


def _category_doc(c: CategoryResult) -> dict[str, Any]:
    failed_groups = [g for g in c.groups if not g.passed]
    return {
        "domain": c.domain,
        "variant": c.variant,
        "status": c.status,
        "failureReason": c.failure_reason,
        "runtime": runtime_text(c.runtime_s),
        "runtimeSeconds": round(c.runtime_s, 3),
        "testScale": c.test_scale,
        "nodesPerJob": c.nodes_per_job,
        "jobs": len(c.groups) + (c.isolation.jobs if c.isolation else 0),
        "mnnvl": c.mnnvl,
        "bandwidth": [
            {
                "size": b.size,
                "algBW": round(b.alg_bw, 2),
                "busBW": round(b.bus_bw, 2),
                "samples": b.samples,
            }
            for b in c.bandwidth
        ],
        "training": dict(c.training),
        # §8 shapes: per-domain training figures, and the iterations run.
        "domains": [
            {
                "name": g.name,
                "nodeCount": len(g.nodes),
                "goodput": g.figures.get("goodput"),
                "tflops": g.figures.get("tflops"),
                "stepTime": g.figures.get("stepTime"),
            }
            for g in c.groups
            if c.domain == "training"
        ],
        "iterations": [
            {
                "number": i.number,
                "status": i.status,
                "duration": runtime_text(i.runtime_s),
                "runtimeSeconds": round(i.runtime_s, 3),
            }
            for i in c.iterations or (IterationRun(1, c.status, c.runtime_s),)
        ],
        "groups": [_group_doc(g) for g in c.groups],
        "failedGroups": [
            {"name": g.name, "nodeCount": len(g.nodes), "nodes": list(g.nodes), "reason": g.reason}
            for g in failed_groups
        ],
        "failedNodeReasons": [
            {"name": f.name, "reason": f.reason, "message": f.message} for f in c.failed_nodes
        ],
        "isolation": None
        if c.isolation is None
        else {
            "rounds": c.isolation.rounds,
            "jobs": c.isolation.jobs,
            "message": c.isolation.message,
            "infrastructure": list(c.isolation.infrastructure),
        },
    }


def to_doc(r: CertResult) -> dict[str, Any]:
    """The JSON result document."""
    failed = set(r.failed_nodes)
    group_of: dict[str, str] = {}
    for c in r.categories:
        for g in c.groups:
            for n in g.nodes:
                group_of.setdefault(n, g.name)
    return {
        "name": r.name,
        "platform": r.platform,
        "fleet": r.fleet,
        "seed": r.seed,
        "faults": list(r.faults),
        "gpu": r.gpu,
        "totalNodes": r.total_nodes,
        "excludedNodes": list(r.excluded_nodes),
        "exclusionReason": r.exclusion_reason,
        "categories": [_category_doc(c) for c in r.categories],
        "failedNodes": r.failed_nodes,
        "result": r.result,
        "nodeResults": [
            {
                "name": n,
                "group": group_of.get(n, ""),
                "rack": rack,
                "status": "Failed" if n in failed else "Passed",
            }
            for n, rack in sorted(r.node_racks.items())
        ],
    }


def _group(d: Mapping[str, Any]) -> GroupRun:
    return GroupRun(
        d["name"],
        tuple(d["nodes"]),
        d["metric"],
        bool(d["passed"]),
        d.get("measured"),
        d.get("expected"),
        d.get("floor"),
        d.get("path", ""),
        d.get("reason", ""),
        d.get("source", ""),
        d.get("failure", ""),
        {str(k): float(v) for k, v in d.get("figures", {}).items()},
    )


def _category(d: Mapping[str, Any]) -> CategoryResult:
    iso = d.get("isolation")
    return CategoryResult(
        domain=d["domain"],
        variant=d["variant"],
        status=d["status"],
        test_scale=d.get("testScale", ""),
        nodes_per_job=int(d.get("nodesPerJob", 0)),
        runtime_s=float(d.get("runtimeSeconds", 0.0)),
        mnnvl=d.get("mnnvl"),
        groups=tuple(_group(g) for g in d.get("groups", [])),
        failed_nodes=tuple(
            FailedNode(f["name"], f["reason"], f["message"]) for f in d.get("failedNodeReasons", [])
        ),
        failure_reason=d.get("failureReason", ""),
        bandwidth=tuple(
            SizeResult(b["size"], b["algBW"], b["busBW"], b["samples"])
            for b in d.get("bandwidth", [])
        ),
        training=dict(d.get("training", {})),
        isolation=None
        if not iso
        else Isolation(iso["rounds"], iso["jobs"], iso["message"], tuple(iso["infrastructure"])),
        iterations=_iterations(d.get("iterations", [])),
    )


def _iterations(docs: list[Mapping[str, Any]]) -> tuple[IterationRun, ...]:
    # One entry is what a category that ran once writes (CategoryResult.iterations empty).
    if len(docs) < 2:
        return ()
    return tuple(
        IterationRun(int(i["number"]), i["status"], float(i.get("runtimeSeconds", 0.0)))
        for i in docs
    )


# The fields every saved result has; a document without them is something else.
RESULT_FIELDS = ("name", "gpu", "totalNodes", "categories")
NOT_A_RESULT = "is not a saved certification result (the JSON `certify run -o json` prints)"


def _not_a_result(doc: Any) -> str | None:
    """Why ``doc`` is plainly not a result document, naming what it is instead; None when it
    has the shape of one."""
    if not isinstance(doc, dict):
        what = {list: "a JSON list", str: "a JSON string", bool: "a JSON boolean"}
        return f"{NOT_A_RESULT}: it holds {what.get(type(doc), 'a JSON number or null')}"
    if isinstance(doc.get("kind"), str):
        return f"{NOT_A_RESULT}: it holds a {doc['kind']} resource"
    missing = [k for k in RESULT_FIELDS if k not in doc]
    if missing:
        return f"{NOT_A_RESULT}: it has no {', '.join(missing)}"
    return None


def from_doc(doc: Any, source: str = "") -> CertResult:
    """A CertResult from its JSON document; InputError when it is not one."""
    why = _not_a_result(doc)
    if why:
        raise InputError(why, Location(file=source or None))
    try:
        return CertResult(
            name=doc["name"],
            fleet=doc.get("fleet", ""),
            gpu=doc["gpu"],
            total_nodes=int(doc["totalNodes"]),
            excluded_nodes=tuple(doc.get("excludedNodes", [])),
            exclusion_reason=doc.get("exclusionReason", ""),
            categories=tuple(_category(c) for c in doc["categories"]),
            node_racks={n["name"]: n.get("rack", "") for n in doc.get("nodeResults", [])},
            faults=tuple(doc.get("faults", [])),
            seed=int(doc.get("seed", 0)),
            # Results saved before the field was written were all simulator runs.
            platform=doc.get("platform", "simulator"),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputError(
            f"{NOT_A_RESULT}: a field is missing or of the wrong type ({type(e).__name__}: {e})",
            Location(file=source or None),
        ) from None


# ---- one category's document (a Workflow's ``<workflow>-result`` ConfigMap, issue 17) ---------


def category_to_doc(c: CategoryResult) -> dict[str, Any]:
    """One category's part of the result document, as the full document holds it."""
    return _category_doc(c)


def category_from_doc(doc: Any, source: str = "") -> CategoryResult:
    """A CategoryResult from :func:`category_to_doc`'s document; InputError naming ``source``
    (the ConfigMap and key it was read from) when it is not one."""
    where = Location(file=source or None)
    if not isinstance(doc, dict) or not all(k in doc for k in ("domain", "variant", "status")):
        raise InputError("is not a certification category result (no domain/variant/status)", where)
    try:
        return _category(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputError(
            f"is not a certification category result: a field is missing or of the wrong "
            f"type ({type(e).__name__}: {e})",
            where,
        ) from None
