"""Names that become paths stay inside their root (issue 10 item 7): a ConfigMap sink's folder
inside the state folder's ``configmaps/``, a token inside the secrets folder. Kubernetes names
are checked at load; Python callers that skip the load meet the resolved-path check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from receiver import Receiver
from sink_doubles import an_envelope

from glimmer.api.k8s import SecretKeySelector
from glimmer.api.meta import ObjectMeta
from glimmer.api.sink import BurnInSink, BurnInSinkSpec, ConfigMapSink, SinkType, WebhookSink
from glimmer.cli.app import main
from glimmer.errors import InputError
from glimmer.sinks.base import encode
from glimmer.sinks.config import sinks_from_specs
from glimmer.sinks.errors import DeliveryError

OUTSIDE = "outside-secret-value"


def _unchecked(spec: BurnInSinkSpec, namespace: str | None = None) -> BurnInSink:
    """A BurnInSink as a Python caller may build one: no validation at all."""
    meta = ObjectMeta.model_construct(name="s", namespace=namespace)
    return BurnInSink.model_construct(metadata=meta, spec=spec, status=None)


def _config_map(name: str, namespace: str | None = None) -> BurnInSink:
    spec = BurnInSinkSpec.model_construct(
        type=SinkType.CONFIG_MAP, webhook=None, config_map=ConfigMapSink.model_construct(name=name)
    )
    return _unchecked(spec, namespace)


def _everything_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.mark.parametrize(
    ("name", "namespace"),
    [("../../../../escaped-cm", None), ("cm", "../../escaped-ns"), ("a/../../b", "lab")],
)
def test_a_config_map_sink_whose_folder_would_leave_the_state_folder_is_refused(
    name: str, namespace: str | None, tmp_path: Path
) -> None:
    state = tmp_path / "deep" / "er" / "state"
    with pytest.raises(InputError) as err:
        sinks_from_specs(objects=[_config_map(name, namespace)], state_dir=state)
    assert "outside" in str(err.value) and "spec.configMap.name" in str(err.value)
    assert _everything_under(tmp_path) == set()  # nothing made, inside or out


def test_a_sink_namespace_that_is_not_a_kubernetes_name_is_refused_at_load_on_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sink.yaml"
    path.write_text(
        "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInSink\nmetadata:\n  name: cm\n"
        "  namespace: ../../escaped\nspec:\n  type: ConfigMap\n  configMap:\n    name: results\n"
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}:5" in err and "field metadata.namespace" in err


def _hook(url: str, key: str, name: str = "tok") -> BurnInSink:
    ref = SecretKeySelector.model_construct(name=name, key=key, optional=None)
    hook = WebhookSink.model_construct(url=url, token_secret_ref=ref, insecure_skip_verify=False)
    spec = BurnInSinkSpec.model_construct(type=SinkType.WEBHOOK, webhook=hook, config_map=None)
    return _unchecked(spec)


def _send_with_token(receiver: Receiver, secrets: Path, key: str, name: str = "tok") -> str:
    sinks = sinks_from_specs(objects=[_hook(receiver.url, key, name)], secrets_dir=secrets)
    [sink] = sinks.named.values()
    env = an_envelope()
    try:
        with pytest.raises(DeliveryError) as err:
            sink.send(env, encode(env), 5.0)
    finally:
        sinks.close()
    assert err.value.permanent
    return str(err.value)


@pytest.mark.parametrize(
    ("name", "key"), [("tok", "../../outside-secret.txt"), ("../outside-dir", "token")]
)
def test_a_token_reference_leading_outside_the_secrets_folder_is_never_read_nor_sent(
    name: str, key: str, receiver: Receiver, tmp_path: Path
) -> None:
    secrets = tmp_path / "mounted" / "secrets"
    (secrets / "tok").mkdir(parents=True)
    (tmp_path / "mounted" / "outside-secret.txt").write_text(OUTSIDE)
    (tmp_path / "outside-secret.txt").write_text(OUTSIDE)
    (tmp_path / "mounted" / "outside-dir").mkdir()
    (tmp_path / "mounted" / "outside-dir" / "token").write_text(OUTSIDE)
    message = _send_with_token(receiver, secrets, key, name)
    assert "leads outside" in message
    assert receiver.requests == []  # no request carried the file as a bearer token


def test_a_token_key_linked_outside_the_secrets_folder_is_never_read(
    receiver: Receiver, tmp_path: Path
) -> None:
    secrets = tmp_path / "secrets"
    (secrets / "tok").mkdir(parents=True)
    (tmp_path / "elsewhere.txt").write_text(OUTSIDE)
    os.symlink(tmp_path / "elsewhere.txt", secrets / "tok" / "token")
    assert "leads outside" in _send_with_token(receiver, secrets, "token")
    assert receiver.requests == []


def test_a_secret_mounted_the_kubernetes_way_through_links_inside_it_is_read(
    receiver: Receiver, tmp_path: Path
) -> None:
    # A mounted Secret's key is a link to ..data/key, ..data a link to a dated folder.
    folder = tmp_path / "secrets" / "tok"
    (folder / "..2026_09_01").mkdir(parents=True)
    (folder / "..2026_09_01" / "token").write_text("inside")
    os.symlink("..2026_09_01", folder / "..data")
    os.symlink("..data/token", folder / "token")
    sinks = sinks_from_specs(
        objects=[_hook(receiver.url, "token")], secrets_dir=tmp_path / "secrets"
    )
    [sink] = sinks.named.values()
    env = an_envelope()
    sink.send(env, encode(env), 5.0)
    sinks.close()
    assert [r.headers["Authorization"] for r in receiver.requests] == ["Bearer inside"]
