"""From ``dcgmi diag -j`` output to a verdict, in §9.9's order (a pure function, tested on the
captures in ``conformance/dcgm-diag/``).

1. timed out → Error; 2. no subtests: Skip only when the output held no JSON at all and its
prose says the part is unsupported, else Error (unparsed is not skipped, §12 lesson 29);
3. every subtest skipped → Skip; 4. any subtest failed → Fail; 5. any subtest not run, a plugin
DCGM declined on some GPU included → Error; 6. dcgmi non-zero over a document reporting no
failure → Error; 7. Pass, warnings counted and not promoted.

A node-setting finding is excused only by its DCGM error id, from a short allowlist of ids
verified on hardware (never by severity or category: that once excused DCGM_FR_ABORTED). An
excused failure counts as a warning, so the evidence stays on the record.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from glimmer.runners.outcome import Outcome, errored, failed, passed, skipped

# dcgm_errors.h ids. 29 = DCGM_FR_PERSISTENCE_MODE: persistence mode off is a node setting,
# seen failing `software` on every GB10 capture while the GPU itself was healthy.
EXCUSED_ERROR_IDS: dict[int, str] = {29: "persistence mode disabled"}
UNSUPPORTED_PROSE = re.compile(
    r"not supported|unsupported|no supported gpu|does not support", re.IGNORECASE
)
DIAG_KEYS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")  # DCGM 4 and 3 spell it differently


@dataclass(frozen=True)
class Subtest:
    name: str
    status: str  # pass | warn | fail | skip | not_run
    why: str = ""
    raw_fail: bool = False  # DCGM said Fail, even if the finding was excused


@dataclass(frozen=True)
class DiagDocument:
    subtests: tuple[Subtest, ...]
    structure_seen: bool
    json_seen: bool
    dcgm_version: str | None = None
    driver_version: str | None = None
    devices: int | None = None


def _norm(status: Any) -> str:
    text = re.sub(r"[\s_-]", "", str(status or "")).lower()
    return {"pass": "pass", "fail": "fail", "warn": "warn", "warning": "warn", "skip": "skip",
            "notrun": "not_run"}.get(text, "not_run" if text else "")  # fmt: skip


def _warnings(node: dict[str, Any]) -> list[dict[str, Any]]:
    found = node.get("warnings") or []
    return [w for w in found if isinstance(w, dict)]


def _excused(warnings: list[dict[str, Any]]) -> bool:
    ids = [w.get("error_id") for w in warnings]
    return bool(ids) and all(i in EXCUSED_ERROR_IDS for i in ids)


def _why(warnings: list[dict[str, Any]]) -> str:
    return "; ".join(str(w.get("warning", "")).strip() for w in warnings)[:300]


def read_subtest(test: dict[str, Any]) -> Subtest:
    name = str(test.get("name", "?"))
    entries = [e for e in (test.get("results") or []) if isinstance(e, dict)]
    if not entries:
        summary = test.get("test_summary") or {}
        entries = [summary] if isinstance(summary, dict) else []
    statuses: list[str] = []
    raw_fail = False
    why = ""
    for entry in entries:
        status = _norm(entry.get("status"))
        if status == "fail":
            raw_fail = True
            warnings = _warnings(entry)
            if _excused(warnings):
                status = "warn"
            else:
                why = why or _why(warnings)
        statuses.append(status)
    if not statuses or "" in statuses:
        return Subtest(name, "not_run", "no status", raw_fail)
    if "fail" in statuses:
        return Subtest(name, "fail", why, raw_fail)
    if all(s == "skip" for s in statuses):
        return Subtest(name, "skip", "DCGM skipped it", raw_fail)
    if any(s in ("skip", "not_run") for s in statuses):
        return Subtest(name, "not_run", "DCGM did not run it on every GPU", raw_fail)
    if "warn" in statuses:
        return Subtest(name, "warn", why, raw_fail)
    return Subtest(name, "pass", "", raw_fail)


def _json_of(text: str) -> tuple[Any, bool]:
    """(the document, whether any JSON was attempted)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0:
        return None, False
    if end < start:
        return None, True  # a document cut short is still an attempted document
    try:
        return json.loads(text[start : end + 1]), True
    except ValueError:
        return None, True


def read_document(text: str) -> DiagDocument:
    doc, json_seen = _json_of(text)
    if not isinstance(doc, dict):
        return DiagDocument((), structure_seen=False, json_seen=json_seen)
    diag = next((doc[k] for k in DIAG_KEYS if isinstance(doc.get(k), dict)), None)
    subtests: list[Subtest] = []
    if diag is not None:
        for category in diag.get("test_categories") or []:
            for test in (category or {}).get("tests") or []:
                if isinstance(test, dict):
                    subtests.append(read_subtest(test))
    found = doc.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    devices = None
    for group in doc.get("entity_groups") or []:
        if isinstance(group, dict) and group.get("entity_group") == "GPU":
            devices = len(group.get("entities") or [])
    return DiagDocument(
        tuple(subtests),
        structure_seen=diag is not None,
        json_seen=True,
        dcgm_version=meta.get("version"),
        driver_version=meta.get("Driver Version Detected"),
        devices=devices,
    )


def _names(subtests: list[Subtest]) -> str:
    return ", ".join(f"{s.name} ({s.why})" if s.why else s.name for s in subtests)


def decide(document: DiagDocument, output: str, exit_code: int, timed_out: bool) -> Outcome:
    """The verdict of one ``dcgmi diag`` run, in §9.9's order."""
    if timed_out:
        return errored("dcgmi diag timed out (BURNIN_DCGM_TIMEOUT_SECONDS)")
    subs = list(document.subtests)
    if not subs:
        if not document.json_seen and UNSUPPORTED_PROSE.search(output):
            return skipped(f"DCGM does not support this part: {_first_line(output)}")
        return errored(f"dcgmi diag reported no subtest (exit {exit_code}): {_first_line(output)}")
    if all(s.status == "skip" for s in subs):
        return skipped(f"DCGM skipped every subtest: {_names(subs)}")
    bad = [s for s in subs if s.status == "fail"]
    if bad:
        return failed(f"{len(bad)} subtest(s) failed: {_names(bad)}")
    not_run = [s for s in subs if s.status in ("skip", "not_run")]
    if not_run:
        return errored(
            f"subtests not run: {_names(not_run)}; a plugin gated by DCGM's per-SKU allowlist "
            "runs when BURNIN_DCGM_ALLOW names it"
        )
    if exit_code != 0 and not any(s.raw_fail for s in subs):
        return errored(f"dcgmi exited {exit_code} over a document where every subtest passed")
    return passed()


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return "no output"
