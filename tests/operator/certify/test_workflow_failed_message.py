"""§3.2 setFinalStatus / §7.4 step 7: a failed Workflow's message says what failed — groups,
or the nodes a diagnosis confirmed faulty — never "0 groups failed" while it names a node."""

from __future__ import annotations

from glimmer.certify.result import CategoryResult, FailedNode, GroupRun, Isolation
from glimmer.operator.certify.workflow import failed_message

DIAGNOSED = "Diagnosis complete: 1 faulty nodes confirmed"


def _result(**fields: object) -> CategoryResult:
    base: dict[str, object] = {
        "domain": "communication",
        "variant": "nccl-all-reduce",
        "status": "Failed",
        "test_scale": "diagnose",
        "nodes_per_job": 16,
        "runtime_s": 1.0,
        "mnnvl": False,
        "groups": (GroupRun("screen-0", ("a", "b"), "busBandwidthGBps", True),),
    }
    return CategoryResult(**{**base, **fields})  # type: ignore[arg-type]


def test_a_diagnosis_that_names_a_node_says_so_not_zero_groups() -> None:
    result = _result(
        failed_nodes=(FailedNode("b", "WorkloadFailed", "busbw low"),),
        failure_reason=DIAGNOSED,
        isolation=Isolation(5, 9, DIAGNOSED),
    )
    message = failed_message(result, 0, hardware=False)
    assert message == DIAGNOSED
    assert "0 groups" not in message


def test_a_diagnosis_missing_from_the_reason_is_added() -> None:
    result = _result(
        failed_nodes=(FailedNode("b", "HardwareFailureDetected", "GPU"),),
        failure_reason="",
        isolation=Isolation(5, 9, DIAGNOSED),
    )
    assert failed_message(result, 0, hardware=True) == (
        f"{DIAGNOSED}; hardware failures occurred on one or more nodes"
    )


def test_failed_groups_are_counted_with_the_reason() -> None:
    result = _result(failure_reason="1 of 16 nodes failed DCGM level 1")
    assert failed_message(result, 1, hardware=True) == (
        "1 groups failed across 1 iterations; hardware failures occurred on one or more nodes: "
        "1 of 16 nodes failed DCGM level 1"
    )


def test_failed_nodes_without_groups_or_reason_are_counted() -> None:
    result = _result(failed_nodes=(FailedNode("a", "WorkloadFailed", ""),))
    assert failed_message(result, 0, hardware=False) == "1 nodes failed"
