from glimmer.contract.facts import aliases_to, metric_facts
from glimmer.contract.registry import Unit


def test_registered_name_carries_its_row_kinds_and_aliases() -> None:
    facts = metric_facts("remappedRows")
    assert facts.legal and facts.registered
    assert facts.spec is not None and facts.spec.name == "remappedRows"
    assert facts.emitted_by == ("dcgm-diag", "host-health")
    assert facts.aliases == (("dcgm-diag", "rows_remapped"), ("host-health", "rows_remapped"))
    assert facts.as_raw_key == ()


def test_unregistered_legal_name_reads_its_unit_from_the_suffix() -> None:
    facts = metric_facts("diagTimeoutS")
    assert facts.legal and not facts.registered
    assert facts.unit is Unit.S
    assert facts.emitted_by == ("dcgm-diag",)


def test_rejected_raw_key_is_explained_through_aliases_and_generic_conversion() -> None:
    facts = metric_facts("xid_count")
    assert not facts.legal and facts.problem
    assert ("gpu-burn", "xidEvents") in facts.as_raw_key
    assert ("", "xidCount") in facts.as_raw_key
    assert facts.emitted_by == () and facts.aliases == ()


def test_rejected_name_with_no_legal_reading_has_no_hint() -> None:
    assert metric_facts("Temp").as_raw_key == ()
    assert metric_facts("#x").as_raw_key == ()


def test_aliases_to_an_unaliased_name_is_empty() -> None:
    assert aliases_to("achievedTflops") == ()
