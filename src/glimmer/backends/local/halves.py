"""This host's half of a link or a collective: the local substrate with the rendezvous of a
bare-metal Pair or Group test added (§8.1, §8.2).

The plan has made every Pair and Group test a Node test (:mod:`glimmer.plan.halves`), so the
engine asks for one plain execution on this node. :class:`HalfBackend` wraps a
:class:`~glimmer.backends.local.backend.LocalBackend` and changes three things, nothing else:

* an execution of a half gets the rendezvous variables the flags give (Pair: ``BURNIN_ROLE``,
  ``BURNIN_PEER_HOST``, ``BURNIN_PEER_NODE``; Group: ``BURNIN_RANK``, ``BURNIN_NRANKS``,
  ``BURNIN_ROOT_HOST``, ``BURNIN_ROOT_NODE``) and its scope, role and rank in the spec. The
  flags win over a test's own ``runner.env`` of those names (the host's flags are what this
  host is; Appendix C.5). A value no flag gave stays unset, never "" — without ``--role`` a Pair
  runner then Skips, as §8.1 says;
* a Pair server and a Group rank deliver nothing: the server's half is a record, not a verdict
  (the client's envelope is the link's), and a rank's half has no verdict until
  ``glimmer merge``; the client's envelopes name the link ``[peerNode, node]``;
* the log of an execution the engine deletes is kept in ``raw_dir`` first, so the results
  folder holds every execution's log.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from glimmer.backends.local.backend import LocalBackend
from glimmer.contract.vocab import Scope
from glimmer.engine.backend import Delivery, ExecutionSpec, LogUnavailable
from glimmer.engine.names import delivery_key, rank_role
from glimmer.plan.halves import (
    RENDEZVOUS_NAMES,
    GroupHalf,
    Half,
    Halved,
    PairHalf,
    half_variables,
    relabel,
    relabel_result,
)


def half_spec(spec: ExecutionSpec, scope: Scope, half: Half | None) -> ExecutionSpec:
    """``spec`` as this host's half of a test written with ``scope``: its scope as written, the
    rendezvous variables of ``half`` (:func:`half_variables`) replacing any of those names, and
    the role and rank it runs as."""
    env = [(k, v) for k, v in spec.env if k not in RENDEZVOUS_NAMES]
    env += half_variables(scope, half)
    changes: dict[str, Any] = {"scope": scope.value}
    if scope is Scope.PAIR and isinstance(half, PairHalf):
        changes["role"] = half.role
    elif scope is Scope.GROUP and isinstance(half, GroupHalf):
        changes.update(role=rank_role(half.rank), rank=half.rank, nranks=half.nranks)
    return dataclasses.replace(spec, env=tuple(env), **changes)


def records_only(half: Half | None) -> bool:
    """Whether this host's run delivers nothing: a Pair server or a Group rank."""
    return isinstance(half, GroupHalf) or (isinstance(half, PairHalf) and half.role == "server")


class HalfBackend:
    """A :class:`LocalBackend` running this host's half of the plan's Pair and Group tests;
    every other call is the wrapped backend's."""

    def __init__(
        self,
        inner: LocalBackend,
        halved: Halved,
        half: Half | None,
        *,
        raw_dir: Path | None = None,
    ) -> None:
        self.inner = inner
        self.halved = halved
        self.half = half
        self.raw_dir = raw_dir

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def create_execution(self, spec: ExecutionSpec) -> None:
        scope = self.halved.scopes.get(spec.test)
        self.inner.create_execution(spec if scope is None else half_spec(spec, scope, self.half))

    def delete_execution(self, namespace: str, name: str) -> None:
        self.keep_log(namespace, name)
        self.inner.delete_execution(namespace, name)

    def keep_log(self, namespace: str, name: str) -> Path | None:
        """Copy the execution's log to ``raw_dir/<name>.log`` (None: no folder, or no log)."""
        if self.raw_dir is None:
            return None
        try:
            log = self.inner.read_log(namespace, name)
        except LogUnavailable:
            return None
        self.raw_dir.mkdir(parents=True, exist_ok=True)
        path = self.raw_dir / f"{name}.log"
        path.write_text(log)
        return path

    def deliver(self, delivery: Delivery) -> bool:
        if records_only(self.half):
            return True  # nothing to send, ever: taken as done so the run never waits on it
        return self.inner.deliver(self._relabelled(delivery))

    def _relabelled(self, delivery: Delivery) -> Delivery:
        if not self.halved.scopes:
            return delivery
        view = relabel(delivery.view, self.halved, self.half) if delivery.view else None
        result = delivery.result
        key = delivery.key
        if result is not None:
            result = relabel_result(result, self.halved, self.half)
            if delivery.reason == "TestCompleted":
                key = delivery_key(result.name, result.nodes)
        return dataclasses.replace(delivery, view=view, result=result, key=key)
