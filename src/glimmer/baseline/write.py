"""Writing a derivation as a multi-document YAML profile, every gate with its provenance.

Per group: the BurnInProfile (named after the source, with the group's suffix when split),
then one BurnInTest per ``testRef`` entry, each the source test re-emitted unchanged (runner,
host paths, durations, soak) except for its thresholds. Every gate is preceded by a comment
saying what it was made of (n, median, MAD, k, the margin, the worst clean unit, the rule),
and every test says what it did not gate and why, and which of the source profile's gates it
replaces, keeps or drops, so the file can be reviewed before it is pinned. Comments survive
only in text, so the YAML is written by :mod:`glimmer.baseline.yamltext`, not by PyYAML.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glimmer.api.dump import to_wire
from glimmer.api.threshold import Threshold
from glimmer.baseline.collect import ALL_NODES
from glimmer.baseline.derive import Derivation, DerivedProfile, DerivedTest
from glimmer.baseline.rules import Gate, Shape
from glimmer.baseline.source import SourceGate
from glimmer.baseline.yamltext import Commented, document
from glimmer.contract.vocab import Applicability

API_VERSION = "burnin.glimmer.ai/v1alpha1"
MAX_LOOSENED_NAMED = 3


def _g(x: float) -> str:
    return f"{x:.6g}"


def _gate_comment(gate: Gate, source: Sequence[Threshold]) -> list[str]:
    t = gate.threshold
    s = gate.summary
    lines = [f"{t.metric}: {gate.rule.shape} ({t.comparison} {t.value}) from n={s.n}"]
    if gate.rule.shape in (Shape.FLOOR, Shape.CEILING):
        assert gate.k is not None and gate.raw is not None and gate.margin is not None
        sign = "-" if gate.rule.shape is Shape.FLOOR else "+"
        lines[0] += f": median {_g(s.median)}, MAD {_g(s.mad)}, k {_g(gate.k)}"
        lines.append(f"  margin {_g(gate.margin)}, median {sign} margin = {_g(gate.raw)}")
        if gate.worst is not None:
            lines.append(f"  worst clean unit: {gate.worst.unit} at {_g(gate.worst.value)}")
        else:
            lines.append("  no clean unit measured it: the bound is the statistic alone")
    else:
        lines[0] += f": every sample was {_g(s.low)}"
    if gate.unmeasurable:
        lines.append(f"  n/a on {gate.unmeasurable} unit(s): RequiredIfMeasurable")
    lines.append(f"  rule: {gate.rule.statement}")
    if gate.loosened_for:
        named = ", ".join(
            f"{u.unit} ({_g(u.value)})" for u in gate.loosened_for[:MAX_LOOSENED_NAMED]
        )
        more = len(gate.loosened_for) - MAX_LOOSENED_NAMED
        lines.append(
            f"  REVIEW: loosened past median {'-' if gate.rule.shape is Shape.FLOOR else '+'} "
            f"margin to pass {named}{f' and {more} more' if more > 0 else ''}; if a unit is "
            "suspect, derive again with --exclude"
        )
    replaced = [f"{g.comparison} {g.value}" for g in source if g.metric == t.metric]
    if replaced:
        lines.append(f"  replaces the source profile's {t.metric} {', '.join(replaced)}")
    return lines


def _test_comment(test: DerivedTest, group: str) -> list[str]:
    where = f" on {group}" if group != ALL_NODES else ""
    if not test.results:
        lines = [f"{test.planned.name}: no passing baseline results{where}; left without gates"]
    else:
        lines = [
            f"{test.planned.name}: derived from {test.results} passing result(s){where}, "
            f"{test.clean} of them on clean units"
        ]
    lines += [f"not gated: {d.metric}: {d.reason}" for d in test.declined]
    for why, names in sorted(test.skipped.items()):
        lines.append(f"not gated, {why.value}: {len(names)} metric(s)")
    for g in test.source:
        if not g.kept:
            t = g.threshold
            lines.append(f"source gate dropped: {t.metric} {t.comparison} {t.value}: {g.reason}")
    return lines


def _gate_wire(gate: Threshold) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "metric": gate.metric,
        "comparison": gate.comparison.value,
        "value": gate.value,
    }
    if gate.applicability is not Applicability.REQUIRED:  # Required is the default: unsaid
        wire["applicability"] = gate.applicability.value
    return wire


def _kept_comment(gate: SourceGate) -> list[str]:
    t = gate.threshold
    return [f"{t.metric}: kept from the source profile ({t.comparison} {t.value}): {gate.reason}"]


def _thresholds(test: DerivedTest) -> list[Any]:
    derived = [
        Commented(_gate_comment(g, test.planned.gates), _gate_wire(g.threshold)) for g in test.gates
    ]
    kept = [Commented(_kept_comment(g), _gate_wire(g.threshold)) for g in test.source if g.kept]
    return derived + kept


def _with_gates(spec: dict[str, Any], test: DerivedTest, group: str) -> dict[str, Any]:
    out = {k: v for k, v in spec.items() if k != "thresholds"}
    gates = _thresholds(test)
    comment = _test_comment(test, group)
    if gates:
        out["thresholds"] = Commented(comment, gates)
    elif comment:
        # Nothing to gate: the comment still says why, on the spec's last key.
        last = next(reversed(out))
        out[last] = Commented(comment, out[last])
    return out


def _metadata(name: str, namespace: str | None) -> dict[str, Any]:
    return {"name": name, **({"namespace": namespace} if namespace else {})}


def _profile_doc(derivation: Derivation, profile: DerivedProfile) -> dict[str, Any]:
    source = derivation.suite.profile
    wire = to_wire(source)
    spec = dict(wire["spec"])
    entries: list[Any] = []
    by_place = {(t.planned.entry, t.planned.cell): t for t in profile.tests}
    for index, raw in enumerate(spec["tests"]):
        entry = dict(raw)
        if "testRef" in entry:
            entry["testRef"] = f"{entry['testRef']}{profile.suffix}"
        if "variants" in entry:
            cells = []
            for c, cell in enumerate(entry["variants"]):
                test = by_place[(index, c)]
                cell = {k: v for k, v in cell.items() if k != "thresholds"}
                gates = _thresholds(test)
                cell["thresholds"] = Commented(_test_comment(test, profile.group), gates)
                cells.append(cell)
            entry["variants"] = cells
            if "inline" in entry:
                entry["inline"] = {k: v for k, v in entry["inline"].items() if k != "thresholds"}
        elif "inline" in entry:
            entry["inline"] = _with_gates(entry["inline"], by_place[(index, None)], profile.group)
        entries.append(entry)
    spec["tests"] = entries
    return {
        "apiVersion": API_VERSION,
        "kind": "BurnInProfile",
        "metadata": _metadata(f"{source.name}{profile.suffix}", source.metadata.namespace),
        "spec": spec,
    }


def _test_docs(derivation: Derivation, profile: DerivedProfile) -> list[dict[str, Any]]:
    docs = []
    namespace = derivation.suite.profile.metadata.namespace
    for index, entry in enumerate(derivation.suite.profile.spec.tests):
        if entry.test_ref is None:
            continue
        spec = to_wire(derivation.suite.tests[entry.test_ref])
        if entry.variants:
            # The cells carry the gates (each replaces its parent's list).
            spec = {k: v for k, v in spec.items() if k != "thresholds"}
            last = next(reversed(spec))
            spec[last] = Commented(
                [f"{entry.test_ref}: gated per variant cell, in the profile"], spec[last]
            )
        else:
            test = next(t for t in profile.tests if t.planned.entry == index)
            spec = _with_gates(spec, test, profile.group)
        docs.append(
            {
                "apiVersion": API_VERSION,
                "kind": "BurnInTest",
                "metadata": _metadata(f"{entry.test_ref}{profile.suffix}", namespace),
                "spec": spec,
            }
        )
    return docs


def _header(derivation: Derivation) -> list[str]:
    lines = [
        f"Derived by `glimmer baseline derive` from profile {derivation.suite.profile.name} and "
        f"baseline run(s) {', '.join(derivation.runs)}.",
        f"k = {_g(derivation.k)} (MAD scaled to sigma), margin = max(k*MAD, "
        f"{_g(derivation.min_margin * 100)}% of |median|), at least {derivation.min_samples} "
        "samples per gate.",
        "Review every gate, then pin: docs/baselines.md.",
        "A clean unit is one no result of the baseline failed or errored on; no clean unit "
        "measured in the baseline fails these gates.",
    ]
    lines += [f"note: {n}" for n in derivation.notes]
    return lines


def _profile_header(profile: DerivedProfile, split: bool) -> list[str]:
    lines = (
        ["Every node of the baseline runs, whatever its GPU product."]
        if profile.group == ALL_NODES
        else [f"GPU product {profile.group}."]
    )
    if not any(t.gates or t.kept for t in profile.tests):
        lines.append(
            "NO GATES could be derived for this profile (see each test): as written it passes "
            "any clean exit. Measure more units, or pin gates by hand, before using it."
        )
    if profile.group == ALL_NODES:
        return lines
    if split:
        lines.append(
            f"Target it with nodeSelector nvidia.com/gpu.product: {profile.group} "
            "(gates derived for one product fail or flatter another)."
        )
    return lines


def render(derivation: Derivation) -> str:
    """The derived profile(s) and their tests as one multi-document YAML text."""
    split = len(derivation.profiles) > 1
    parts: list[str] = []
    for i, profile in enumerate(derivation.profiles):
        header = [*(_header(derivation) if i == 0 else []), *_profile_header(profile, split)]
        parts.append(document(_profile_doc(derivation, profile), header))
        parts += [document(d) for d in _test_docs(derivation, profile)]
    return "".join(parts)
