"""Everything the contract knows about one metric name, gathered in one place.

Used by ``glimmer metrics NAME`` and by anything else that needs to explain a name: whether the
grammar accepts it, its registry row (if any), its unit, which kinds print it and under which
raw keys. For a name the grammar rejects it also says what a runner printing that raw key would
actually produce, since a raw key (``bw_average``) is the usual thing people type.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.contract.emitted import kinds_emitting
from glimmer.contract.kinds import KINDS
from glimmer.contract.names import generic_canonical, unit_of, validate_metric_name
from glimmer.contract.registry import REGISTRY, MetricSpec, Unit


@dataclass(frozen=True)
class MetricFacts:
    name: str
    problem: str | None  # why the grammar rejects the name; None when it is legal
    spec: MetricSpec | None  # None: unregistered (legal when problem is None)
    unit: Unit  # registered unit, else the unit the suffix reads
    emitted_by: tuple[str, ...]  # built-in kinds whose runners print it
    aliases: tuple[tuple[str, str], ...]  # (kind, raw key) pairs that map onto it
    # For a rejected name read as a raw key: (kind, canonical) for kinds with an alias for it,
    # and ("", generic conversion) when that conversion yields a legal, different name.
    as_raw_key: tuple[tuple[str, str], ...]

    @property
    def legal(self) -> bool:
        return self.problem is None

    @property
    def registered(self) -> bool:
        return self.spec is not None


def aliases_to(name: str) -> tuple[tuple[str, str], ...]:
    """(kind, raw key) of every alias whose target is ``name``."""
    return tuple(
        (kind.name, raw) for kind in KINDS for raw, target in kind.aliases.items() if target == name
    )


def metric_facts(name: str) -> MetricFacts:
    """What the contract says about ``name``."""
    problem = validate_metric_name(name)
    spec = REGISTRY.get(name)
    as_raw: list[tuple[str, str]] = []
    if problem is not None:
        as_raw = [(kind.name, kind.aliases[name]) for kind in KINDS if name in kind.aliases]
        generic = generic_canonical(name)
        if generic != name and validate_metric_name(generic) is None:
            as_raw.append(("", generic))
    return MetricFacts(
        name=name,
        problem=problem,
        spec=spec,
        unit=spec.unit if spec else unit_of(name),
        emitted_by=kinds_emitting(name) if problem is None else (),
        aliases=aliases_to(name) if problem is None else (),
        as_raw_key=tuple(as_raw),
    )
