"""A bearer-token Secret reference that names no Secret is refused naming the spec field that
holds it: a BurnInSink's ``tokenSecretRef``, a ReportExport's ``bearerTokenSecretRef``."""

from __future__ import annotations

from typing import Any, cast

import pytest
from lightkube import Client

from glimmer.api.k8s import SecretKeySelector
from glimmer.operator.sinks import secret_token
from glimmer.sinks.errors import DeliveryError

# No Secret is read before the reference is checked: no client is needed, and none is made.
NO_CLIENT = cast(Client, cast(Any, None))


@pytest.mark.parametrize("field", ["tokenSecretRef", "bearerTokenSecretRef"])
def test_a_reference_naming_no_secret_is_refused_by_its_field(field: str) -> None:
    token = secret_token(NO_CLIENT, "default", SecretKeySelector(key="token"), field)
    with pytest.raises(DeliveryError) as err:
        token()
    assert str(err.value) == f"{field} names no Secret"
    assert err.value.permanent


def test_a_burnin_sink_reference_is_named_tokensecretref_by_default() -> None:
    token = secret_token(NO_CLIENT, "default", SecretKeySelector(key="token"))
    with pytest.raises(DeliveryError, match=r"^tokenSecretRef names no Secret$"):
        token()
