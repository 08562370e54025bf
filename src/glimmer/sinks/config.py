"""Building a :class:`~glimmer.sinks.sinkset.SinkSet` from BurnInSink objects and from flags.

Flags (``glimmer run --sink …``): ``webhook=URL`` (http or https), ``file=PATH`` (JSONL, one
envelope per line), ``dir=PATH`` (one file per deliveryId: the ConfigMap sink's semantics) and
``prometheus`` (the in-process exporter). A flag's sink takes every transition of the process;
a BurnInSink takes the transitions of runs whose pinned plan names it.

BurnInSink objects on the simulator and this host: a ``Webhook`` reads its bearer token
(``tokenSecretRef``) from ``<secrets_dir>/<secret>/<key>`` — the layout of a Secret mounted as
a volume — at each send; a missing file is a permanent failure of that sink, like a missing
Secret in a cluster. A ``ConfigMap`` sink writes ``<state_dir>/configmaps/<namespace>/<name>/``.

Names that become paths are Kubernetes names, checked at load (:mod:`glimmer.api.sink`); as a
second guard, for Python callers that skip the load, the path each one makes is resolved and
must stay inside its root (the state folder's ``configmaps/``, the secrets folder), or the sink
is refused (a ConfigMap folder) or the send fails for good (a token, read nowhere else).
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from pathlib import Path

from glimmer.api.budget import check_size, read_text
from glimmer.api.k8s import SecretKeySelector
from glimmer.api.sink import BurnInSink, SinkType, redact, webhook_url_problem
from glimmer.errors import InputError, Location
from glimmer.sinks.base import Sink
from glimmer.sinks.directory import DirectorySink
from glimmer.sinks.envelope import Cluster
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.jsonl import JsonlSink
from glimmer.sinks.outbox import Outbox
from glimmer.sinks.prometheus import Exporter, PrometheusSink
from glimmer.sinks.sender import OPERATOR_POLICY, Clock, RealClock, RetryPolicy, Sender
from glimmer.sinks.signing import SigningSecret
from glimmer.sinks.sinkset import SinkSet
from glimmer.sinks.webhook import TokenSource, WebhookSink

FLAG_FORMS = "webhook=URL, file=PATH, dir=PATH or prometheus"


def sinks_from_specs(
    specs: Sequence[str] = (),
    *,
    objects: Sequence[BurnInSink] = (),
    state_dir: Path | None = None,
    secret: SigningSecret | None = None,
    ca_bundle: Path | None = None,
    secrets_dir: Path | None = None,
    policy: RetryPolicy = OPERATOR_POLICY,
    clock: Clock | None = None,
    wall_allowance: float | None = None,
    cluster: Cluster | None = None,
) -> SinkSet:
    """A SinkSet for ``--sink`` flag values ``specs`` and BurnInSink ``objects``.

    ``state_dir`` holds the outbox (pending deliveries survive a restart; None keeps them in
    memory) and the folders of ConfigMap sinks. ``secret`` signs webhook bodies; ``ca_bundle``
    verifies webhook servers against a private CA. ``policy``, ``clock`` and ``wall_allowance``
    configure the :class:`~glimmer.sinks.sender.Sender`. Raises :class:`InputError` for a flag or
    object that cannot make a sink.
    """
    if ca_bundle is not None:
        _check_ca(ca_bundle)
    if state_dir is not None and "\x00" in str(state_dir):
        raise InputError("--sink-state: a path cannot hold a NUL character")
    if state_dir is not None and state_dir.exists() and not state_dir.is_dir():
        raise InputError(
            "--sink-state: not a folder (the outbox is a folder of its own)",
            Location(file=str(state_dir)),
        )
    exporter = Exporter()
    shared = _Shared(state_dir, secret, ca_bundle, secrets_dir, exporter)
    always = [shared.from_flag(spec) for spec in specs]
    named = {
        (obj.metadata.namespace or "default", obj.name): shared.from_object(obj) for obj in objects
    }
    return SinkSet(
        named=named,
        always=always,
        outbox=Outbox(state_dir),
        sender=Sender(policy, clock or RealClock(), wall_allowance=wall_allowance),
        cluster=cluster,
        exporter=exporter,
    )


def _check_ca(path: Path) -> None:
    # Loaded here, before anything is sent: a bundle that cannot be read is the user's input
    # to fix, not a failure of every delivery later.
    if path.is_dir():
        raise InputError(
            "--sink-ca: a folder, not a CA bundle (give the PEM file)", Location(file=str(path))
        )
    check_size(path, "ca-bundle")  # refused before the TLS layer reads it whole
    try:
        ssl.create_default_context(cafile=str(path))
    except (OSError, ssl.SSLError, ValueError) as e:  # ValueError: a NUL in the path
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        where = Location(file=str(path))
        raise InputError(f"--sink-ca: not a usable CA bundle: {why}", where) from None


def inside(root: Path, path: Path) -> bool:
    """Whether ``path``, every ``..`` and symbolic link followed, stays inside ``root``."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):  # a link loop, a NUL: not a path to use
        return False


def _writable(path: Path, where: Location, *, folder: bool) -> Path:
    """``path`` when a file sink (``folder`` False) or a folder sink can be made there; the
    user's input to fix otherwise, refused before anything runs rather than failing every
    delivery of the run."""
    if "\x00" in str(path):
        raise InputError("a path cannot hold a NUL character", where)
    if folder and path.exists() and not path.is_dir():
        raise InputError(
            f"{path} is a file; a dir= sink is a folder (or a path to make one)", where
        )
    if not folder and path.is_dir():
        raise InputError(f"{path} is a folder; a file= sink appends to a file", where)
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{parent} is a file, so {path} cannot be made", where)
            break
    return path


class _Shared:
    def __init__(
        self,
        state_dir: Path | None,
        secret: SigningSecret | None,
        ca_bundle: Path | None,
        secrets_dir: Path | None,
        exporter: Exporter,
    ) -> None:
        self.state_dir = state_dir
        self.secret = secret
        self.ca_bundle = ca_bundle
        self.secrets_dir = secrets_dir
        self.exporter = exporter

    def from_flag(self, spec: str) -> Sink:
        kind, _, target = spec.partition("=")
        kind = kind.strip().lower()
        where = Location(field=f"--sink {redact(spec)}")  # an error never echoes a credential
        if kind == "prometheus":
            if target:
                raise InputError("prometheus takes no value: give --sink prometheus", where)
            return PrometheusSink(self.exporter)
        if not target:
            raise InputError(f"a sink is one of {FLAG_FORMS}", where)
        if kind == "webhook":
            why = webhook_url_problem(target)
            if why is not None:
                raise InputError(why, where)
            return WebhookSink(target, secret=self.secret, ca_bundle=self.ca_bundle)
        if kind == "file":
            return JsonlSink(_writable(Path(target), where, folder=False))
        if kind == "dir":
            return DirectorySink(_writable(Path(target), where, folder=True))
        raise InputError(f"unknown sink {kind!r}: a sink is one of {FLAG_FORMS}", where)

    def from_object(self, obj: BurnInSink) -> Sink:
        namespace = obj.metadata.namespace or "default"
        ident = f"{namespace}/{obj.name}"
        spec = obj.spec
        where = Location(obj=f"BurnInSink/{obj.name}", field="spec")
        if spec.type is SinkType.WEBHOOK and spec.webhook is not None:
            hook = spec.webhook
            ref = hook.token_secret_ref
            return WebhookSink(
                hook.url,
                name=ident,
                token=self._token(ref) if ref is not None else None,
                secret=self.secret,
                ca_bundle=self.ca_bundle,
                insecure_skip_verify=hook.insecure_skip_verify,
            )
        if spec.type is SinkType.CONFIG_MAP and spec.config_map is not None:
            if self.state_dir is None:
                raise InputError("a ConfigMap sink needs a state folder to write into", where)
            base = self.state_dir / "configmaps"
            root = base / namespace / spec.config_map.name
            if not inside(base, root) or root.resolve().parent.parent != base.resolve():
                raise InputError(
                    f"ConfigMap {namespace}/{spec.config_map.name!r} would be written outside "
                    f"{base} (a namespace and a name are Kubernetes names, not paths)",
                    Location(obj=f"BurnInSink/{obj.name}", field="spec.configMap.name"),
                )
            return DirectorySink(root, name=ident)
        if spec.type is SinkType.PROMETHEUS:
            return PrometheusSink(self.exporter, name=ident)
        raise InputError(f"sink type {spec.type} is not configured", where)

    def _token(self, ref: SecretKeySelector) -> TokenSource:
        base = self.secrets_dir

        def token() -> str:
            # Read at each send and never kept: a rotated Secret applies to the next delivery.
            if base is None or not ref.name:
                raise DeliveryError(f"Secret {ref.name!r} not found", permanent=True)
            folder = base / ref.name
            path = folder / ref.key
            if not inside(base, folder) or not inside(base, path):
                # A name or key (or a link in the folder) leading elsewhere: whatever file is
                # there is not this Secret's, and is never read nor sent as a token.
                raise DeliveryError(
                    f"Secret {ref.name!r} key {ref.key!r} leads outside {base}", permanent=True
                )
            if not folder.is_dir():
                raise DeliveryError(f"Secret {ref.name!r} not found", permanent=True)
            if not path.is_file():
                raise DeliveryError(f"Secret {ref.name!r} has no key {ref.key!r}", permanent=True)
            try:
                # Within the budget of a secret, and UTF-8 text, or refused (a header is text).
                value = read_text(path, "secret").strip()
            except InputError as e:
                raise DeliveryError(
                    f"Secret {ref.name!r} key {ref.key!r}: {e.message}", permanent=True
                ) from e
            if not value:
                raise DeliveryError(f"Secret {ref.name!r} key {ref.key!r} is empty", permanent=True)
            return value

        return token
