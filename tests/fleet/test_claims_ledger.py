"""The uniqueness ledger (specs/fleet.md §1.3) in bulk and one at a time: the bulk form takes a
fleet's generated identities in one pass and, on a clash, names the same value, path and first
owner a claim-by-claim walk would (issue 12 item 6)."""

from __future__ import annotations

import pytest

from glimmer.api.fleet import Fleet
from glimmer.errors import InputError
from glimmer.fleet.context import BuildContext, Claims
from glimmer.fleet.generate import generate_fleet


@pytest.fixture
def claims() -> Claims:
    fleet: Fleet = generate_fleet(8, "hgx")
    return Claims(BuildContext(fleet, source="f.yaml"))


def _clash(claims: Claims, values: list[str], paths: list[str]) -> InputError:
    with pytest.raises(InputError) as e:
        claims.claim_many("UUID", values, paths)
    return e.value


def test_bulk_claims_of_distinct_values_are_recorded_for_later_claims(claims: Claims) -> None:
    claims.claim_many("UUID", ["u1", "", "u2"], ["p1", "p-empty", "p2"])
    claims.claim_many("UUID", ["u3"], ["p3"])
    claims.claim("serial", "u1", "other-class")  # another class: no clash
    with pytest.raises(InputError) as e:
        claims.claim("UUID", "u2", "p9")
    assert e.value.message == "duplicate UUID u2 (also p2)"
    assert e.value.location.field == "p9" and e.value.location.file == "f.yaml"


def test_a_repeat_inside_one_bulk_claim_names_its_second_place_and_first_owner(
    claims: Claims,
) -> None:
    err = _clash(claims, ["a", "b", "c", "b", "a"], ["pa", "pb", "pc", "pb2", "pa2"])
    assert err.message == "duplicate UUID b (also pb)" and err.location.field == "pb2"


def test_a_bulk_value_already_claimed_names_the_earlier_claim(claims: Claims) -> None:
    claims.claim("UUID", "z", "declared")
    err = _clash(claims, ["x", "y", "z"], ["px", "py", "pz"])
    assert err.message == "duplicate UUID z (also declared)" and err.location.field == "pz"


def test_empty_values_are_never_claimed_in_bulk(claims: Claims) -> None:
    claims.claim_many("UUID", ["", ""], ["p1", "p2"])
    claims.claim("UUID", "", "p3")
    claims.claim_many("UUID", ["", "k"], ["p4", "p5"])
    with pytest.raises(InputError, match=r"duplicate UUID k \(also p5\)"):
        claims.claim("UUID", "k", "p6")
