"""References checked against what was given, before anything runs: each refusal names the
file, line and field written, or the flag typed."""

from __future__ import annotations

import pytest
from plan_builders import node

from glimmer.api.load import load_text
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.errors import InputError, Location
from glimmer.plan.given import check_profile, check_targets, check_test_refs

NODES = [node("n1", pool="a"), node("n2", pool="a")]
RUN = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInRun
metadata: {name: r}
spec:
  profileRef: p
  target:
    nodeNames: [n1, n3]
"""
PROFILE = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInProfile
metadata: {name: p}
spec:
  tests:
    - testRef: clock-smoke
    - testRef: clock-smok
"""


def test_a_written_target_is_refused_at_its_entry_and_a_typed_one_as_the_flag() -> None:
    (item,) = load_text(RUN, "run.yaml")
    assert isinstance(item.obj, BurnInRun)
    with pytest.raises(InputError) as written:
        check_targets(item.obj.spec.target, NODES, "lab", item)
    assert written.value.location.field == "spec.target.nodeNames[1]"
    assert written.value.location.line == 7
    with pytest.raises(InputError) as typed:
        check_targets(item.obj.spec.target, NODES, "lab", None, flag="--nodes")
    assert str(typed.value).startswith("--nodes: unknown node n3, not in fleet lab")


def test_a_test_ref_naming_nothing_given_or_built_in_is_refused_at_its_line() -> None:
    (item,) = load_text(PROFILE, "p.yaml")
    assert isinstance(item.obj, BurnInProfile)
    with pytest.raises(InputError) as refused:
        check_test_refs([(item.obj, item)], {})
    assert (refused.value.location.field, refused.value.location.line) == (
        "spec.tests[1].testRef",
        7,
    )


def test_a_profile_ref_naming_nothing_is_refused_where_written_or_as_the_flag() -> None:
    where = Location(file="run.yaml", line=5, field="spec.profileRef")
    with pytest.raises(InputError, match=r"^run\.yaml:5, field spec\.profileRef: unknown profile"):
        check_profile("nope", {}, {}, where)
    with pytest.raises(InputError, match=r"^--profile nope: unknown profile"):
        check_profile("nope", {}, {}, Location())
    check_profile("smoke", {}, {}, Location())  # a built-in one resolves
