"""The workloads a certification asks a substrate to run, and what comes back from one.

A job says what to run over which nodes — the nccl-tests collective of a communication group,
``dcgmi diag --run N`` on one node, a Megatron-style training job over a group — as plain
values; the substrate turns it into its own object (a rendered TrainJob on a cluster, a simulated
runner on the twin) and answers with the launcher's log and exit code. Everything the
certification concludes is read from that log by the parsers of :mod:`glimmer.certify.measure`,
so a simulated job and a real one are judged by the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 1 << 30


@dataclass(frozen=True)
class NcclJob:
    """One nccl-tests run over a group (specs/certify.md §6.1)."""

    name: str
    collective: str  # all_reduce | all_gather | reduce_scatter | alltoall | sendrecv
    nodes: tuple[str, ...]
    nvlink: bool = True  # NCCL_MNNVL_ENABLE
    max_bytes: int = 16 * GIB  # -e 16G, the catalog default (§2.2 maxBytes)
    min_bytes: int = 8
    # The certification's seed: a simulated substrate draws its measurement noise from it (so a
    # run repeats exactly); a real one has no use for it.
    seed: int = 0
    started_at: float = 0.0


@dataclass(frozen=True)
class DcgmJob:
    """``dcgmi diag --run <level>`` on one node (the catalog's single-node diagnostics job)."""

    node: str
    level: int
    seed: int = 0  # as NcclJob.seed


@dataclass(frozen=True)
class TrainingJob:
    """A training job over a group (specs/certify.md §6.2); its options are the category's."""

    name: str
    nodes: tuple[str, ...]
    max_steps: int = 50
    checkpoint: bool = False
    save_interval: int = 250  # catalog default saveInterval (§2.2)
    max_restarts: int = 3
    nvlink: bool = True
    seed: int = 0  # as NcclJob.seed


Job = NcclJob | DcgmJob | TrainingJob


@dataclass(frozen=True)
class JobLog:
    """What a job left: the launcher's (rank 0's) log and exit code, and what the substrate knows
    about how it ran."""

    text: str
    exit_code: int
    error: str = ""  # the error line a failed job ended with
    # nccl: "nvlink" or "network", the path the collective took (which expectation applies)
    path: str = ""
    crashed_on: tuple[str, ...] = ()  # training: the nodes the failure log names
    elapsed_s: float = 0.0  # dcgm: how long the diagnostic ran
