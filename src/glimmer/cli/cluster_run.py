"""What ``glimmer run`` does alike on every cluster substrate (Slurm, Kubernetes): the targets a
run names among the cluster's nodes, and the BurnInRun the command line describes, named so
that the same command names the same run."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from glimmer.api.run import BurnInRun
from glimmer.cli.run_inputs import API_VERSION
from glimmer.errors import InputError

MAX_DEFAULT_CAP = 64  # the default --max-concurrent: every target, up to this many


def refuse_sim_flags(given: Sequence[str], node: str | None, backend: str) -> None:
    """A simulator-only flag (or this host's ``--node``) with a cluster ``backend`` is bad
    input, named."""
    shaping = [flag for flag in given if flag not in ("--nodes", "--max-concurrent")]
    if shaping:
        raise InputError(
            f"{shaping[0]}: shapes the simulated fleet and means nothing with --backend "
            f"{backend} (the cluster's own nodes are tested; --nodes names them)"
        )
    if node is not None:
        raise InputError("--node: only with --backend local (--nodes names the cluster's nodes)")


def targets_of(nodes: str | None, written: BurnInRun | None, known: Sequence[Any]) -> list[str]:
    """``--nodes`` as given; else the written run's names or selector over ``known`` (the
    cluster's NodeViews); else every node of the cluster."""
    if nodes is not None:
        names = [n.strip() for n in nodes.split(",") if n.strip()]
        if not names:
            raise InputError("--nodes: names no node")
        return names
    if written is not None and written.spec.target.node_names:
        return list(written.spec.target.node_names)
    if written is not None and written.spec.target.node_selector:
        selector = written.spec.target.node_selector
        return [n.name for n in known if all(n.labels.get(k) == v for k, v in selector.items())]
    return [n.name for n in known]


def run_name(ref: str, substrate: str, where: str | None, targets: Sequence[str]) -> str:
    """``<profile>-<substrate>-<hash of where and the targets>``: running the same command
    again resumes that run; other targets (or another partition) name another run."""
    digest = hashlib.sha256("\0".join([where or "", *targets]).encode()).hexdigest()[:8]
    return f"{ref}-{substrate}-{digest}"


def run_object(
    written: BurnInRun | None,
    ref: str,
    targets: Sequence[str],
    name: str,
    *,
    namespace: str,
    nodes_given: bool,
    max_concurrent: int | None,
    force: bool,
) -> BurnInRun:
    """The BurnInRun to start: the written one's spec (or none) with the profile, targets,
    cap and force of the command line."""
    spec: dict[str, Any] = (
        written.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
        if written is not None
        else {}
    )
    spec["profileRef"] = ref
    if nodes_given or written is None:
        spec["target"] = {"nodeNames": list(targets)}
    if max_concurrent is not None:
        spec["maxConcurrentNodes"] = max_concurrent
    elif written is None:
        spec["maxConcurrentNodes"] = max(1, min(len(targets), MAX_DEFAULT_CAP))
    if force:
        spec["force"] = True
    return BurnInRun.model_validate(
        {
            "apiVersion": API_VERSION,
            "kind": "BurnInRun",
            "metadata": {
                "name": written.name if written is not None else name,
                "namespace": namespace,
            },
            "spec": spec,
        }
    )
