"""The run store's and the node helpers' cheaper copies (issue 12) make what the long way made:
a status write is one copy of the run carrying the status and the next resourceVersion, and a
node update a view equal to what :func:`dataclasses.replace` builds."""

from __future__ import annotations

import dataclasses

from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.backends.base import apply_annotations, updated_node
from glimmer.backends.common.run_store import MemoryRunStore
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import NodeView


def _run() -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "r", "namespace": "default", "uid": "u-1"},
            "spec": {"profileRef": "p", "target": {"nodeNames": ["a"]}},
        }
    )


def test_a_status_write_is_the_run_with_its_status_and_next_version() -> None:
    store = MemoryRunStore()
    created = store.create_run(_run())
    status = BurnInRunStatus(phase=Phase.RUNNING)
    written = store.write_status(created, status)
    # The long way: the status set, then the resourceVersion in a copy of that.
    long_way = created.model_copy(update={"status": status})
    meta = long_way.metadata.model_copy(update={"resource_version": "2"})
    long_way = long_way.model_copy(update={"metadata": meta})
    assert written == long_way
    assert written.model_fields_set == long_way.model_fields_set
    assert written.metadata.model_fields_set == long_way.metadata.model_fields_set
    assert written.model_dump_json(exclude_unset=True) == long_way.model_dump_json(
        exclude_unset=True
    )
    assert store.get_run("default", "r") is written
    assert created.status is None and created.metadata.resource_version == "1"  # left as read


def test_writes_one_after_another_each_take_the_next_version() -> None:
    store = MemoryRunStore()
    run = store.create_run(_run())
    for phase in (Phase.RUNNING, Phase.PASSED):
        run = store.write_status(run, BurnInRunStatus(phase=phase))
    assert run.metadata.resource_version == "3"
    assert run.status is not None and run.status.phase is Phase.PASSED


def test_an_updated_node_is_what_dataclasses_replace_makes() -> None:
    node = NodeView("n1", labels={"a": "b"}, annotations={"keep": "1", "drop": "2"}, kernel="6")
    cases: list[tuple[bool | None, dict[str, str | None] | None]] = [
        (True, {"drop": None, "new": "3"}),
        (None, None),
        (False, {}),
    ]
    for unschedulable, changes in cases:
        got = updated_node(node, unschedulable, changes)
        want = dataclasses.replace(
            node,
            unschedulable=node.unschedulable if unschedulable is None else unschedulable,
            annotations=apply_annotations(node.annotations, changes),
        )
        assert got == want and type(got) is NodeView and got is not node
        assert vars(got) == vars(want)
    assert node.annotations == {"keep": "1", "drop": "2"}  # the old view is left as it was
