"""What a certification runs: a Certification (``certify.glimmer.ai/v1alpha1``, read by the one
loader) reduced to what the certification core needs, as plain values, on any substrate.

Each category must be in the catalog; the catalog entry says what it runs (the nccl-tests
collective, the DCGM level, a training job). Options are the category's merged with the global
ones (:meth:`CertificationSpec.options_for`, §2.2), with the controller's defaults filled in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import glimmer.api.certify.kinds  # noqa: F401  (registers Certification with the loader)
from glimmer.api.certify.certification import Certification
from glimmer.api.certify.options import CategoryOptions
from glimmer.api.load import Loaded, load_paths, load_text, of_kind
from glimmer.certify.catalog.entries import get_entry, measurement_profile
from glimmer.certify.grouping import UNSCHEDULABLE_TAINT, Taint
from glimmer.certify.input_kinds import what_it_holds
from glimmer.certify.measure.threshold import unknown_keys
from glimmer.errors import InputError, Location

_SCALE = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# The collectives a communication category can run, by the catalog entry's kind (its ``values``).
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv")


@dataclass(frozen=True)
class Options:
    """CategoryOptions after merging, with defaults (§2.2)."""

    test_scale: str = "full-scale"
    nodes_per_job: int | None = None  # None: every available node
    thresholds: Mapping[str, str] = field(default_factory=dict)
    enable_mnnvl: bool | None = None  # None: on for NVL72 parts (controller default)
    max_bytes: int = 16 << 30  # maxBytes default 16G
    min_group_size: int | None = None  # None: each category's own default
    max_steps: int = 50
    enable_checkpoint: bool = False
    max_restarts: int = 3
    save_interval: int = 250
    iterations: int = 1  # repeatCount: the times the category runs (diagnose: once, §3.2)


@dataclass(frozen=True)
class Category:
    domain: str
    variant: str
    kind: str  # "nccl", "dcgm" or "training"
    options: Options
    collective: str = ""  # nccl: the nccl-tests testType
    level: int = 0  # dcgm: the diag level
    # nccl: the LogProfile the entry's bandwidthMeasurement names; "" for the built-in
    # nccl-bandwidth recipe (measure.NCCL_BANDWIDTH).
    log_profile: str = ""

    @property
    def ref(self) -> str:
        return f"{self.domain}/{self.variant}"


@dataclass(frozen=True)
class NodeRequirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        if self.operator == "Exists":
            return has
        if self.operator == "DoesNotExist":
            return not has
        inside = has and labels[self.key] in self.values
        return inside if self.operator == "In" else not inside


@dataclass(frozen=True)
class TaintRequirement:
    """A taintSelectors entry: the node must carry a taint with this key, and this value and
    effect when they are set (§2.1)."""

    key: str
    value: str | None = None
    effect: str | None = None

    def matches(self, taints: Sequence[Taint]) -> bool:
        return any(
            t.key == self.key
            and (self.value is None or t.value == self.value)
            and (self.effect is None or t.effect == self.effect)
            for t in taints
        )


@dataclass(frozen=True)
class CertSpec:
    name: str
    node_selector: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[NodeRequirement, ...] = ()
    node_names: tuple[str, ...] = ()
    categories: tuple[Category, ...] = ()
    taint_selectors: tuple[TaintRequirement, ...] = ()
    include_unschedulable: bool = False
    loaded: Loaded | None = field(default=None, compare=False, repr=False)

    @property
    def keeps_unschedulable(self) -> bool:
        """Cordoned nodes stay in the target: includeUnschedulable, or the cordon taint listed
        in taintSelectors (the documented spelling of the same opt-in, §2.1)."""
        return self.include_unschedulable or any(
            t.key == UNSCHEDULABLE_TAINT for t in self.taint_selectors
        )

    def locate(self, path: str) -> Location:
        """Where a field of the Certification is (file and line when it was loaded from one)."""
        if self.loaded is None:
            return Location(obj=f"Certification/{self.name}", field=path)
        return self.loaded.locate(path)


def _bytes(text: str | None) -> int:
    if not text:
        return Options.max_bytes
    unit = text[-1] if text[-1] in _SCALE else ""
    return int(text.removesuffix(unit) if unit else text) * _SCALE.get(unit, 1)


def _options(o: CategoryOptions) -> Options:
    d = Options()
    return Options(
        test_scale=o.test_scale.value if o.test_scale else d.test_scale,
        nodes_per_job=o.nodes_per_job,
        thresholds=dict(o.thresholds or {}),
        enable_mnnvl=o.enable_mnnvl,
        max_bytes=_bytes(o.max_bytes),
        min_group_size=o.min_group_size,
        max_steps=o.max_steps if o.max_steps and o.max_steps > 0 else d.max_steps,
        enable_checkpoint=bool(o.enable_checkpoint),
        max_restarts=o.max_restarts if o.max_restarts is not None else d.max_restarts,
        save_interval=o.save_interval or d.save_interval,
        iterations=o.repeat_count or d.iterations,
    )


def _category(cert: Certification, index: int, loaded: Loaded | None) -> Category:
    c = cert.spec.categories[index]
    loc = loaded.locate(f"spec.categories[{index}]") if loaded else Location()
    try:
        entry = get_entry(c.domain, c.variant)
    except InputError as e:
        raise InputError(e.message, loc) from None
    opts = _options(cert.spec.options_for(index))
    unknown = unknown_keys(opts.thresholds)
    if unknown:
        raise InputError(
            f"unknown threshold keys {unknown} (known: busBandwidthGBps, algBandwidthGBps, "
            "goodputRatio, avgTFLOPsPerGPU, avgStepTimeSec)",
            loc,
        )
    values = entry.data.get("values") or {}
    if c.domain == "communication" and values.get("testType") in COLLECTIVES:
        profile = measurement_profile(entry, "bandwidthMeasurement")
        collective = str(values["testType"])
        return Category(c.domain, c.variant, "nccl", opts, collective, log_profile=profile)
    if c.domain == "diagnostics" and isinstance(values.get("level"), int):
        return Category(c.domain, c.variant, "dcgm", opts, level=int(values["level"]))
    if c.domain == "training":
        # Goodput is still read with the built-in Megatron recipe: the shipped
        # megatron-training profile names its captures differently (globalStep, stepTiming).
        return Category(c.domain, c.variant, "training", opts)
    raise InputError(f"category {c.ref} is in the catalog but certification cannot run it", loc)


def from_certification(cert: Certification, loaded: Loaded | None = None) -> CertSpec:
    """A CertSpec from a loaded Certification; InputError naming the category otherwise."""
    t = cert.spec.target
    return CertSpec(
        name=cert.name or "certification",
        node_selector=dict(t.node_selector or {}),
        match_expressions=tuple(
            NodeRequirement(r.key, r.operator, tuple(r.values or ()))
            for r in t.match_expressions or ()
        ),
        node_names=tuple(t.node_names or ()),
        categories=tuple(_category(cert, i, loaded) for i in range(len(cert.spec.categories))),
        taint_selectors=tuple(
            TaintRequirement(s.key, s.value, s.effect) for s in t.taint_selectors or ()
        ),
        include_unschedulable=bool(t.include_unschedulable),
        loaded=loaded,
    )


def _one(loaded: Sequence[Loaded], source: str) -> CertSpec:
    found = of_kind(loaded, Certification)
    if not found:
        raise InputError(
            f"holds no Certification to run: it holds {what_it_holds(loaded)}",
            Location(file=source),
        )
    if len(found) > 1:
        raise InputError(
            f"holds {len(found)} Certifications ({what_it_holds([w for _, w in found])}); "
            "certify run takes one, so put each in its own file",
            Location(file=source),
        )
    cert, where = found[0]
    return from_certification(cert, where)


def load_certification(path: str) -> CertSpec:
    """The one Certification in a file."""
    return _one(load_paths([path]), path)


def from_text(text: str, source: str = "<text>") -> CertSpec:
    """The one Certification in YAML/JSON text (for tests and stdin)."""
    return _one(load_text(text, source), source)
