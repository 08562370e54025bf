"""A finished job's log as a cluster keeps it: the Job status ``outcome`` (issue 17, decision 1),
and the path a collective took, read from the nodes' labels.

``outcome`` is the core's :class:`~glimmer.certify.jobs.JobLog` as JSON — ``text``,
``exitCode``, ``error``, ``path``, ``crashedOn``, ``elapsedSeconds`` — written once when the
workload ends and never changed, so a replay of the core re-reads the job from the Job object
alone, the same on every reconcile.

The text is capped at :data:`TEXT_LIMIT` bytes of UTF-8 (an object must stay well inside
etcd's 1.5 MiB). What no parser reads goes first: ``NCCL INFO`` lines, the init chatter of
every rank that can outweigh the rest of a big job's log and that the nccl-tests and training
parsers skip (§6.1, §6.2). When that is not enough the head and the tail are kept and a marker
comment says how much is left out between them: the head holds the nccl-tests table (it
follows the header; the sizes ascend from there), the tail the footer, the error a failed job
ended with and the training run's last steps and exit, so a cut log is still judged on its
table and its ending.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.certify.grouping import CLIQUE_LABEL, NodeInfo
from glimmer.certify.jobs import JobLog
from glimmer.errors import InputError, Location

TEXT_LIMIT = 256 * 1024  # bytes of UTF-8
NOISE = "NCCL INFO"  # lines no parser reads, dropped first
NVLINK, NETWORK = "nvlink", "network"


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` bytes: whole lines from the head and the tail, and a marker."""
    lines = text.splitlines(keepends=True)
    budget = max(limit - 100, 0) // 2  # the marker's own line fits in the 100 bytes kept back
    head: list[str] = []
    used = 0
    for line in lines:
        size = len(line.encode())
        if used + size > budget:
            break
        head.append(line)
        used += size
    tail: list[str] = []
    used = 0
    for line in reversed(lines[len(head) :]):
        size = len(line.encode())
        if used + size > budget:
            break
        tail.append(line)
        used += size
    tail.reverse()
    dropped = len(text.encode()) - sum(len(s.encode()) for s in (*head, *tail))
    marker = f"# glimmer: {dropped} bytes of this log left out here (the outcome keeps {limit})\n"
    if head and not head[-1].endswith("\n"):
        head[-1] += "\n"
    return "".join(head) + marker + "".join(tail)


def capped_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` as the outcome keeps it: unchanged when it fits in ``limit`` bytes, else without
    its ``NCCL INFO`` lines, else its head and tail around a marker line."""
    if len(text.encode()) <= limit:
        return text
    quiet = "".join(line for line in text.splitlines(keepends=True) if NOISE not in line)
    if len(quiet.encode()) <= limit:
        return quiet
    return _cut(quiet, limit)


def outcome_doc(log: JobLog, limit: int = TEXT_LIMIT) -> dict[str, Any]:
    """The Job status ``outcome`` of a finished job."""
    return {
        "text": capped_text(log.text, limit),
        "exitCode": log.exit_code,
        "error": log.error,
        "path": log.path,
        "crashedOn": list(log.crashed_on),
        "elapsedSeconds": log.elapsed_s,
    }


def outcome_log(doc: Any, source: str = "") -> JobLog:
    """The JobLog a Job status ``outcome`` holds; InputError naming ``source`` (the Job) and the
    field when it is not one."""
    where = Location(file=source or None)
    if not isinstance(doc, Mapping):
        raise InputError("status.outcome is not an object", where)
    text, code = doc.get("text"), doc.get("exitCode")
    if not isinstance(text, str):
        raise InputError("status.outcome.text is missing or not a string", where)
    if not isinstance(code, int) or isinstance(code, bool):
        raise InputError("status.outcome.exitCode is missing or not an integer", where)
    crashed = doc.get("crashedOn", [])
    if not isinstance(crashed, list) or not all(isinstance(n, str) for n in crashed):
        raise InputError("status.outcome.crashedOn is not a list of node names", where)
    elapsed = doc.get("elapsedSeconds", 0.0)
    if not isinstance(elapsed, int | float) or isinstance(elapsed, bool):
        raise InputError("status.outcome.elapsedSeconds is not a number", where)
    for key in ("error", "path"):
        if not isinstance(doc.get(key, ""), str):
            raise InputError(f"status.outcome.{key} is not a string", where)
    return JobLog(
        text,
        code,
        doc.get("error", ""),
        doc.get("path", ""),
        tuple(crashed),
        float(elapsed),
    )


def collective_path(nodes: Sequence[NodeInfo], mnnvl: bool) -> str:
    """The path a collective over ``nodes`` takes on a cluster: one node stays on its NVLink;
    with MNNVL on, nodes that all share one NVLink clique (a non-empty
    ``nvidia.com/gpu.clique``, which GPU feature discovery writes on multi-node NVLink racks)
    run over NVLink; anything else crosses the backend network."""
    if len(nodes) == 1:
        return NVLINK
    cliques = {n.labels.get(CLIQUE_LABEL, "") for n in nodes}
    return NVLINK if mnnvl and len(cliques) == 1 and "" not in cliques else NETWORK
