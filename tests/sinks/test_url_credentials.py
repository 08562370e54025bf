"""Credentials in a webhook URL (issue 10 item 8): a bearer token in the query is refused at
load, pointing at tokenSecretRef (as ``user:password@`` already was), and no credential a URL
carries is ever echoed: not in a load error, a delivery error, a log line, a sink's name nor the
outbox on disk."""

from __future__ import annotations

import logging
import socket
import string
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from sink_doubles import FakeClock

from glimmer.api.run import BurnInRun
from glimmer.api.sink import SECRET_PARAMS, TOKEN_PARAMS, WebhookSink, redact
from glimmer.cli.app import main
from glimmer.errors import InputError
from glimmer.sinks.config import sinks_from_specs
from glimmer.sinks.envelope import RUN_PHASE_CHANGED, Transition
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.outbox import FILENAME, Outbox
from glimmer.sinks.sender import RetryPolicy, Sender
from glimmer.sinks.sinkset import SinkSet
from glimmer.sinks.webhook import WebhookSink as WebhookDelivery

SECRET = "hunter2-s3cr3t"


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once it is closed


@pytest.mark.parametrize("param", ["access_token", "token", "Token", "auth_token", "jwt"])
def test_a_webhook_url_carrying_a_token_in_its_query_is_refused_pointing_at_token_secret_ref(
    param: str,
) -> None:
    url = f"https://hooks.example.com/x?run=1&{param}={SECRET}"
    with pytest.raises(ValidationError) as err:
        WebhookSink.model_validate({"url": url})
    assert "tokenSecretRef" in str(err.value) and SECRET not in str(err.value)
    with pytest.raises(InputError) as flag_err:
        sinks_from_specs([f"webhook={url}"])
    assert "tokenSecretRef" in str(flag_err.value) and SECRET not in str(flag_err.value)


@pytest.mark.parametrize(
    "url",
    [f"https://bob:{SECRET}@127.0.0.1:9/x", f"https://127.0.0.1:9/x?access_token={SECRET}"],
)
def test_glimmer_run_refuses_a_credential_in_a_sink_url_without_echoing_it(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--no-faults", "--sink", f"webhook={url}"]) == 2
    out = capsys.readouterr()
    assert out.err.startswith("error: ") and "--sink webhook=" in out.err
    assert SECRET not in out.err + out.out
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_signed_url_is_accepted_but_its_signature_is_never_shown() -> None:
    # A signature in the URL has no secret reference to move to: it is kept, and hidden.
    url = f"https://hooks.example.com/x?sv=2024&sig={SECRET}"
    assert WebhookSink.model_validate({"url": url}).url == url
    [sink] = sinks_from_specs([f"webhook={url}"]).always
    assert SECRET not in sink.ident and "sig=***" in sink.ident


def _run() -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "r", "namespace": "lab", "uid": "u-1"},
            "spec": {"profileRef": "p", "target": {"nodeNames": ["n"]}},
            "status": {"phase": "Running"},
        }
    )


def test_a_webhook_made_in_python_with_credentials_shows_them_nowhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Python callers skip the load checks: the sink itself still hides what its URL carries.
    url = f"http://bob:{SECRET}@127.0.0.1:{_dead_port()}/x?token={SECRET}&password={SECRET}"
    hook = WebhookDelivery(url, insecure_skip_verify=True)
    policy = RetryPolicy(attempts=1, base=0.0, cap=0.0, timeout=2.0)
    sinks = SinkSet(always=[hook], outbox=Outbox(tmp_path), sender=Sender(policy, FakeClock()))
    at = datetime(2026, 9, 1, tzinfo=UTC)
    with caplog.at_level(logging.DEBUG):
        assert not sinks.deliver(Transition(RUN_PHASE_CHANGED, "r", _run(), at=at))
        with pytest.raises(DeliveryError) as err:
            hook.send({"deliveryId": "0" * 32}, b"{}", 2.0)
    sinks.close()
    assert "ConnectError" in str(err.value) and SECRET not in str(err.value)
    assert SECRET not in hook.ident
    assert SECRET not in sinks.status_of(hook.ident).model_dump_json()
    assert SECRET not in caplog.text and "TLS verification is OFF" in caplog.text
    logged = (tmp_path / FILENAME).read_text()
    assert hook.ident in logged and SECRET not in logged  # owed, under its shown name


_VALUE = st.text(alphabet=string.ascii_letters + string.digits + "-_.~%+/", min_size=1)


@given(
    name=st.sampled_from(sorted(SECRET_PARAMS)),
    upper=st.booleans(),
    value=_VALUE,
    before=st.text(alphabet=string.ascii_lowercase + "=&/", max_size=12),
    user=st.text(alphabet=string.ascii_letters + string.digits + ":-_.%", max_size=12),
)
def test_redacting_a_url_leaves_no_credential_value_in_it(
    name: str, upper: bool, value: str, before: str, user: str
) -> None:
    param = name.upper() if upper else name
    url = f"https://{user}@host/p?{before}&{param}={value}#frag"
    shown = redact(url)
    assert f"{param}=***" in shown and "https://***@host/p?" in shown
    assert shown.endswith("#frag")


def test_every_token_spelling_is_also_hidden() -> None:
    assert TOKEN_PARAMS <= SECRET_PARAMS
