"""Building sinks from ``--sink`` flags and BurnInSink objects: the forms accepted, the bearer
token read from a mounted Secret at each send, and the build errors of specs/burnin.md §5.5."""

from __future__ import annotations

from pathlib import Path

import pytest
from receiver import Receiver
from sink_doubles import FakeClock, an_envelope

from glimmer.api.load import load_text, of_kind
from glimmer.api.sink import BurnInSink
from glimmer.errors import InputError
from glimmer.sinks.base import encode
from glimmer.sinks.config import sinks_from_specs
from glimmer.sinks.directory import DirectorySink
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.jsonl import JsonlSink
from glimmer.sinks.prometheus import PrometheusSink
from glimmer.sinks.webhook import WebhookSink

HOOK = """
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInSink
metadata: {name: results-webhook, namespace: lab}
spec:
  type: Webhook
  webhook:
    url: URL
    tokenSecretRef: {name: burnin-webhook-token, key: token}
"""


def hook(url: str) -> list[BurnInSink]:
    return [obj for obj, _ in of_kind(load_text(HOOK.replace("URL", url)), BurnInSink)]


def test_flag_forms_make_their_sinks(tmp_path: Path) -> None:
    sinks = sinks_from_specs(
        [
            "webhook=https://example.invalid/hook",
            f"file={tmp_path / 'e.jsonl'}",
            f"dir={tmp_path / 'cm'}",
            "prometheus",
        ]
    )
    kinds = [type(s) for s in sinks.always]
    assert kinds == [WebhookSink, JsonlSink, DirectorySink, PrometheusSink]
    assert sinks.always[0].ident == "webhook=https://example.invalid/hook"
    sinks.close()


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        ("webhook=ftp://x", "http:// or https://"),
        ("webhook", "a sink is one of"),
        ("kafka=broker:9092", "unknown sink 'kafka'"),
    ],
)
def test_a_bad_flag_is_an_input_error_naming_it(flag: str, words: str) -> None:
    with pytest.raises(InputError) as err:
        sinks_from_specs([flag])
    assert words in str(err.value) and f"--sink {flag}" in str(err.value)


def test_the_bearer_token_is_read_from_the_mounted_secret_at_each_send(
    receiver: Receiver, tmp_path: Path
) -> None:
    secret = tmp_path / "secrets" / "burnin-webhook-token"
    secret.mkdir(parents=True)
    (secret / "token").write_text("first\n")
    sinks = sinks_from_specs(objects=hook(receiver.url), secrets_dir=tmp_path / "secrets")
    [sink] = sinks.named.values()
    env = an_envelope()
    sink.send(env, encode(env), 5.0)
    (secret / "token").write_text("rotated")
    sink.send(env, encode(env), 5.0)
    assert [r.headers["Authorization"] for r in receiver.requests] == [
        "Bearer first",
        "Bearer rotated",
    ]
    assert sink.ident == "lab/results-webhook"


@pytest.mark.parametrize(
    ("layout", "words"),
    [
        ({}, "Secret 'burnin-webhook-token' not found"),
        ({"other": "x"}, "has no key 'token'"),
        ({"token": "  \n"}, "is empty"),
    ],
)
def test_a_missing_token_fails_the_delivery_permanently(
    receiver: Receiver, tmp_path: Path, layout: dict[str, str], words: str
) -> None:
    folder = tmp_path / "secrets" / "burnin-webhook-token"
    if layout:
        folder.mkdir(parents=True)
        for key, value in layout.items():
            (folder / key).write_text(value)
    sinks = sinks_from_specs(
        objects=hook(receiver.url), secrets_dir=tmp_path / "secrets", clock=FakeClock()
    )
    [sink] = sinks.named.values()
    env = an_envelope()
    with pytest.raises(DeliveryError) as err:
        sink.send(env, encode(env), 5.0)
    assert err.value.permanent and words in str(err.value)
    assert not receiver.requests  # nothing was sent without its credentials


def test_a_configmap_sink_needs_a_state_folder() -> None:
    text = """
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInSink
metadata: {name: results}
spec: {type: ConfigMap, configMap: {name: burnin-results}}
"""
    objects = [obj for obj, _ in of_kind(load_text(text), BurnInSink)]
    with pytest.raises(InputError) as err:
        sinks_from_specs(objects=objects)
    assert "BurnInSink/results" in str(err.value) and "state folder" in str(err.value)
