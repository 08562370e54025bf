"""The substrate-neutral rules of artifact storage (§3.6, "Operator storage"): the key, what is
refused and why, text against binary, the object's budget, and the refs a result keeps —
de-duplicated on re-harvest, accumulated across attempts."""

from __future__ import annotations

import base64
import hashlib

import pytest

from glimmer.api.result import ArtifactRef
from glimmer.contract.artifacts import MAX_PAYLOAD_BYTES, extract_artifacts
from glimmer.contract.vocab import Artifact
from glimmer.verdict.artifact_refs import (
    BUDGET_BYTES,
    MAX_KEY_BYTES,
    artifact_key,
    entry_bytes,
    merge_refs,
    name_refusal,
    place,
    store_name,
    write_failed,
)

CM = "run-artifacts"


def art(name: str, payload: bytes = b"{}\n", media: str = "application/json") -> Artifact:
    digest = "sha256:" + hashlib.sha256(payload).hexdigest()
    return Artifact(name, media, payload=payload, size_bytes=len(payload), digest=digest)


def test_the_object_is_named_after_the_run_and_the_key_after_test_pod_and_artifact() -> None:
    assert store_name("nightly") == "nightly-artifacts"
    assert artifact_key("burn", "nightly-0-n1-1", "per-device.json") == (
        "burn.nightly-0-n1-1.per-device.json"
    )


def test_a_stored_artifact_is_named_by_object_key_digest_and_size() -> None:
    a = art("per-device.json", b'{"gpus": 8}\n')
    placed = place(CM, "burn", "pod-1", [a], {})
    [ref] = placed.refs
    assert ref == ArtifactRef(
        name="per-device.json",
        media_type="application/json",
        size_bytes=len(a.payload),
        digest=a.digest,
        config_map=CM,
        key="burn.pod-1.per-device.json",
    )
    [entry] = placed.entries
    assert (entry.key, entry.binary, entry.value) == (ref.key, False, '{"gpus": 8}\n')


def test_valid_utf8_is_stored_as_text_and_anything_else_as_base64_binary_data() -> None:
    text = art("note.txt", "température ✓\n".encode(), "text/plain")
    blob = art("dump.bin", b"\xff\xfe\x00\x01\n", "application/octet-stream")
    entries = {e.key: e for e in place(CM, "t", "p", [text, blob], {}).entries}
    assert entries["t.p.note.txt"].binary is False
    assert entries["t.p.note.txt"].value == "température ✓\n"
    assert entries["t.p.dump.bin"].binary is True
    assert base64.b64decode(entries["t.p.dump.bin"].value) == blob.payload


@pytest.mark.parametrize("name", ["a/b", "..", ".", "with space", "é.json", "", "a:b"])
def test_a_name_outside_the_allowed_characters_is_refused_never_sanitised(name: str) -> None:
    [ref] = place(CM, "t", "p", [art(name)], {}).refs
    assert ref.dropped is not None and "[A-Za-z0-9._-]" in ref.dropped
    assert (ref.config_map, ref.key, ref.digest) == (None, None, None)
    assert ref.name == name  # the name as the runner gave it, not a cleaned-up one
    assert not place(CM, "t", "p", [art(name)], {}).entries


@pytest.mark.parametrize("name", ["per-device.json", "a_b", "A.B-c", "...x", "x.."])
def test_a_plain_file_name_is_accepted(name: str) -> None:
    assert name_refusal(name) is None


def test_a_key_over_253_bytes_is_refused() -> None:
    long_name = "x" * (MAX_KEY_BYTES - len("t.p.") + 1)
    [ref] = place(CM, "t", "p", [art(long_name)], {}).refs
    assert ref.dropped is not None and f"over {MAX_KEY_BYTES}" in ref.dropped
    fits = "x" * (MAX_KEY_BYTES - len("t.p."))
    [ok] = place(CM, "t", "p", [art(fits)], {}).refs
    assert ok.dropped is None and ok.key is not None and len(ok.key) == MAX_KEY_BYTES


def test_a_payload_over_256_kib_is_refused_with_its_size() -> None:
    big = Artifact("big.bin", "text/plain", payload=b"x" * (MAX_PAYLOAD_BYTES + 1))
    [ref] = place(CM, "t", "p", [big], {}).refs
    assert ref.dropped is not None and str(MAX_PAYLOAD_BYTES + 1) in ref.dropped


def test_an_artifact_the_scanner_refused_keeps_the_scanner_s_reason() -> None:
    out = b"-----BEGIN BURNIN ARTIFACT only-one-field-----\nx\n-----END BURNIN ARTIFACT-----\n"
    [scanned] = extract_artifacts(out).artifacts
    [ref] = place(CM, "t", "p", [scanned], {}).refs
    assert ref.dropped == scanned.dropped
    assert (ref.config_map, ref.key, ref.digest) == (None, None, None)


def test_the_budget_counts_what_the_object_already_holds_keys_and_values() -> None:
    payload = b"y" * 1000
    key = artifact_key("t", "p", "a.txt")
    held_value = "z" * (BUDGET_BYTES - entry_bytes(key, payload.decode()) - len("other"))
    # Exactly at the budget: kept.
    [ok] = place(CM, "t", "p", [art("a.txt", payload)], {"other": held_value}).refs
    assert ok.dropped is None
    # One byte over: dropped, and nothing written.
    placed = place(CM, "t", "p", [art("a.txt", payload)], {"other": held_value + "z"})
    [over] = placed.refs
    assert over.dropped is not None and f"{BUDGET_BYTES}-byte budget" in over.dropped
    assert over.key is None and not placed.entries


def test_an_artifact_refused_by_a_full_object_in_every_attempt_is_one_ref() -> None:
    full = {"other": "z" * BUDGET_BYTES}
    one = place(CM, "t", "pod-1", [art("a.json")], full).refs
    two = place(CM, "t", "pod-2", [art("a.json")], full).refs
    merged = merge_refs(merge_refs(None, one), two)
    assert merged is not None and len(merged) == 1 and merged[0].dropped


def test_the_budget_counts_binary_data_as_the_base64_it_is_stored_as() -> None:
    blob = b"\xff" * 300  # 300 bytes, 400 of base64
    key = artifact_key("t", "p", "b.bin")
    fits_raw_only = len(key) + 300
    [ref] = place(CM, "t", "p", [art("b.bin", blob)], {}, budget=fits_raw_only).refs
    assert ref.dropped is not None
    [ok] = place(CM, "t", "p", [art("b.bin", blob)], {}, budget=len(key) + 400).refs
    assert ok.dropped is None


def test_the_budget_fills_in_order_within_one_execution() -> None:
    first, second = art("a.txt", b"a" * 600), art("b.txt", b"b" * 600)
    budget = entry_bytes("t.p.a.txt", "a" * 600) + 10
    refs = place(CM, "t", "p", [first, second], {}, budget=budget).refs
    assert [r.dropped is None for r in refs] == [True, False]


def test_an_entry_already_held_with_the_same_value_is_not_written_again() -> None:
    a = art("per-device.json")
    first = place(CM, "t", "p", [a], {})
    held = {e.key: e.value for e in first.entries}
    again = place(CM, "t", "p", [a], held, budget=entry_bytes(*next(iter(held.items()))))
    assert again.entries == ()
    assert again.refs == first.refs  # the same ref, even with a budget that is full


def test_a_failed_write_drops_only_the_entries_it_was_to_write() -> None:
    bad, good = art("../x"), art("ok.json")
    placed = place(CM, "t", "p", [bad, good], {})
    refs = write_failed(placed, "HTTP 500")
    assert refs[0] == placed.refs[0]  # refused before any write: its own reason stands
    assert refs[1].dropped == "write failed: HTTP 500"
    assert (refs[1].config_map, refs[1].key, refs[1].digest) == (None, None, None)
    assert refs[1].name == "ok.json"


def test_a_re_harvest_adds_no_ref_twice() -> None:
    refs = list(place(CM, "t", "p", [art("a.json"), art("../bad")], {}).refs)
    kept = merge_refs(None, refs)
    assert merge_refs(kept, refs) == refs


def test_refs_accumulate_across_attempts() -> None:
    one = place(CM, "t", "pod-1", [art("a.json"), art("../bad")], {}).refs
    two = place(CM, "t", "pod-2", [art("a.json"), art("../bad")], {}).refs
    merged = merge_refs(merge_refs(None, one), two)
    assert merged is not None
    assert [r.key for r in merged if r.key] == ["t.pod-1.a.json", "t.pod-2.a.json"]
    # A dropped ref is the same by name and reason: the second attempt's refusal is the first's.
    assert [r.name for r in merged if r.dropped] == ["../bad"]


def test_no_refs_at_all_leave_a_result_without_artifacts() -> None:
    assert merge_refs(None, []) is None
