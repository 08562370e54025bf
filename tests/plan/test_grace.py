from datetime import timedelta

from plan_builders import T0

from glimmer.plan.grace import is_transient, within_resolve_grace


def test_transport_failures_are_transient_and_missing_objects_are_not() -> None:
    assert is_transient("dial tcp 10.0.0.1:443: connect: connection refused")
    assert is_transient("context deadline exceeded")
    assert is_transient("net/http: TLS handshake timeout")
    assert is_transient("the server is currently unavailable")
    assert not is_transient('BurnInTest "x" does not exist')


def test_the_resolve_grace_is_two_minutes_from_creation() -> None:
    assert within_resolve_grace(T0, T0 + timedelta(seconds=119))
    assert not within_resolve_grace(T0, T0 + timedelta(minutes=2))
    assert not within_resolve_grace(None, T0)
