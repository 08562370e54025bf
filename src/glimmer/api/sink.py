"""BurnInSink (``bis``): where a run's results are delivered."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from pydantic import ConfigDict, Field, model_validator

from glimmer.api.base import ZERO, Bool, Wire
from glimmer.api.k8s import SecretKeySelector
from glimmer.api.meta import Resource


class SinkType(StrEnum):
    """The delivery mechanism. Prometheus takes no configuration."""

    WEBHOOK = "Webhook"
    PROMETHEUS = "Prometheus"
    CONFIG_MAP = "ConfigMap"


class WebhookSink(Wire):
    """POST the envelope to a URL, optionally with a bearer token from a Secret."""

    url: str = Field(min_length=1)
    token_secret_ref: SecretKeySelector | None = None
    insecure_skip_verify: Bool = Field(False, json_schema_extra=ZERO)


class ConfigMapSink(Wire):
    """Write results into a ConfigMap of this name."""

    name: str = Field(min_length=1)


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

    KIND: ClassVar[str] = "BurnInSink"
    SHORT_NAME: ClassVar[str] = "bis"
    PLURAL: ClassVar[str] = "burninsinks"

    spec: BurnInSinkSpec
    status: BurnInSinkStatus | None = None
