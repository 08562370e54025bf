"""JUnit XML (``junit.xml``): one testcase per test × unit, for CI dashboards.

The document validates against the Apache Ant schema (``schemas/junit/JUnit.xsd``), which is
stricter than the spec's example, so some of §6.2 is carried differently:

* ``<testsuites>`` may carry no attributes; the run's name, phase and qualifiers go in an XML
  comment at the top and in every suite's ``run.*`` properties, and the suite's ``package`` is
  the run's ``namespace/name``.
* A testcase may carry no ``<properties>``; its metrics are suite properties named
  ``<testcase> / <metric>``, sorted.
* ``time`` is required on a testcase; when a start or finish is missing it is ``0`` and the
  suite's ``<system-out>`` says the time is unknown rather than letting the 0 pass as measured.

Phases: Error → ``<error type="Error">`` (with a "hardware was NOT judged" paragraph), Failed →
``<failure type="Failed">`` listing every violation with who has to act, Skipped →
``<skipped>``, Passed → nothing, anything else → ``<error type="Unknown">``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from glimmer.reports.assemble import Report
from glimmer.reports.units import Unit, artifact_line, who_acts

FILE_NAME = "junit.xml"
MEDIA_TYPE = "application/xml"

LINKS_SUITE = "links"
UNASSIGNED_SUITE = "unassigned"

# XML 1.0 forbids most control characters; user data may hold them, the document must not.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

NOT_JUDGED = (
    "The hardware was NOT judged: this is an error of the test, its machinery or its "
    "evidence, not a verdict on the part."
)


def clean(text: str) -> str:
    """Text safe to put in an XML 1.0 document (forbidden characters become U+FFFD)."""
    return _NOT_XML.sub("\ufffd", text)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: clean(v) for k, v in attrs.items()})
    if text is not None:
        element.text = clean(text)
    return element


def _timestamp(moment: datetime | None) -> str:
    # The schema's pattern has no zone: UTC, stated in the run properties.
    return (
        (moment or datetime(1970, 1, 1, tzinfo=UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    )


def case_name(unit: Unit) -> str:
    """``test`` for a node's result; ``test (pair: a <-> b)`` for a link's."""
    if unit.is_link:
        return f"{unit.name} ({unit.scope_word}: {unit.endpoints})"
    return unit.name


def _failure_body(unit: Unit) -> str:
    lines = [
        f"[{who_acts(v.cause)}] threshold {v.index} on {v.metric}: "
        f"{v.reason or ''} ({v.kind or ''})"
        for v in unit.violations
    ]
    if not lines:
        lines = ["The runner itself reported a failure (no gate was violated):", unit.message]
    return "\n".join(lines)


def _outcome(case: ET.Element, unit: Unit) -> str:
    """Add the phase element; return the counter it falls under."""
    phase = unit.phase
    if phase == "Passed":
        return "passed"
    if phase == "Failed":
        _sub(case, "failure", _failure_body(unit), message=unit.first_line, type="Failed")
        return "failures"
    if phase == "Skipped":
        _sub(case, "skipped", unit.message, message=unit.first_line)
        return "skipped"
    if phase == "Error":
        body = f"{unit.message}\n\n{NOT_JUDGED}"
        _sub(case, "error", body, message=unit.first_line, type="Error")
        return "errors"
    body = (
        f"The result is in phase {phase!r}, which is not a verdict. The hardware was NOT judged."
        + (f"\n\n{unit.message}" if unit.message else "")
    )
    _sub(
        case,
        "error",
        body,
        message=f"phase {phase}: {unit.first_line}".rstrip(": "),
        type="Unknown",
    )
    return "errors"


def _notes(unit: Unit) -> list[str]:
    name = case_name(unit)
    out = [f"{name}: gate {g.describe()} ({g.applicability})" for g in unit.gates]
    out += [f"{name}: not evaluated: {n.metric} — {n.reason}" for n in unit.not_evaluated]
    out += [f"{name}: unmeasurable on this hardware: {m}" for m in unit.unmeasurable]
    out += [f"{name}: evidence {artifact_line(a)}" for a in unit.artifacts]
    if unit.seconds is None:
        out.append(f'{name}: time unknown (start or finish not recorded); time="0" is a filler')
    return out


def _suite(
    root: ET.Element, report: Report, index: int, name: str, host: str, units: tuple[Unit, ...]
) -> None:
    starts = [u.started_at for u in units if u.started_at is not None]
    suite = _sub(
        root,
        "testsuite",
        name=name,
        timestamp=_timestamp(min(starts) if starts else report.started_at),
        hostname=host,
        tests=str(len(units)),
        failures="0",
        errors="0",
        skipped="0",
        time=f"{sum(u.seconds or 0.0 for u in units):.3f}",
        package=report.title,
        id=str(index),
    )
    props = _sub(suite, "properties")
    run_props = [
        ("run", report.title),
        ("run.uid", report.uid or ""),
        ("run.profile", report.profile),
        ("run.phase", report.phase),
        ("run.status", " · ".join((report.word, *report.labels))),
        ("run.baseline", "true" if report.baseline else ""),
        ("run.final", "true" if report.final else "false"),
    ]
    node = report.node(name) if host != "localhost" else None
    if node is not None and node.fingerprint:
        run_props.append(("node.fingerprint", node.fingerprint))
    for key, value in run_props:
        if value:  # absent values are omitted, never written as empty or 0
            _sub(props, "property", name=key, value=value)
    for unit in units:
        for metric, value in unit.metrics:
            _sub(props, "property", name=f"{case_name(unit)} / {metric}", value=value)
    counts = {"failures": 0, "errors": 0, "skipped": 0, "passed": 0}
    notes: list[str] = []
    for unit in units:
        seconds = unit.seconds
        case = _sub(
            suite,
            "testcase",
            name=case_name(unit),
            classname=name,
            time=f"{seconds:.3f}" if seconds is not None else "0",
        )
        counts[_outcome(case, unit)] += 1
        notes += _notes(unit)
    for key in ("failures", "errors", "skipped"):
        suite.set(key, str(counts[key]))
    _sub(suite, "system-out", "\n".join(notes) + ("\n" if notes else ""))
    _sub(suite, "system-err", "")


def render_junit(report: Report) -> str:
    """The JUnit document of a report."""
    root = ET.Element("testsuites")
    suites: list[tuple[str, str, tuple[Unit, ...]]] = [
        (n.name, n.name, n.results) for n in report.nodes if n.results
    ]
    if report.links:
        suites.append((LINKS_SUITE, "localhost", report.links))
    if report.unassigned:
        suites.append((UNASSIGNED_SUITE, "localhost", report.unassigned))
    for index, (name, host, units) in enumerate(suites):
        _suite(root, report, index, name, host, units)
    ET.indent(root, space="  ")
    headline = " · ".join((f"{report.title} — {report.word}", *report.labels))
    # "--" may not appear inside an XML comment.
    comment = clean(f"glimmer burn-in report: {headline}").replace("--", "- -")
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<!-- {comment} -->\n{body}\n'
