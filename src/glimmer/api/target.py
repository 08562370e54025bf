"""TargetSelector: which nodes a run (or each run a schedule creates) puts under test."""

from __future__ import annotations

from glimmer.api.base import Wire
from glimmer.api.k8s import Toleration


class TargetSelector(Wire):
    """Nodes by name (verbatim, in order) or by labels; tolerations go onto every runner pod.

    Selecting nothing is a resolution error of the run, not a schema error: a selector may match
    nodes tomorrow that it does not match today.
    """

    node_names: list[str] | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None
