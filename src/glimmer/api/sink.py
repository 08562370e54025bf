"""BurnInSink (``bis``): where a run's results are delivered."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import ClassVar
from urllib.parse import SplitResult, urlsplit

from pydantic import ConfigDict, Field, field_validator, model_validator

from glimmer.api.base import ZERO, Bool, Wire, item_error
from glimmer.api.k8s import SecretKeySelector
from glimmer.api.meta import Resource, object_name_problem

WEBHOOK_SCHEMES = ("http", "https")

# Query parameters that carry a bearer token (RFC 6750 §2.3 names ``access_token``; the others
# are its common spellings). ``tokenSecretRef`` sends the same token as a header, read at send
# time and never stored, so a URL carrying one is refused.
TOKEN_PARAMS = frozenset({"access_token", "token", "auth_token", "api_token", "bearer", "jwt"})
# Every query parameter whose value is shown as *** wherever a URL is quoted (errors, logs,
# sink names in the outbox): the token's spellings and the other usual credentials, which a
# receiver may need in its URL (a signed URL's ``sig``) but nobody needs to read back.
SECRET_PARAMS = TOKEN_PARAMS | frozenset(
    {
        "api_key",
        "apikey",
        "api-key",
        "key",
        "password",
        "passwd",
        "pwd",
        "secret",
        "client_secret",
        "sig",
        "signature",
        "auth",
        "code",
    }
)
_USERINFO = re.compile(r"(?<=//)[^/?#@\s]*@")
_SECRET_VALUE = re.compile(
    r"(?<=[?&;])(" + "|".join(re.escape(n) for n in sorted(SECRET_PARAMS)) + r")=[^&#;\s]*",
    re.IGNORECASE,
)
_SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+")  # what Kubernetes allows as a Secret's key


def _no_space(url: str, _: SplitResult) -> str | None:
    if any(c.isspace() or not c.isprintable() for c in url):
        return "holds a space or a control character"
    return None


def _scheme(_: str, parts: SplitResult) -> str | None:
    if parts.scheme.lower() not in WEBHOOK_SCHEMES:
        shown = f"{parts.scheme}://" if parts.scheme else "no scheme"
        return f"has {shown}; a webhook is http:// or https://"
    return None


def _host(_: str, parts: SplitResult) -> str | None:
    return None if parts.hostname else "names no host"


def _port(_: str, parts: SplitResult) -> str | None:
    try:
        port = parts.port  # urllib refuses a port that is not a number up to 65535 here
    except ValueError:
        return "has a port that is not a number from 1 to 65535"
    if port == 0:
        return "has port 0, which no server listens on"
    if parts.netloc.endswith(":"):
        return "has an empty port"
    return None


def _credentials(_: str, parts: SplitResult) -> str | None:
    # Credentials in the URL would be written into the outbox, logs and lastError; the token
    # belongs in tokenSecretRef, which is read at send time and never stored.
    if parts.username is not None or parts.password is not None:
        return "carries credentials (user@host); put the token in tokenSecretRef"
    return None


def _query_token(_: str, parts: SplitResult) -> str | None:
    for pair in re.split(r"[&;]", parts.query):
        name = pair.partition("=")[0]
        if name.lower() in TOKEN_PARAMS:
            return f"carries a token in its query ({name}=); put the token in tokenSecretRef"
    return None


# The checks a webhook URL passes, in order; the first that fails is the error. Each is also
# what a later send would trip over, only here it is the user's input to fix.
URL_RULES: tuple[Callable[[str, SplitResult], str | None], ...] = (
    _scheme,
    _no_space,
    _host,
    _port,
    _credentials,
    _query_token,
)


def webhook_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a webhook's address, or None when it can."""
    try:
        parts = urlsplit(url)
    except ValueError as e:  # an unbalanced IPv6 bracket, for one
        return f"{url!r} is not a URL: {e}"
    for rule in URL_RULES:
        why = rule(url, parts)
        if why is not None:
            return f"{redact(url)!r} is not a webhook URL: it {why}"
    return None


def redact(text: str) -> str:
    """``text`` (a URL, or a message quoting one) with the credentials a URL can carry shown
    as ***: the user and password of ``//user:password@host`` and the value of every query
    parameter of :data:`SECRET_PARAMS`. Anything that quotes a webhook URL quotes this."""
    return _SECRET_VALUE.sub(r"\1=***", _USERINFO.sub("***@", text))


class SinkType(StrEnum):
    """The delivery mechanism. Prometheus takes no configuration."""

    WEBHOOK = "Webhook"
    PROMETHEUS = "Prometheus"
    CONFIG_MAP = "ConfigMap"


class WebhookSink(Wire):
    """POST the envelope to a URL, optionally with a bearer token from a Secret."""

    # A refused URL may carry a credential: pydantic's own error text never quotes it back.
    model_config = ConfigDict(hide_input_in_errors=True)

    url: str = Field(min_length=1)
    token_secret_ref: SecretKeySelector | None = None
    insecure_skip_verify: Bool = Field(False, json_schema_extra=ZERO)

    @field_validator("url")
    @classmethod
    def _a_url(cls, url: str) -> str:
        why = webhook_url_problem(url)
        if why is not None:
            raise ValueError(why)
        return url

    @model_validator(mode="after")
    def _a_secret_that_can_exist(self) -> WebhookSink:
        # The token is read from the Secret named here at each send; a reference no Secret can
        # answer would fail every delivery of every run, so it is refused with the file.
        ref = self.token_secret_ref
        if ref is None:
            return self
        if not ref.name:
            raise item_error(".tokenSecretRef.name", "a token Secret needs a name")
        why = object_name_problem(ref.name)
        if why is not None:
            raise item_error(".tokenSecretRef.name", why)
        if len(ref.key) > 253 or not _SECRET_KEY.fullmatch(ref.key) or ref.key in {".", ".."}:
            raise item_error(
                ".tokenSecretRef.key",
                f"{ref.key!r} is not a Secret key (letters, digits, '-', '_' and '.')",
            )
        return self


class ConfigMapSink(Wire):
    """Write results into a ConfigMap of this name."""

    name: str = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _an_object_name(cls, name: str) -> str:
        # It names a ConfigMap (on this host, a folder): nothing else is a valid name.
        why = object_name_problem(name)
        if why is not None:
            raise ValueError(why)
        return name


class BurnInSinkSpec(Wire):
    """The sink's type and the configuration that type needs."""

    # A sink that cannot deliver would only fail at the end of a run; refuse it up front.
    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "self.type != 'Webhook' || has(self.webhook)",
                    "message": "a Webhook sink needs spec.webhook",
                },
                {
                    "rule": "self.type != 'ConfigMap' || has(self.configMap)",
                    "message": "a ConfigMap sink needs spec.configMap",
                },
            ]
        }
    )

    type: SinkType
    webhook: WebhookSink | None = None
    config_map: ConfigMapSink | None = None

    @model_validator(mode="after")
    def _configured(self) -> BurnInSinkSpec:
        if self.type is SinkType.WEBHOOK and self.webhook is None:
            raise ValueError("a Webhook sink needs spec.webhook (with a url)")
        if self.type is SinkType.CONFIG_MAP and self.config_map is None:
            raise ValueError("a ConfigMap sink needs spec.configMap (with a name)")
        return self


class BurnInSinkStatus(Wire):
    """Per-sink delivery state."""

    last_delivery: datetime | None = None
    last_error: str | None = None


class BurnInSink(Resource):
    """A delivery target for run results."""

    # Its webhook URL may carry a credential: pydantic's own error text never quotes input
    # back (glimmer's one-line errors never quote a refused URL but redacted).
    model_config = ConfigDict(hide_input_in_errors=True)

    KIND: ClassVar[str] = "BurnInSink"
    SHORT_NAME: ClassVar[str] = "bis"
    PLURAL: ClassVar[str] = "burninsinks"

    spec: BurnInSinkSpec
    status: BurnInSinkStatus | None = None
